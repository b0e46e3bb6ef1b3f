//! SessionEnd: once, when the session ends (a one-prompt run's end, or an interactive
//! session's exit or `/clear`). Observe only.

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName, Observe};

/// Marker for the SessionEnd event.
#[derive(Debug, Clone, Copy)]
pub struct SessionEnd;

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionEndReason {
    /// The model gave its final answer.
    Completed,
    /// A hook or policy blocked the run.
    Blocked,
    /// `max_turns` was reached.
    MaxTurns,
    /// A pending call was deferred.
    Deferred,
    /// The run was canceled.
    Canceled,
    /// The run failed.
    Error,
    /// `/clear` in an interactive session (a new session follows).
    Clear,
    /// The user left an interactive session (`/exit`, Ctrl-D, a second Ctrl-C).
    PromptInputExit,
    /// Any other reason.
    Other,
}

impl SessionEndReason {
    /// The value matchers see.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionEndReason::Completed => "completed",
            SessionEndReason::Blocked => "blocked",
            SessionEndReason::MaxTurns => "max_turns",
            SessionEndReason::Deferred => "deferred",
            SessionEndReason::Canceled => "canceled",
            SessionEndReason::Error => "error",
            SessionEndReason::Clear => "clear",
            SessionEndReason::PromptInputExit => "prompt_input_exit",
            SessionEndReason::Other => "other",
        }
    }
}

/// SessionEnd input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEndInput {
    /// Why the run ended.
    pub reason: SessionEndReason,
}

impl HookEvent for SessionEnd {
    const NAME: HookEventName = HookEventName::SessionEnd;
    type Input = SessionEndInput;
    type Action = Observe;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(input.reason.as_str())
    }
}
