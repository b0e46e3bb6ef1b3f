//! The loop of a run: SessionStart → UserPromptSubmit (→ a deferred call, when resuming) →
//! [model turn → tool round]* → Stop, which may force the loop on (up to
//! `max_forced_continuations` in a row). Cancellation is checked between steps and wins over
//! whatever a hook interrupted by it answered.
//!
//! Before each model request, what background work delivered is appended (contexts; an
//! `asyncRewake` hook's wake and a background subagent's `<task-notification>` as user
//! messages, the subagent's usage added to the run's). When Stop allows the end, the run first
//! waits for its `asyncRewake` hooks and background subagents still running: a wake sends the
//! loop on (`stop_hook_active` is then true, as after a forced continuation; a wake does not
//! count toward `max_forced_continuations`, `max_turns` still bounds the run).
//!
//! A subagent's run fires SubagentStart in place of SessionStart and UserPromptSubmit, and
//! SubagentStop in place of Stop (same answers, same bound). In a tool round, consecutive
//! `Task` calls run concurrently (at most `subagents.max_concurrent` at a time); their results
//! keep the calls' order.

use std::sync::Arc;

use futures_util::StreamExt;
use spine_protocol::hook::{
    HookEventName, SessionEndReason, SessionSource, SessionStartInput, SubagentStartInput, SubagentStopInput,
};
use spine_protocol::message::{ImageBlock, Message, ToolResultMessage};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};

use super::call::{CallOutcome, RoundEnd};
use super::finish::End;
use super::request::SessionTurn;
use super::structured::Verdict;
use super::{Run, error_result};
use crate::hooks::Delivered;
use crate::hooks::events::{ContextOutcome, Merged, StopOutcome, UserPromptSubmitOutcome};
use crate::observer::RunEvent;
use crate::session::TranscriptRecord;
use crate::stages::handle_error::ExecutionError;
use crate::subagents::AgentIdentity;

