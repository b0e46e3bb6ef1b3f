//! Hook inputs as Claude Code shapes them, through `spine run` with real command hooks: Bash's
//! `tool_response.stdout` without its trailing newline, a PostToolUse replacement without an
//! exit code read as plain output, and the Notification of a permission prompt.

use serde_json::{Value, json};

use crate::support::*;

/// Settings (for `--settings`) with one command hook on `event` for `matcher`.
fn hook_settings(event: &str, matcher: &str, command: &str, allow: &[&str]) -> String {
    json!({
        "permissions": {"allow": allow},
        "hooks": {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}
    })
    .to_string()
}

/// A python hook that appends its stdin (one JSON object) to `log` and prints `answer`.
fn logging_hook(s: &Sandbox, name: &str, log: &std::path::Path, answer: &str) -> String {
    let script = s.write(
        &format!(".hooks/{name}.py"),
        &format!(
            "import json, sys\nev = json.load(sys.stdin)\nopen({log:?}, 'a').write(json.dumps(ev) + '\\n')\n\
             sys.stdout.write({answer:?})\n",
            log = log.display().to_string(),
        ),
    );
    format!("/usr/bin/python3 {}", script.display())
}

#[test]
fn post_tool_use_sees_bash_stdout_without_its_trailing_newline() {
    let s = Sandbox::new();
    let log = s.dir.path().join("post.jsonl");
    let hook = logging_hook(&s, "post", &log, "");
    let settings = hook_settings("PostToolUse", "Bash", &hook, &["Bash"]);
    let out = s.run(
        &s.script(bash_then_answer("echo hi")),
        &["--settings", &settings, "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events = spine_testkit::files::read_jsonl(&log);
    assert_eq!(events[0]["tool_response"]["stdout"], "hi", "compared exactly, as a Claude Code hook would");
    assert_eq!(first_tool_result(&json(&out)), "Command exited with status 0.\nhi", "the model's text is unchanged");
}

#[test]
fn a_post_tool_use_replacement_without_exit_code_is_read_as_its_output() {
    let s = Sandbox::new();
    let log = s.dir.path().join("post.jsonl");
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput":
        {"stdout": "[redacted]", "stderr": "", "interrupted": false, "isImage": false}}});
    let hook = logging_hook(&s, "redact", &log, &answer.to_string());
    let settings = hook_settings("PostToolUse", "Bash", &hook, &["Bash"]);
    let out = s.run(
        &s.script(bash_then_answer("echo secret")),
        &["--settings", &settings, "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let content = first_tool_result(&json(&out));
    assert_eq!(content, "[redacted]");
    assert!(!content.contains("without an exit status"));
}

#[test]
fn notification_fires_with_permission_prompt_when_the_approver_is_asked() {
    let s = Sandbox::new();
    let log = s.dir.path().join("notification.jsonl");
    let hook = logging_hook(&s, "notify", &log, "");
    let settings = hook_settings("Notification", "", &hook, &[]);
    let out = s.run(
        &s.script(bash_then_answer("/bin/echo hi")),
        &["--settings", &settings, "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(first_tool_result(&json(&out)).starts_with("Error [permission_denied]"), "nobody approves in -p");
    let events = spine_testkit::files::read_jsonl(&log);
    let prompts: Vec<&Value> = events.iter().filter(|e| e["notification_type"] == "permission_prompt").collect();
    assert_eq!(prompts.len(), 1, "{events:?}");
    assert_eq!(prompts[0]["hook_event_name"], "Notification");
    assert_eq!(prompts[0]["message"], "spine needs your permission to use Bash");

    // An allowed call asks nobody: no permission prompt.
    let _ = std::fs::remove_file(&log);
    let settings = hook_settings("Notification", "", &hook, &["Bash"]);
    let out = s.run(&s.script(bash_then_answer("echo hi")), &["--settings", &settings]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!log.exists() || spine_testkit::files::read_jsonl(&log).is_empty());
}
