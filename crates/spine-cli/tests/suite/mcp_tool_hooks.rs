//! `"type": "mcp_tool"` hooks through the `spine` binary, with a real MCP server from npm
//! (`@modelcontextprotocol/server-everything`): the tool's text is read as a command hook's
//! stdout, `${path}` fills the tool's input from the event, and a server that is not
//! connected is a hook failure decided by `onFailure`.

use serde_json::json;

use crate::support::*;

fn with_everything_server(s: &Sandbox) {
    let everything = spine_testkit::mcp::peer_entry("server-everything");
    s.write(
        ".mcp.json",
        &json!({"mcpServers": {"everything": {"command": "node", "args": [everything, "stdio"]}}}).to_string(),
    );
    s.trust();
}

#[test]
fn an_mcp_tool_hook_calls_the_servers_tool_with_the_event_filled_in_and_its_text_is_context() {
    let s = Sandbox::new();
    with_everything_server(&s);
    let hook = json!({"type": "mcp_tool", "server": "everything", "tool": "echo",
        "input": {"message": "prompt was: ${prompt}"}});
    let settings = json!({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}});
    let out = s
        .spine()
        .args([
            "run",
            "-p",
            "check the build",
            "--model",
            &format!("scripted:{}", s.script(json!([{"text": "ok"}])).display()),
        ])
        .args(["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let messages = json(&out)["messages"].to_string();
    assert!(
        messages.contains("Echo: prompt was: check the build"),
        "the tool's text is the prompt's context: {messages}"
    );
}

#[test]
fn an_mcp_tool_hook_whose_server_is_not_connected_fails_by_its_on_failure() {
    for (on_failure, runs) in [("continue", true), ("block", false)] {
        let s = Sandbox::new();
        with_everything_server(&s);
        let hook = json!({"type": "mcp_tool", "server": "absent", "tool": "check", "onFailure": on_failure});
        let settings = json!({
            "permissions": {"allow": ["Bash"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}
        });
        let out = s.run(
            &s.script(bash_then_answer("touch made")),
            &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(s.project().join("made").exists(), runs, "onFailure {on_failure}: {}", tool_results(&json(&out))[0]);
        if !runs {
            assert!(
                tool_results(&json(&out))[0].starts_with("Error [hook_launch_error]"),
                "{:?}",
                tool_results(&json(&out))
            );
        }
    }
}
