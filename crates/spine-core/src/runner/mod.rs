//! The agent runner: UserPromptSubmit → [model → tool round]* → Stop, with SessionStart and
//! SessionEnd once each, `max_turns`, forced continuations, cancellation, the transcript and
//! the trace.
//!
//! The path of one tool call lives in `call` (`runner/call.rs`); this module holds the loop around it. Every
//! exit path leaves the conversation paired: every tool call the model made has exactly one
//! result, checked before every model request.

mod call;
mod single;

pub use single::{SingleCall, SingleCallOutcome};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use spine_protocol::hook::{
    CompactTrigger, HookEventName, Notification, NotificationInput, PostCompact, PostCompactInput, PreCompactInput,
    SessionEnd, SessionEndInput, SessionEndReason, SessionSource, SessionStartInput,
};
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::pairing::{unique_call_ids, validate_pairing};
use spine_protocol::run::{RunSubtype, Usage};
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError, ToolSpec};
use spine_protocol::trace::{ModelAttemptTrace, ModelTrace, TraceRecord};
use tokio_util::sync::CancellationToken;

use crate::hooks::events::{ContextOutcome, PreCompactOutcome, StopOutcome, UserPromptSubmitOutcome};
use crate::hooks::{HookContext, HookRegistry, HookRuntime, SessionInfo};
use crate::model::{AttemptOutcome, AttemptReport, ModelClient, ModelError, ModelErrorKind, ModelRequest, StreamSink};
use crate::observer::{RunEvent, RunObserver};
use crate::permission::{Approver, PermissionPolicy};
use crate::registry::ToolRegistry;
use crate::reports::ReportCollector;
use crate::session::{Transcript, TranscriptRecord};
use crate::skills::{SkillCatalog, SkillRoot};
use crate::stages::compact_context::{
    CompactStrategy, Summarizer, can_compact, compact_context, compaction_threshold, record_not_compacted,
    should_compact,
};
use crate::stages::finalize_output::finalize_output;
use crate::stages::handle_error::{ExecutionError, handle_error};
use crate::stages::prepare_turn::{OperatorStateSource, PreparedTurn, TurnInputs, operator_snapshot};
use crate::stages::prepare_turn::{TurnSettings, prepare_turn};
use crate::tokens::{TokenCache, TokenEstimator, estimator_for};

use crate::stages::review_tool_call::Visibility;
use crate::tool::ProgressSink;
use crate::trace::{Trace, micros};
use crate::workspace::Workspace;

/// Everything that stays the same across runs of one agent.
pub struct Agent {
    /// The model.
    pub model: Arc<dyn ModelClient>,
    /// The frozen tools.
    pub tools: Arc<ToolRegistry>,
    /// The frozen hooks.
    pub hooks: Arc<HookRegistry>,
    /// The permission policy.
    pub policy: PermissionPolicy,
    /// Who answers `ask`.
    pub approver: Arc<dyn Approver>,
    /// Limits and settings.
    pub config: AgentConfig,
}

/// Limits and settings of an agent.
#[derive(Clone)]
pub struct AgentConfig {
    /// Model requests per run before it ends with `error_max_turns` (default 20).
    pub max_turns: u32,
    /// Stop force-continues honoured in a row (default 1).
    pub max_forced_continuations: u32,
    /// The workspace boundary.
    pub workspace: Arc<Workspace>,
    /// The working directory (hooks' `cwd`, relative paths).
    pub cwd: PathBuf,
    /// The tools visible to the model.
    pub visibility: Visibility,
    /// Inputs of `prepare_turn`.
    pub turn: TurnSettings,
    /// Whether a PreToolUse `defer` may end the run (non-interactive runs).
    pub allow_defer: bool,
    /// Skill roots, scanned once per run.
    pub skill_roots: Vec<SkillRoot>,
    /// Budget hints of an assignment (`advisory_hints.recommended_compaction_threshold`, …).
    pub budget_hints: Option<serde_json::Value>,
    /// `context.compaction_threshold_tokens` from settings.
    pub compaction_threshold: Option<u64>,
    /// The compaction strategy.
    pub compaction_strategy: CompactStrategy,
    /// The token estimator (default: BPE of the model family, or words when unknown).
    pub estimator: Option<Arc<dyn TokenEstimator>>,
    /// Extra operator-state sections (command runs, processes).
    pub operator_state: Option<Arc<dyn OperatorStateSource>>,
}

