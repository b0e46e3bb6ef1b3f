//! The `model_options` settings key: options of the model clients that settings may set.
//! Each key is taken from the highest-precedence source that sets it; anything else is an
//! error naming the source and the JSON path (`model_options.timeouts.idle_ms`).
//!
//! - `timeouts`: an object of four optional integers of milliseconds (1 to 86 400 000), merged
//!   field by field:
//!   - `connect_ms`: establishing the connection, per attempt;
//!   - `first_byte_ms`: from sending a request to the response headers, per attempt;
//!   - `idle_ms`: between two chunks of the response body, per attempt;
//!   - `total_ms`: the whole request, every retry and every wait between retries included.
//!
//!   Unset values keep the clients' defaults (`spine_models::http::Timeouts`).
//! - `tool_choice`: `"auto"`, `"required"`, `"none"`, or a tool name; sent with the tools in
//!   each wire's format. Unset: not sent (some servers, llama-cpp-python's, then ignore the
//!   tools).
//! - `stream`: `false` requests whole replies, for servers that cannot stream tool calls
//!   (default `true`).
//! - `prompt_caching`: `false` sends no prompt-cache breakpoints (Anthropic `cache_control`;
//!   default `true`, as is `DISABLE_PROMPT_CACHING` unset).
//! - `max_tokens`: the output limit per reply, 1 to 1 000 000 (default: the
//!   `CLAUDE_CODE_MAX_OUTPUT_TOKENS` variable, else 8192 for Anthropic and the server's own
//!   default for OpenAI-compatible servers). The setting wins over the variable.
//! - `temperature`: a number from 0 to 2, sent when set.
//! - `prices`: model-id prefix → `{"input", "output", "cache_write", "cache_read"}` in US
//!   dollars per million tokens (`input` and `output` required; a missing cache price is the
//!   input price), over the built-in table. Merged by prefix.
//! - `thinking_budget_tokens`: an integer from 1024 (the API's minimum) to 1 000 000; Anthropic
//!   extended thinking with that budget. Unset: no thinking.
//! - `reasoning_effort`: `minimal`, `low`, `medium` or `high`; OpenAI reasoning effort (chat
//!   completions and the Responses API). Unset: the server's default.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};
use spine_protocol::message::ReasoningEffort;
use spine_protocol::tool_choice::ToolChoice;

use crate::source::{Origin, SettingsError, type_name};

/// The longest timeout accepted: one day.
const MAX_MS: u64 = 86_400_000;

/// The largest `max_tokens` accepted.
const MAX_OUTPUT_TOKENS: u64 = 1_000_000;

/// The smallest `thinking_budget_tokens` (the Messages API's minimum).
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// The largest `thinking_budget_tokens` accepted.
const MAX_THINKING_BUDGET: u64 = 1_000_000;

/// `model_options.timeouts`, merged field by field (unset: the client's default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelTimeoutSettings {
    /// `connect_ms`.
    pub connect: Option<Duration>,
    /// `first_byte_ms`.
    pub first_byte: Option<Duration>,
    /// `idle_ms`.
    pub idle: Option<Duration>,
    /// `total_ms`.
    pub total: Option<Duration>,
}

/// The `model_options` keys besides `timeouts` (unset: the client's default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOptionSettings {
    /// `tool_choice`.
    pub tool_choice: Option<ToolChoice>,
    /// `stream`.
    pub stream: Option<bool>,
    /// `prompt_caching`.
    pub prompt_caching: Option<bool>,
    /// `max_tokens`.
    pub max_tokens: Option<u32>,
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `prices`, by model-id prefix.
    pub prices: BTreeMap<String, ModelPrice>,
    /// `thinking_budget_tokens` (Anthropic extended thinking).
    pub thinking_budget_tokens: Option<u32>,
    /// `reasoning_effort` (OpenAI).
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// One row of `model_options.prices`, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
}

