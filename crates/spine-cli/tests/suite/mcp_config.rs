//! `--mcp-config` and `--strict-mcp-config` through the `spine` binary, with a real MCP server
//! from npm (`@modelcontextprotocol/server-everything`) and a scripted model calling its tool:
//! the command line's servers are the user's (no project trust needed), `--strict-mcp-config`
//! starts only them, and a value that cannot be used is a configuration error naming the flag.

use serde_json::{Value, json};

use crate::support::*;

fn everything() -> Value {
    let entry = spine_testkit::mcp::peer_entry("server-everything");
    json!({"command": "node", "args": [entry, "stdio"]})
}

fn echo_script(s: &Sandbox, message: &str) -> String {
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "mcp__everything__echo", "arguments": {"message": message}}]},
        {"text": "done"}
    ]));
    format!("scripted:{}", script.display())
}

#[test]
fn strict_mcp_config_starts_only_the_command_lines_servers_and_the_model_calls_their_tools() {
    let s = Sandbox::new();
    // The trusted project's own server would fail loudly if it were started.
    s.write(".mcp.json", &json!({"mcpServers": {"project-only": {"command": "/nonexistent/mcp-server"}}}).to_string());
    s.trust();
    let config = json!({"mcpServers": {"everything": everything()}});
    let out = s
        .spine()
        .args(["-p", "echo it", "--model", &echo_script(&s, "hi from the flag")])
        .args(["--mcp-config", &config.to_string(), "--strict-mcp-config"])
        .args(["--allowedTools", "mcp__everything__echo", "--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results.first().is_some_and(|r| r.contains("Echo: hi from the flag")), "{results:?}");
    assert!(!stderr(&out).contains("project-only"), "the project's server was not started: {}", stderr(&out));
}

#[test]
fn a_command_line_servers_file_starts_in_an_untrusted_project_whose_own_server_of_that_name_is_skipped() {
    let s = Sandbox::new();
    // Untrusted: the project's `everything` is skipped; the file's, of the same name, starts.
    s.write(".mcp.json", &json!({"mcpServers": {"everything": {"command": "/nonexistent/mcp-server"}}}).to_string());
    let file = s.write("servers.json", &json!({"mcpServers": {"everything": everything()}}).to_string());
    let out = s
        .spine()
        .args(["-p", "echo it", "--model", &echo_script(&s, "from a file")])
        .args(["--mcp-config", &file.display().to_string()])
        .args(["--allowedTools", "mcp__everything__echo", "--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results.first().is_some_and(|r| r.contains("Echo: from a file")), "{results:?}");
    assert!(!stderr(&out).contains("/nonexistent/mcp-server"), "{}", stderr(&out));
    assert!(stderr(&out).contains("untrusted project"), "the project's own server is skipped: {}", stderr(&out));
}

#[test]
fn an_unusable_mcp_config_value_is_a_configuration_error_naming_the_flag_and_its_position() {
    let s = Sandbox::new();
    let good = json!({"mcpServers": {}}).to_string();
    let bad = json!({"mcpServers": {"x": {"command": ""}}}).to_string();
    let out = s
        .spine()
        .args(["-p", "hi", "--model", &echo_script(&s, "unused")])
        .args(["--mcp-config", &good, "--mcp-config", &bad])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--mcp-config #2 (inline JSON): mcpServers.x.command: a stdio server needs a non-empty"),
        "{}",
        stderr(&out)
    );
}