impl AgentConfig {
    /// Defaults for a workspace: 20 turns, one forced continuation, every tool visible.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        let cwd = workspace.root().to_path_buf();
        AgentConfig {
            max_turns: 20,
            max_forced_continuations: 1,
            workspace,
            cwd,
            visibility: Visibility::All,
            turn: TurnSettings::default(),
            allow_defer: true,
            skill_roots: Vec::new(),
            budget_hints: None,
            compaction_threshold: None,
            compaction_strategy: CompactStrategy::Sandwich,
            estimator: None,
            operator_state: None,
        }
    }
}

/// One run's inputs.
pub struct RunRequest {
    /// The prompt (absent when resuming only to settle a deferred call).
    pub prompt: Option<String>,
    /// The session id.
    pub session_id: String,
    /// Where the transcript goes.
    pub transcript: Transcript,
    /// The conversation so far (from `--resume`).
    pub history: Vec<Message>,
    /// A call a deferral left pending (from `--resume`).
    pub deferred: Option<ToolCall>,
    /// Why the session starts.
    pub source: SessionSource,
    /// Cancels the run.
    pub cancel: CancellationToken,
    /// Live events.
    pub observer: Arc<dyn RunObserver>,
    /// The run's trace (create it with a sink to stream entries).
    pub trace: Trace,
    /// The file SessionStart hooks append `export` lines to.
    pub env_file: Option<PathBuf>,
    /// Streamed tool output (defaults to the report collector when there is one).
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Receives the run's reports.
    pub reports: Option<Arc<ReportCollector>>,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The subtype.
    pub subtype: RunSubtype,
    /// The final text: the answer, the blocking reason, or the error.
    pub result: String,
    /// The session id.
    pub session_id: String,
    /// Model requests made.
    pub num_turns: u32,
    /// The conversation as sent to the model: system message, then the transcript.
    pub messages: Vec<Message>,
    /// Token usage.
    pub usage: Usage,
    /// The trace.
    pub trace: Trace,
    /// The call left pending by a deferral.
    pub deferred: Option<ToolCall>,
    /// A hook's `stopReason`, when a hook ended the run.
    pub stop_reason: Option<String>,
    /// The error, when the run failed.
    pub error: Option<ExecutionError>,
}

/// How a tool round ended.
#[derive(Debug, Clone, PartialEq)]
enum RoundEnd {
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

/// The end of a run, before finalisation.
struct End {
    subtype: RunSubtype,
    result: String,
    reason: SessionEndReason,
    stop_reason: Option<String>,
    deferred: Option<ToolCall>,
    error: Option<ExecutionError>,
}

impl End {
    fn new(subtype: RunSubtype, result: impl Into<String>, reason: SessionEndReason) -> Self {
        End { subtype, result: result.into(), reason, stop_reason: None, deferred: None, error: None }
    }

    fn success(result: impl Into<String>) -> Self {
        End::new(RunSubtype::Success, result, SessionEndReason::Completed)
    }

    fn halted(stop_reason: Option<String>) -> Self {
        let text = stop_reason.clone().unwrap_or_else(|| "a hook stopped the run".to_owned());
        End {
            stop_reason,
            error: Some(ExecutionError::Blocked(text.clone())),
            ..End::new(RunSubtype::Blocked, text, SessionEndReason::Blocked)
        }
    }

    fn failed(error: ExecutionError) -> Self {
        End {
            error: Some(error.clone()),
            ..End::new(RunSubtype::ErrorDuringExecution, error.to_string(), SessionEndReason::Error)
        }
    }

