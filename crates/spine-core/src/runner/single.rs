//! One tool call through the whole pipeline, with no model: prepare → `review_tool_call` →
//! PreToolUse → permission policy (→ PermissionRequest hooks → the approver) → execute →
//! `project_tool_result` → PostToolUse / PostToolUseFailure, and one decision record.
//!
//! This is the path the worker's deterministic and agent-program tool items take: exactly the
//! code of a model's tool call in a run (`runner/call.rs`), so a deny rule, a PreToolUse hook or
//! an `ask` that nobody can answer stops a mailbox item as it stops the model. A deferral is
//! not possible here (there is no run to end): it is asked instead, and the approver decides.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};
use spine_protocol::message::{Effort, Message, ToolResultMessage};
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};
use tokio_util::sync::CancellationToken;

use super::{Agent, Run, RunParts};
use crate::hooks::{HookRuntime, SessionInfo};
use crate::observer::RunObserver;
use crate::reports::ReportCollector;
use crate::session::Transcript;
use crate::stages::review_tool_call::Visibility;
use crate::tool::ProgressSink;
use crate::trace::Trace;

/// The inputs of one call.
pub struct SingleCall {
    /// The call, as a model would have made it.
    pub call: ToolCall,
    /// The session id hooks see.
    pub session_id: String,
    /// The transcript path hooks see (nothing is written to it).
    pub transcript_path: PathBuf,
    /// The tools this call may use: the agent's visibility, narrowed (never widened).
    pub visibility: Option<Visibility>,
    /// Cancels the call (the running tool gets a grace period to stop).
    pub cancel: CancellationToken,
    /// Hook and permission events.
    pub observer: Arc<dyn RunObserver>,
    /// Where the stage, hook and decision entries go.
    pub trace: Trace,
    /// Streamed tool output (defaults to the report collector when there is one).
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Receives `tool_reviewed` and `tool_output` progress (no start or terminal report).
    pub reports: Option<Arc<ReportCollector>>,
}

/// What one call produced.
#[derive(Debug, Clone)]
pub struct SingleCallOutcome {
    /// The result a model would read.
    pub result: ToolResultMessage,
    /// Set when the call did not succeed: refused by review, a hook, the policy or the
    /// approver, or failed while running.
    pub error: Option<ToolError>,
    /// The tool's structured response (after PostToolUse replacements) and the projection's
    /// metadata, when the call succeeded.
    pub executed: Option<(Value, Map<String, Value>)>,
    /// Context messages hooks added.
    pub contexts: Vec<Message>,
}

impl Agent {
    /// Runs one tool call through the pipeline (see the module documentation).
    pub async fn run_tool_call(&self, request: SingleCall) -> SingleCallOutcome {
        let session = Arc::new(SessionInfo {
            session_id: request.session_id,
            transcript_path: request.transcript_path.clone(),
            cwd: self.config.cwd.clone(),
            hook_dir: self.config.cwd.clone(),
            project_dir: self.config.workspace.root().to_path_buf(),
            permission_mode: self.policy.mode(),
            effort: self.config.effort.map(Effort::from),
            env_file: None,
        });
        let hooks = HookRuntime::new(
            Arc::clone(&self.hooks),
            request.trace.clone(),
            Arc::clone(&request.observer),
            self.config.workspace.root().to_path_buf(),
        );
        let visibility = match request.visibility {
            Some(narrower) => self.config.visibility.narrowed(&narrower),
            None => self.config.visibility.clone(),
        };
        let mut run = Run::new(
            self,
            RunParts {
                hooks,
                session,
                conversation: Vec::new(),
                transcript: Transcript::discard(request.transcript_path),
                trace: request.trace,
                observer: request.observer,
                cancel: request.cancel,
                progress: request.progress,
                reports: request.reports,
                visibility,
                session_turn: super::SessionTurn::Whole,
                subagent: None,
            },
        );
        // A single call may not defer: there is no run for a deferral to end.
        run.allow_defer = false;
        // Nothing outlives one call: the shell's directory is not kept, and an `Agent` call
        // runs in the foreground.
        run.keeps_shell = false;
        run.may_background = false;
        let outcome = run.process_call(&request.call, 1).await;
        run.hooks.shutdown();
        let result = outcome.result.unwrap_or_else(|| {
            let error = ToolError::new(ErrorCode::PermissionDenied, "the call was deferred; nobody can resume it");
            super::error_result(&request.call, &error)
        });
        let error =
            outcome.error.or_else(|| result.error_code.map(|code| ToolError::new(code, result.content.clone())));
        SingleCallOutcome { result, error, executed: outcome.executed, contexts: outcome.contexts }
    }
}
