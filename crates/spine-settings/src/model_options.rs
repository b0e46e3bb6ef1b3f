//! The `model_options` settings key: options of the model clients that settings may set.
//!
//! Only `model_options.timeouts` exists, an object of four optional integers of milliseconds
//! (1 to 86 400 000), each taken from the highest-precedence source that sets it:
//!
//! - `connect_ms`: establishing the connection, per attempt;
//! - `first_byte_ms`: from sending a request to the response headers, per attempt;
//! - `idle_ms`: between two chunks of the response body, per attempt;
//! - `total_ms`: the whole request, every retry and every wait between retries included.
//!
//! Unset values keep the clients' defaults (`spine_models::http::Timeouts`). Anything else is
//! an error naming the source and the JSON path (`model_options.timeouts.idle_ms`).

use std::time::Duration;

use serde_json::Value;

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

/// Merges one source's `model_options` value over `into`.
pub(crate) fn merge(into: &mut ModelTimeoutSettings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
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
    fn bad_timeouts_are_errors_naming_the_file_and_json_path() {
        let cases = [
            (json!({"model_options": 5}), "model_options"),
            (json!({"model_options": {"retries": 1}}), "model_options.retries"),
            (json!({"model_options": {"timeouts": []}}), "model_options.timeouts"),
            (json!({"model_options": {"timeouts": {"idle": 5}}}), "model_options.timeouts.idle"),
            (json!({"model_options": {"timeouts": {"idle_ms": 0}}}), "model_options.timeouts.idle_ms"),
            (json!({"model_options": {"timeouts": {"total_ms": "10m"}}}), "model_options.timeouts.total_ms"),
            (json!({"model_options": {"timeouts": {"connect_ms": 1.5}}}), "model_options.timeouts.connect_ms"),
        ];
        for (value, path) in cases {
            let err = Settings::from_layers(vec![layer("p.json", value.clone())]).expect_err("invalid");
            assert_eq!((err.origin.as_str(), err.path.as_str()), ("p.json", path), "{value}");
        }
    }
}
