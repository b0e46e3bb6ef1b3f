//! PreToolUse: a known tool with valid arguments, before the permission decision.
//!
//! A hook may block the call (the model reads `Error [hook_blocked]: <reason>`), replace its
//! arguments (re-validated against the same schema, then frozen), suggest a permission
//! (`allow`/`ask`/`deny`/`defer`; hooks suggest, the policy decides) and add context.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{HookEvent, HookEventName};
use crate::permission::PermissionSuggestion;

/// Marker for the PreToolUse event.
#[derive(Debug, Clone, Copy)]
pub struct PreToolUse;

/// PreToolUse input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreToolUseInput {
    /// The tool called (what matchers see; MCP tools are `mcp__<server>__<tool>`).
    pub tool_name: String,
    /// The tool's own name when hooks see it under another (`exec_command` is `Bash` to
    /// hooks); a matcher naming it matches too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_tool_name: Option<String>,
    /// The arguments (file paths already made absolute and normalised).
    pub tool_input: Value,
    /// The model's id of the call (`tool_use_id`).
    pub tool_use_id: String,
}

/// A PreToolUse answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum PreToolUseAction {
    /// Let the call go on to the permission policy.
    Proceed {
        /// A permission suggestion (`passthrough` when the hook has no opinion).
        permission: PermissionSuggestion,
        /// Replacement arguments (the whole object).
        #[serde(skip_serializing_if = "Option::is_none")]
        updated_input: Option<Map<String, Value>>,
        /// Text for the model, placed after the round's tool results.
        #[serde(skip_serializing_if = "Option::is_none")]
        additional_context: Option<String>,
    },
    /// Block the call: later hooks, the policy, the handler and PostToolUse do not run.
    Block {
        /// What the model reads after `Error [hook_blocked]: `.
        reason: String,
        /// Text for the model, placed after the round's tool results.
        #[serde(skip_serializing_if = "Option::is_none")]
        additional_context: Option<String>,
    },
}

impl Default for PreToolUseAction {
    fn default() -> Self {
        PreToolUseAction::Proceed {
            permission: PermissionSuggestion::Passthrough,
            updated_input: None,
            additional_context: None,
        }
    }
}

impl PreToolUseAction {
    /// Block the call.
    pub fn block(reason: impl Into<String>) -> Self {
        PreToolUseAction::Block { reason: reason.into(), additional_context: None }
    }

    /// Suggest a permission.
    pub fn suggest(permission: PermissionSuggestion) -> Self {
        PreToolUseAction::Proceed { permission, updated_input: None, additional_context: None }
    }

    /// Replace the arguments (no permission opinion).
    pub fn rewrite(updated_input: Map<String, Value>) -> Self {
        PreToolUseAction::Proceed {
            permission: PermissionSuggestion::Passthrough,
            updated_input: Some(updated_input),
            additional_context: None,
        }
    }

    /// Adds context for the model.
    pub fn with_context(mut self, text: impl Into<String>) -> Self {
        match &mut self {
            PreToolUseAction::Proceed { additional_context, .. }
            | PreToolUseAction::Block { additional_context, .. } => *additional_context = Some(text.into()),
        }
        self
    }

    /// Adds replacement arguments to a `Proceed` answer (a `Block` ignores them).
    pub fn with_updated_input(mut self, input: Map<String, Value>) -> Self {
        if let PreToolUseAction::Proceed { updated_input, .. } = &mut self {
            *updated_input = Some(input);
        }
        self
    }
}

impl super::Action for PreToolUseAction {
    fn decision(&self) -> &'static str {
        match self {
            PreToolUseAction::Block { .. } => "block",
            PreToolUseAction::Proceed { permission, updated_input, .. } => match (permission, updated_input) {
                (PermissionSuggestion::Passthrough, Some(_)) => "rewrite",
                (PermissionSuggestion::Passthrough, None) => "proceed",
                (p, _) => p.as_str(),
            },
        }
    }
    fn additional_context(&self) -> Option<&str> {
        match self {
            PreToolUseAction::Proceed { additional_context, .. }
            | PreToolUseAction::Block { additional_context, .. } => additional_context.as_deref(),
        }
    }
}

impl HookEvent for PreToolUse {
    const NAME: HookEventName = HookEventName::PreToolUse;
    type Input = PreToolUseInput;
    type Action = PreToolUseAction;
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
