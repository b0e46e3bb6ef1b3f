//! The JSON Schema of a mailbox item (its payload depends on `item_type`), the committed
//! schemas under `schemas/`, and the example item of docs/pipeline.md.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value};

use super::{ClosePayload, ExecuteProgramToolResponse, ItemEnvelope, ItemType, PrepareRoundResponse, RequestPayload};
use crate::report::Report;

/// A schema: the mailbox item (an envelope whose `payload` depends on `item_type`).
pub struct MailboxItemSchema;

impl JsonSchema for MailboxItemSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "MailboxItem".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let request = generator.subschema_for::<RequestPayload>();
        let close = generator.subschema_for::<ClosePayload>();
        let envelope = generator.root_schema_for::<ItemEnvelope>();
        let mut properties = envelope.get("properties").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        if let Some(map) = properties.as_object_mut() {
            map.insert(
                "item_type".into(),
                serde_json::json!({
                    "description": "The kind of item; missing means `execution_assignment`.",
                    "type": "string",
                    "enum": ItemType::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
                }),
            );
            map.insert(
                "payload".into(),
                serde_json::json!({"description": "The payload; its shape depends on `item_type`.", "type": "object"}),
            );
        }
        let kind_is = |kinds: &[&str]| serde_json::json!({"properties": {"request_kind": {"enum": kinds}}});
        json_schema!({
            "description": "One mailbox item (docs/pipeline.md, Items).",
            "type": "object",
            "required": ["item_id", "protocol_message_id", "logical_work_id", "payload"],
            "properties": properties,
            "allOf": [
                {
                    "if": {"anyOf": [
                        {"not": {"required": ["item_type"]}},
                        {"properties": {"item_type": {"const": "execution_assignment"}}}
                    ]},
                    "then": {"properties": {"payload": {"allOf": [
                        request,
                        {"required": ["task_payload"]},
                        kind_is(&["execution_assignment"])
                    ]}}}
                },
                {
                    "if": {"required": ["item_type"], "properties": {"item_type": {"const": "agent_program_request"}}},
                    "then": {"properties": {"payload": {"allOf": [
                        request,
                        {"required": ["request_kind"]},
                        kind_is(&["prepare_round", "execute_program_tool"]),
                        {
                            "if": {"properties": {"request_kind": {"const": "execute_program_tool"}}},
                            "then": {"required": ["program_tool_call"]}
                        }
                    ]}}}
                },
                {
                    "if": {"required": ["item_type"], "properties": {"item_type": {"const": "resource_close_request"}}},
                    "then": {"properties": {"payload": close}}
                }
            ]
        })
    }
}

/// The committed JSON Schemas, by file name under `schemas/`: the mailbox item, the report,
/// the two agent-program responses, and one trace line.
pub fn schemas() -> Vec<(&'static str, Value)> {
    fn gen_for<T: JsonSchema>() -> Value {
        schemars::generate::SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<T>().to_value()
    }
    vec![
        ("item.schema.json", gen_for::<MailboxItemSchema>()),
        ("report.schema.json", gen_for::<Report>()),
        ("prepare_round_response.schema.json", gen_for::<PrepareRoundResponse>()),
        ("execute_program_tool_response.schema.json", gen_for::<ExecuteProgramToolResponse>()),
        ("trace.schema.json", crate::trace::schema()),
    ]
}

/// The example item of docs/pipeline.md (`examples/items/calculator.json`, a link to
/// `data/calculator-item.json`, which is packaged with the crate): a deterministic
/// `calculator` call on `2 + 2`, with `item_id` set and `protocol_message_id` and
/// `logical_work_id` derived from it. Handy for `spine submit` experiments and tests.
pub fn example_item(item_id: &str) -> Value {
    let mut item: Value = serde_json::from_str(include_str!("../../data/calculator-item.json")).unwrap_or(Value::Null);
    if let Some(map) = item.as_object_mut() {
        map.insert("item_id".into(), Value::String(item_id.to_owned()));
        map.insert("protocol_message_id".into(), Value::String(format!("kernel-msg-{item_id}")));
        map.insert("logical_work_id".into(), Value::String(format!("work-{item_id}")));
    }
    item
}
