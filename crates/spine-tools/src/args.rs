//! Typed access to a call's arguments.
//!
//! The registry has already validated arguments against the tool's schema, so a missing or
//! mistyped field here means the schema and the tool disagree (or a hook rewrite slipped
//! through); it is reported as `invalid_arguments` naming the field, never a panic.
//! Integers are accepted as JSON integers or as integral floats (`5.0`), as JSON Schema's
//! `"integer"` type does.

use serde_json::{Map, Value};
use spine_protocol::tool::{ErrorCode, ToolError};

/// A required string argument.
pub(crate) fn string<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, ToolError> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(wrong_type(key, "a string")),
        None => Err(ToolError::new(ErrorCode::InvalidArguments, format!("/{key}: required argument is missing"))),
    }
}

/// An optional string argument (`null` counts as absent).
pub(crate) fn opt_string<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(wrong_type(key, "a string")),
    }
}

/// An optional non-negative integer argument (`null` counts as absent).
pub(crate) fn opt_u64(args: &Map<String, Value>, key: &str) -> Result<Option<u64>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            if let Some(v) = n.as_u64() {
                return Ok(Some(v));
            }
            match n.as_f64() {
                Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => Ok(Some(f as u64)),
                _ => Err(wrong_type(key, "a non-negative integer")),
            }
        }
        Some(_) => Err(wrong_type(key, "a non-negative integer")),
    }
}

/// An optional boolean argument (`null` counts as absent).
pub(crate) fn opt_bool(args: &Map<String, Value>, key: &str) -> Result<Option<bool>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(wrong_type(key, "a boolean")),
    }
}

fn wrong_type(key: &str, expected: &str) -> ToolError {
    ToolError::new(ErrorCode::InvalidArguments, format!("/{key}: must be {expected}"))
}
