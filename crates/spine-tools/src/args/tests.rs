use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_protocol::tool::ErrorCode;

use super::{Count, parse, schema};

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
/// The struct's own doc comment stays out of the schema.
struct Sample {
    /// A name, described over
    /// two lines.
    #[schemars(length(min = 1))]
    name: String,
    /// How many.
    #[schemars(range(min = 1, max = 10))]
    count: Option<Count>,
    /// A switch.
    flag: Option<bool>,
    /// Some words.
    words: Option<Vec<String>>,
    mode: Option<Mode>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    Slow,
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn derived_schemas_are_optional_not_nullable_one_line_ordered_and_closed() {
    let expected = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "description": "A name, described over two lines."},
            "count": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many."},
            "flag": {"type": "boolean", "description": "A switch."},
            "words": {"type": "array", "items": {"type": "string"}, "description": "Some words."},
            "mode": {"type": "string", "enum": ["fast", "slow"]}
        },
        "required": ["name"],
        "additionalProperties": false
    });
    let derived = schema::<Sample>();
    // Compared as text: key order is part of what the model sees.
    assert_eq!(derived.to_string(), expected.to_string());
}

#[test]
fn integers_accept_integral_floats_and_null_counts_as_absent() {
    let a = args(json!({"name": "x", "count": 5.0, "flag": null, "mode": "slow"}));
    let parsed: Sample = parse(&a).expect("valid");
    assert_eq!(parsed.count, Some(Count(5)));
    assert_eq!(parsed.flag, None);
    assert!(matches!(parsed.mode, Some(Mode::Slow)));
}

#[test]
fn bad_arguments_are_invalid_arguments_naming_the_field() {
    for (value, message) in [
        (json!({}), "missing field `name`"),
        (json!({"name": 3}), "/name: invalid type: integer `3`, expected a string"),
        (json!({"name": "x", "count": -1}), "/count: invalid value: integer `-1`, expected a non-negative integer"),
        (
            json!({"name": "x", "count": 1.5}),
            "/count: invalid value: floating point `1.5`, expected a non-negative integer",
        ),
        (json!({"name": "x", "count": "5"}), "/count: invalid type: string \"5\", expected a non-negative integer"),
        (json!({"name": "x", "mode": "lines"}), "/mode: unknown variant `lines`, expected `fast` or `slow`"),
    ] {
        let a = args(value);
        let e = parse::<Sample>(&a).expect_err("invalid");
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert_eq!(e.message, message);
    }
}
