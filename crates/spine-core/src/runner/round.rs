//! The loop of a run: SessionStart → UserPromptSubmit (→ a deferred call, when resuming) →
//! [model turn → tool round]* → Stop, which may force the loop on (up to
//! `max_forced_continuations` in a row). Cancellation is checked between steps and wins over
//! whatever a hook interrupted by it answered.

use std::sync::Arc;

use spine_protocol::hook::{HookEventName, SessionEndReason, SessionSource, SessionStartInput};
use spine_protocol::message::{ImageBlock, Message, ToolResultMessage};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};

use super::finish::End;
use super::request::SessionTurn;
use super::{Run, error_result};
use crate::hooks::events::{ContextOutcome, Merged, StopOutcome, UserPromptSubmitOutcome};
use crate::observer::RunEvent;
use crate::session::TranscriptRecord;
use crate::stages::handle_error::ExecutionError;

/// How a tool round ended.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum RoundEnd {
    /// Ask the model again.
    Continue,
    /// PostToolUse prevented continuation; the run's output is this text.
    Prevented { output: String, stop_reason: Option<String> },
    /// A hook returned `continue: false`.
    Halted { stop_reason: Option<String> },
    /// The run was canceled.
    Canceled,
    /// A call was deferred.
    Deferred(ToolCall),
}

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
        if self.cancel.is_cancelled() {
            return End::canceled();
        }
        if let ContextOutcome::Failed(failure) = start.outcome {
            return End::failed(ExecutionError::Hook(failure));
        }
        if let Some(halt) = start.halt {
            return End::halted(halt.stop_reason);
        }
        let mut pending_contexts = start.contexts;

        if let Some(prompt) = prompt {
            self.hook_ctx.prompt_id = Some(Arc::from(uuid::Uuid::new_v4().to_string()));
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
            let background = self.hooks.take_background_context();
            for message in background {
                self.push(message);
            }
            let (reply, meta) = match self.model_turn().await {
                Ok(turn) => turn,
                Err(end) => return end,
            };
            let calls = reply.tool_calls.clone();
            self.push_reply(reply, meta);
            if !calls.is_empty() {
                match self.tool_round(calls).await {
                    RoundEnd::Continue => continue,
                    other => return self.round_end(other),
                }
            }
            let text = self.last_text();
            let stop = self.hooks.stop(&self.hook_ctx, stop_hook_active, &text).await;
            if self.cancel.is_cancelled() {
                return End::canceled();
            }
            if let Some(halt) = stop.halt {
                self.push_contexts(HookEventName::Stop, stop.contexts);
                let mut end = End::success(text);
                end.stop_reason = halt.stop_reason;
                return end;
            }
            match stop.outcome {
                StopOutcome::Allow => {
                    self.push_contexts(HookEventName::Stop, stop.contexts);
                    return End::success(text);
                }
                StopOutcome::ForceContinue { reason, hook_id } => {
                    if forced_in_a_row >= self.agent.config.max_forced_continuations {
                        let note = format!(
                            "Stop hook `{hook_id}` force-continue stripped: {} forced continuation(s) in a row already",
                            forced_in_a_row
                        );
                        self.trace.warn(note.clone(), None);
                        self.observer.on_event(&RunEvent::Warning { text: &note });
                        self.push_contexts(HookEventName::Stop, stop.contexts);
                        return End::success(text);
                    }
                    forced_in_a_row += 1;
                    stop_hook_active = true;
                    self.push_contexts(HookEventName::Stop, stop.contexts);
                    self.push(Message::user(reason));
                }
                StopOutcome::Failed(failure) => return End::failed(ExecutionError::Hook(failure)),
            }
        }
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
    pub(super) async fn tool_round(&mut self, calls: Vec<ToolCall>) -> RoundEnd {
        let batch = calls.len();
        let mut results: Vec<ToolResultMessage> = Vec::with_capacity(batch);
        let mut contexts: Vec<Message> = Vec::new();
        let mut end = RoundEnd::Continue;
        for call in &calls {
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
                continue;
            }
            if self.cancel.is_cancelled() {
                end = RoundEnd::Canceled;
                results.push(error_result(call, &ToolError::new(ErrorCode::Canceled, "Skipped: the run was canceled")));
                continue;
            }
            let outcome = self.process_call(call, batch).await;
            contexts.extend(outcome.contexts);
            if let Some(result) = outcome.result {
                self.observer.on_event(&RunEvent::ToolResult { result: &result });
                results.push(result);
            }
            if let Some(next) = outcome.end {
                end = next;
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
}
