//! One module per hook event: its outcome, its merge rules (a [`super::engine::Fold`]) and the
//! `HookRuntime` method that fires it.
//!
//! Every firing returns a [`Merged`]: the event's own outcome enum (`*Outcome`) plus what every
//! event shares (contexts, `continue: false`, each hook's answer in one word). Every outcome
//! enum has the same failure variant, `Failed(`[`HookFailure`]`)`: a hook failed closed or
//! broke the contract, and what the model or the user reads is derived from the failure.
//!
//! | event | outcome | merge |
//! |---|---|---|
//! | PreToolUse | [`PreToolUseOutcome`] | rewrites: later replaces earlier, re-validated and frozen; suggestions: strongest wins; block short-circuits |
//! | PermissionRequest | [`PermissionRequestOutcome`] | deny short-circuits and beats allow |
//! | PostToolUse | [`PostToolUseOutcome`] | output rewrites chain (later replaces earlier); block reasons and contexts concatenate |
//! | Stop, SubagentStop | [`StopOutcome`] | the first force-continue wins and short-circuits; it needs a non-empty reason |
//! | UserPromptSubmit, UserPromptExpansion | [`UserPromptSubmitOutcome`] | block short-circuits |
//! | PreCompact | [`PreCompactOutcome`] | block short-circuits |
//! | ConfigChange | [`GateOutcome`] | block short-circuits |
//! | PreModelSwitch | [`PreModelSwitchOutcome`] | strongest wins (deny > ask > allow); deny short-circuits |
//! | Elicitation, ElicitationResult | [`ElicitationOutcome`] | the first answer decides and short-circuits |
//! | CwdChanged, FileChanged | [`WatchOutcome`] | the `watchPaths` answered join, in order |
//! | SessionStart | [`ContextOutcome`] | contexts; the `watchPaths` answered join ([`Merged::watch_paths`]) |
//! | SubagentStart, PostToolUseFailure, PostToolBatch, PostModelSwitch, Setup | [`ContextOutcome`] | contexts only |
//! | all | | additional context concatenated in order; `continue: false` is an OR |
//!
//! Folds that re-validate a hook's replacement arguments see the tools only through
//! [`ArgumentCheck`], never the tools themselves.

mod context_only;
mod elicitation;
mod gate;
mod model_switch;
mod observe;
mod permission_denied;
mod permission_request;
mod post_tool_use;
mod pre_compact;
mod pre_tool_use;
mod session_start;
mod stop;
mod user_prompt_submit;
mod watch;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::hook::HookEventName;
use spine_protocol::tool::{ErrorCode, ToolError};

pub use context_only::ContextOutcome;
pub use elicitation::ElicitationOutcome;
pub use gate::GateOutcome;
pub use model_switch::PreModelSwitchOutcome;
pub use permission_request::{Asked, PermissionRequestOutcome};
pub use post_tool_use::PostToolUseOutcome;
pub use pre_compact::PreCompactOutcome;
pub use pre_tool_use::PreToolUseOutcome;
pub use stop::StopOutcome;
pub use user_prompt_submit::UserPromptSubmitOutcome;
pub use watch::WatchOutcome;

use super::engine::{Dispatched, HaltBy};
use super::{HookError, HookErrorKind};
use crate::registry::{PreparedCall, ToolRegistry};
use crate::tool::Args;

/// What the hooks of one event produced: the event's outcome `O`, and the parts every event
/// shares, held once here rather than in each variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged<O> {
    /// The event's merged outcome.
    pub outcome: O,
    /// Additional context for the model, in configuration order. Where it goes depends on the
    /// event (docs/hooks.md, "JSON answer").
    pub contexts: Vec<String>,
    /// PostToolUse only: reasons of blocks, which do not undo the call (the result stays and
    /// each reason reaches the model beside it). Other events' blocks are their outcome.
    pub block_reasons: Vec<String>,
    /// `continue: false` from the first hook that asked.
    pub halt: Option<HaltBy>,
    /// `(hook id, answer in one word)` of each applied answer or counted failure, in order (for
    /// the decision record of a tool call).
    pub said: Vec<(String, &'static str)>,
    /// SessionStart only: the paths its hooks asked FileChanged hooks to watch (`watchPaths`,
    /// joined in configuration order); `None` when no hook answered any.
    pub watch_paths: Option<Vec<PathBuf>>,
}

impl<O> Merged<O> {
    /// An outcome no hook contributed to (the event has no hooks).
    pub(crate) fn alone(outcome: O) -> Self {
        Merged {
            outcome,
            contexts: Vec::new(),
            block_reasons: Vec::new(),
            halt: None,
            said: Vec::new(),
            watch_paths: None,
        }
    }

    /// An outcome with the contexts its fold collected and what the engine saw.
    pub(crate) fn new(outcome: O, contexts: Vec<String>, dispatched: Dispatched) -> Self {
        Merged {
            outcome,
            contexts,
            block_reasons: Vec::new(),
            halt: dispatched.halt,
            said: dispatched.said,
            watch_paths: None,
        }
    }
}