/// Merges one source's `model_options` value over `timeouts` and `options`.
pub(crate) fn merge(
    timeouts: &mut ModelTimeoutSettings,
    options: &mut ModelOptionSettings,
    origin: &Origin,
    value: &Value,
) -> Result<(), SettingsError> {
    let Value::Object(map) = value else {
        return Err(SettingsError::at(
            origin,
            "model_options",
            format!("expected an object, found {}", type_name(value)),
        ));
    };
    for (key, value) in map {
        let path = format!("model_options.{key}");
        match key.as_str() {
            "timeouts" => merge_timeouts(timeouts, origin, value)?,
            "tool_choice" => {
                let text = value.as_str().ok_or_else(|| {
                    SettingsError::at(
                        origin,
                        &path,
                        format!("expected \"auto\", \"required\", \"none\" or a tool name, found {}", type_name(value)),
                    )
                })?;
                let choice = ToolChoice::parse(text).ok_or_else(|| {
                    SettingsError::at(
                        origin,
                        &path,
                        "expected \"auto\", \"required\", \"none\" or a tool name, found an empty string",
                    )
                })?;
                options.tool_choice = Some(choice);
            }
            "stream" => {
                let on = value.as_bool().ok_or_else(|| {
                    SettingsError::at(origin, &path, format!("expected true or false, found {value}"))
                })?;
                options.stream = Some(on);
            }
            "prompt_caching" => {
                let on = value.as_bool().ok_or_else(|| {
                    SettingsError::at(origin, &path, format!("expected true or false, found {value}"))
                })?;
                options.prompt_caching = Some(on);
            }
            "max_tokens" => {
                let n = value
                    .as_u64()
                    .filter(|n| (1..=MAX_OUTPUT_TOKENS).contains(n))
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        SettingsError::at(
                            origin,
                            &path,
                            format!("expected an integer between 1 and {MAX_OUTPUT_TOKENS}, found {value}"),
                        )
                    })?;
                options.max_tokens = Some(n);
            }
            "temperature" => {
                let t = value.as_f64().filter(|t| (0.0..=2.0).contains(t)).ok_or_else(|| {
                    SettingsError::at(origin, &path, format!("expected a number between 0 and 2, found {value}"))
                })?;
                options.temperature = Some(t);
            }
            "prices" => merge_prices(&mut options.prices, origin, value)?,
            "thinking_budget_tokens" => {
                let budget = value
                    .as_u64()
                    .filter(|n| (u64::from(MIN_THINKING_BUDGET)..=MAX_THINKING_BUDGET).contains(n))
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        SettingsError::at(
                            origin,
                            &path,
                            format!(
                                "expected an integer between {MIN_THINKING_BUDGET} and {MAX_THINKING_BUDGET}, found {value}"
                            ),
                        )
                    })?;
                options.thinking_budget_tokens = Some(budget);
            }
            "reasoning_effort" => {
                let effort = value.as_str().and_then(ReasoningEffort::parse).ok_or_else(|| {
                    SettingsError::at(origin, &path, format!("expected minimal, low, medium or high, found {value}"))
                })?;
                options.reasoning_effort = Some(effort);
            }
            _ => {
                return Err(SettingsError::at(
                    origin,
                    path,
                    "unknown field (expected timeouts, tool_choice, stream, prompt_caching, max_tokens, temperature, \
                     prices, thinking_budget_tokens or reasoning_effort)",
                ));
            }
        }
    }
    Ok(())
}

fn merge_prices(into: &mut BTreeMap<String, ModelPrice>, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    let Value::Object(rows) = value else {
        return Err(SettingsError::at(
            origin,
            "model_options.prices",
            format!("expected an object of model-id prefixes, found {}", type_name(value)),
        ));
    };
    for (prefix, row) in rows {
        let path = format!("model_options.prices.{prefix}");
        let Value::Object(row) = row else {
            return Err(SettingsError::at(origin, &path, format!("expected an object, found {}", type_name(row))));
        };
        let field = |name: &str, required: bool| -> Result<Option<f64>, SettingsError> {
            match row.get(name) {
                None if required => {
                    Err(SettingsError::at(origin, format!("{path}.{name}"), "missing (US dollars per million tokens)"))
                }
                None => Ok(None),
                Some(v) => v.as_f64().filter(|p| p.is_finite() && *p >= 0.0).map(Some).ok_or_else(|| {
                    SettingsError::at(
                        origin,
                        format!("{path}.{name}"),
                        format!("expected a price of 0 or more, found {v}"),
                    )
                }),
            }
        };
        if let Some(other) =
            row.keys().find(|k| !["input", "output", "cache_write", "cache_read"].contains(&k.as_str()))
        {
            return Err(SettingsError::at(
                origin,
                format!("{path}.{other}"),
                "unknown field (expected input, output, cache_write or cache_read)",
            ));
        }
        let input = field("input", true)?.unwrap_or_default();
        let output = field("output", true)?.unwrap_or_default();
        let price = ModelPrice {
            input,
            output,
            cache_write: field("cache_write", false)?.unwrap_or(input),
            cache_read: field("cache_read", false)?.unwrap_or(input),
        };
        into.insert(prefix.clone(), price);
    }
    Ok(())
}

