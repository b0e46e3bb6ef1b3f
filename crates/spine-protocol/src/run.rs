//! The result of a run.

use serde::{Deserialize, Serialize};

/// How a run ended (`subtype` of the JSON result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunSubtype {
    /// A final answer.
    Success,
    /// `max_turns` reached before a final answer.
    ErrorMaxTurns,
    /// The run failed (model error, hook failure, bad reply…).
    ErrorDuringExecution,
    /// A hook or the policy stopped the run (blocked prompt, `continue: false`).
    Blocked,
    /// A call was deferred; `--resume` continues it.
    Deferred,
    /// The run was canceled (Ctrl-C).
    Canceled,
}

impl RunSubtype {
    /// Whether the run counts as an error.
    pub fn is_error(self) -> bool {
        match self {
            RunSubtype::Success | RunSubtype::Deferred => false,
            RunSubtype::ErrorMaxTurns
            | RunSubtype::ErrorDuringExecution
            | RunSubtype::Blocked
            | RunSubtype::Canceled => true,
        }
    }
}

/// Token usage summed over a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Adds another usage figure.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}
