//! Unit tests of the mailbox item types and the committed schemas.

use super::*;
use std::path::PathBuf;

fn schemas_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schemas")
}

fn render(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Regenerate with `SPINE_UPDATE_SCHEMAS=1 cargo test -p spine-llm-protocol schemas`.
#[test]
fn committed_schemas_match_the_types() {
    let update = std::env::var_os("SPINE_UPDATE_SCHEMAS").is_some_and(|v| v == "1");
    let dir = schemas_dir();
    let mut drift = Vec::new();
    for (name, schema) in schemas() {
        let path = dir.join(name);
        let fresh = render(&schema);
        if update {
            std::fs::create_dir_all(&dir).expect("schemas dir");
            std::fs::write(&path, &fresh).expect("write schema");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(committed) if committed == fresh => {}
            Ok(_) => drift.push(format!("{name} differs from the types")),
            Err(e) => drift.push(format!("{name} cannot be read ({e})")),
        }
    }
    assert!(
        drift.is_empty(),
        "JSON Schemas under schemas/ are out of date: {}.\nRegenerate them with \
         `SPINE_UPDATE_SCHEMAS=1 cargo test -p spine-llm-protocol schemas` and commit the result.",
        drift.join("; ")
    );
}

#[test]
fn item_ids_are_one_to_256_visible_ascii_characters() {
    assert!(check_item_id("item-0001").is_ok());
    assert!(check_item_id("a/b:c@d.e+f=g~").is_ok());
    assert!(check_item_id(&"x".repeat(ITEM_ID_MAX_LEN)).is_ok());
    assert!(check_item_id(&"x".repeat(ITEM_ID_MAX_LEN + 1)).is_err());
    assert!(check_item_id("").is_err());
    for bad in ["a b", "a\nb", "tab\there", "caf\u{e9}", "nul\u{0}"] {
        assert!(check_item_id(bad).is_err(), "{bad:?} is refused");
    }
}

#[test]
fn the_pipeline_example_item_round_trips_through_the_typed_payload() {
    let item = example_item("item-0001");
    assert_eq!(item["protocol_message_id"], "kernel-msg-item-0001");
    let envelope: ItemEnvelope = serde_json::from_value(item).expect("envelope");
    let payload: RequestPayload = serde_json::from_value(envelope.payload).expect("payload");
    assert_eq!(payload.protocol_version, PROTOCOL_VERSION);
    assert_eq!(payload.task.kind, "turn_step");
    assert_eq!(
        payload.task_payload,
        Some(TaskPayload::DeterministicToolCall {
            tool_call: ProgramToolCall {
                tool_name: "calculator".into(),
                arguments: serde_json::json!({"expression": "2 + 2"}),
                call_id: None
            }
        })
    );
    assert_eq!(
        payload.budget_hints.clone().and_then(|b| b.advisory_hints).and_then(|a| a.recommended_compaction_threshold),
        Some(900_000)
    );
    assert_eq!(payload.allowed_tools(), Some(&["calculator".to_owned()][..]));
}

#[test]
fn kinds_and_modes_have_one_wire_name_each() {
    for t in ItemType::ALL {
        assert_eq!(ItemType::parse(t.as_str()), Some(t));
        assert_eq!(serde_json::to_value(t).ok(), Some(Value::String(t.as_str().into())));
    }
    for k in RequestKind::ALL {
        assert_eq!(RequestKind::parse(k.as_str()), Some(k));
        assert_eq!(serde_json::to_value(k).ok(), Some(Value::String(k.as_str().into())));
    }
    let modes = [
        TaskPayload::DeterministicToolCall {
            tool_call: ProgramToolCall { tool_name: "x".into(), arguments: serde_json::json!({}), call_id: None },
        },
        TaskPayload::SkillsCatalogList,
        TaskPayload::SkillsLoad { skill_name: "s".into() },
        TaskPayload::SkillsReadFile { skill_name: "s".into(), relative_path: "f".into() },
        TaskPayload::AgentRun { prompt: "p".into(), model: None, max_turns: None },
    ];
    for (mode, name) in modes.iter().zip(TaskPayload::MODES) {
        assert_eq!(mode.mode(), name);
        assert_eq!(serde_json::to_value(mode).ok().and_then(|v| v.get("mode").cloned()), Some(Value::from(name)));
    }
}
