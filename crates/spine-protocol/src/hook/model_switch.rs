//! PreModelSwitch and PostModelSwitch: the session's model changes (`/model`, a host's
//! `set_model`). PreModelSwitch hooks may allow, ask about (the user confirms) or deny the
//! switch (the session keeps its model; the reason is shown); PostModelSwitch hooks may add
//! context for the model's next request. The matcher filters on the model switched to.

use serde::{Deserialize, Serialize};

use super::{Action, ContextAction, HookEvent, HookEventName};

/// Marker for the PreModelSwitch event.
#[derive(Debug, Clone, Copy)]
pub struct PreModelSwitch;

/// Marker for the PostModelSwitch event.
#[derive(Debug, Clone, Copy)]
pub struct PostModelSwitch;

/// The input of both model-switch events (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSwitchInput {
    /// The model before the switch.
    pub from_model: String,
    /// The model after the switch (the requested one, resolved).
    pub to_model: String,
    /// What was asked for (an alias such as `opus`, or a spec).
    pub requested_model: String,
    /// `command` (`/model`), `picker`, `sdk`; PostModelSwitch also `auto` and `resume`.
    pub source: String,
    /// The estimated tokens of the conversation the new model receives.
    pub context_tokens: u64,
    /// Whether the provider's prompt cache for the old model is warm (spine does not track it:
    /// `false` unless known).
    pub prompt_cache_warm: bool,
    /// The prompt cache lifetime: `5m` or `1h`.
    pub cache_ttl: String,
    /// The estimated cost of writing the conversation to the new model's cache, in USD.
    pub estimated_cache_write_usd: f64,
    /// Where the price came from: `configured` (settings), `catalog` (spine's table) or
    /// `default` (unknown model).
    pub pricing: String,
}

/// A PreModelSwitch answer: `permissionDecision`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ModelSwitchAction {
    /// No opinion.
    #[default]
    Proceed,
    /// Switch without asking.
    Allow {
        /// Shown to the user.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Ask the user to confirm the switch (refused where nobody can answer).
    Ask {
        /// Shown with the question.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Keep the current model.
    Deny {
        /// Shown to the user.
        reason: String,
    },
}

impl Action for ModelSwitchAction {
    fn decision(&self) -> &'static str {
        match self {
            ModelSwitchAction::Proceed => "proceed",
            ModelSwitchAction::Allow { .. } => "allow",
            ModelSwitchAction::Ask { .. } => "ask",
            ModelSwitchAction::Deny { .. } => "deny",
        }
    }
    fn additional_context(&self) -> Option<&str> {
        None
    }
}

impl HookEvent for PreModelSwitch {
    const NAME: HookEventName = HookEventName::PreModelSwitch;
    type Input = ModelSwitchInput;
    type Action = ModelSwitchAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.to_model)
    }
}

impl HookEvent for PostModelSwitch {
    const NAME: HookEventName = HookEventName::PostModelSwitch;
    type Input = ModelSwitchInput;
    type Action = ContextAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.to_model)
    }
}
