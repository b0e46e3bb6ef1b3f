//! How a conversation is compacted when it grows past its threshold: the `compaction_strategy`
//! setting's value, and how its tokens are counted: the `token_estimator` setting's value.
//!
//! Contract: `sandwich` (the default) keeps the system message and the last exchange;
//! `summarize` replaces the middle with a model-written summary. `bpe` (the default) counts
//! with the likely model's byte-pair encoding; `words` estimates from words, for models whose
//! encoding spine does not have. The names are written in snake case (`as_str`, serde). The
//! compaction itself is spine-core's `stages::compact_context`, which re-exports
//! [`CompactStrategy`] at its old path; the estimators are spine-core's `tokens`.

use serde::{Deserialize, Serialize};

/// How to compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactStrategy {
    /// Keep the system message and the last exchange.
    #[default]
    Sandwich,
    /// Replace the middle by a model-written summary.
    Summarize,
}

impl CompactStrategy {
    /// The strategy's name.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactStrategy::Sandwich => "sandwich",
            CompactStrategy::Summarize => "summarize",
        }
    }
}

/// How tokens are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenEstimatorKind {
    /// The likely model's byte-pair encoding.
    #[default]
    Bpe,
    /// An estimate from words.
    Words,
}

impl TokenEstimatorKind {
    /// The estimator's name.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEstimatorKind::Bpe => "bpe",
            TokenEstimatorKind::Words => "words",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_have_one_name_in_text_and_in_json() {
        for strategy in [CompactStrategy::Sandwich, CompactStrategy::Summarize] {
            assert_eq!(serde_json::to_value(strategy).ok(), Some(serde_json::Value::from(strategy.as_str())));
        }
        assert_eq!(CompactStrategy::default(), CompactStrategy::Sandwich);
    }

    #[test]
    fn estimators_have_one_name_in_text_and_in_json() {
        for kind in [TokenEstimatorKind::Bpe, TokenEstimatorKind::Words] {
            assert_eq!(serde_json::to_value(kind).ok(), Some(serde_json::Value::from(kind.as_str())));
        }
        assert_eq!(TokenEstimatorKind::default(), TokenEstimatorKind::Bpe);
    }
}
