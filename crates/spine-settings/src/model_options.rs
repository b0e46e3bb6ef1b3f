//! The `model_options` settings key: options of the model clients that settings may set.
//!
//! `model_options.timeouts` is an object of four optional integers of milliseconds
//! (1 to 86 400 000), each taken from the highest-precedence source that sets it:
//!
//! - `connect_ms`: establishing the connection, per attempt;
//! - `first_byte_ms`: from sending a request to the response headers, per attempt;
//! - `idle_ms`: between two chunks of the response body, per attempt;
//! - `total_ms`: the whole request, every retry and every wait between retries included.
//!
//! Unset values keep the clients' defaults (`spine_models::http::Timeouts`).
//!
//! Reasoning ([`ModelReasoningSettings`], each from the highest-precedence source that sets
//! it):
//!
//! - `thinking_budget_tokens`: an integer from 1024 (the API's minimum) to 1 000 000; Anthropic
//!   extended thinking with that budget. Unset: no thinking.
//! - `reasoning_effort`: `minimal`, `low`, `medium` or `high`; OpenAI reasoning effort (chat
//!   completions and the Responses API). Unset: the server's default.
//!
//! Anything else is an error naming the source and the JSON path
//! (`model_options.timeouts.idle_ms`).

use std::time::Duration;

use serde_json::Value;
use spine_protocol::message::ReasoningEffort;

use crate::source::{Origin, SettingsError, type_name};

/// The longest timeout accepted: one day.
const MAX_MS: u64 = 86_400_000;

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

/// The smallest `thinking_budget_tokens` (the Messages API's minimum).
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// The largest `thinking_budget_tokens` accepted.
const MAX_THINKING_BUDGET: u64 = 1_000_000;

/// `model_options.thinking_budget_tokens` and `model_options.reasoning_effort`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ModelReasoningSettings {
    /// `thinking_budget_tokens` (Anthropic extended thinking).
    pub thinking_budget_tokens: Option<u32>,
    /// `reasoning_effort` (OpenAI).
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// Merges one source's `model_options` value over `into` and `reasoning`.
pub(crate) fn merge(
    into: &mut ModelTimeoutSettings,
    reasoning: &mut ModelReasoningSettings,
    origin: &Origin,
    value: &Value,
) -> Result<(), SettingsError> {
    let Value::Object(options) = value else {
        return Err(SettingsError::at(
            origin,
            "model_options",
            format!("expected an object, found {}", type_name(value)),
        ));
    };
    for (key, value) in options {
        match key.as_str() {
            "timeouts" => merge_timeouts(into, origin, value)?,
            "thinking_budget_tokens" => {
                let budget = value
                    .as_u64()
                    .filter(|n| (u64::from(MIN_THINKING_BUDGET)..=MAX_THINKING_BUDGET).contains(n))
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        SettingsError::at(
                            origin,
                            "model_options.thinking_budget_tokens",
                            format!(
                                "expected an integer between {MIN_THINKING_BUDGET} and {MAX_THINKING_BUDGET}, found {value}"
                            ),
                        )
                    })?;
                reasoning.thinking_budget_tokens = Some(budget);
            }
            "reasoning_effort" => {
                let effort = value.as_str().and_then(ReasoningEffort::parse).ok_or_else(|| {
                    SettingsError::at(
                        origin,
                        "model_options.reasoning_effort",
                        format!("expected minimal, low, medium or high, found {value}"),
                    )
                })?;
                reasoning.reasoning_effort = Some(effort);
            }
            other => return Err(SettingsError::at(origin, format!("model_options.{other}"), "unknown field")),
        }
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
        assert_eq!(
            s.model_reasoning,
            ModelReasoningSettings {
                thinking_budget_tokens: Some(2048),
                reasoning_effort: Some(ReasoningEffort::High)
            }
        );
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
}
