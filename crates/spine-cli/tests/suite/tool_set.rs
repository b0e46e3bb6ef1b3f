//! `--tool-set claude` and the `tool_set` setting through the binary: the model is offered
//! Claude Code's tools only, a call of one of spine's own tools is an unknown tool (in a
//! subagent too), and the flag wins over the settings.

use serde_json::{Value, json};

use crate::support::*;

/// Claude Code 2.1.328's tool names, recorded in the fixtures.
fn claude_code_tools() -> Vec<String> {
    let path = format!("{}/tests/fixtures/claude-code-2.1.328/tools-offered.json", env!("CARGO_MANIFEST_DIR"));
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("recording")).expect("JSON");
    ["tools", "deferred"]
        .iter()
        .flat_map(|k| recorded[k].as_array().cloned().unwrap_or_default())
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect()
}

fn exec_call(id: &str) -> Value {
    json!({"id": id, "name": "exec_command", "arguments": {"command": "echo from-exec"}})
}

#[test]
fn the_claude_tool_set_offers_only_claude_codes_tools_and_a_call_of_exec_command_is_an_unknown_tool() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![
        anthropic_tool_use("t1", "exec_command", &json!({"command": "echo from-exec"})),
        anthropic_text("done"),
    ]);
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", "k")
        .args(["run", "-p", "go", "--model", "anthropic:claude-sonnet-4-5", "--tool-set", "claude"])
        .args(["--trace", trace.to_str().expect("utf-8")])
        .args(["--settings", r#"{"permissions": {"allow": ["exec_command"]}}"#])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.bodies();
    let offered: Vec<String> = bodies[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    let claude = claude_code_tools();
    assert!(offered.iter().all(|n| claude.contains(n)), "only Claude Code's tools: {offered:?}");
    for name in ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "WebFetch", "WebSearch"] {
        assert!(offered.iter().any(|n| n == name), "{name} is offered: {offered:?}");
    }
    let messages = bodies[1]["messages"].as_array().cloned().unwrap_or_default();
    let result = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_result")
        .unwrap_or(Value::Null);
    assert_eq!(result["content"], "Error [unknown_tool]: no tool named `exec_command` is available", "{result}");
    let decision = spine_testkit::files::read_jsonl(&trace)
        .into_iter()
        .find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "t1")
        .unwrap_or(Value::Null);
    assert_eq!(decision["error_code"], "unknown_tool", "{decision}");
}

#[test]
fn the_tool_set_setting_hides_spines_tools_and_the_flag_overrides_it() {
    let s = Sandbox::new();
    let settings = json!({"tool_set": "claude", "permissions": {"allow": ["exec_command"]}}).to_string();
    let script = s.script(json!([{"tool_calls": [exec_call("c1")]}, {"text": "done"}]));
    let out = s.run(&script, &["--settings", &settings, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results[0].starts_with("Error [unknown_tool]"), "{results:?}");

    let out = s.run(
        &script,
        &["--settings", &settings, "--tool-set", "spine", "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results[0].contains("from-exec"), "the flag wins: {results:?}");
}

#[test]
fn a_subagent_inherits_the_claude_tool_set() {
    let s = Sandbox::new();
    let child = s.dir.path().join("child.json");
    spine_testkit::script::write_script_file(
        &child,
        json!([{"tool_calls": [exec_call("k1")]}, {"text": "child done"}]),
    )
    .expect("child script");
    s.write(
        ".claude/agents/helper.md",
        &format!(
            "---\nname: helper\ndescription: the helper agent\nmodel: scripted:{}\n---\nYou help.\n",
            child.display()
        ),
    );
    let trace = s.dir.path().join("trace.jsonl");
    let delegate = json!({"id": "c1", "name": "Agent", "arguments": {"description": "d", "prompt": "run it", "subagent_type": "helper"}});
    let script = s.script(json!([{"tool_calls": [delegate]}, {"text": "done"}]));
    let settings = json!({"permissions": {"allow": ["exec_command"]}}).to_string();
    let out =
        s.run(&script, &["--settings", &settings, "--tool-set", "claude", "--trace", trace.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let codes: Vec<Value> = spine_testkit::files::read_jsonl(&trace)
        .into_iter()
        .filter(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "k1")
        .map(|e| e["error_code"].clone())
        .collect();
    assert_eq!(codes, [json!("unknown_tool")], "the subagent's call");
}

#[test]
fn an_unknown_tool_set_and_tools_outside_the_set_are_usage_errors() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "never"}]));
    let out = s.run(&script, &["--tool-set", "all"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("spine, claude"), "{}", stderr(&out));
    let out = s.run(&script, &["--tool-set", "claude", "--tools", "Read", "exec_command"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("exec_command"), "{}", stderr(&out));
}
