//! One module per hook event: its merged outcome, its merge rules (a [`super::engine::Fold`])
//! and the `HookRuntime` method that fires it.
//!
//! | event | merge |
//! |---|---|
//! | PreToolUse | rewrites: later replaces earlier, re-validated and frozen; suggestions: strongest wins; block short-circuits |
//! | PermissionRequest | deny short-circuits and beats allow |
//! | PostToolUse | output rewrites chain (later replaces earlier); block reasons and contexts concatenate |
//! | Stop | the first force-continue wins and short-circuits; it needs a non-empty reason |
//! | UserPromptSubmit, PreCompact | block short-circuits |
//! | all | additional context concatenated in order; `continue: false` is an OR |

mod context_only;
mod observe;
mod permission_request;
mod post_tool_use;
mod pre_compact;
mod pre_tool_use;
mod stop;
mod user_prompt_submit;

pub use context_only::ContextResult;
pub use permission_request::{PermissionRequestResult, PermissionVerdict};
pub use post_tool_use::PostToolUseResult;
pub use pre_compact::PreCompactResult;
pub use pre_tool_use::{PreToolUseResult, PreToolVerdict};
pub use stop::{StopResult, StopVerdict};
pub use user_prompt_submit::{PromptResult, PromptVerdict};

use super::HookErrorKind;

/// A hook failure that decided an outcome (it failed closed, or broke the contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFailure {
    /// The event.
    pub event: spine_protocol::hook::HookEventName,
    /// The hook.
    pub hook_id: String,
    /// What kind of failure.
    pub kind: HookErrorKind,
    /// The detail (for the trace and the user, never the model).
    pub detail: String,
}

impl HookFailure {
    pub(crate) fn new(event: spine_protocol::hook::HookEventName, hook_id: &str, error: &super::HookError) -> Self {
        HookFailure { event, hook_id: hook_id.to_owned(), kind: error.kind, detail: error.detail.clone() }
    }
}

impl std::fmt::Display for HookFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} hook `{}` {}: {}", self.event, self.hook_id, self.kind, self.detail)
    }
}
