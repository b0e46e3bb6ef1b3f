//! `Read(...)` and `Edit(...)` rules reach the files shell commands read and write, end to end:
//! with `cat`, `grep` and `cp` allowed and `.env` unreadable, no spelling of a read of `.env`
//! runs and the secret never reaches a tool result; with `locked.txt` not editable, no write
//! to it runs and the file is unchanged.

use serde_json::{Value, json};

use crate::support::*;

const SECRET: &str = "KEY=hunter2-secret";

fn call(id: &str, command: &str) -> Value {
    json!({"id": id, "name": "Bash", "arguments": {"command": command}})
}

/// The tool results of a JSON run, by call id.
fn results(v: &Value) -> Vec<(String, String)> {
    v["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| {
            let id = m.get("tool_call_id")?.as_str()?;
            Some((id.to_owned(), m["content"].as_str().unwrap_or_default().to_owned()))
        })
        .collect()
}

fn run(s: &Sandbox, calls: Vec<Value>, settings: &str, mode: &str) -> Vec<(String, String)> {
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    let out = s.run(
        &script,
        &["--settings", settings, "--permission-mode", mode, "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    results(&json(&out))
}

#[test]
fn a_read_deny_rule_keeps_every_reader_away_from_the_file_and_the_secret_out_of_the_results() {
    let s = Sandbox::new();
    s.write(".env", SECRET);
    s.write("README.md", "hello readme");
    s.write("sub/.keep", "");
    let denied = ["cat .env", "grep KEY .env", "cat ./sub/../.env", "cat .e*", "cp .env out.txt"];
    let settings =
        r#"{"permissions": {"allow": ["Bash(cat:*)", "Bash(grep:*)", "Bash(cp:*)"], "deny": ["Read(./.env)"]}}"#;
    for mode in ["default", "bypassPermissions"] {
        let mut calls: Vec<Value> = denied.iter().enumerate().map(|(i, c)| call(&format!("deny{i}"), c)).collect();
        calls.push(call("readme", "cat README.md"));
        let results = run(&s, calls, settings, mode);
        assert_eq!(results.len(), denied.len() + 1, "{mode}: {results:?}");
        for (id, content) in &results {
            assert!(!content.contains("hunter2"), "{mode} {id}: the secret leaked: {content}");
            if id == "readme" {
                assert!(content.contains("hello readme"), "{mode}: cat README.md runs: {content}");
            } else {
                assert!(content.starts_with("Error [permission_denied]"), "{mode} {id}: {content}");
                assert!(
                    content.contains("denied by rule Read(./.env)") && content.contains(".env"),
                    "{mode} {id}: {content}"
                );
            }
        }
        assert!(!s.project().join("out.txt").exists(), "{mode}: cp did not run");
    }
}

#[test]
fn an_edit_deny_rule_keeps_redirections_tee_and_sed_in_place_from_changing_the_file() {
    let s = Sandbox::new();
    let locked = s.write("locked.txt", "a locked line\n");
    let free = s.write("free.txt", "a free line\n");
    let denied = ["echo x > locked.txt", "echo x | tee locked.txt", "sed -i s/a/b/ locked.txt"];
    let settings =
        r#"{"permissions": {"allow": ["Bash(echo:*)", "Bash(tee:*)", "Bash(sed:*)"], "deny": ["Edit(./locked.txt)"]}}"#;
    for mode in ["acceptEdits", "bypassPermissions"] {
        let mut calls: Vec<Value> = denied.iter().enumerate().map(|(i, c)| call(&format!("deny{i}"), c)).collect();
        calls.push(call("free", "sed -i s/free/open/ free.txt"));
        let results = run(&s, calls, settings, mode);
        assert_eq!(results.len(), denied.len() + 1, "{mode}: {results:?}");
        for (id, content) in &results {
            if id == "free" {
                assert!(!content.starts_with("Error"), "{mode}: sed -i on another file runs: {content}");
            } else {
                assert!(content.starts_with("Error [permission_denied]"), "{mode} {id}: {content}");
                assert!(content.contains("denied by rule Edit(./locked.txt)"), "{mode} {id}: {content}");
            }
        }
        assert_eq!(std::fs::read_to_string(&locked).expect("locked"), "a locked line\n", "{mode}");
    }
    assert_eq!(std::fs::read_to_string(&free).expect("free"), "a open line\n");
}