fn merge_timeouts(into: &mut ModelTimeoutSettings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    let Value::Object(timeouts) = value else {
        return Err(SettingsError::at(
            origin,
            "model_options.timeouts",
            format!("expected an object, found {}", type_name(value)),
        ));
    };
    merge_timeout_fields(into, origin, timeouts)
}

fn merge_timeout_fields(
    into: &mut ModelTimeoutSettings,
    origin: &Origin,
    timeouts: &Map<String, Value>,
) -> Result<(), SettingsError> {
    for (key, value) in timeouts {
        let path = format!("model_options.timeouts.{key}");
        let slot = match key.as_str() {
            "connect_ms" => &mut into.connect,
            "first_byte_ms" => &mut into.first_byte,
            "idle_ms" => &mut into.idle,
            "total_ms" => &mut into.total,
            _ => {
                return Err(SettingsError::at(
                    origin,
                    path,
                    "unknown field (expected connect_ms, first_byte_ms, idle_ms or total_ms)",
                ));
            }
        };
        let ms = value.as_u64().filter(|ms| (1..=MAX_MS).contains(ms)).ok_or_else(|| {
            SettingsError::at(origin, &path, format!("expected milliseconds between 1 and {MAX_MS}, found {value}"))
        })?;
        *slot = Some(Duration::from_millis(ms));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Settings, SettingsLayer};

    fn layer(name: &str, value: Value) -> SettingsLayer {
        let Value::Object(value) = value else { panic!("object") };
        SettingsLayer { origin: Origin::Project(name.into()), value }
    }

    #[test]
    fn timeouts_merge_field_by_field_by_precedence() {
        let s = Settings::from_layers(vec![
            layer("a.json", json!({"model_options": {"timeouts": {"first_byte_ms": 1000, "idle_ms": 2000}}})),
            layer("b.json", json!({"model_options": {"timeouts": {"idle_ms": 3000, "total_ms": 4000}}})),
        ])
        .expect("valid");
        assert_eq!(
            s.model_timeouts,
            ModelTimeoutSettings {
                connect: None,
                first_byte: Some(Duration::from_secs(1)),
                idle: Some(Duration::from_secs(3)),
                total: Some(Duration::from_secs(4)),
            }
        );
    }

    #[test]
    fn reasoning_options_merge_by_precedence() {
        let s = Settings::from_layers(vec![
            layer("a.json", json!({"model_options": {"thinking_budget_tokens": 2048, "reasoning_effort": "low"}})),
            layer("b.json", json!({"model_options": {"reasoning_effort": "high"}})),
        ])
        .expect("valid");
        assert_eq!(s.model_options.thinking_budget_tokens, Some(2048));
        assert_eq!(s.model_options.reasoning_effort, Some(ReasoningEffort::High));
    }

    #[test]
    fn prompt_caching_is_a_boolean_by_precedence() {
        let s = Settings::from_layers(vec![
            layer("a.json", json!({"model_options": {"prompt_caching": false}})),
            layer("b.json", json!({"model_options": {"stream": true}})),
        ])
        .expect("valid");
        assert_eq!(s.model_options.prompt_caching, Some(false));
        let err = Settings::from_layers(vec![layer("p.json", json!({"model_options": {"prompt_caching": "no"}}))])
            .expect_err("invalid");
        assert_eq!(err.path, "model_options.prompt_caching");
    }

    #[test]
    fn bad_timeouts_are_errors_naming_the_file_and_json_path() {
        let cases = [
            (json!({"model_options": 5}), "model_options"),
            (json!({"model_options": {"retries": 1}}), "model_options.retries"),
            (json!({"model_options": {"timeouts": []}}), "model_options.timeouts"),
            (json!({"model_options": {"timeouts": {"idle": 5}}}), "model_options.timeouts.idle"),
            (json!({"model_options": {"timeouts": {"idle_ms": 0}}}), "model_options.timeouts.idle_ms"),
            (json!({"model_options": {"timeouts": {"total_ms": "10m"}}}), "model_options.timeouts.total_ms"),
            (json!({"model_options": {"timeouts": {"connect_ms": 1.5}}}), "model_options.timeouts.connect_ms"),
            (json!({"model_options": {"thinking_budget_tokens": 1023}}), "model_options.thinking_budget_tokens"),
            (json!({"model_options": {"thinking_budget_tokens": "4k"}}), "model_options.thinking_budget_tokens"),
            (json!({"model_options": {"reasoning_effort": "max"}}), "model_options.reasoning_effort"),
        ];
        for (value, path) in cases {
            let err = Settings::from_layers(vec![layer("p.json", value.clone())]).expect_err("invalid");
            assert_eq!((err.origin.as_str(), err.path.as_str()), ("p.json", path), "{value}");
        }
    }

    #[test]
    fn tool_choice_stream_max_tokens_temperature_and_prices_merge_by_precedence() {
        let s = Settings::from_layers(vec![
            layer(
                "a.json",
                json!({"model_options": {"tool_choice": "auto", "max_tokens": 1000, "temperature": 0.5,
                    "prices": {"smollm2": {"input": 1, "output": 2}, "gpt-4o": {"input": 3, "output": 4}}}}),
            ),
            layer(
                "b.json",
                json!({"model_options": {"tool_choice": "calculator", "stream": false,
                    "prices": {"smollm2": {"input": 0.5, "output": 1, "cache_read": 0.05}}}}),
            ),
        ])
        .expect("valid");
        let o = &s.model_options;
        assert_eq!(o.tool_choice, Some(ToolChoice::Tool("calculator".into())));
        assert_eq!((o.stream, o.max_tokens, o.temperature), (Some(false), Some(1000), Some(0.5)));
        assert_eq!(
            o.prices["smollm2"],
            ModelPrice { input: 0.5, output: 1.0, cache_write: 0.5, cache_read: 0.05 },
            "a later source replaces the row; a missing cache price is the input price"
        );
        assert_eq!(o.prices["gpt-4o"], ModelPrice { input: 3.0, output: 4.0, cache_write: 3.0, cache_read: 3.0 });
        for (text, choice) in
            [("auto", ToolChoice::Auto), ("required", ToolChoice::Required), ("none", ToolChoice::None)]
        {
            let s = Settings::from_layers(vec![layer("c.json", json!({"model_options": {"tool_choice": text}}))])
                .expect("valid");
            assert_eq!(s.model_options.tool_choice, Some(choice));
        }
    }

    #[test]
    fn bad_model_options_are_errors_naming_the_file_and_json_path() {
        let cases = [
            (json!({"model_options": {"tool_choice": 1}}), "model_options.tool_choice"),
            (json!({"model_options": {"tool_choice": " "}}), "model_options.tool_choice"),
            (json!({"model_options": {"stream": "no"}}), "model_options.stream"),
            (json!({"model_options": {"max_tokens": 0}}), "model_options.max_tokens"),
            (json!({"model_options": {"max_tokens": 2_000_000}}), "model_options.max_tokens"),
            (json!({"model_options": {"temperature": 3}}), "model_options.temperature"),
            (json!({"model_options": {"prices": []}}), "model_options.prices"),
            (json!({"model_options": {"prices": {"m": {"input": 1}}}}), "model_options.prices.m.output"),
            (json!({"model_options": {"prices": {"m": {"input": -1, "output": 1}}}}), "model_options.prices.m.input"),
            (
                json!({"model_options": {"prices": {"m": {"input": 1, "output": 1, "cached": 1}}}}),
                "model_options.prices.m.cached",
            ),
        ];
        for (value, path) in cases {
            let err = Settings::from_layers(vec![layer("p.json", value.clone())]).expect_err("invalid");
            assert_eq!((err.origin.as_str(), err.path.as_str()), ("p.json", path), "{value}");
        }
    }
}