    fn canceled() -> Self {
        End {
            error: Some(ExecutionError::Canceled("the run was canceled".into())),
            ..End::new(RunSubtype::Canceled, "canceled", SessionEndReason::Canceled)
        }
    }
}

impl Agent {
    /// Runs one prompt to its end. Never panics on bad input: every failure is an outcome.
    pub async fn run(&self, request: RunRequest) -> RunOutcome {
        let session = Arc::new(SessionInfo {
            session_id: request.session_id.clone(),
            transcript_path: request.transcript.path().to_path_buf(),
            cwd: self.config.cwd.clone(),
            project_dir: self.config.workspace.root().to_path_buf(),
            permission_mode: self.policy.mode(),
            env_file: request.env_file.clone(),
        });
        let hooks = HookRuntime::new(
            Arc::clone(&self.hooks),
            request.trace.clone(),
            Arc::clone(&request.observer),
            self.config.workspace.root().to_path_buf(),
        );
        let specs: Vec<ToolSpec> =
            self.tools.specs().filter(|s| self.config.visibility.allows(&s.name)).cloned().collect();
        let (skills, issues) = SkillCatalog::scan(&self.config.skill_roots);
        for issue in issues {
            request.trace.warn(format!("skill `{}` skipped: {}", issue.name, issue.reason), None);
        }
        let estimator = self.config.estimator.clone().unwrap_or_else(|| estimator_for(Some(self.model.model())));
        let mut run = Run::new(
            self,
            RunParts {
                hooks,
                session,
                transcript: request.history,
                writer: request.transcript,
                trace: request.trace,
                observer: request.observer,
                cancel: request.cancel,
                progress: request.progress,
                reports: request.reports,
                visibility: self.config.visibility.clone(),
            },
        );
        run.specs = specs;
        run.skills = skills;
        run.estimator = estimator;
        if let Some(r) = &run.reports {
            r.started();
        }
        let end = run.drive(request.prompt, request.deferred, request.source).await;
        run.finish(end).await
    }
}

/// The state of one run.
struct Run<'a> {
    agent: &'a Agent,
    hooks: HookRuntime,
    hook_ctx: HookContext,
    transcript: Vec<Message>,
    writer: Transcript,
    trace: Trace,
    observer: Arc<dyn RunObserver>,
    cancel: CancellationToken,
    specs: Vec<ToolSpec>,
    num_turns: u32,
    usage: Usage,
    progress: Option<Arc<dyn ProgressSink>>,
    reports: Option<Arc<ReportCollector>>,
    last_prepared: Vec<Message>,
    skills: SkillCatalog,
    estimator: Arc<dyn TokenEstimator>,
    token_cache: TokenCache,
    /// The tools this run may call (the agent's, or narrower for one call).
    visibility: Visibility,
    /// Whether a PreToolUse `defer` may end this run (else it is asked).
    allow_defer: bool,
    /// Every tool-call id of the conversation so far (kept as replies arrive, not rebuilt).
    call_ids: std::collections::HashSet<String>,
}

/// What a [`Run`] is made of, besides its agent.
struct RunParts {
    hooks: HookRuntime,
    session: Arc<SessionInfo>,
    transcript: Vec<Message>,
    writer: Transcript,
    trace: Trace,
    observer: Arc<dyn RunObserver>,
    cancel: CancellationToken,
    progress: Option<Arc<dyn ProgressSink>>,
    reports: Option<Arc<ReportCollector>>,
    visibility: Visibility,
}

impl<'a> Run<'a> {
    /// A run with no model turns yet; streamed tool output goes to `progress`, else to the
    /// report collector.
    fn new(agent: &'a Agent, parts: RunParts) -> Self {
        let progress = parts.progress.or_else(|| parts.reports.clone().map(|r| r as Arc<dyn ProgressSink>));
        let call_ids = parts
            .transcript
            .iter()
            .filter_map(|m| match m {
                Message::Assistant(a) => Some(a.tool_calls.iter().map(|c| c.id.clone())),
                _ => None,
            })
            .flatten()
            .collect();
        Run {
            agent,
            hooks: parts.hooks,
            hook_ctx: HookContext {
                session: parts.session,
                event: spine_protocol::hook::HookEventName::SessionStart,
                prompt_id: None,
                cancel: parts.cancel.clone(),
            },
            transcript: parts.transcript,
            writer: parts.writer,
            trace: parts.trace,
            observer: parts.observer,
            cancel: parts.cancel,
            specs: Vec::new(),
            num_turns: 0,
            usage: Usage::default(),
            progress,
            reports: parts.reports,
            last_prepared: Vec::new(),
            skills: SkillCatalog::default(),
            estimator: Arc::new(crate::tokens::WordsEstimator),
            token_cache: TokenCache::new(),
            visibility: parts.visibility,
            allow_defer: agent.config.allow_defer,
            call_ids,
        }
    }
}

