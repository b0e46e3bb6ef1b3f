//! The reasoning a session's flags ask of its model — `--effort`, `--thinking`,
//! `--max-thinking-tokens` — as one [`ReasoningFlags`] value, over whatever the settings'
//! `model_options` set.
//!
//! Contract:
//! - Each model client applies what its wire takes
//!   ([`ModelClient::with_reasoning_flags`](crate::model::ModelClient::with_reasoning_flags)):
//!   the Anthropic Messages API the thinking mode and the effort, OpenAI's APIs the effort
//!   ([`EffortLevel::reasoning_effort`]); a client whose wire takes none of it (the scripted
//!   model) stays as it is.
//! - Hooks read the effort as `effort: {"level": …}` with the flag's own word
//!   ([`EffortLevel::hook_effort`]), whatever the provider receives.

use spine_protocol::message::{Effort, ReasoningEffort};

/// `--effort`: Claude Code's effort levels, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EffortLevel {
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `xhigh`.
    XHigh,
    /// `max`: the highest the model offers.
    Max,
}

impl EffortLevel {
    /// The word, as Claude Code writes it (`low`, `medium`, `high`, `xhigh`, `max`).
    pub fn as_str(self) -> &'static str {
        match self {
            EffortLevel::Low => "low",
            EffortLevel::Medium => "medium",
            EffortLevel::High => "high",
            EffortLevel::XHigh => "xhigh",
            EffortLevel::Max => "max",
        }
    }

    /// The OpenAI reasoning effort it maps to: `low`, `medium` and `high` as they are,
    /// `xhigh` and `max` as `high` (the highest every OpenAI reasoning model takes).
    pub fn reasoning_effort(self) -> ReasoningEffort {
        match self {
            EffortLevel::Low => ReasoningEffort::Low,
            EffortLevel::Medium => ReasoningEffort::Medium,
            EffortLevel::High | EffortLevel::XHigh | EffortLevel::Max => ReasoningEffort::High,
        }
    }

    /// What hooks read as `effort`: the flag's own word.
    pub fn hook_effort(self) -> Effort {
        Effort { level: self.as_str().to_owned() }
    }
}

/// `--thinking` and `--max-thinking-tokens`, resolved (see the CLI's documentation for the
/// combinations): how the model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkingMode {
    /// The model decides how much to think; `budget_tokens` is the budget on a model that
    /// only takes a budget.
    Adaptive {
        /// `--max-thinking-tokens`, when given.
        budget_tokens: Option<u32>,
    },
    /// Thinking on, with this budget (none given: the client's default).
    Enabled {
        /// `--max-thinking-tokens`, when given.
        budget_tokens: Option<u32>,
    },
    /// No thinking.
    Disabled,
}

/// What the session's flags ask of the model's reasoning; `None` fields leave the client's own
/// (settings) choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReasoningFlags {
    /// `--effort`.
    pub effort: Option<EffortLevel>,
    /// `--thinking` / `--max-thinking-tokens`.
    pub thinking: Option<ThinkingMode>,
}

impl ReasoningFlags {
    /// Whether no flag was given.
    pub fn is_empty(&self) -> bool {
        self.effort.is_none() && self.thinking.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xhigh_and_max_map_to_openais_high_and_hooks_read_the_flags_word() {
        assert_eq!(EffortLevel::Low.reasoning_effort(), ReasoningEffort::Low);
        assert_eq!(EffortLevel::Medium.reasoning_effort(), ReasoningEffort::Medium);
        assert_eq!(EffortLevel::XHigh.reasoning_effort(), ReasoningEffort::High);
        assert_eq!(EffortLevel::Max.reasoning_effort(), ReasoningEffort::High);
        assert_eq!(EffortLevel::Max.hook_effort(), Effort { level: "max".into() });
        assert_eq!(EffortLevel::XHigh.as_str(), "xhigh");
    }

    #[test]
    fn no_flag_is_empty() {
        assert!(ReasoningFlags::default().is_empty());
        assert!(!ReasoningFlags { thinking: Some(ThinkingMode::Disabled), ..Default::default() }.is_empty());
    }
}
