//! Registration of the families, and every family tool once through the runner (review →
//! PreToolUse → permission → execute → project → PostToolUse).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::routing::get;
use serde_json::json;
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::registry::ToolRegistryBuilder;
use spine_protocol::hook::{HookOutput, PostToolUse, PostToolUseAction, PostToolUseInput};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::Effect;
use spine_tools::web::{PrivateNetworks, WebOptions};
use spine_tools::{FamilyConfig, register_builtins, register_families};

use crate::agent::{AgentHarness, calls, results, text};

const FAMILY_TOOLS: [&str; 17] = [
    "exec_command",
    "write_stdin",
    "command_run_wait",
    "command_run_read_output",
    "command_run_list",
    "command_run_terminate",
    "process_exec",
    "process_list",
    "process_read_output",
    "process_stop",
    "memory_store",
    "memory_get",
    "memory_list",
    "memory_search",
    "memory_append_daily",
    "WebFetch",
    "WebSearch",
];

#[test]
fn families_register_after_the_builtins_with_their_effects() {
    let mut builder = ToolRegistryBuilder::new();
    register_builtins(&mut builder);
    let handles = register_families(&mut builder, FamilyConfig::default());
    let registry = builder.build().expect("no duplicate names, every schema compiles");
    let names: Vec<&str> = registry.names().collect();
    assert_eq!(&names[names.len() - FAMILY_TOOLS.len()..], FAMILY_TOOLS);
    let effect = |name: &str| registry.effect(registry.lookup(name).expect(name));
    for (name, expected) in [
        ("exec_command", Effect::Execute),
        ("write_stdin", Effect::Execute),
        ("command_run_wait", Effect::Read),
        ("command_run_read_output", Effect::Read),
        ("command_run_list", Effect::Read),
        ("command_run_terminate", Effect::Execute),
        ("process_exec", Effect::Execute),
        ("process_list", Effect::Read),
        ("process_read_output", Effect::Read),
        ("process_stop", Effect::Execute),
        ("memory_store", Effect::Write),
        ("memory_get", Effect::Read),
        ("memory_list", Effect::Read),
        ("memory_search", Effect::Read),
        ("memory_append_daily", Effect::Write),
        ("WebFetch", Effect::Network),
        ("WebSearch", Effect::Network),
    ] {
        assert_eq!(effect(name), expected, "{name}");
    }
    for spec in registry.specs() {
        assert_eq!(spec.input_schema["additionalProperties"], json!(false), "{}", spec.name);
    }
    let sections = handles.operator_state().sections();
    assert_eq!(sections.keys().collect::<Vec<_>>(), vec!["command_runs", "processes"]);
}

#[tokio::test]
async fn every_family_tool_answers_through_the_runner() {
    let app = Router::new().route(
        "/search",
        get(|| async {
            axum::Json(json!({"results": [{"title": "Tokio", "url": "https://tokio.rs", "content": "runtime"}]}))
        }),
    );
    let addr = spine_testkit::http::serve(app).await;
    let mut h = AgentHarness::new();
    register_families(
        &mut h.tools,
        FamilyConfig {
            search_url: Some(format!("http://{addr}/search")),
            web: WebOptions { private_networks: PrivateNetworks::Allow, ..WebOptions::default() },
            ..FamilyConfig::default()
        },
    );
    let post: Arc<Mutex<Vec<String>>> = Arc::default();
    {
        let post = Arc::clone(&post);
        h.hooks.on::<PostToolUse>(
            "post",
            hook_fn(move |_c: &HookContext, input: &PostToolUseInput| {
                post.lock().expect("post").push(input.tool_name.clone());
                Ok(HookOutput::new(PostToolUseAction::default()))
            }),
        );
    }
    let run = h
        .run(
            "use everything",
            vec![
                calls(&[
                    ("m1", "memory_store", json!({"key": "plan", "value": "ship the families"})),
                    ("m2", "memory_append_daily", json!({"text": "families landed"})),
                ]),
                calls(&[
                    ("m3", "memory_get", json!({"key": "plan"})),
                    ("m4", "memory_list", json!({})),
                    ("m5", "memory_search", json!({"query": "families"})),
                ]),
                calls(&[
                    ("w1", "WebSearch", json!({"query": "tokio"})),
                    ("p1", "process_exec", json!({"command": "sleep 30", "ready_timeout_ms": 50})),
                    ("x1", "exec_command", json!({"command": "sleep 30", "yield_ms": 0})),
                ]),
                calls(&[
                    ("p2", "process_stop", json!({"process_run_id": "proc-1"})),
                    ("x2", "command_run_terminate", json!({"command_run_id": "cmd-1"})),
                ]),
                text("all done"),
            ],
        )
        .await;
    assert_eq!(run.outcome.subtype, RunSubtype::Success, "{}", run.outcome.result);
    let r = results(&run.outcome.messages);
    let content: Vec<&str> = r.iter().map(|m| m.content.as_str()).collect();
    assert!(r.iter().all(|m| m.error_code.is_none()), "{content:#?}");
    assert_eq!(content[0], "Stored memory `plan` (17 bytes).");
    assert!(content[1].starts_with("Appended a note to the daily log of "), "{}", content[1]);
    assert_eq!(content[2], "Memory `plan` (17 bytes):\nship the families");
    assert!(content[3].starts_with("1 memory entry:\n- plan (17 bytes)\nDaily logs: "), "{}", content[3]);
    assert!(content[4].starts_with("2 memory entries match \"families\":"), "{}", content[4]);
    assert_eq!(content[5], "Web results for \"tokio\":\n1. Tokio\n   https://tokio.rs\n   runtime");
    assert_eq!(content[6], "Background service started as process run proc-1.");
    assert!(content[7].starts_with("Command is still running as command run cmd-1"), "{}", content[7]);
    assert_eq!(content[8], "Process run proc-1 was stopped and removed.");
    assert_eq!(content[9], "Command run cmd-1 was terminated and removed.");
    assert_eq!(post.lock().expect("post").len(), 10, "PostToolUse saw every call");
}
