//! The built-in set: names, order, effects, and schemas that compile and reject bad input.

use serde_json::json;
use spine_core::registry::ToolRegistryBuilder;
use spine_protocol::tool::{Effect, ErrorCode, ToolArguments, ToolCall};

use crate::support::Fixture;

#[test]
fn builtins_register_in_order_with_their_effects() {
    let tools = spine_tools::builtin_tools();
    let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
    assert_eq!(names, ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "calculator"]);
    let effects: Vec<Effect> = tools.iter().map(|t| t.effect()).collect();
    assert_eq!(
        effects,
        [Effect::Read, Effect::Write, Effect::Write, Effect::Read, Effect::Read, Effect::Execute, Effect::Read]
    );
    for t in &tools {
        let schema = t.spec().input_schema;
        assert_eq!(schema["type"], json!("object"), "{}", t.spec().name);
        assert_eq!(schema["additionalProperties"], json!(false), "{}", t.spec().name);
    }
    let mut builder = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut builder);
    let registry = builder.build().expect("schemas compile");
    assert_eq!(registry.names().count(), 7);
}

#[test]
fn schemas_reject_unknown_fields_missing_fields_and_out_of_range_numbers() {
    let f = Fixture::new();
    let cwd = f.root();
    for (tool, args) in [
        ("Read", json!({"file_path": "a", "bogus": 1})),
        ("Read", json!({"file_path": "a", "limit": 0})),
        ("Write", json!({"file_path": "a"})),
        ("Edit", json!({"file_path": "a", "old_string": "x"})),
        ("Grep", json!({"pattern": "x", "output_mode": "lines"})),
        ("Grep", json!({"pattern": "x", "-A": -1})),
        ("Bash", json!({"command": "true", "timeout": 600_001})),
        ("calculator", json!({"expression": ""})),
    ] {
        let call = ToolCall { id: "c".into(), name: tool.into(), arguments: ToolArguments::Json(args.clone()) };
        let e = f.registry.prepare(&call, &cwd).expect_err(&format!("{tool} {args}"));
        assert_eq!(e.code, ErrorCode::InvalidArguments, "{tool} {args}");
    }
}
