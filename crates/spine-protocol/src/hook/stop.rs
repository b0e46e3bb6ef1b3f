//! Stop: the model answered without tool calls. A hook may force one more round with a
//! non-empty reason (it becomes a user message) and add context placed before it.

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName};

/// Marker for the Stop event.
#[derive(Debug, Clone, Copy)]
pub struct Stop;

/// Stop input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopInput {
    /// True when this Stop follows a forced continuation.
    pub stop_hook_active: bool,
    /// The candidate final answer.
    pub last_assistant_message: String,
}

/// A Stop answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum StopAction {
    /// Let the run end.
    Allow {
        /// Text for the model (kept in the transcript).
        #[serde(skip_serializing_if = "Option::is_none")]
        additional_context: Option<String>,
    },
    /// Ask the model again; `reason` (non-empty) becomes the next user message.
    ForceContinue {
        /// The instruction for the next round.
        reason: String,
        /// Text for the model, placed before the forced user message.
        #[serde(skip_serializing_if = "Option::is_none")]
        additional_context: Option<String>,
    },
}

impl Default for StopAction {
    fn default() -> Self {
        StopAction::Allow { additional_context: None }
    }
}

impl StopAction {
    /// Force one more round.
    pub fn force_continue(reason: impl Into<String>) -> Self {
        StopAction::ForceContinue { reason: reason.into(), additional_context: None }
    }
}

impl super::Action for StopAction {
    fn decision(&self) -> &'static str {
        match self {
            StopAction::Allow { .. } => "allow",
            StopAction::ForceContinue { .. } => "force_continue",
        }
    }
    fn additional_context(&self) -> Option<&str> {
        match self {
            StopAction::Allow { additional_context } | StopAction::ForceContinue { additional_context, .. } => {
                additional_context.as_deref()
            }
        }
    }
}

impl HookEvent for Stop {
    const NAME: HookEventName = HookEventName::Stop;
    type Input = StopInput;
    type Action = StopAction;
    fn matcher_subject(_input: &Self::Input) -> Option<&str> {
        None
    }
}
