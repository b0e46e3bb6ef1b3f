//! What a run's tokens cost, in US dollars: one table of list prices per million tokens, kept
//! here and nowhere else, with the date it was last checked against the providers' price pages.
//!
//! A model matches the longest row whose name is a prefix of the model id
//! (`claude-sonnet-4-5-20250929` matches `claude-sonnet-4-5`). Cache writes cost 1.25× input and
//! cache reads 0.1× input for Anthropic models; OpenAI bills cache reads at its cached-input
//! price and has no separate cache writes. A model that matches no row (a scripted model, a
//! local server) has no known price: its cost is reported as 0.

use spine_protocol::run::Usage;

/// When the table below was last checked against the providers' published prices.
pub const PRICES_CHECKED: &str = "2025-11-24";

/// Prices of one model family, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
}

impl Price {
    const fn anthropic(input: f64, output: f64) -> Self {
        Price { input, output, cache_write: input * 1.25, cache_read: input * 0.1 }
    }

    const fn openai(input: f64, output: f64, cached: f64) -> Self {
        Price { input, output, cache_write: input, cache_read: cached }
    }

    /// The cost of `usage` at these prices.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let per_token = |count: u64, per_million: f64| count as f64 * per_million / 1_000_000.0;
        per_token(usage.uncached_input_tokens(), self.input)
            + per_token(usage.cache_creation_input_tokens, self.cache_write)
            + per_token(usage.cache_read_input_tokens, self.cache_read)
            + per_token(usage.output_tokens, self.output)
    }
}

/// Model-id prefixes and their prices. Longer prefixes win, so order does not matter.
const TABLE: &[(&str, Price)] = &[
    ("claude-opus-4-5", Price::anthropic(5.0, 25.0)),
    ("claude-opus-4-1", Price::anthropic(15.0, 75.0)),
    ("claude-opus-4", Price::anthropic(15.0, 75.0)),
    ("claude-sonnet-4", Price::anthropic(3.0, 15.0)),
    ("claude-3-7-sonnet", Price::anthropic(3.0, 15.0)),
    ("claude-3-5-sonnet", Price::anthropic(3.0, 15.0)),
    ("claude-haiku-4", Price::anthropic(1.0, 5.0)),
    ("claude-3-5-haiku", Price::anthropic(0.8, 4.0)),
    ("claude-3-haiku", Price::anthropic(0.25, 1.25)),
    ("gpt-5-nano", Price::openai(0.05, 0.4, 0.005)),
    ("gpt-5-mini", Price::openai(0.25, 2.0, 0.025)),
    ("gpt-5", Price::openai(1.25, 10.0, 0.125)),
    ("gpt-4.1-nano", Price::openai(0.1, 0.4, 0.025)),
    ("gpt-4.1-mini", Price::openai(0.4, 1.6, 0.1)),
    ("gpt-4.1", Price::openai(2.0, 8.0, 0.5)),
    ("gpt-4o-mini", Price::openai(0.15, 0.6, 0.075)),
    ("gpt-4o", Price::openai(2.5, 10.0, 1.25)),
    ("o4-mini", Price::openai(1.1, 4.4, 0.275)),
    ("o3-mini", Price::openai(1.1, 4.4, 0.55)),
    ("o3", Price::openai(2.0, 8.0, 0.5)),
    ("o1-mini", Price::openai(1.1, 4.4, 0.55)),
    ("o1", Price::openai(15.0, 60.0, 7.5)),
];

/// The price of a model id, when the table knows it.
pub fn price(model: &str) -> Option<Price> {
    TABLE.iter().filter(|(prefix, _)| model.starts_with(prefix)).max_by_key(|(prefix, _)| prefix.len()).map(|(_, p)| *p)
}

/// The cost of `usage` on `model` in US dollars; 0 when the model's price is unknown.
pub fn cost(model: &str, usage: &Usage) -> f64 {
    price(model).map_or(0.0, |p| p.cost(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_matching_prefix_sets_the_price() {
        assert_eq!(price("gpt-4o-mini-2024-07-18"), Some(Price::openai(0.15, 0.6, 0.075)));
        assert_eq!(price("gpt-4o-2024-08-06"), Some(Price::openai(2.5, 10.0, 1.25)));
        assert_eq!(price("claude-opus-4-1-20250805"), Some(Price::anthropic(15.0, 75.0)));
        assert_eq!(price("o3-mini"), Some(Price::openai(1.1, 4.4, 0.55)));
    }

    #[test]
    fn an_unknown_model_costs_nothing() {
        assert_eq!(price("smollm2"), None);
        assert_eq!(cost("scripted", &Usage::new(1_000_000, 1_000_000)), 0.0);
    }

    #[test]
    fn cached_input_is_billed_at_the_cache_prices_and_not_again_as_input() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 200_000,
            cache_read_input_tokens: 300_000,
        };
        // Sonnet: 0.5 M uncached × 3 + 0.2 M × 3.75 + 0.3 M × 0.3 + 1 M × 15.
        let expected = 1.5 + 0.75 + 0.09 + 15.0;
        assert!((cost("claude-sonnet-4-5", &usage) - expected).abs() < 1e-9, "{}", cost("claude-sonnet-4-5", &usage));
    }
}
