//! PermissionRequest: the policy asks for approval. A hook may allow or deny in the approver's
//! place; it never overrides a hard deny (the event only fires for `ask`).
//!
//! The input carries `permission_suggestions`, what an "always" answer would store (Claude
//! Code's permission dialog offers the same); an allow may carry `updatedPermissions`, applied
//! to the session by spine-core (`permission::session`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{HookEvent, HookEventName};
use crate::permission_update::PermissionUpdate;

/// Marker for the PermissionRequest event.
#[derive(Debug, Clone, Copy)]
pub struct PermissionRequest;

/// PermissionRequest input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequestInput {
    /// The tool called (what matchers see; MCP tools are `mcp__<server>__<tool>`).
    pub tool_name: String,
    /// The tool's own name when hooks see it under another (`exec_command` is `Bash` to
    /// hooks); a matcher naming it matches too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_tool_name: Option<String>,
    /// The (frozen) arguments.
    pub tool_input: Value,
    /// The model's id of the call (`tool_use_id`).
    pub tool_use_id: String,
    /// Why approval is needed (the policy's reason).
    pub reason: String,
    /// What an "always" answer would store, in Claude Code's shape (absent when nothing
    /// narrower than the whole tool would do).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permission_suggestions: Vec<PermissionUpdate>,
}

/// A PermissionRequest answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "snake_case")]
pub enum PermissionRequestAction {
    /// No opinion: the next hook, then the approver, decides.
    #[default]
    NoDecision,
    /// Approve the call.
    Allow {
        /// Replacement arguments, re-validated like a PreToolUse rewrite.
        #[serde(skip_serializing_if = "Option::is_none")]
        updated_input: Option<Map<String, Value>>,
        /// Permission updates for the session (`updatedPermissions`), applied when the call is
        /// allowed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        updated_permissions: Vec<PermissionUpdate>,
    },
    /// Refuse the call; the message reaches the model.
    Deny {
        /// Why.
        message: String,
    },
}

impl super::Action for PermissionRequestAction {
    fn decision(&self) -> &'static str {
        match self {
            PermissionRequestAction::NoDecision => "no_decision",
            PermissionRequestAction::Allow { .. } => "allow",
            PermissionRequestAction::Deny { .. } => "deny",
        }
    }
    fn additional_context(&self) -> Option<&str> {
        None
    }
}

impl HookEvent for PermissionRequest {
    const NAME: HookEventName = HookEventName::PermissionRequest;
    type Input = PermissionRequestInput;
    type Action = PermissionRequestAction;
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
