//! `spine run` with the tool families and MCP servers configured as Claude Code does: the
//! tools are there, hooks match them, and nothing the run started outlives it.

use serde_json::json;

use crate::support::*;

/// Processes whose `file` (`cmdline` or `environ`) in /proc holds `marker`.
fn processes_with(file: &str, marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("proc").filter_map(Result::ok) {
        if let Ok(bytes) = std::fs::read(entry.path().join(file)) {
            let text = String::from_utf8_lossy(&bytes).replace('\0', " ");
            if text.contains(marker) {
                found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

#[test]
fn mcp_servers_from_mcp_json_expose_their_tools_hooks_match_them_and_they_stop_with_the_run() {
    let s = Sandbox::new();
    let everything = spine_testkit::mcp::peer_entry("server-everything");
    let marker = format!("spine-cli-mcp-{}", std::process::id());
    s.write(
        ".mcp.json",
        &json!({"mcpServers": {
            "everything": {"command": "node", "args": [everything, "stdio"], "env": {"SPINE_MARKER": marker}},
            "broken": {"command": "/nonexistent/mcp-server"}
        }})
        .to_string(),
    );
    let hook = s.write("hooks/log.sh", "#!/bin/sh\ncat > \"$SPINE_PROJECT_DIR/pre-input.json\"\nexit 0\n");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "mcp__everything__.*", "hooks": [
        {"type": "command", "command": format!("sh {}", hook.display())}]}]},
        "permissions": {"allow": ["mcp__everything__*"]}});
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "mcp__everything__echo", "arguments": {"message": "hi from spine"}}]},
        {"text": "done"}
    ]));
    s.trust();
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let result = v["messages"][3]["content"].as_str().expect("tool result");
    assert!(result.contains("Echo: hi from spine"), "{result}");
    assert!(stderr(&out).contains("broken"), "the failing server is reported: {}", stderr(&out));
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.project().join("pre-input.json")).expect("hook ran"))
            .expect("json");
    assert_eq!(seen["tool_name"], "mcp__everything__echo");
    assert_eq!(seen["tool_input"]["message"], "hi from spine");
    let marker_env = format!("SPINE_MARKER={marker}");
    assert!(processes_with("environ", &marker_env).is_empty(), "the MCP server stopped with the run");
}

#[test]
fn command_runs_and_memory_work_through_spine_run_and_leave_no_process_behind() {
    let s = Sandbox::new();
    let marker = format!("spine-cli-exec-{}", std::process::id());
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "exec_command", "arguments": {"command": format!("echo started; sleep 30 # {marker}"), "yield_ms": 200}},
            {"id": "c2", "name": "memory_store", "arguments": {"key": "root", "value": "The deploy key lives in vault."}}
        ]},
        {"text": "done"}
    ]));
    let settings = r#"{"permissions": {"allow": ["exec_command", "memory_store"]}}"#;
    let out = s.run(&script, &["--settings", settings, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let run = v["messages"][3]["content"].as_str().expect("exec result");
    assert!(run.contains("started"), "the model sees what the command printed so far: {run}");
    assert!(processes_with("cmdline", &marker).is_empty(), "the still-running command was killed with the run");
    let memory = std::fs::read_to_string(s.project().join(".spine/memory/root.md")).expect("memory file");
    assert!(memory.contains("The deploy key lives in vault."));
    let system = v["messages"][0]["content"].as_str().expect("system");
    assert!(system.contains("Operator State:"), "operator state lists the run's commands");
}
