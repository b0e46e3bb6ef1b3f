//! PermissionDenied: a call was refused by the permission step — a deny rule, a mode that does
//! not ask (`dontAsk`, a non-interactive run), the approver, a PermissionRequest hook, or a
//! PreToolUse `permissionDecision: "deny"`. Hooks observe it and may answer `retry: true`,
//! which tells the model, beside the refusal, that it may try the call again (differently).
//! The matcher filters on the tool name.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Action, HookEvent, HookEventName};

/// Marker for the PermissionDenied event.
#[derive(Debug, Clone, Copy)]
pub struct PermissionDenied;

/// PermissionDenied input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionDeniedInput {
    /// The tool called (`Bash` for every tool that runs a command line).
    pub tool_name: String,
    /// The tool's own name when hooks see it under another (see PreToolUse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_tool_name: Option<String>,
    /// The arguments of the refused call.
    pub tool_input: Value,
    /// The model's id of the call.
    pub tool_use_id: String,
    /// Why it was refused.
    pub reason: String,
}

/// A PermissionDenied answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RetryAction {
    /// Tell the model it may retry the call.
    pub retry: bool,
}

impl Action for RetryAction {
    fn decision(&self) -> &'static str {
        if self.retry { "retry" } else { "observe" }
    }
    fn additional_context(&self) -> Option<&str> {
        None
    }
}

impl HookEvent for PermissionDenied {
    const NAME: HookEventName = HookEventName::PermissionDenied;
    type Input = PermissionDeniedInput;
    type Action = RetryAction;
    const HAS_TOOL_CALL: bool = true;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.tool_name)
    }
    fn matcher_alias(input: &Self::Input) -> Option<&str> {
        input.spine_tool_name.as_deref()
    }
    fn tool_call(input: &Self::Input) -> Option<(&str, &Value)> {
        Some((&input.tool_name, &input.tool_input))
    }
}
