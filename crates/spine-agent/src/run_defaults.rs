//! What the settings say about every run beyond its model, tools and rules: when and how a
//! conversation is compacted, and how its tokens are counted. Read once from the merged
//! settings ([`RunDefaults::of`]) by [`crate::assemble`] and by the worker's environment, so
//! the two never read a key differently.

use std::sync::Arc;

use spine_core::tokens::{TokenEstimator, WordsEstimator};
use spine_protocol::compaction::{CompactStrategy, TokenEstimatorKind};
use spine_settings::Settings;

/// The settings' `context` key, with its defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunDefaults {
    /// `context.compaction_threshold_tokens` (none: the model's context window decides).
    pub compaction_threshold: Option<u64>,
    /// `context.compaction_strategy` (default `sandwich`).
    pub compaction_strategy: CompactStrategy,
    /// `context.token_estimator` (default `bpe`: the likely model's encoding).
    pub token_estimator: TokenEstimatorKind,
}

impl RunDefaults {
    /// The defaults `settings` give.
    pub fn of(settings: &Settings) -> Self {
        RunDefaults {
            compaction_threshold: settings.compaction_threshold_tokens,
            compaction_strategy: settings.compaction_strategy.unwrap_or_default(),
            token_estimator: settings.token_estimator.unwrap_or_default(),
        }
    }

    /// The estimator a run is given, when it is not the likely model's encoding (which the run
    /// chooses itself from the model it talks to).
    pub fn estimator(&self) -> Option<Arc<dyn TokenEstimator>> {
        match self.token_estimator {
            TokenEstimatorKind::Words => Some(Arc::new(WordsEstimator)),
            TokenEstimatorKind::Bpe => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(json: serde_json::Value) -> Settings {
        let layer = spine_settings::SettingsLayer {
            origin: spine_settings::Origin::Cli { index: 1, path: None },
            value: json.as_object().cloned().unwrap_or_default(),
        };
        Settings::from_layers(vec![layer]).expect("settings")
    }

    #[test]
    fn without_a_context_key_runs_compact_by_sandwich_and_count_with_the_models_encoding() {
        let defaults = RunDefaults::of(&Settings::default());
        assert_eq!(defaults, RunDefaults::default());
        assert!(defaults.estimator().is_none());
    }

    #[test]
    fn the_context_key_sets_threshold_strategy_and_the_words_estimator() {
        let s = settings(serde_json::json!({"context": {
            "compaction_threshold_tokens": 900,
            "compaction_strategy": "summarize",
            "token_estimator": "words"
        }}));
        let defaults = RunDefaults::of(&s);
        assert_eq!(defaults.compaction_threshold, Some(900));
        assert_eq!(defaults.compaction_strategy, CompactStrategy::Summarize);
        assert_eq!(defaults.token_estimator, TokenEstimatorKind::Words);
        assert!(defaults.estimator().is_some());
    }
}
