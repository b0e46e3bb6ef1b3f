//! PostToolUseFailure: the tool returned an error. Hooks may add context.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContextAction, HookEvent, HookEventName};

/// Marker for the PostToolUseFailure event.
#[derive(Debug, Clone, Copy)]
pub struct PostToolUseFailure;

/// PostToolUseFailure input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostToolUseFailureInput {
    /// The tool called (what matchers see; MCP tools are `mcp__<server>__<tool>`).
    pub tool_name: String,
    /// The tool's own name when hooks see it under another (`exec_command` is `Bash` to
    /// hooks); a matcher naming it matches too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_tool_name: Option<String>,
    /// The arguments the tool ran with.
    pub tool_input: Value,
    /// The model's id of the call (`tool_use_id`).
    pub tool_use_id: String,
    /// The error text (Bash: starts with `Exit code N`).
    pub error: String,
    /// Whether the tool was interrupted (canceled or timed out).
    pub is_interrupt: bool,
    /// How long the tool ran.
    pub duration_ms: u64,
}

impl HookEvent for PostToolUseFailure {
    const NAME: HookEventName = HookEventName::PostToolUseFailure;
    type Input = PostToolUseFailureInput;
    type Action = ContextAction;
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
