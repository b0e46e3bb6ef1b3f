//! The result of a run.

use serde::{Deserialize, Serialize};

/// How a run ended (`subtype` of the JSON result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunSubtype {
    /// A final answer.
    Success,
    /// `max_turns` reached before a final answer.
    ErrorMaxTurns,
    /// The run's estimated cost reached its budget (`--max-budget-usd`).
    ErrorMaxBudgetUsd,
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
            | RunSubtype::ErrorMaxBudgetUsd
            | RunSubtype::ErrorDuringExecution
            | RunSubtype::Blocked
            | RunSubtype::Canceled => true,
        }
    }
}

/// Token usage summed over a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
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

/// What one model consumed over a run (or a worker item).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelUsage {
    /// Requests sent to the model (failed ones included).
    pub requests: u32,
    /// Requests whose reply reported no usage (local servers often send none).
    #[serde(default)]
    pub requests_without_usage: u32,
    /// The sum of the usage that was reported; absent when no request reported any, so that
    /// "unknown" is never shown as 0 tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The cost of the reported usage in US dollars; absent when the model has no known price
    /// or no usage was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl ModelUsage {
    /// Counts one request: its reported usage (if any) and that usage's cost (if known).
    pub fn record(&mut self, usage: Option<Usage>, cost_usd: Option<f64>) {
        self.requests += 1;
        match usage {
            Some(u) => self.usage.get_or_insert_with(Usage::default).add(u),
            None => self.requests_without_usage += 1,
        }
        if let Some(c) = cost_usd {
            *self.cost_usd.get_or_insert(0.0) += c;
        }
    }

    /// Adds another count of the same model (a subagent's, to its parent's).
    pub fn merge(&mut self, other: &ModelUsage) {
        self.requests += other.requests;
        self.requests_without_usage += other.requests_without_usage;
        if let Some(u) = other.usage {
            self.usage.get_or_insert_with(Usage::default).add(u);
        }
        if let Some(c) = other.cost_usd {
            *self.cost_usd.get_or_insert(0.0) += c;
        }
    }

    /// The usage summed over `models` (`None` when none reported any) and the sum of their
    /// known costs (`None` when no cost is known).
    pub fn totals(models: &std::collections::BTreeMap<String, ModelUsage>) -> (Option<Usage>, Option<f64>) {
        let mut usage: Option<Usage> = None;
        let mut cost: Option<f64> = None;
        for m in models.values() {
            if let Some(u) = m.usage {
                usage.get_or_insert_with(Usage::default).add(u);
            }
            if let Some(c) = m.cost_usd {
                *cost.get_or_insert(0.0) += c;
            }
        }
        (usage, cost)
    }
}