impl Run<'_> {
    pub(super) async fn drive(
        &mut self,
        prompt: Option<String>,
        images: Vec<ImageBlock>,
        deferred: Option<ToolCall>,
        source: SessionSource,
    ) -> End {
        self.record(&TranscriptRecord::Session {
            session_id: self.hook_ctx.session.session_id.clone(),
            cwd: self.agent.config.cwd.clone(),
            model: self.agent.model.model().to_owned(),
        });
        self.observer.on_event(&RunEvent::SessionStarted {
            session_id: &self.hook_ctx.session.session_id,
            model: self.agent.model.model(),
        });
        if let Some(sub) = &self.subagent {
            return self.drive_subagent(prompt, Arc::clone(&sub.identity)).await;
        }
        let trigger = self.setup.take();
        let setup_contexts = match self.setup_hooks(trigger).await {
            Ok(contexts) => contexts,
            Err(end) => return end,
        };
        let start = match self.session_turn {
            SessionTurn::Whole | SessionTurn::First => {
                self.hooks
                    .session_start(
                        &self.hook_ctx,
                        SessionStartInput { source, model: Some(self.agent.model.model().to_owned()) },
                    )
                    .await
            }
            SessionTurn::Later => Merged::alone(ContextOutcome::Proceed),
        };
        if let Some(end) = self.ended_at_start(&start) {
            return end;
        }
        self.arm_watch(start.watch_paths.clone());
        if self.session_turn != SessionTurn::Later {
            self.instructions_loaded().await;
        }
        let mut pending_contexts = setup_contexts;
        pending_contexts.extend(start.contexts);

        if let Some(prompt) = prompt {
            self.hook_ctx.prompt_id = Some(Arc::from(uuid::Uuid::new_v4().to_string()));
            let expansion = self.expansion.take();
            match self.expansion_hooks(expansion).await {
                Ok(contexts) => pending_contexts.extend(contexts),
                Err(end) => return end,
            }
            let submitted = self.hooks.user_prompt_submit(&self.hook_ctx, &prompt).await;
            // Cancellation wins over whatever a hook interrupted by it answered.
            if self.cancel.is_cancelled() {
                return End::canceled();
            }
            if let Some(halt) = submitted.halt {
                return End::halted(halt.stop_reason);
            }
            match submitted.outcome {
                UserPromptSubmitOutcome::Proceed => {}
                UserPromptSubmitOutcome::Blocked { reason, hook_id } => {
                    let mut end = End::new(RunSubtype::Blocked, reason.clone(), SessionEndReason::Blocked);
                    end.stop_reason = Some(format!("prompt blocked by hook {hook_id}: {reason}"));
                    return end;
                }
                UserPromptSubmitOutcome::Failed(failure) => {
                    return End::failed(ExecutionError::Hook(failure));
                }
            }
            self.push(Message::user_with_images(prompt, images));
            for (event, text) in std::mem::take(&mut self.carried) {
                self.push(Message::context(event, text));
            }
            pending_contexts.extend(submitted.contexts);
            self.push_contexts(HookEventName::UserPromptSubmit, pending_contexts);
        } else if !pending_contexts.is_empty() {
            self.push_contexts(HookEventName::SessionStart, pending_contexts);
        }

        if let Some(call) = deferred {
            match self.tool_round(vec![call]).await {
                RoundEnd::Continue => {}
                other => return self.round_end(other),
            }
        }
        self.agent_loop().await
    }

    /// How a run ends before its prompt: canceled, a start hook that failed closed, or a
    /// start hook's `continue: false` (SessionStart's, or SubagentStart's in a subagent).
    pub(super) fn ended_at_start(&self, start: &Merged<ContextOutcome>) -> Option<End> {
        if self.cancel.is_cancelled() {
            return Some(End::canceled());
        }
        if let ContextOutcome::Failed(failure) = &start.outcome {
            return Some(End::failed(ExecutionError::Hook(failure.clone())));
        }
        start.halt.as_ref().map(|halt| End::halted(halt.stop_reason.clone()))
    }

    /// A subagent's start: SubagentStart (its contexts are the subagent's), the prompt, then
    /// the loop.
    async fn drive_subagent(&mut self, prompt: Option<String>, identity: Arc<AgentIdentity>) -> End {
        let input = SubagentStartInput { agent_id: identity.agent_id.clone(), agent_type: identity.agent_type.clone() };
        let start = self.hooks.subagent_start(&self.hook_ctx, input).await;
        if let Some(end) = self.ended_at_start(&start) {
            return end;
        }
        if let Some(prompt) = prompt {
            self.push(Message::user(prompt));
        }
        self.push_contexts(HookEventName::SubagentStart, start.contexts);
        self.agent_loop().await
    }

    /// Stop, or SubagentStop in a subagent.
    async fn stop_hooks(&self, stop_hook_active: bool, text: &str) -> Merged<StopOutcome> {
        match &self.subagent {
            None => self.hooks.stop(&self.hook_ctx, stop_hook_active, text).await,
            Some(sub) => {
                let input = SubagentStopInput {
                    stop_hook_active,
                    agent_id: sub.identity.agent_id.clone(),
                    agent_type: sub.identity.agent_type.clone(),
                    agent_transcript_path: self.transcript.path().to_path_buf(),
                    last_assistant_message: text.to_owned(),
                };
                self.hooks.subagent_stop(&self.hook_ctx, input).await
            }
        }
    }

    async fn agent_loop(&mut self) -> End {
        let mut stop_hook_active = false;
        let mut forced_in_a_row = 0u32;
        loop {
            if self.cancel.is_cancelled() {
                return End::canceled();
            }
            if self.num_turns >= self.agent.config.max_turns {
                let text = format!("reached max_turns ({}) before a final answer", self.agent.config.max_turns);
                return End::new(RunSubtype::ErrorMaxTurns, text, SessionEndReason::MaxTurns);
            }
            if let Some(end) = self.over_budget(&[]) {
                return end;
            }
            self.watch_point().await;
            self.push_background();
            let (reply, meta) = match self.model_turn().await {
                Ok(turn) => turn,
                Err(end) => return end,
            };
            let calls = reply.tool_calls.clone();
            self.push_reply(reply, meta);
            if let Some(end) = self.over_budget(&calls) {
                return end;
            }
            // `--json-schema`: the StructuredOutput call is the final answer; a final answer
            // without one is reminded once (`structured`).
            let had_calls = !calls.is_empty();
            let verdict = if !had_calls {
                self.structured_at_final_answer()
            } else {
                match self.tool_round(calls).await {
                    RoundEnd::Continue => self.structured_after_round(),
                    other => return self.round_end(other),
                }
            };
            let text = match verdict {
                Verdict::Proceed if had_calls => continue,
                Verdict::Proceed => self.last_text(),
                Verdict::Answered(text) => text,
                Verdict::Reminded => continue,
                Verdict::End(end) => return *end,
            };
            let stop = self.stop_hooks(stop_hook_active, &text).await;
            let stop_event = stop_event(self.subagent.is_some());
            if self.cancel.is_cancelled() {
                return End::canceled();
            }
            if let Some(halt) = stop.halt {
                self.push_contexts(stop_event, stop.contexts);
                let mut end = End::success(text);
                end.stop_reason = halt.stop_reason;
                return end;
            }
            match stop.outcome {
                StopOutcome::Allow => {
                    self.push_contexts(stop_event, stop.contexts);
                    match self.woken_at_end().await {
                        Some(true) => stop_hook_active = true,
                        Some(false) => return End::canceled(),
                        None => return End::success(text),
                    }
                }
                StopOutcome::ForceContinue { reason, hook_id } => {
                    if forced_in_a_row >= self.agent.config.max_forced_continuations {
                        let note = format!(
                            "{stop_event} hook `{hook_id}` force-continue stripped: {} forced continuation(s) in a row already",
                            forced_in_a_row
                        );
                        self.trace.warn(note.clone(), None);
                        self.observer.on_event(&RunEvent::Warning { text: &note });
                        self.push_contexts(stop_event, stop.contexts);
                        match self.woken_at_end().await {
                            Some(true) => {
                                stop_hook_active = true;
                                continue;
                            }
                            Some(false) => return End::canceled(),
                            None => return End::success(text),
                        }
                    }
                    forced_in_a_row += 1;
                    stop_hook_active = true;
                    self.push_contexts(stop_event, stop.contexts);
                    self.push(Message::user(reason));
                }
                StopOutcome::Failed(failure) => return End::failed(ExecutionError::Hook(failure)),
            }
        }
    }

    /// What background work delivered, appended before the next model request; a wake's and
    /// a background subagent's summary is shown to the user, the subagent's usage is the run's.
    fn push_background(&mut self) {
        for delivered in self.hooks.take_background() {
            match &delivered {
                Delivered::Wake { hook_id, summary, .. } => {
                    self.observer.on_event(&RunEvent::SystemMessage { hook_id, text: summary });
                }
                Delivered::Agent { agent, summary, usage, .. } => {
                    self.observer.on_event(&RunEvent::SystemMessage { hook_id: agent, text: summary });
                    self.add_delegated_usage(usage);
                }
                Delivered::Context(_) => {}
            }
            self.push(delivered.into_message());
        }
    }

    /// The run is about to end: its `asyncRewake` hooks and background subagents still running
    /// are waited for (each bounded by its time limit, or by cancellation). `Some(true)`: a wake
    /// arrived, the loop goes on;
    /// `Some(false)`: the run was canceled meanwhile; `None`: it ends.
    async fn woken_at_end(&self) -> Option<bool> {
        let woken = self.hooks.settle_wakes(&self.cancel).await;
        if self.cancel.is_cancelled() {
            return Some(false);
        }
        woken.then_some(true)
    }

    fn last_text(&self) -> String {
        self.conversation
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant(a) => Some(a.content.clone().unwrap_or_default()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Runs the calls of one model turn in order and appends their results, then the round's
    /// contexts. After a stop or cancellation, the remaining calls are answered, not run.
    /// Consecutive `Task` calls run concurrently (see the module documentation).
    pub(super) async fn tool_round(&mut self, calls: Vec<ToolCall>) -> RoundEnd {
        let batch = calls.len();
        let mut results: Vec<ToolResultMessage> = Vec::with_capacity(batch);
        let mut contexts: Vec<Message> = Vec::new();
        let mut end = RoundEnd::Continue;
        let mut next = 0;
        while next < calls.len() {
            let call = &calls[next];
            let skip = match &end {
                RoundEnd::Continue => None,
                RoundEnd::Prevented { .. } => Some(ToolError::new(
                    ErrorCode::HookStoppedContinuation,
                    "Skipped after PostToolUse requested a stop",
                )),
                RoundEnd::Halted { .. } | RoundEnd::Deferred(_) => {
                    Some(ToolError::new(ErrorCode::HookStoppedContinuation, "Skipped after a hook stopped the run"))
                }
                RoundEnd::Canceled => Some(ToolError::new(ErrorCode::Canceled, "Skipped: the run was canceled")),
            };
            if let Some(error) = skip {
                results.push(error_result(call, &error));
                next += 1;
                continue;
            }
            if self.cancel.is_cancelled() {
                end = RoundEnd::Canceled;
                results.push(error_result(call, &ToolError::new(ErrorCode::Canceled, "Skipped: the run was canceled")));
                next += 1;
                continue;
            }
            let group = calls[next..].iter().take_while(|c| self.is_delegation(c)).count().max(1);
            let outcomes = match group {
                1 => vec![self.process_call(call, batch).await],
                _ => self.concurrent_calls(&calls[next..next + group], batch).await,
            };
            next += group;
            self.cwd_point().await;
            self.follow_mode();
            for outcome in outcomes {
                contexts.extend(outcome.contexts);
                if let Some(result) = outcome.result {
                    self.observer.on_event(&RunEvent::ToolResult { result: &result });
                    results.push(result);
                }
                if let Some(ended) = outcome.end {
                    end = ended;
                }
            }
        }
        if end == RoundEnd::Continue && !results.is_empty() {
            let (batch_contexts, batch_end) = self.post_tool_batch(&calls, &results).await;
            contexts.extend(batch_contexts);
            if let Some(batch_end) = batch_end {
                end = batch_end;
            }
        }
        for result in results {
            self.push(Message::Tool(result));
        }
        for context in contexts {
            self.push(context);
        }
        end
    }

    /// After a PermissionRequest hook's `setMode`: later hook inputs carry the new mode.
    fn follow_mode(&mut self) {
        let mode = self.agent.policy.mode();
        if mode != self.hook_ctx.session.permission_mode {
            let mut session = (*self.hook_ctx.session).clone();
            session.permission_mode = mode;
            self.hook_ctx.session = Arc::new(session);
        }
    }

    /// Several `Task` calls at once, at most `subagents.max_concurrent` running; the outcomes
    /// in the calls' order.
    async fn concurrent_calls(&self, calls: &[ToolCall], batch: usize) -> Vec<CallOutcome> {
        let limit = self.agent.config.subagents.as_ref().map_or(1, |s| s.max_concurrent.max(1));
        // A loop, not a closure: the futures' lifetimes stay nameable (a closure here makes the
        // run's future not provably `Send`).
        let mut pending = Vec::with_capacity(calls.len());
        for call in calls {
            pending.push(self.process_call(call, batch));
        }
        futures_util::stream::iter(pending).buffered(limit).collect().await
    }
}

/// The event of a candidate final answer: Stop, or SubagentStop in a subagent.
fn stop_event(subagent: bool) -> HookEventName {
    match subagent {
        true => HookEventName::SubagentStop,
        false => HookEventName::Stop,
    }
}