/// A hook failure that decided an outcome (it failed closed, or broke the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFailure {
    /// The event that fired.
    pub event: HookEventName,
    /// The failing hook's id.
    pub hook_id: String,
    /// What kind of failure.
    pub kind: HookErrorKind,
    /// The detail (for the trace and the user, never the model: commands may hold secrets).
    pub detail: String,
}

impl HookFailure {
    pub(crate) fn new(event: HookEventName, hook_id: &str, error: &HookError) -> Self {
        HookFailure { event, hook_id: hook_id.to_owned(), kind: error.kind, detail: error.detail.clone() }
    }

    /// The fixed error a model reads in place of a tool result: on PreToolUse by kind
    /// (`hook_contract_error`, `hook_launch_error`, `hook_execution_error`), on other events
    /// `hook_execution_error`. It never holds the detail.
    pub fn tool_error(&self) -> ToolError {
        match (self.event, self.kind) {
            (HookEventName::PreToolUse, HookErrorKind::Contract) => {
                ToolError::new(ErrorCode::HookContractError, "PreToolUse hook returned an invalid update")
            }
            (HookEventName::PreToolUse, HookErrorKind::Launch) => {
                ToolError::new(ErrorCode::HookLaunchError, "PreToolUse hook could not be started")
            }
            (HookEventName::PreToolUse, HookErrorKind::Failed | HookErrorKind::Timeout) => {
                ToolError::new(ErrorCode::HookExecutionError, "PreToolUse hook failed")
            }
            (event, _) => ToolError::new(ErrorCode::HookExecutionError, format!("{event} hook failed")),
        }
    }

    /// The short reason a failure gives where it refuses something (a PermissionRequest
    /// denial, a blocked compaction): `<event> hook failed (<kind>)`, without the detail.
    pub fn reason(&self) -> String {
        format!("{} hook failed ({})", self.event, self.kind)
    }
}

impl std::fmt::Display for HookFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} hook `{}` {}: {}", self.event, self.hook_id, self.kind, self.detail)
    }
}

/// What a fold may do with the tools: check a hook's replacement arguments for a prepared
/// call, as preparing the call checked the model's. Nothing else of a tool is reachable.
pub trait ArgumentCheck: Send + Sync {
    /// Normalises paths in replacement arguments as the call's tool does (relative paths made
    /// absolute against `cwd`).
    fn normalize(&self, call: &PreparedCall, args: &mut Map<String, Value>, cwd: &Path);

    /// Validates replacement arguments against the call's tool schema and freezes them; the
    /// error names the failing JSON path.
    fn validate(&self, call: &PreparedCall, args: Map<String, Value>) -> Result<Args, ToolError>;

    /// The call's tool's [`Tool::command_argument`](crate::tool::Tool::command_argument).
    fn command_argument(&self, call: &PreparedCall) -> Option<&'static str>;
}

impl ArgumentCheck for ToolRegistry {
    fn normalize(&self, call: &PreparedCall, args: &mut Map<String, Value>, cwd: &Path) {
        self.tool(call.handle).normalize(args, cwd);
    }

    fn validate(&self, call: &PreparedCall, args: Map<String, Value>) -> Result<Args, ToolError> {
        self.revalidate(call.handle, args)
    }

    fn command_argument(&self, call: &PreparedCall) -> Option<&'static str> {
        self.tool(call.handle).command_argument()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(event: HookEventName, kind: HookErrorKind) -> HookFailure {
        HookFailure { event, hook_id: "h".into(), kind, detail: "secret detail".into() }
    }

    #[test]
    fn a_pre_tool_use_failure_reads_by_kind_and_never_shows_the_detail() {
        let read = |kind| failure(HookEventName::PreToolUse, kind).tool_error().render();
        assert_eq!(
            read(HookErrorKind::Contract),
            "Error [hook_contract_error]: PreToolUse hook returned an invalid update"
        );
        assert_eq!(read(HookErrorKind::Launch), "Error [hook_launch_error]: PreToolUse hook could not be started");
        assert_eq!(read(HookErrorKind::Failed), "Error [hook_execution_error]: PreToolUse hook failed");
        assert_eq!(read(HookErrorKind::Timeout), "Error [hook_execution_error]: PreToolUse hook failed");
    }

    #[test]
    fn a_post_tool_use_failure_is_an_execution_error_whatever_its_kind() {
        for kind in [HookErrorKind::Contract, HookErrorKind::Launch, HookErrorKind::Failed, HookErrorKind::Timeout] {
            let error = failure(HookEventName::PostToolUse, kind).tool_error();
            assert_eq!(error.render(), "Error [hook_execution_error]: PostToolUse hook failed");
        }
    }

    #[test]
    fn a_failure_reason_names_the_event_and_kind_but_not_the_detail() {
        let f = failure(HookEventName::PermissionRequest, HookErrorKind::Timeout);
        assert_eq!(f.reason(), "PermissionRequest hook failed (timeout)");
        assert_eq!(f.to_string(), "PermissionRequest hook `h` timeout: secret detail");
    }
}
