//! The Agent SDK flags of `spine run` that need no model server, through the binary with the
//! scripted model: the prompt files, `--fork-session`, `--json-schema` and its
//! `StructuredOutput` rule, the flag checks (exit 2), the effort hooks read, and the SDK flags
//! spine accepts and ignores.

use serde_json::{Value, json};

use crate::support::*;

fn scripted(script: &std::path::Path) -> String {
    format!("scripted:{}", script.display())
}

fn session_of(out: &std::process::Output) -> String {
    json(out)["session_id"].as_str().expect("session_id").to_owned()
}

fn system_prompt(result: &Value) -> String {
    result["messages"][0]["content"].as_str().expect("the system message").to_owned()
}

#[test]
fn prompt_files_give_their_text_as_the_prompt_flags_would() {
    let s = Sandbox::new();
    s.write("prompts/system.md", "SYSTEM-FROM-FILE: you are a file.");
    s.write("prompts/append.md", "APPENDED-FROM-FILE.");
    let script = s.script(json!([{"text": "ok"}]));
    let out = s
        .spine()
        .args(["-p", "hi", "--model", &scripted(&script), "--output-format", "json", "--include-messages"])
        .args(["--system-prompt-file", "prompts/system.md", "--append-system-prompt-file", "prompts/append.md"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = system_prompt(&json(&out));
    let (first, appended) = (system.find("SYSTEM-FROM-FILE"), system.find("APPENDED-FROM-FILE"));
    assert!(first.is_some() && appended > first, "{system}");
}

#[test]
fn an_unreadable_prompt_file_is_exit_2_naming_the_flag_and_the_path() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "ok"}]));
    for flag in ["--system-prompt-file", "--append-system-prompt-file"] {
        let out = s.run(&script, &[flag, "missing.md"]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = stderr(&out);
        assert!(err.contains(flag) && err.contains("missing.md"), "{err}");
    }
}

#[test]
fn fork_session_continues_the_conversation_under_a_new_id_and_leaves_the_original_untouched() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "first answer"}]));
    let first = s.spine().args(["-p", "first", "--model", &scripted(&script), "--output-format", "json"]).output();
    let old = session_of(&first.expect("runs"));
    let old_file = s.session_file(&old, "jsonl").expect("the first transcript");
    let before = std::fs::read(&old_file).expect("read");

    let script = s.script(json!([{"text": "forked answer"}]));
    let out = s
        .spine()
        .args(["-p", "second", "--resume", &old, "--fork-session", "-v", "--model", &scripted(&script)])
        .args(["--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let new = session_of(&out);
    assert_ne!(new, old);
    assert!(stderr(&out).contains(&format!("note: session {old} forked as {new}")), "{}", stderr(&out));
    let result = json(&out);
    let prompts: Vec<&str> = result["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(prompts, ["first", "second"], "the fork holds the history");
    assert_eq!(std::fs::read(&old_file).expect("read"), before, "the original is untouched");

    let new_file = s.session_file(&new, "jsonl").expect("the fork's transcript");
    assert_eq!(new_file.parent(), old_file.parent(), "in the same project folder");
    let lines: Vec<Value> = std::fs::read_to_string(&new_file)
        .expect("read")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(lines.iter().filter(|l| l.get("sessionId").is_some()).all(|l| l["sessionId"] == new.as_str()));
    assert!(lines.iter().any(|l| l.to_string().contains("first answer")), "the copied history");

    // The fork resumes like any session.
    let script = s.script(json!([{"text": "third"}]));
    let again = s.resume(&new, "third", &script);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
}

#[test]
fn fork_session_without_resume_or_continue_changes_nothing() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "ok"}]));
    let out = s.run(&script, &["--fork-session", "-v", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("--fork-session does nothing without --resume or --continue"), "{}", stderr(&out));
    assert!(s.session_file(&session_of(&out), "jsonl").is_some());
}

const SCHEMA: &str = r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#;

