//! The model-facing schemas of every built-in and family tool are pinned: name, description
//! and parameters (JSON Schema), byte for byte as the model receives them (key order included),
//! against `tests/snapshots/tool_schemas.json`.
//!
//! A deliberate change to what the model sees is recorded by running this test with
//! `SPINE_BLESS_TOOL_SCHEMAS=1`, which rewrites the snapshot; review its diff like any other
//! change to the tools' contract. MCP tools are not pinned: their schemas come from the server.

use std::path::PathBuf;

use serde_json::{Value, json};
use spine_tools::FamilyConfig;
use spine_tools::families::family_tools;

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/tool_schemas.json")
}

/// Every built-in tool, then every family tool (default settings), in registration order.
fn current_schemas() -> String {
    let mut tools = spine_tools::builtin_tools();
    tools.extend(family_tools(FamilyConfig::default()).0);
    let specs: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let spec = tool.spec();
            json!({"name": spec.name, "description": spec.description, "parameters": spec.input_schema})
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&Value::Array(specs)).expect("schemas serialize");
    text.push('\n');
    text
}

#[test]
fn model_facing_tool_schemas_match_the_snapshot_byte_for_byte() {
    let current = current_schemas();
    let path = snapshot_path();
    if std::env::var_os("SPINE_BLESS_TOOL_SCHEMAS").is_some() {
        std::fs::write(&path, &current).expect("write snapshot");
    }
    let pinned = std::fs::read_to_string(&path).expect("snapshot file");
    if current != pinned {
        let first = current.lines().zip(pinned.lines()).position(|(a, b)| a != b);
        panic!(
            "tool schemas differ from {} (first differing line: {first:?})\n--- current ---\n{current}",
            path.display()
        );
    }
}
