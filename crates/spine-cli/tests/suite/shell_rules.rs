//! `Bash(...)` permission rules end to end: a scripted model tries every known spelling of a
//! forbidden command through `Bash`, `exec_command` and `process_exec`, and the victim file
//! survives.

use serde_json::{Value, json};

use crate::support::*;

/// Every spelling of `rm victim.txt` that a string-splitting matcher let through.
const RM_SPELLINGS: &[&str] = &[
    "rm victim.txt",
    "/bin/rm victim.txt",
    "command rm victim.txt",
    "env rm victim.txt",
    "exec rm victim.txt",
    "nice rm victim.txt",
    "timeout 5 rm victim.txt",
    "nohup rm victim.txt",
    "time rm victim.txt",
    "stdbuf -o0 rm victim.txt",
    "sudo rm victim.txt",
    "bash -c 'rm victim.txt'",
    "sh -c \"rm victim.txt\"",
    "echo victim.txt | xargs rm",
    "$(rm victim.txt)",
    "`rm victim.txt`",
    "cat <(rm victim.txt)",
    "(rm victim.txt)",
    "{ rm victim.txt; }",
    "if true; then rm victim.txt; fi",
    "\\rm victim.txt",
    "\"rm\" victim.txt",
    "r''m victim.txt",
    "$'rm' victim.txt",
    "find . -name victim.txt -delete",
    "find . -name victim.txt -exec rm {} \\;",
    "true && rm victim.txt",
];

