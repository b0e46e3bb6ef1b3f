//! What a run's tokens cost, in US dollars: one table of list prices per million tokens, kept
//! in ONE data file (`data/prices.json`, compiled in) with the date it was last checked against
//! the providers' price pages ([`PriceTable::checked`]). Settings may override or add rows
//! (`model_options.prices`, see [`PriceTable::with_overrides`]).
//!
//! Each row gives `input`, `output`, `cache_write` and `cache_read` prices of a model family.
//! A model matches the longest row whose name is a prefix of the model id
//! (`claude-sonnet-4-5-20250929` matches `claude-sonnet-4`). A model that matches no row (a
//! scripted model, a local server) has no known price: its cost is `None`, reported as 0 in
//! Claude Code's `total_cost_usd` field.

use std::sync::OnceLock;

use serde::Deserialize;
use spine_protocol::run::Usage;

/// The data file, compiled in.
const PRICES_JSON: &str = include_str!("../data/prices.json");

/// Prices of one model family, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
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
    /// The cost of `usage` at these prices.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let per_token = |count: u64, per_million: f64| count as f64 * per_million / 1_000_000.0;
        per_token(usage.uncached_input_tokens(), self.input)
            + per_token(usage.cache_creation_input_tokens, self.cache_write)
            + per_token(usage.cache_read_input_tokens, self.cache_read)
            + per_token(usage.output_tokens, self.output)
    }
}

/// Model-id prefixes and their prices, with the date they were checked.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PriceTable {
    /// When the built-in rows were last checked (`YYYY-MM-DD`).
    pub checked: String,
    /// Prefix → price. Longer prefixes win, so order does not matter.
    #[serde(rename = "models", deserialize_with = "rows")]
    pub rows: Vec<(String, Price)>,
}

fn rows<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<(String, Price)>, D::Error> {
    let map: serde_json::Map<String, serde_json::Value> = serde::Deserialize::deserialize(d)?;
    map.into_iter().map(|(k, v)| serde_json::from_value(v).map(|p| (k, p)).map_err(serde::de::Error::custom)).collect()
}

impl PriceTable {
    /// The built-in table (`data/prices.json`). The file is checked by a unit test; should it
    /// ever fail to parse, the table is empty and every cost unknown.
    pub fn builtin() -> &'static PriceTable {
        static TABLE: OnceLock<PriceTable> = OnceLock::new();
        TABLE.get_or_init(|| serde_json::from_str(PRICES_JSON).unwrap_or_default())
    }

    /// This table with `overrides` (prefix → price) replacing rows of the same prefix and
    /// adding the others.
    pub fn with_overrides(&self, overrides: &[(String, Price)]) -> PriceTable {
        let mut table = self.clone();
        for (prefix, price) in overrides {
            match table.rows.iter_mut().find(|(p, _)| p == prefix) {
                Some(row) => row.1 = *price,
                None => table.rows.push((prefix.clone(), *price)),
            }
        }
        table
    }

    /// The price of a model id (the longest matching prefix), when the table knows it.
    pub fn price(&self, model: &str) -> Option<Price> {
        self.rows
            .iter()
            .filter(|(prefix, _)| model.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, p)| *p)
    }
}

/// The price of a model id in the built-in table.
pub fn price(model: &str) -> Option<Price> {
    PriceTable::builtin().price(model)
}

/// The cost of `usage` on `model` at built-in prices, in US dollars; 0 when the price is
/// unknown.
pub fn cost(model: &str, usage: &Usage) -> f64 {
    price(model).map_or(0.0, |p| p.cost(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(input: f64, output: f64, cache_write: f64, cache_read: f64) -> Price {
        Price { input, output, cache_write, cache_read }
    }

    #[test]
    fn the_price_data_file_parses_with_its_date_and_covers_current_models() {
        let table: PriceTable = serde_json::from_str(PRICES_JSON).expect("data/prices.json parses");
        assert_eq!(table.checked.len(), 10, "a YYYY-MM-DD date: {}", table.checked);
        for model in [
            "claude-opus-4-5-20251101",
            "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5",
            "gpt-4o-2024-08-06",
            "gpt-4.1-mini",
            "gpt-5",
            "gpt-5-mini",
            "o1",
            "o3",
            "o4-mini",
        ] {
            assert!(table.price(model).is_some(), "{model} has no price");
        }
        assert_eq!(PriceTable::builtin(), &table);
    }

    #[test]
    fn every_alias_is_priced_and_the_longest_prefix_wins() {
        let table = PriceTable::builtin();
        for (alias, model) in crate::spec::ANTHROPIC_ALIASES {
            assert!(table.price(model).is_some(), "`{alias}` = {model} has no price");
        }
        let input = |m: &str| table.price(m).map(|p| (p.input, p.output));
        assert_eq!(input("claude-opus-4-8"), Some((5.0, 25.0)), "not claude-opus-4's row");
        assert_eq!(input("claude-opus-4-1-20250805"), Some((15.0, 75.0)));
        assert_eq!(input("claude-opus-5-5"), Some((4.0, 20.0)), "not claude-opus-5's row");
        assert_eq!(input("gpt-5.4-mini"), Some((0.75, 4.5)), "not gpt-5's row");
    }

    #[test]
    fn the_longest_matching_prefix_sets_the_price() {
        assert_eq!(price("gpt-4o-mini-2024-07-18"), Some(p(0.15, 0.6, 0.15, 0.075)));
        assert_eq!(price("gpt-4o-2024-08-06"), Some(p(2.5, 10.0, 2.5, 1.25)));
        assert_eq!(price("claude-opus-4-1-20250805"), Some(p(15.0, 75.0, 18.75, 1.5)));
        assert_eq!(price("o3-mini"), Some(p(1.1, 4.4, 1.1, 0.55)));
    }

    #[test]
    fn an_unknown_model_costs_nothing() {
        assert_eq!(price("smollm2"), None);
        assert_eq!(cost("scripted", &Usage::new(1_000_000, 1_000_000)), 0.0);
    }

    #[test]
    fn settings_prices_override_a_row_and_add_new_ones() {
        let table = PriceTable::builtin().with_overrides(&[
            ("gpt-4o".to_owned(), p(1.0, 2.0, 1.0, 0.5)),
            ("smollm2".to_owned(), p(0.0, 0.0, 0.0, 0.0)),
        ]);
        assert_eq!(table.price("gpt-4o-2024-08-06"), Some(p(1.0, 2.0, 1.0, 0.5)));
        assert_eq!(table.price("gpt-4o-mini"), price("gpt-4o-mini"), "a longer built-in prefix still wins");
        assert_eq!(table.price("smollm2"), Some(p(0.0, 0.0, 0.0, 0.0)));
        assert_eq!(table.checked, PriceTable::builtin().checked);
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
