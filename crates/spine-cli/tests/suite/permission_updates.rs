//! PermissionRequest's `permission_suggestions` and the `updatedPermissions` of an allow,
//! through the `spine` binary, real command hooks and the scripted model. Claude Code's shapes
//! are in `tests/fixtures/claude-code-2.1.328/permission-request*.json*`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328");

/// A PermissionRequest allow carrying `updates`.
fn allow_with(updates: Value) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedPermissions": updates}}})
}

fn bash(id: &str, command: &str) -> Value {
    json!({"id": id, "name": "Bash", "arguments": {"command": command}})
}

/// One model turn per call, then `done`.
fn calls(s: &Sandbox, calls: &[Value]) -> std::path::PathBuf {
    let mut turns: Vec<Value> = calls.iter().map(|c| json!({"tool_calls": [c]})).collect();
    turns.push(json!({"text": "done"}));
    s.script(Value::Array(turns))
}

fn trace_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).expect("trace").lines().map(|l| serde_json::from_str(l).expect("json")).collect()
}

fn decision<'a>(trace: &'a [Value], id: &str) -> &'a Value {
    trace.iter().find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == id).expect("decision record")
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}

#[test]
fn permission_request_offers_what_an_always_answer_would_store_in_claude_codes_shape() {
    let s = Sandbox::new();
    let log = s.dir.path().join("asked.jsonl");
    let settings = json!({"hooks": {"PermissionRequest": [{"hooks": [logging(&log, &json!({}))]}]}});
    let out = s.run(&calls(&s, &[bash("c1", "npm test --watch")]), &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let asked = logged(&log);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let suggestion = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                            "behavior": "allow", "destination": "localSettings"});
    assert_eq!(asked[0]["permission_suggestions"], json!([suggestion]));
    let text = std::fs::read_to_string(format!("{FIXTURES}/permission-request.jsonl")).expect("fixture");
    let reference: Value = serde_json::from_str(text.lines().next().expect("a line")).expect("json");
    for key in keys(&reference).iter().filter(|k| *k != "effort") {
        assert!(asked[0].get(key).is_some(), "Claude Code's `{key}` is missing: {}", asked[0]);
    }
    assert_eq!(keys(&asked[0]["permission_suggestions"][0]), keys(&reference["permission_suggestions"][0]));
    assert!(asked[0].get("effort").is_none(), "no effort is set for this run");
}

#[test]
fn added_rules_apply_for_the_rest_of_the_session_and_are_saved_to_the_local_settings() {
    let s = Sandbox::new();
    let log = s.dir.path().join("asked.jsonl");
    let trace = s.dir.path().join("trace.jsonl");
    let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "/bin/echo:*"}],
                      "behavior": "allow", "destination": "localSettings"});
    let settings = json!({"hooks": {"PermissionRequest": [{"hooks": [logging(&log, &allow_with(json!([rule])))]}]}});
    let script = calls(&s, &[bash("c1", "/bin/echo one"), bash("c2", "/bin/echo two")]);
    let trace_arg = trace.display().to_string();
    let args =
        ["--settings", &settings.to_string(), "--output-format", "json", "--include-messages", "--trace", &trace_arg];
    let out = s.run(&script, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(logged(&log).len(), 1, "the second call is allowed by the added rule");
    let trace = trace_lines(&trace);
    let first = &decision(&trace, "c1")["permission"];
    assert_eq!(first["source"]["type"], "permission_request_hook");
    assert_eq!(first["permission_updates"][0]["update"], rule);
    assert_eq!(first["permission_updates"][0]["applied"], true);
    let local = s.project().join(".spine/settings.local.json");
    let note = first["permission_updates"][0]["note"].as_str().expect("note");
    assert!(note.starts_with("saved to ") && note.ends_with("settings.local.json"), "{note}");
    let second = &decision(&trace, "c2")["permission"];
    assert_eq!(
        (second["behavior"].clone(), second["source"]["rule"].clone()),
        (json!("allow"), json!("Bash(/bin/echo:*)"))
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(local).expect("saved")).expect("json");
    assert_eq!(saved["permissions"]["allow"], json!(["Bash(/bin/echo:*)"]));
}

