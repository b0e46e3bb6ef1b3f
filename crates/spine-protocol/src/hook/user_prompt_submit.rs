//! UserPromptSubmit: a prompt was submitted and the model not yet asked. May add context after
//! the prompt, or block it (the prompt is erased, no model request is made, the run ends).

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName};

/// Marker for the UserPromptSubmit event.
#[derive(Debug, Clone, Copy)]
pub struct UserPromptSubmit;

/// UserPromptSubmit input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserPromptSubmitInput {
    /// The prompt text.
    pub prompt: String,
}

/// A UserPromptSubmit answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum PromptAction {
    /// Let the prompt through, optionally with context placed after it.
    Proceed {
        /// Text for the model, placed after the prompt.
        #[serde(skip_serializing_if = "Option::is_none")]
        additional_context: Option<String>,
    },
    /// Refuse the prompt; the reason is shown to the user.
    Block {
        /// Why.
        reason: String,
    },
}

impl Default for PromptAction {
    fn default() -> Self {
        PromptAction::Proceed { additional_context: None }
    }
}

impl PromptAction {
    /// Proceed with context for the model.
    pub fn context(text: impl Into<String>) -> Self {
        PromptAction::Proceed { additional_context: Some(text.into()) }
    }

    /// Refuse the prompt.
    pub fn block(reason: impl Into<String>) -> Self {
        PromptAction::Block { reason: reason.into() }
    }
}

impl super::Action for PromptAction {
    fn decision(&self) -> &'static str {
        match self {
            PromptAction::Proceed { additional_context: Some(_) } => "context",
            PromptAction::Proceed { additional_context: None } => "proceed",
            PromptAction::Block { .. } => "block",
        }
    }
    fn additional_context(&self) -> Option<&str> {
        match self {
            PromptAction::Proceed { additional_context } => additional_context.as_deref(),
            PromptAction::Block { .. } => None,
        }
    }
}

impl HookEvent for UserPromptSubmit {
    const NAME: HookEventName = HookEventName::UserPromptSubmit;
    type Input = UserPromptSubmitInput;
    type Action = PromptAction;
    fn matcher_subject(_input: &Self::Input) -> Option<&str> {
        None
    }
}