#[test]
fn the_structured_output_call_that_matches_the_schema_is_the_answer() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"text": "Here.", "tool_calls": [{"id": "c1", "name": "StructuredOutput", "arguments": {"name": 7}}]},
        {"tool_calls": [{"id": "c2", "name": "StructuredOutput", "arguments": {"name": "spine"}}]}
    ]));
    let out =
        s.run(&script, &["--json-schema", SCHEMA, "--tools", "Read", "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["structured_output"], json!({"name": "spine"}));
    assert_eq!(result["result"], r#"{"name":"spine"}"#);
    assert_eq!(result["num_turns"], 2, "no request after the answer");
    let tools: Vec<&Value> =
        result["messages"].as_array().expect("messages").iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tools[0]["error_code"], "invalid_arguments", "the registry validated the input: {}", tools[0]);
    assert!(tools[0]["content"].as_str().is_some_and(|c| c.contains("/name")), "{}", tools[0]);
    assert_eq!(tools[1]["content"], "Structured output provided successfully");

    // Text output prints the JSON.
    let out = s.run(&script, &["--json-schema", SCHEMA]);
    assert_eq!(stdout(&out).trim(), r#"{"name":"spine"}"#);
}

#[test]
fn a_final_answer_without_structured_output_is_reminded_once_then_the_run_fails() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "no JSON"}, {"text": "still none"}]));
    let out = s.run(&script, &["--json-schema", SCHEMA, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["subtype"], "error_during_execution");
    assert!(result["result"].as_str().is_some_and(|r| r.contains("without calling StructuredOutput")), "{result}");
    assert!(result.get("structured_output").is_none());
    let reminder = result["messages"].as_array().expect("messages").iter().any(|m| {
        m["role"] == "user"
            && m["content"].as_str().is_some_and(|c| c.starts_with("You MUST call the StructuredOutput"))
    });
    assert!(reminder, "{result}");

    let script = s.script(json!([
        {"text": "no JSON"},
        {"tool_calls": [{"id": "c1", "name": "StructuredOutput", "arguments": {"name": "late"}}]}
    ]));
    let out = s.run(&script, &["--json-schema", SCHEMA, "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["structured_output"], json!({"name": "late"}));
}

#[test]
fn bad_flag_values_are_usage_errors_naming_the_flag() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "ok"}]));
    let cases: &[(&[&str], &str)] = &[
        (&["--json-schema", r#"{"type": 12}"#], "--json-schema: not a valid JSON Schema"),
        (&["--json-schema", r#"{"type": "array"}"#], "--json-schema: the schema must describe a JSON object"),
        (&["--json-schema", "{not json"], "--json-schema: not JSON"),
        (&["--max-budget-usd", "0"], "--max-budget-usd: must be a number greater than 0"),
        (&["--max-budget-usd", "-1"], "--max-budget-usd: must be a number greater than 0"),
        (&["--max-budget-usd", "nan"], "--max-budget-usd: must be a number greater than 0"),
        (&["--fallback-model", ","], "--fallback-model: no model named"),
        (&["--fallback-model", "not-a-model"], "--fallback-model"),
    ];
    for (args, message) in cases {
        let out = s.run(&script, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn hooks_read_the_effort_flags_own_word() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "ok"}]));
    let input = s.dir.path().join("prompt-input.json");
    let settings = json!({
        "model_options": {"reasoning_effort": "low"},
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": format!("cat > {}", input.display())}]}]}
    });
    let out = s.run(&script, &["--effort", "max", "--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let hook: Value = serde_json::from_str(&std::fs::read_to_string(&input).expect("the hook ran")).expect("JSON");
    assert_eq!(hook["effort"], json!({"level": "max"}));
}

#[test]
fn the_agent_sdks_flags_spine_does_not_implement_are_accepted_and_noted_with_v() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "ok"}]));
    let out = s
        .spine()
        .args(["--betas", "context-1m", "--task-budget=5000", "--session-mirror", "--debug-to-stderr"])
        .args(["--resume-session-at=abc", "--thinking-display", "summarized", "-v", "-p", "hi"])
        .args(["--model", &scripted(&script)])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "ok");
    let err = stderr(&out);
    for flag in ["--betas", "--task-budget", "--session-mirror", "--debug-to-stderr", "--resume-session-at"] {
        assert!(err.contains(&format!("note: {flag} is accepted for the Agent SDK and ignored")), "{flag}: {err}");
    }
    // Without -v, silently.
    let out = s.spine().args(["-p", "hi", "--betas", "x", "--model", &scripted(&script)]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("--betas"), "{}", stderr(&out));
}

#[test]
fn a_flag_not_in_the_table_still_fails() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "ok"}]));
    let out = s.run(&script, &["--no-such-sdk-flag"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--no-such-sdk-flag"), "{}", stderr(&out));
}

#[test]
fn a_driven_session_started_as_the_python_sdk_starts_it_honours_the_flags() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "StructuredOutput", "arguments": {"name": "sdk"}}]},
        {"tool_calls": [{"id": "c2", "name": "StructuredOutput", "arguments": {"name": "again"}}]}
    ]));
    let mut cmd = s.spine_process();
    cmd.args(["--output-format", "stream-json", "--verbose", "--system-prompt", ""])
        .args(["--model", &scripted(&script), "--max-budget-usd", "5", "--betas", "context-1m"])
        .args(["--json-schema", SCHEMA, "--session-mirror", "--effort", "high", "--input-format", "stream-json"]);
    let out = crate::support::drive_stream_json(&mut cmd, &["one", "two"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = crate::support::result_lines(&out);
    assert_eq!(results.len(), 2, "{}", stdout(&out));
    assert_eq!(results[0]["structured_output"], json!({"name": "sdk"}));
    assert_eq!(results[1]["structured_output"], json!({"name": "again"}), "each turn gives its own");
    assert!(stderr(&out).contains("note: --betas is accepted for the Agent SDK and ignored"), "{}", stderr(&out));
}
