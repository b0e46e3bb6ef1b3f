//! Claude Code 2.1 events spine fires beyond the original thirteen — PostToolBatch,
//! PermissionDenied, StopFailure — with Claude Code's input fields and answers, through the
//! `spine` binary and real command hooks.

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn post_tool_batch_sees_every_call_of_a_reply_with_the_text_the_model_receives_and_adds_context() {
    let s = Sandbox::new();
    s.write("notes.md", "first line\n");
    let log = s.dir.path().join("batch.jsonl");
    let answer =
        json!({"hookSpecificOutput": {"hookEventName": "PostToolBatch", "additionalContext": "batch checked"}});
    let settings = json!({
        "permissions": {"allow": ["Bash", "Read", "exec_command"]},
        "hooks": {"PostToolBatch": [{"hooks": [logging(&log, &answer)]}]}
    });
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": "echo hi"}},
            {"id": "c2", "name": "Read", "arguments": {"file_path": "notes.md"}},
            {"id": "c3", "name": "exec_command", "arguments": {"command": "echo there"}}
        ]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    assert_eq!(fired.len(), 1, "once per reply: {fired:?}");
    let batch = &fired[0];
    assert_eq!(batch["hook_event_name"], "PostToolBatch");
    let calls = batch["tool_calls"].as_array().expect("tool_calls");
    let names: Vec<&str> = calls.iter().filter_map(|c| c["tool_name"].as_str()).collect();
    assert_eq!(names, ["Bash", "Read", "Bash"], "exec_command is Bash to hooks");
    assert_eq!(calls[0]["tool_input"]["command"], "echo hi");
    assert_eq!(calls[0]["tool_use_id"], "c1");
    assert!(calls[0]["tool_response"].as_str().is_some_and(|t| t.contains("hi")), "{}", calls[0]);
    assert!(calls[1]["tool_response"].as_str().is_some_and(|t| t.contains("first line")), "{}", calls[1]);
    let reference = reference_event("events-tool-run-Bash.jsonl", "PostToolBatch");
    assert_eq!(keys(&calls[0]), keys(&reference["tool_calls"][0]), "Claude Code's fields");
    let messages = json(&out)["messages"].clone();
    let after_results = messages
        .as_array()
        .expect("messages")
        .iter()
        .skip_while(|m| m["role"] != "tool")
        .any(|m| m["content"].as_str().is_some_and(|c| c.contains("batch checked")));
    assert!(after_results, "the context follows the batch's results: {messages}");
}

#[test]
fn post_tool_batch_continue_false_ends_the_run_before_the_next_model_request() {
    let s = Sandbox::new();
    let log = s.dir.path().join("batch.jsonl");
    let answer = json!({"continue": false, "stopReason": "enough for today"});
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PostToolBatch": [{"hooks": [logging(&log, &answer)]}]}
    });
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo hi"}}]},
        {"text": "never asked"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json"]);
    let result = json(&out);
    assert_eq!(result["hook_stop_reason"], "enough for today", "{result}");
    assert_eq!(result["subtype"], "blocked", "{result}");
    assert_eq!(result["num_turns"], 1, "no second model request: {result}");
}

#[test]
fn permission_denied_sees_each_refusal_and_retry_tells_the_model_it_may_try_again() {
    let s = Sandbox::new();
    let log = s.dir.path().join("denied.jsonl");
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}});
    let settings = json!({
        "permissions": {"deny": ["Bash(rm *)"]},
        "hooks": {"PermissionDenied": [{"matcher": "Bash", "hooks": [logging(&log, &answer)]}]}
    });
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": "rm -rf victim"}},
            {"id": "c2", "name": "exec_command", "arguments": {"command": "touch made"}}
        ]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    assert_eq!(fired.len(), 2, "a deny rule and a non-interactive ask both fire it: {fired:?}");
    assert_eq!(fired[0]["hook_event_name"], "PermissionDenied");
    assert_eq!((fired[0]["tool_name"].as_str(), fired[0]["tool_use_id"].as_str()), (Some("Bash"), Some("c1")));
    assert_eq!(fired[0]["tool_input"]["command"], "rm -rf victim");
    assert!(fired[0]["reason"].as_str().is_some_and(|r| !r.is_empty()), "{}", fired[0]);
    assert_eq!(
        (fired[1]["tool_name"].as_str(), fired[1]["spine_tool_name"].as_str()),
        (Some("Bash"), Some("exec_command"))
    );
    for result in tool_results(&json(&out)) {
        assert!(result.starts_with("Error [permission_denied]") && result.contains("may retry"), "{result}");
    }
    assert!(!s.project().join("made").exists());
}

