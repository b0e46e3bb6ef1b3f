//! Typed tool arguments: each tool declares its arguments once, as a struct deriving
//! `Deserialize` and `JsonSchema`. [`schema`] derives the model-facing JSON Schema from it and
//! [`parse`] reads a call's arguments into it. A field's doc comment (or its
//! `#[schemars(description = ...)]`) is the description the model reads.
//!
//! # The schema
//!
//! schemars' draft 2020-12 output (subschemas inlined) is brought by [`tool_schema`] into the
//! shape the tools have always shown the model, pinned by `tests/snapshots/tool_schemas.json`:
//! - no `$schema`, and no `title` or `description` at the root (the tool's description is
//!   the spec's, and an argument struct's doc comment is for the reader);
//! - an `Option` field means "may be absent", never "may be null": `"null"` is dropped from
//!   `type` and `enum`;
//! - every object has `properties` and `additionalProperties: false` (the registry's schema
//!   check refuses unknown fields; the structs themselves ignore them);
//! - a description written as a wrapped doc comment is one line (line breaks become spaces);
//! - keys come in one order: [`KEY_ORDER`], then any other key as generated.
//!
//! Integers are [`Count`]s, whose schema is `{"type": "integer", "minimum": 0}`; a field's
//! `#[schemars(range(...))]` narrows it.
//!
//! # Parsing
//!
//! The registry has already validated the arguments against that schema, so an error here
//! means a direct call or a hook rewrite bypassed the check. It is an `invalid_arguments` error
//! naming the field as a JSON pointer (`/timeout: invalid type: string "5", expected a
//! non-negative integer`), never a panic. `null` counts as absent for an optional field;
//! integers may be written as integral floats (`5.0`), as JSON Schema's `"integer"` accepts.

use std::borrow::Cow;
use std::fmt;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::{Map, Value};
use spine_protocol::tool::{ErrorCode, ToolError};

/// The order of a schema object's keys (others follow, as generated).
pub(crate) const KEY_ORDER: [&str; 10] = [
    "type",
    "items",
    "enum",
    "minLength",
    "minimum",
    "maximum",
    "description",
    "properties",
    "required",
    "additionalProperties",
];

/// The model-facing JSON Schema of an argument struct.
pub(crate) fn schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator();
    tool_schema(generator.into_root_schema_for::<T>().to_value())
}

/// Post-processes a generated root schema as the module documentation describes.
pub(crate) fn tool_schema(mut root: Value) -> Value {
    if let Value::Object(map) = &mut root {
        map.remove("title");
        map.remove("description");
    }
    normalize(&mut root);
    root
}

fn normalize(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if let [single] = types.as_slice() {
            let single = single.clone();
            map.insert("type".into(), single);
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if let Some(Value::String(text)) = map.get_mut("description") {
        *text = text.split('\n').map(str::trim).collect::<Vec<_>>().join(" ");
    }
    if map.get("type").and_then(Value::as_str) == Some("object") {
        map.entry("properties").or_insert_with(|| Value::Object(Map::new()));
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(normalize);
    }
    if let Some(items) = map.get_mut("items") {
        normalize(items);
    }
    let mut ordered = Map::new();
    for key in KEY_ORDER {
        if let Some(value) = map.remove(key) {
            ordered.insert(key.to_owned(), value);
        }
    }
    ordered.append(map);
    *map = ordered;
}

/// Reads a call's arguments into the tool's argument struct.
pub(crate) fn parse<'a, T: Deserialize<'a>>(args: &'a Map<String, Value>) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let mut pointer = String::new();
        for segment in e.path().iter() {
            pointer.push('/');
            match segment {
                serde_path_to_error::Segment::Seq { index } => pointer.push_str(&index.to_string()),
                serde_path_to_error::Segment::Map { key } => pointer.push_str(key),
                serde_path_to_error::Segment::Enum { variant } => pointer.push_str(variant),
                serde_path_to_error::Segment::Unknown => pointer.push('?'),
            }
        }
        let message = if pointer.is_empty() { e.inner().to_string() } else { format!("{pointer}: {}", e.inner()) };
        ToolError::new(ErrorCode::InvalidArguments, message)
    })
}

/// The arguments of a tool that takes none.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct NoArgs {}

/// A non-negative integer argument: a JSON integer, or an integral float (`5.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Count(pub u64);

impl Count {
    /// The value.
    pub(crate) fn get(self) -> u64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CountVisitor)
    }
}

struct CountVisitor;

impl Visitor<'_> for CountVisitor {
    type Value = Count;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-negative integer")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
        Ok(Count(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
        u64::try_from(v).map(Count).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Count, E> {
        if v >= 0.0 && v.fract() == 0.0 && v <= u64::MAX as f64 {
            Ok(Count(v as u64))
        } else {
            Err(E::invalid_value(de::Unexpected::Float(v), &self))
        }
    }
}

impl JsonSchema for Count {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Count".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 0})
    }
}

#[cfg(test)]
mod tests;
