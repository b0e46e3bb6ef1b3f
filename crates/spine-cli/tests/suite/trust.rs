//! Project trust through the `spine` binary: what a cloned project brings (hooks, allow rules,
//! MCP servers) does nothing until `spine trust` or `--trust`; the user's settings can enable
//! project MCP servers alone; protected paths; MCP start-up limits; `--resume` ids.
//! Every effect is proven with a marker file.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::*;

/// A project that brings one hook, one allow rule and one MCP server, each leaving a marker
/// in the sandbox when it acts; and a script whose Bash call the allow rule covers.
struct Hostile {
    s: Sandbox,
    script: PathBuf,
}

impl Hostile {
    fn new() -> Self {
        let s = Sandbox::new();
        let server =
            spine_testkit::write_mcp_server(s.dir.path(), "proj", &s.dir.path().join("mcp-marker"), 0).expect("server");
        s.write(".mcp.json", &json!({"mcpServers": {"proj": server}}).to_string());
        s.write(
            ".spine/settings.json",
            &json!({
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": format!("touch {}", s.dir.path().join("hook-marker").display())}]}]},
                "permissions": {"allow": ["Bash(touch allowed-marker)"]}
            })
            .to_string(),
        );
        let script = s.script(json!([
            {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "touch allowed-marker"}}]},
            {"text": "done"}
        ]));
        Hostile { s, script }
    }

    /// Which markers exist: hook, allow rule, MCP server.
    fn markers(&self) -> [bool; 3] {
        [
            self.s.dir.path().join("hook-marker").exists(),
            self.s.project().join("allowed-marker").exists(),
            self.s.dir.path().join("mcp-marker").exists(),
        ]
    }

    fn clear(&self) {
        for p in [
            self.s.dir.path().join("hook-marker"),
            self.s.project().join("allowed-marker"),
            self.s.dir.path().join("mcp-marker"),
        ] {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn notice_lines(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.starts_with("spine: untrusted project")).collect()
}

#[test]
fn untrusted_project_hooks_allow_rules_and_mcp_servers_do_nothing_until_spine_trust() {
    let h = Hostile::new();
    let out = h.s.run(&h.script, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(h.markers(), [false, false, false], "nothing the project brings ran");
    let err = stderr(&out);
    let lines = notice_lines(&err);
    assert_eq!(lines.len(), 1, "exactly one notice line: {err}");
    let project = h.s.project().canonicalize().expect("canon");
    assert_eq!(
        lines[0],
        format!(
            "spine: untrusted project {p}: skipped 1 hook, 1 allow rule, 1 MCP server from .spine/settings.json, \
             .mcp.json; run `spine trust {p}` to trust it (or pass --trust for one run)",
            p = project.display()
        )
    );

    h.s.trust();
    let out = h.s.run(&h.script, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(h.markers(), [true, true, true], "trusted: hook, allow rule and server all act");
    assert!(notice_lines(&stderr(&out)).is_empty(), "{}", stderr(&out));

    let list = h.s.spine().args(["trust", "--list"]).output().expect("runs");
    assert_eq!(stdout(&list).trim(), project.display().to_string());
    let revoke = h.s.spine().args(["trust", "--revoke"]).arg(&project).output().expect("runs");
    assert_eq!(revoke.status.code(), Some(0), "{}", stderr(&revoke));
    h.clear();
    h.s.run(&h.script, &[]);
    assert_eq!(h.markers(), [false, false, false], "revoked: nothing acts again");
}

#[test]
fn trust_flag_trusts_one_run_without_recording_it() {
    let h = Hostile::new();
    let out = h.s.run(&h.script, &["--trust"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(h.markers(), [true, true, true]);
    assert!(notice_lines(&stderr(&out)).is_empty());
    h.clear();
    let out = h.s.run(&h.script, &[]);
    assert_eq!(h.markers(), [false, false, false], "the next run is untrusted again");
    assert_eq!(notice_lines(&stderr(&out)).len(), 1);
    let list = h.s.spine().args(["trust", "--list"]).output().expect("runs");
    assert_eq!(stdout(&list).trim(), "no trusted projects");
}

#[test]
fn user_settings_enable_project_mcp_servers_without_trusting_hooks() {
    let h = Hostile::new();
    let other = spine_testkit::write_mcp_server(h.s.dir.path(), "other", &h.s.dir.path().join("other-marker"), 0)
        .expect("server");
    let proj =
        spine_testkit::write_mcp_server(h.s.dir.path(), "proj", &h.s.dir.path().join("mcp-marker"), 0).expect("server");
    h.s.write(".mcp.json", &json!({"mcpServers": {"proj": proj, "other": other}}).to_string());
    // The project cannot enable its own servers.
    h.s.write(".spine/settings.local.json", r#"{"enableAllProjectMcpServers": true}"#);
    std::fs::write(h.s.home().join("settings.json"), r#"{"enabledMcpjsonServers": ["proj"]}"#).expect("write");
    let out = h.s.run(&h.script, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(h.markers(), [false, false, true], "only the enabled server starts");
    assert!(!h.s.dir.path().join("other-marker").exists(), "a server not named stays off");
    let err = stderr(&out);
    assert!(notice_lines(&err)[0].contains("skipped 1 hook, 1 allow rule, 1 MCP server"), "{err}");

    std::fs::write(h.s.home().join("settings.json"), r#"{"enableAllProjectMcpServers": true}"#).expect("write");
    h.clear();
    let out = h.s.run(&h.script, &[]);
    assert_eq!(h.markers(), [false, false, true]);
    assert!(h.s.dir.path().join("other-marker").exists(), "every project server is enabled");
    assert!(notice_lines(&stderr(&out))[0].contains("skipped 1 hook, 1 allow rule from"), "{}", stderr(&out));
}

#[test]
fn mcp_list_shows_each_server_with_its_source_and_approval_and_connect_lists_tools() {
    let h = Hostile::new();
    let mine = spine_testkit::write_mcp_server(h.s.dir.path(), "mine", &h.s.dir.path().join("mine-marker"), 0)
        .expect("server");
    std::fs::write(h.s.home().join("settings.json"), json!({"mcpServers": {"mine": mine}}).to_string()).expect("w");
    let out = h.s.spine().args(["mcp", "list", "--output-format", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let servers = v["servers"].as_array().expect("servers");
    let find = |name: &str| servers.iter().find(|s| s["name"] == name).cloned().unwrap_or(Value::Null);
    assert!(find("proj")["source"].as_str().is_some_and(|s| s.ends_with(".mcp.json mcpServers.proj")));
    assert_eq!(find("proj")["status"], "skipped (untrusted project)");
    assert_eq!(find("proj")["approved"], false);
    assert!(find("mine")["source"].as_str().is_some_and(|s| s.contains("settings.json mcpServers.mine")));
    assert_eq!(find("mine")["approved"], true);
    assert!(!h.s.dir.path().join("mcp-marker").exists(), "listing starts nothing");

    let out = h.s.spine().args(["mcp", "list", "--connect", "--trust"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("[approved (trusted project)]"), "{text}");
    assert_eq!(text.matches("tools: ping").count(), 2, "{text}");
}

#[test]
fn hooks_list_and_check_show_an_untrusted_projects_hooks_as_skipped() {
    let h = Hostile::new();
    let out = h.s.spine().args(["hooks", "list", "--output-format", "json"]).output().expect("runs");
    let v = json(&out);
    assert_eq!(v["hooks"], json!([]));
    assert_eq!(v["untrusted"][0]["event"], "PreToolUse");
    assert_eq!(v["untrusted"][0]["skipped"], "untrusted project");
    let out = h.s.spine().args(["hooks", "check"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("1 hook not applied: the project is untrusted"), "{}", stdout(&out));
}

fn write_call(path: &str) -> Value {
    json!([
        {"tool_calls": [{"id": "w1", "name": "Write", "arguments": {"file_path": path, "content": "{\"hooks\": {}}\n"}}]},
        {"text": "done"}
    ])
}

#[test]
fn writes_into_protected_directories_are_refused_in_accept_edits_and_bypass_unless_an_allow_rule_names_them() {
    let s = Sandbox::new();
    s.write(".spine/keep", "");
    s.write(".git/hooks/keep", "");
    let target = s.project().join(".spine/settings.local.json");
    for mode in ["acceptEdits", "bypassPermissions"] {
        let generic = r#"{"permissions": {"allow": ["Edit", "Edit(**)"]}}"#;
        let out = s.run(
            &s.script(write_call(".spine/settings.local.json")),
            &["--permission-mode", mode, "--settings", generic, "--output-format", "json", "--include-messages"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let result = first_tool_result(&json(&out));
        assert!(result.contains("permission_denied") && result.contains(".spine/"), "{mode}: {result}");
        assert!(!target.exists(), "{mode}: the settings file was not written");
    }
    let out = s.run(
        &s.script(write_call(".git/hooks/pre-commit")),
        &["--permission-mode", "bypassPermissions", "--output-format", "json", "--include-messages"],
    );
    assert!(first_tool_result(&json(&out)).contains("permission_denied"));
    assert!(!s.project().join(".git/hooks/pre-commit").exists());

    // Hooks that allow everything (PreToolUse and PermissionRequest) do not lift it either.
    let allow_all = json!({"hooks": {
        "PreToolUse": [{"hooks": [{"type": "command", "command":
            r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#}]}],
        "PermissionRequest": [{"hooks": [{"type": "command", "command":
            r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'"#}]}]
    }})
    .to_string();
    let out = s.run(
        &s.script(write_call(".spine/settings.local.json")),
        &["--settings", &allow_all, "--output-format", "json", "--include-messages"],
    );
    assert!(first_tool_result(&json(&out)).contains("permission_denied"), "{}", first_tool_result(&json(&out)));
    assert!(!target.exists(), "hook allows do not open a protected path");
    let permission_request_only = json!({"hooks": {"PermissionRequest": [{"hooks": [{"type": "command", "command":
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'"#}]}]}})
    .to_string();
    let out = s.run(
        &s.script(write_call("ordinary.json")),
        &["--settings", &permission_request_only, "--output-format", "json", "--include-messages"],
    );
    assert!(
        s.project().join("ordinary.json").exists(),
        "the PermissionRequest hook does allow: {}",
        first_tool_result(&json(&out))
    );

    let named = r#"{"permissions": {"allow": ["Edit(.spine/settings.local.json)"]}}"#;
    let out = s.run(
        &s.script(write_call(".spine/settings.local.json")),
        &["--permission-mode", "acceptEdits", "--settings", named, "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        target.exists(),
        "an allow rule naming the file lets the write through: {}",
        first_tool_result(&json(&out))
    );
}

#[test]
fn a_server_over_its_startup_timeout_fails_and_the_run_goes_on_with_the_others_tools() {
    let s = Sandbox::new();
    let fast = spine_testkit::write_mcp_server(s.dir.path(), "fast", &s.dir.path().join("fast-marker"), 0).expect("s");
    let mut slow =
        spine_testkit::write_mcp_server(s.dir.path(), "slow", &s.dir.path().join("slow-marker"), 600_000).expect("s");
    slow["startupTimeoutMs"] = json!(300);
    s.write(".mcp.json", &json!({"mcpServers": {"fast": fast, "slow": slow}}).to_string());
    let script = s.script(json!([
        {"tool_calls": [{"id": "m1", "name": "mcp__fast__ping", "arguments": {}}]},
        {"text": "done"}
    ]));
    let out = s.run(
        &script,
        &[
            "--trust",
            "--settings",
            r#"{"permissions": {"allow": ["mcp__fast__*"]}}"#,
            "--output-format",
            "json",
            "--include-messages",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(first_tool_result(&json(&out)), "pong from fast");
    let err = stderr(&out);
    assert!(err.contains("MCP server `slow`: did not initialize within 0.3 s"), "{err}");
    assert!(s.dir.path().join("slow-marker").exists(), "the slow server was started, then given up on");
}

#[test]
fn resume_refuses_anything_but_a_session_id_with_exit_2() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.dir.path().join("x")).expect("mkdir");
    std::fs::write(s.dir.path().join("x.jsonl"), "").expect("write");
    for bad in ["../../x", "../x", "a/b", "..", "x.jsonl", "/etc/passwd", "no-such-session", "{abc}"] {
        let out = s.spine().args(["run", "-p", "x", "--resume", bad, "--model", "scripted:x"]).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains("invalid session id"), "{bad}: {}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(s.dir.path().join("x.jsonl")).expect("read"), "", "nothing appended");
    let first = s.run(&s.script(json!([{"text": "first"}])), &["--output-format", "json", "--include-messages"]);
    let id = json(&first)["session_id"].as_str().expect("id").to_owned();
    let script = s.script(json!([{"text": "second"}]));
    let out = s.resume(&id, "again", &script);
    assert_eq!(out.status.code(), Some(0), "a generated id still resumes: {}", stderr(&out));
}

#[test]
fn shell_redirections_into_protected_directories_are_refused_in_bypass_unless_an_allow_rule_names_them() {
    let s = Sandbox::new();
    s.write(".spine/keep", "");
    let target = s.project().join(".spine/settings.local.json");
    let redirect = |tool: &str| {
        let command = r#"echo '{"permissions": {"allow": ["Bash"]}}' > .spine/settings.local.json"#;
        json!([
            {"tool_calls": [{"id": "b1", "name": tool, "arguments": {"command": command}}]},
            {"text": "done"}
        ])
    };
    for tool in ["Bash", "exec_command"] {
        let out = s.run(
            &s.script(redirect(tool)),
            &["--permission-mode", "bypassPermissions", "--output-format", "json", "--include-messages"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let result = first_tool_result(&json(&out));
        assert!(result.contains("permission_denied") && result.contains(".spine/"), "{tool}: {result}");
        assert!(!target.exists(), "{tool}: the redirection did not write the settings file");
    }
    let named = r#"{"permissions": {"allow": ["Edit(.spine/settings.local.json)"]}}"#;
    let out = s.run(
        &s.script(redirect("Bash")),
        &[
            "--permission-mode",
            "bypassPermissions",
            "--settings",
            named,
            "--output-format",
            "json",
            "--include-messages",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(target.exists(), "an allow rule naming the file lets the redirection write it");
}