#[test]
fn stop_failure_fires_with_claude_codes_error_kind_when_the_model_request_fails() {
    let s = Sandbox::new();
    let log = s.dir.path().join("failure.jsonl");
    let settings = json!({"hooks": {
        "StopFailure": [{"matcher": "unknown", "hooks": [logging(&log, &json!({}))]}],
        "Stop": [{"hooks": [logging(&log, &json!({}))]}]
    }});
    // The scripted model has no turn left after the first: its next request fails.
    let script =
        s.script(json!([{"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "1+1"}}]}]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json"]);
    assert_ne!(out.status.code(), Some(0), "the run fails as before");
    let fired = logged(&log);
    assert_eq!(fired.len(), 1, "StopFailure, not Stop: {fired:?}");
    assert_eq!(fired[0]["hook_event_name"], "StopFailure");
    assert_eq!(fired[0]["error"], "unknown");
    assert!(fired[0]["error_details"].as_str().is_some_and(|d| !d.is_empty()), "{}", fired[0]);
}

/// An event's input as Claude Code 2.1.328 sent it, from the recorded reference files.
fn reference_event(file: &str, event: &str) -> Value {
    let path = format!("{}/tests/fixtures/claude-code-2.1.328/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path)
        .expect("reference file")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["hook_event_name"] == event)
        .expect("the event was recorded")
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}

#[test]
fn instructions_loaded_fires_once_per_memory_file_with_its_type_and_reason() {
    let s = Sandbox::new();
    s.write("CLAUDE.md", "Answer briefly.\nSee @docs/rules.md\n");
    s.write("docs/rules.md", "Name tests after rules.\n");
    let log = s.dir.path().join("loaded.jsonl");
    let settings = json!({"hooks": {"InstructionsLoaded": [{"hooks": [logging(&log, &json!({}))]}]}});
    let out = s.run(&s.script(json!([{"text": "ok"}])), &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    assert_eq!(fired.len(), 2, "{fired:?}");
    let root = s.project().canonicalize().expect("project");
    assert_eq!(fired[0]["file_path"], json!(root.join("CLAUDE.md")));
    assert_eq!(
        (fired[0]["memory_type"].as_str(), fired[0]["load_reason"].as_str()),
        (Some("Project"), Some("session_start"))
    );
    assert_eq!(fired[1]["file_path"], json!(root.join("docs/rules.md")));
    assert_eq!(fired[1]["load_reason"], "include");
    assert_eq!(fired[1]["parent_file_path"], json!(root.join("CLAUDE.md")));
    let only_imports =
        json!({"hooks": {"InstructionsLoaded": [{"matcher": "include", "hooks": [logging(&log, &json!({}))]}]}});
    std::fs::remove_file(&log).expect("rm");
    s.run(&s.script(json!([{"text": "ok"}])), &["--settings", &only_imports.to_string()]);
    assert_eq!(logged(&log).len(), 1, "the matcher filters on load_reason");
}

#[test]
fn rule_files_under_claude_rules_load_as_project_memory_and_conditional_ones_wait() {
    let s = Sandbox::new();
    s.write(".claude/rules/style.md", "Rule: name tests after the rule they pin.\n");
    s.write(".claude/rules/frontend/react.md", "---\npaths: src/**/*.tsx\n---\nUse function components.\n");
    let log = s.dir.path().join("loaded.jsonl");
    let settings = json!({"hooks": {"InstructionsLoaded": [{"hooks": [logging(&log, &json!({}))]}]}});
    let out = s.run(
        &s.script(json!([{"text": "ok"}])),
        &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = json(&out)["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains("Rule: name tests after the rule they pin."), "{system}");
    assert!(!system.contains("Use function components."), "a paths: rule is not loaded: {system}");
    let fired = logged(&log);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert!(fired[0]["file_path"].as_str().is_some_and(|p| p.ends_with(".claude/rules/style.md")), "{}", fired[0]);
    assert_eq!(fired[0]["memory_type"], "Project");
}

#[test]
fn a_hooks_status_message_is_shown_with_verbose_when_it_runs() {
    let s = Sandbox::new();
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "exit 0", "statusMessage": "Checking the command…"}]}]}
    });
    let out = s.run(&s.script(bash_then_answer("echo hi")), &["--settings", &settings.to_string(), "-v"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("note: PreToolUse hook `exit 0`: Checking the command…"), "{}", stderr(&out));
    let quiet = s.run(&s.script(bash_then_answer("echo hi")), &["--settings", &settings.to_string()]);
    assert!(!stderr(&quiet).contains("Checking the command"), "{}", stderr(&quiet));
}