#[test]
fn set_mode_is_the_mode_of_the_next_calls_and_of_the_hook_inputs_after_it() {
    let s = Sandbox::new();
    let asked = s.dir.path().join("asked.jsonl");
    let pre = s.dir.path().join("pre.jsonl");
    let mode = json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"});
    let settings = json!({"hooks": {
        "PermissionRequest": [{"hooks": [logging(&asked, &allow_with(json!([mode])))]}],
        "PreToolUse": [{"matcher": "Write", "hooks": [logging(&pre, &json!({}))]}]
    }});
    let write =
        |id: &str, file: &str| json!({"id": id, "name": "Write", "arguments": {"file_path": file, "content": "x\n"}});
    let out = s.run(&calls(&s, &[write("c1", "a.txt"), write("c2", "b.txt")]), &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(logged(&asked).len(), 1, "acceptEdits allows the second write");
    assert!(s.project().join("b.txt").exists());
    let modes: Vec<Value> = logged(&pre).iter().map(|e| e["permission_mode"].clone()).collect();
    assert_eq!(modes, [json!("default"), json!("acceptEdits")]);
}

#[test]
fn set_mode_bypass_is_refused_when_disable_bypass_permissions_mode_is_set() {
    let s = Sandbox::new();
    let log = s.dir.path().join("asked.jsonl");
    let bypass = json!({"type": "setMode", "mode": "bypassPermissions", "destination": "session"});
    let settings = json!({
        "permissions": {"disableBypassPermissionsMode": "disable"},
        "hooks": {"PermissionRequest": [{"hooks": [logging(&log, &allow_with(json!([bypass])))]}]}
    });
    let script = calls(&s, &[bash("c1", "/bin/echo one"), bash("c2", "/bin/echo two")]);
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(logged(&log).len(), 2, "the mode stayed default: the second call asks too");
    assert!(stderr(&out).contains("disableBypassPermissionsMode"), "{}", stderr(&out));
    assert_eq!(tool_results(&json(&out)).len(), 2);
}

#[test]
fn an_invalid_updated_permissions_entry_is_a_contract_error_naming_the_field() {
    for (update, field) in [
        (
            json!({"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "nowhere"}),
            "decision.updatedPermissions[0].destination",
        ),
        (
            json!({"type": "addRules", "rules": [{"toolName": "Ba sh", "ruleContent": "x"}], "behavior": "deny", "destination": "session"}),
            "updatedPermissions[0]` (addRules): rules[0]",
        ),
        (
            json!({"type": "addDirectories", "directories": ["/no/such/dir/anywhere"], "destination": "session"}),
            "updatedPermissions[0]` (addDirectories): directories[0]",
        ),
    ] {
        let s = Sandbox::new();
        let trace = s.dir.path().join("trace.jsonl");
        let settings = json!({"hooks": {"PermissionRequest": [{"hooks": [logging(&s.dir.path().join("l"), &allow_with(json!([update])))]}]}});
        let trace_arg = trace.display().to_string();
        let args = [
            "--settings",
            &settings.to_string(),
            "--output-format",
            "json",
            "--include-messages",
            "--trace",
            &trace_arg,
        ];
        let out = s.run(&calls(&s, &[bash("c1", "/bin/echo one")]), &args);
        let results = tool_results(&json(&out));
        assert!(results[0].starts_with("Error [permission_denied]"), "{results:?}");
        let hook = trace_lines(&trace)
            .into_iter()
            .find(|e| e["kind"] == "hook" && e["event"] == "PermissionRequest")
            .expect("hook entry");
        assert_eq!(hook["decision"], "contract_error");
        assert!(hook["detail"].as_str().is_some_and(|d| d.contains(field)), "{field}: {}", hook["detail"]);
    }
}

#[test]
fn no_hook_update_loosens_a_managed_deny() {
    let s = Sandbox::new();
    let managed = s.dir.path().join("managed");
    std::fs::create_dir_all(&managed).expect("mkdir");
    std::fs::write(managed.join("managed-settings.json"), json!({"permissions": {"deny": ["Bash(rm:*)"]}}).to_string())
        .expect("write");
    let updates = json!([
        {"type": "removeRules", "rules": [{"toolName": "Bash", "ruleContent": "rm:*"}], "behavior": "deny", "destination": "localSettings"},
        {"type": "replaceRules", "rules": [], "behavior": "deny", "destination": "userSettings"},
        {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "rm:*"}, {"toolName": "Bash"}], "behavior": "allow", "destination": "session"}
    ]);
    let settings =
        json!({"hooks": {"PermissionRequest": [{"hooks": [logging(&s.dir.path().join("l"), &allow_with(updates))]}]}});
    let script = calls(&s, &[bash("c1", "/bin/echo one"), bash("c2", "rm -f victim")]);
    s.write("victim", "still here\n");
    let out = s
        .spine()
        .env("SPINE_MANAGED_SETTINGS_DIR", &managed)
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    let results = tool_results(&json(&out));
    assert!(results[1].contains("denied by rule Bash(rm:*)"), "{results:?}");
    assert!(s.project().join("victim").exists());
}

#[test]
fn managed_rules_only_keeps_a_hooks_allow_rules_from_applying_or_being_saved() {
    let s = Sandbox::new();
    let managed = s.dir.path().join("managed");
    std::fs::create_dir_all(&managed).expect("mkdir");
    std::fs::write(managed.join("managed-settings.json"), json!({"allowManagedPermissionRulesOnly": true}).to_string())
        .expect("write");
    let log = s.dir.path().join("asked.jsonl");
    let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "/bin/echo:*"}],
                      "behavior": "allow", "destination": "localSettings"});
    let settings = json!({"hooks": {"PermissionRequest": [{"hooks": [logging(&log, &allow_with(json!([rule])))]}]}});
    let script = calls(&s, &[bash("c1", "/bin/echo one"), bash("c2", "/bin/echo two")]);
    let out = s
        .spine()
        .env("SPINE_MANAGED_SETTINGS_DIR", &managed)
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--settings", &settings.to_string()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(logged(&log).len(), 2, "the rule did not apply: the second call asks too");
    assert!(stderr(&out).contains("allowManagedPermissionRulesOnly"), "{}", stderr(&out));
    assert!(!s.project().join(".spine/settings.local.json").exists());
}

#[test]
fn added_directories_widen_the_workspace_for_the_rest_of_the_session() {
    let s = Sandbox::new();
    let outside = s.dir.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::fs::write(outside.join("notes.txt"), "from outside\n").expect("write");
    let dirs =
        json!({"type": "addDirectories", "directories": [outside.display().to_string()], "destination": "session"});
    let settings = json!({"hooks": {"PermissionRequest": [{"hooks": [logging(&s.dir.path().join("l"), &allow_with(json!([dirs])))]}]}});
    let read = json!({"id": "c2", "name": "Read", "arguments": {"file_path": outside.join("notes.txt").display().to_string()}});
    let out = s.run(
        &calls(&s, &[bash("c1", "/bin/echo one"), read]),
        &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results[1].contains("from outside"), "{results:?}");
    // Without the update the same read is outside the workspace.
    let s = Sandbox::new();
    let read = json!({"id": "c1", "name": "Read", "arguments": {"file_path": outside.join("notes.txt").display().to_string()}});
    let out = s.run(&calls(&s, &[read]), &["--output-format", "json", "--include-messages"]);
    assert!(tool_results(&json(&out))[0].contains("outside the workspace"));
}