impl Run<'_> {
    /// Appends a message to the conversation and the transcript file.
    fn push(&mut self, message: Message) {
        if let Err(e) = self.writer.append(&TranscriptRecord::Message { message: message.clone() }) {
            let text = format!("could not write the transcript {}: {e}", self.writer.path().display());
            self.trace.warn(text.clone(), None);
            self.observer.on_event(&RunEvent::Warning { text: &text });
        }
        self.observer.on_event(&RunEvent::Message { message: &message });
        self.transcript.push(message);
    }

    fn push_contexts(&mut self, event: spine_protocol::hook::HookEventName, contexts: Vec<String>) {
        for text in contexts {
            self.push(Message::context(event, text));
        }
    }

    async fn drive(&mut self, prompt: Option<String>, deferred: Option<ToolCall>, source: SessionSource) -> End {
        let _ = self.writer.append(&TranscriptRecord::Session {
            session_id: self.hook_ctx.session.session_id.clone(),
            cwd: self.agent.config.cwd.clone(),
            model: self.agent.model.model().to_owned(),
        });
        self.observer.on_event(&RunEvent::SessionStarted {
            session_id: &self.hook_ctx.session.session_id,
            model: self.agent.model.model(),
        });
        let start = self
            .hooks
            .session_start(
                &self.hook_ctx,
                SessionStartInput { source, model: Some(self.agent.model.model().to_owned()) },
            )
            .await;
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
            self.push(Message::user(prompt));
            pending_contexts.extend(submitted.contexts);
            self.push_contexts(spine_protocol::hook::HookEventName::UserPromptSubmit, pending_contexts);
        } else if !pending_contexts.is_empty() {
            self.push_contexts(spine_protocol::hook::HookEventName::SessionStart, pending_contexts);
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
            let reply = match self.model_turn().await {
                Ok(reply) => reply,
                Err(end) => return end,
            };
            let calls = reply.tool_calls.clone();
            self.push(Message::Assistant(reply));
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
                self.push_contexts(spine_protocol::hook::HookEventName::Stop, stop.contexts);
                let mut end = End::success(text);
                end.stop_reason = halt.stop_reason;
                return end;
            }
            match stop.outcome {
                StopOutcome::Allow => {
                    self.push_contexts(spine_protocol::hook::HookEventName::Stop, stop.contexts);
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
                        self.push_contexts(spine_protocol::hook::HookEventName::Stop, stop.contexts);
                        return End::new(RunSubtype::Success, text, SessionEndReason::Completed);
                    }
                    forced_in_a_row += 1;
                    stop_hook_active = true;
                    self.push_contexts(spine_protocol::hook::HookEventName::Stop, stop.contexts);
                    self.push(Message::user(reason));
                }
                StopOutcome::Failed(failure) => return End::failed(ExecutionError::Hook(failure)),
            }
        }
    }

    fn last_text(&self) -> String {
        self.transcript
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant(a) => Some(a.content.clone().unwrap_or_default()),
                _ => None,
            })
            .unwrap_or_default()
    }

    fn round_end(&mut self, end: RoundEnd) -> End {
        match end {
            RoundEnd::Continue => {
                End::failed(ExecutionError::Runtime("internal error: a continuing round ended the run".into()))
            }
            RoundEnd::Prevented { output, stop_reason } => {
                let mut end = End::new(RunSubtype::Success, output, SessionEndReason::Completed);
                end.stop_reason = stop_reason;
                end
            }
            RoundEnd::Halted { stop_reason } => End::halted(stop_reason),
            RoundEnd::Canceled => End::new(RunSubtype::Canceled, "canceled", SessionEndReason::Canceled),
            RoundEnd::Deferred(call) => {
                let _ = self.writer.append(&TranscriptRecord::Deferred { call: call.clone() });
                let mut end = End::new(
                    RunSubtype::Deferred,
                    format!("tool call {} ({}) deferred; resume the session to continue", call.id, call.name),
                    SessionEndReason::Deferred,
                );
                end.deferred = Some(call);
                end
            }
        }
    }

    /// prepare_turn → compact_context → pairing check → one model request.
    async fn model_turn(&mut self) -> Result<AssistantMessage, End> {
        let mut prepared = self.prepare();
        let likely_model = prepared.likely_model.clone().unwrap_or_else(|| self.agent.model.model().to_owned());
        let config = &self.agent.config;
        let threshold = compaction_threshold(
            config.budget_hints.as_ref(),
            config.compaction_threshold,
            self.agent.model.context_window(),
        );
        if should_compact(prepared.estimated_token_count, threshold, prepared.messages.len())
            && can_compact(&prepared.messages)
        {
            if self.compact(&prepared.messages, &likely_model).await {
                prepared = self.prepare();
            }
        } else {
            record_not_compacted(prepared.messages.len(), Some(&likely_model), &self.trace);
        }
        if self.cancel.is_cancelled() {
            return Err(End::canceled());
        }
        if let Err(e) = validate_pairing(&prepared.messages) {
            self.trace.warn(format!("pairing violation: {e}"), None);
            return Err(End::failed(ExecutionError::Runtime(format!(
                "internal error: refusing to send an invalid history: {e}"
            ))));
        }
        self.num_turns += 1;
        let turn = self.num_turns;
        self.observer.on_event(&RunEvent::ModelRequest { turn });
        let started = Instant::now();
        let sink = ObserverStream { observer: Arc::clone(&self.observer), trace: self.trace.clone(), turn };
        let request = ModelRequest { messages: &prepared.messages, tools: &self.specs };
        let result = tokio::select! {
            r = self.agent.model.complete(request, &sink, &self.cancel) => r,
            () = self.cancel.cancelled() => Err(ModelError::new(ModelErrorKind::Canceled, "canceled")),
        };
        self.last_prepared = prepared.messages;
        let (tool_calls, error) = match &result {
            Ok(reply) => (reply.message.tool_calls.len(), None),
            Err(e) => (0, Some(e.message.clone())),
        };
        self.trace.record(TraceRecord::Model(ModelTrace {
            turn,
            model: self.agent.model.model().to_owned(),
            message_count: self.last_prepared.len(),
            tool_calls,
            duration_us: micros(started.elapsed()),
            error,
        }));
        match result {
            Ok(reply) => {
                if let Some(u) = reply.usage {
                    self.usage.add(u);
                }
                let mut message = reply.message;
                // Ids are made unique before any call is looked at (see `unique_call_ids`).
                for (old, new) in unique_call_ids(&mut message.tool_calls, &self.call_ids, turn) {
                    let old = if old.trim().is_empty() { "an empty id".to_owned() } else { format!("`{old}`") };
                    self.trace.warn(format!("tool call with {old} renamed `{new}`: ids must be unique"), Some(&new));
                }
                self.call_ids.extend(message.tool_calls.iter().map(|c| c.id.clone()));
                if message.tool_calls.is_empty() && message.content.as_deref().is_none_or(|t| t.trim().is_empty()) {
                    let e = ModelError::new(
                        ModelErrorKind::InvalidReply,
                        "the model returned an empty reply (no text and no tool calls)",
                    );
                    return Err(End::failed(ExecutionError::Model(e)));
                }
                Ok(message)
            }
            Err(e) if e.kind == ModelErrorKind::Canceled => Err(End::canceled()),
            Err(e) => Err(End::failed(ExecutionError::Model(e))),
        }
    }

    /// `prepare_turn` over the current transcript (operator state snapshot taken first).
    fn prepare(&mut self) -> PreparedTurn {
        let config = &self.agent.config;
        let operator = config.turn.profile == "main" && !config.turn.is_subagent;
        let snapshot = operator.then(|| {
            let extra = config.operator_state.as_ref().map(|s| s.sections()).unwrap_or_default();
            operator_snapshot(&config.workspace, extra)
        });
        let inputs = TurnInputs {
            settings: &config.turn,
            workspace: &config.workspace,
            skills: &self.skills,
            operator_state: snapshot.as_ref(),
            estimator: self.estimator.as_ref(),
        };
        prepare_turn(&inputs, &self.transcript, Some(&mut self.token_cache), &self.trace)
    }

    /// PreCompact → compact_context → PostCompact → SessionStart(compact). Returns whether the
    /// transcript changed.
    async fn compact(&mut self, request: &[Message], likely_model: &str) -> bool {
        let pre = self
            .hooks
            .pre_compact(&self.hook_ctx, PreCompactInput { trigger: CompactTrigger::Auto, custom_instructions: None })
            .await;
        let blocked = match pre.outcome {
            PreCompactOutcome::Proceed => None,
            PreCompactOutcome::Blocked { reason, hook_id } => Some((reason, hook_id)),
            PreCompactOutcome::Failed(f) => Some((f.reason(), f.hook_id)),
        };
        if let Some((reason, hook_id)) = blocked {
            self.trace.warn(format!("compaction blocked by PreCompact hook `{hook_id}`: {reason}"), None);
            record_not_compacted(request.len(), Some(likely_model), &self.trace);
            return false;
        }
        let model = Arc::clone(&self.agent.model);
        let summarizer = Summarizer { model: model.as_ref(), tools: &self.specs };
        let compaction = compact_context(
            request,
            Some(likely_model),
            self.agent.config.compaction_strategy,
            Some(summarizer),
            &self.cancel,
            &self.trace,
        )
        .await;
        if !compaction.compacted {
            return false;
        }
        // The request's first message is this turn's system prompt; the transcript keeps the rest.
        self.transcript = compaction.messages.into_iter().skip(1).collect();
        self.token_cache.reset();
        let _ = self.writer.append(&TranscriptRecord::Compacted { messages: self.transcript.clone() });
        self.hooks
            .observe::<PostCompact>(
                &self.hook_ctx,
                PostCompactInput { trigger: CompactTrigger::Auto, compact_summary: compaction.note },
            )
            .await;
        let start = self
            .hooks
            .session_start(
                &self.hook_ctx,
                SessionStartInput { source: SessionSource::Compact, model: Some(likely_model.to_owned()) },
            )
            .await;
        if let ContextOutcome::Failed(failure) = start.outcome {
            self.trace.warn(format!("SessionStart (compact) {failure}"), None);
        }
        self.push_contexts(HookEventName::SessionStart, start.contexts);
        true
    }

    /// Runs the calls of one model turn in order and appends their results, then the round's
    /// contexts. After a stop or cancellation, the remaining calls are answered, not run.
    async fn tool_round(&mut self, calls: Vec<ToolCall>) -> RoundEnd {
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

    async fn finish(mut self, end: End) -> RunOutcome {
        let anchor = self.hook_ctx.prompt_id.as_deref().unwrap_or("turn").to_owned();
        finalize_output(&end.result, &self.hook_ctx.session.session_id, &anchor, &self.trace);
        if end.reason == SessionEndReason::Deferred || end.subtype.is_error() {
            self.hooks
                .observe::<Notification>(
                    &self.hook_ctx,
                    NotificationInput {
                        message: end.result.clone(),
                        title: Some(format!("run ended: {}", end.reason.as_str())),
                        notification_type: "run_ended".to_owned(),
                    },
                )
                .await;
        }
        self.hooks.observe::<SessionEnd>(&self.hook_ctx, SessionEndInput { reason: end.reason }).await;
        self.hooks.shutdown();
        if let Some(reports) = &self.reports {
            match (end.subtype, &end.error) {
                (RunSubtype::Success | RunSubtype::Deferred, _) => reports.complete(&end.result),
                (RunSubtype::Canceled, _) => reports.canceled(&end.result),
                (RunSubtype::ErrorMaxTurns | RunSubtype::ErrorDuringExecution | RunSubtype::Blocked, error) => {
                    let error = error.clone().unwrap_or_else(|| ExecutionError::Runtime(end.result.clone()));
                    let identity = reports.identity();
                    reports.fail(handle_error(&error, &identity.logical_work_id, identity.attempt_no, &self.trace));
                }
            }
        }
        let _ = self.writer.append(&TranscriptRecord::Result { subtype: end.subtype });
        let mut messages = match self.last_prepared.first() {
            Some(system @ Message::System { .. }) => vec![system.clone()],
            _ => Vec::new(),
        };
        messages.append(&mut self.transcript);
        RunOutcome {
            subtype: end.subtype,
            result: end.result,
            session_id: self.hook_ctx.session.session_id.clone(),
            num_turns: self.num_turns,
            messages,
            usage: self.usage,
            trace: self.trace,
            deferred: end.deferred,
            stop_reason: end.stop_reason,
            error: end.error,
        }
    }
}