fn call(id: String, tool: &str, command: &str) -> Value {
    json!({"id": id, "name": tool, "arguments": {"command": command}})
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

#[test]
fn deny_rule_catches_every_spelling_of_rm_through_every_shell_tool_in_bypass_mode() {
    let s = Sandbox::new();
    let victim = s.write("victim.txt", "precious");
    let mut calls: Vec<Value> =
        RM_SPELLINGS.iter().enumerate().map(|(i, c)| call(format!("bash{i}"), "Bash", c)).collect();
    calls.push(call("exec1".into(), "exec_command", "rm victim.txt"));
    calls.push(call("exec2".into(), "exec_command", "bash -c 'rm victim.txt'"));
    calls.push(call("proc1".into(), "process_exec", "env rm victim.txt"));
    calls.push(call("proc2".into(), "process_exec", "$(rm victim.txt)"));
    calls.push(call("escape".into(), "Bash", "echo PWNED > ../outside.txt"));
    let expected = calls.len();
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    let settings = r#"{"permissions": {"deny": ["Bash(rm *)"]}}"#;
    let out = s.run(
        &script,
        &[
            "--settings",
            settings,
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "json",
            "--include-messages",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = results(&json(&out));
    assert_eq!(results.len(), expected, "{results:?}");
    for (id, content) in &results {
        assert!(content.starts_with("Error [permission_denied]"), "{id}: {content}");
        let why = if id == "escape" { "outside the workspace" } else { "denied by rule Bash(rm *)" };
        assert!(content.contains(why), "{id}: {content}");
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("the victim survives"), "precious");
    assert!(!s.dir.path().join("outside.txt").exists(), "nothing was written outside the workspace");
}

#[test]
fn allow_rule_approves_only_commands_it_covers_entirely() {
    let s = Sandbox::new();
    let victim = s.write("victim.txt", "precious");
    let calls = vec![
        call("plain".into(), "Bash", "echo hello"),
        call("subst".into(), "Bash", "echo $(rm victim.txt)"),
        call("backtick".into(), "Bash", "echo `rm victim.txt`"),
        call("list".into(), "Bash", "echo x; rm victim.txt"),
        call("eval".into(), "Bash", "eval echo"),
        call("escape".into(), "Bash", "echo PWNED > ../outside.txt"),
        call("inside".into(), "Bash", "echo PWNED > inside.txt"),
        call("exec".into(), "exec_command", "echo $(rm victim.txt)"),
        call("proc".into(), "process_exec", "echo `rm victim.txt`"),
    ];
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    let settings = r#"{"permissions": {"allow": ["Bash(echo *)"]}}"#;
    let out = s.run(&script, &["--settings", settings, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = results(&json(&out));
    assert_eq!(results.len(), 9, "{results:?}");
    for (id, content) in &results {
        if id == "plain" {
            assert!(content.contains("hello") && !content.starts_with("Error"), "{id}: {content}");
        } else {
            assert!(content.starts_with("Error [permission_denied]"), "{id}: {content}");
        }
    }
    let escape = &results.iter().find(|(id, _)| id == "escape").expect("escape").1;
    assert!(escape.contains("outside the workspace"), "{escape}");
    assert_eq!(std::fs::read_to_string(&victim).expect("the victim survives"), "precious");
    assert!(!s.dir.path().join("outside.txt").exists(), "nothing was written outside the workspace");
    assert!(!s.project().join("inside.txt").exists(), "a write needs an Edit allow rule or acceptEdits");
}

/// Commands that each ran `rm victim.txt` in bash while the rule layer saw only harmless
/// commands: code hidden in data, builtins that run strings or rebind names, an alias, a line
/// continuation inside the command name, a script read from stdin through a path, and
/// `find -exec … +` with a `+` that does not end the command.
const HIDDEN_RM: &[&str] = &[
    "x='$(rm victim.txt)'; echo ${x@P}",
    "x='a[$(rm victim.txt)]'; echo $((x))",
    "x='a[$(rm victim.txt)]'; [[ x -eq 0 ]]",
    "printf -v 'a[$(rm victim.txt)]' x",
    "read -r 'a[$(rm victim.txt)]' <<< x",
    "test -v 'a[$(rm victim.txt)]'",
    "let 'a[$(rm victim.txt)]=1'",
    "declare 'a[$(rm victim.txt)]=1'",
    "PS4='$(rm victim.txt)'; set -x; echo",
    "compgen -C 'rm victim.txt' x",
    "mapfile -C 'rm victim.txt' -c 1 a <<< x",
    "hash -p /bin/rm ls; ls victim.txt",
    "shopt -s expand_aliases\nalias ls='rm victim.txt'\nls",
    "r\\\nm victim.txt",
    "bash /dev/stdin <<< 'rm victim.txt'",
    "echo 'rm victim.txt' | sh /dev/fd/0",
    "find . -maxdepth 0 -exec env -u + rm victim.txt {} +",
];

#[test]
fn deny_rule_holds_on_commands_that_hide_rm_from_the_rule_layer_in_bypass_mode() {
    let s = Sandbox::new();
    let victim = s.write("victim.txt", "precious");
    let calls: Vec<Value> = HIDDEN_RM.iter().enumerate().map(|(i, c)| call(format!("hidden{i}"), "Bash", c)).collect();
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    let settings = r#"{"permissions": {"deny": ["Bash(rm *)"]}}"#;
    let out = s.run(
        &script,
        &[
            "--settings",
            settings,
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "json",
            "--include-messages",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = results(&json(&out));
    assert_eq!(results.len(), HIDDEN_RM.len(), "{results:?}");
    for (id, content) in &results {
        assert!(content.starts_with("Error [permission_denied]") && content.contains("Bash(rm *)"), "{id}: {content}");
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("the victim survives"), "precious");
}

#[test]
fn allow_rule_does_not_cover_echo_that_evaluates_hidden_code() {
    let s = Sandbox::new();
    let victim = s.write("victim.txt", "precious");
    let commands = [
        "x='$(rm victim.txt)'; echo ${x@P}",
        "x='a[$(rm victim.txt)]'; echo $((x))",
        "x='a[$(rm victim.txt)]'; echo ${a[x]}",
        "shopt -s expand_aliases\nalias echo='rm victim.txt'\necho",
        "echo 'rm victim.txt' | bash /dev/stdin",
    ];
    let calls: Vec<Value> = commands.iter().enumerate().map(|(i, c)| call(format!("echo{i}"), "Bash", c)).collect();
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    let settings = r#"{"permissions": {"allow": ["Bash(echo *)"]}}"#;
    let out = s.run(&script, &["--settings", settings, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = results(&json(&out));
    assert_eq!(results.len(), commands.len(), "{results:?}");
    for (id, content) in &results {
        assert!(content.starts_with("Error [permission_denied]"), "{id}: {content}");
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("the victim survives"), "precious");
}
