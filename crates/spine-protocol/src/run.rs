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
    /// Every input token of the requests, cache writes and reads included.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// The part of `input_tokens` written to the provider's prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// The part of `input_tokens` read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl Usage {
    /// Input and output tokens, with nothing cached.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Usage { input_tokens, output_tokens, ..Usage::default() }
    }

    /// Adds another usage figure.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
    }

    /// Input tokens neither written to nor read from a cache.
    pub fn uncached_input_tokens(&self) -> u64 {
        self.input_tokens.saturating_sub(self.cache_creation_input_tokens).saturating_sub(self.cache_read_input_tokens)
    }
}