/// The result message for a call that got an error.
fn error_result(call: &ToolCall, error: &ToolError) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        content: error.render(),
        error_code: Some(error.code),
    }
}

/// The sink of one model request: text to the observer; each attempt to the observer and the
/// trace.
struct ObserverStream {
    observer: Arc<dyn RunObserver>,
    trace: Trace,
    turn: u32,
}

impl StreamSink for ObserverStream {
    fn text_delta(&self, text: &str) {
        self.observer.on_event(&RunEvent::TextDelta { text });
    }

    fn attempt(&self, report: &AttemptReport<'_>) {
        let (outcome, error, wait_ms) = match report.outcome {
            AttemptOutcome::Succeeded => ("ok", None, None),
            AttemptOutcome::Retrying { error, wait } => ("retry", Some(error), Some(millis(wait))),
            AttemptOutcome::Failed { error } => ("failed", Some(error), None),
        };
        self.trace.record(TraceRecord::ModelAttempt(ModelAttemptTrace {
            turn: self.turn,
            attempt: report.attempt,
            duration_us: micros(report.duration),
            outcome: outcome.to_owned(),
            error_kind: error.map(|e| e.kind.to_string()),
            error: error.map(|e| e.message.clone()),
            wait_ms,
        }));
        self.observer.on_event(&RunEvent::ModelAttempt { turn: self.turn, report });
    }
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
