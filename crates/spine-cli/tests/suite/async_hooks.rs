//! Hooks that go on in the background, through the `spine` binary: `{"async": true}` printed
//! first at run time, `asyncRewake` (a background run of the tests that keeps the agent going,
//! in `spine -p` and in an interactive session), and `suppressOutput`. Hooks wait for sentinel
//! files, never for time to pass.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// A bash loop waiting (at most 30 s, a liveness bound) until `condition` holds.
fn until(condition: &str) -> String {
    format!("for i in $(seq 1 1500); do {condition} && break; sleep 0.02; done")
}

/// An executable bash script `name` in the sandbox (outside the project); its path.
fn script_file(s: &Sandbox, name: &str, body: &str) -> String {
    let path = spine_testkit::files::write_executable(s.dir.path(), name, &format!("#!/bin/bash\n{body}\n"));
    path.display().to_string()
}

fn user_messages(result: &Value) -> Vec<String> {
    result["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "user").filter_map(|m| m["content"].as_str()).map(str::to_owned))
        .into_iter()
        .flatten()
        .collect()
}

/// Settings with a PostToolUse `asyncRewake` hook running `tests` and a Stop hook that creates
/// `go` (what the tests wait for).
fn rewake_settings(s: &Sandbox, tests: &str) -> Value {
    let go = s.dir.path().join("go");
    json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {
            "PostToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": tests, "asyncRewake": true, "rewakeSummary": "background tests failed"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": format!("cat > /dev/null; touch {}", go.display())}]}]
        }
    })
}

#[test]
fn an_async_rewake_hook_that_exits_2_keeps_the_run_going() {
    let s = Sandbox::new();
    let go = s.dir.path().join("go");
    let tests = script_file(
        &s,
        "tests.sh",
        &format!(
            "cat > /dev/null\n{}\necho 'test_parse failed' >&2\nexit 2",
            until(&format!("[ -f {} ]", go.display()))
        ),
    );
    let settings = rewake_settings(&s, &tests);
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo edited"}}]},
        {"text": "done"},
        {"text": "fixed test_parse"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["result"], "fixed test_parse", "{result}");
    assert_eq!(result["num_turns"], 3, "{result}");
    let woke = format!("PostToolUse hook blocking error from command \"{tests}\": test_parse failed");
    assert!(user_messages(&result).contains(&woke), "the model read the hook's stderr: {result}");
    assert!(stderr(&out).contains(&format!("[{tests}] background tests failed")), "the summary: {}", stderr(&out));
}

#[test]
fn a_hook_that_prints_async_true_first_goes_to_the_background_and_its_context_reaches_a_later_request() {
    let s = Sandbox::new();
    let trace = s.dir.path().join("trace.jsonl");
    let late = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "additionalContext": "late note"}});
    let hook = script_file(
        &s,
        "late.sh",
        &format!(
            "cat > /dev/null\necho '{{\"async\": true}}'\n{}\nprintf '%s\\n' '{late}'",
            until(&format!("[ -f {} ]", s.project().join("go").display()))
        ),
    );
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook, "if": "Bash(touch *)"}]}]}
    });
    // The call the hook waits for runs (the hook holds nothing); the next one waits until the
    // hook's trace entry is written (its context is queued before).
    let wait = until(&format!("grep -q 'late[ ]note' {}", trace.display()));
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "touch go"}}]},
        {"tool_calls": [{"id": "c2", "name": "Bash", "arguments": {"command": wait}}]},
        {"text": "done"}
    ]));
    let trace_arg = trace.display().to_string();
    let args =
        ["--settings", &settings.to_string(), "--output-format", "json", "--include-messages", "--trace", &trace_arg];
    let out = s.run(&script, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert!(!first_tool_result(&result).contains("Error"), "the late deny is ignored: {result}");
    let contexts: Vec<&Value> = result["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["content"].as_str().is_some_and(|c| c.contains("late note")))
        .collect();
    assert_eq!(contexts.len(), 1, "the late context reached the model once: {result}");
    let entries: Vec<Value> =
        spine_testkit::files::json_lines(&trace).into_iter().filter(|e| e["kind"] == "hook").collect();
    assert_eq!(entries.len(), 1, "one trace entry, when it ended: {entries:?}");
    assert_eq!((&entries[0]["decision"], &entries[0]["applied"]), (&json!("deny"), &json!(false)));
}

#[test]
fn suppress_output_hides_the_raw_stdout_in_hooks_test_and_the_decision_still_applies() {
    let s = Sandbox::new();
    s.trust();
    let answer = json!({"suppressOutput": true, "terminalSequence": "raw-only-marker", "hookSpecificOutput":
        {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not here"}});
    // A script: the marker must not be in the command line (the hook's id, shown everywhere).
    let command = script_file(&s, "guard.sh", &format!("cat > /dev/null\nprintf '%s\\n' '{answer}'"));
    let settings =
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}});
    s.write(".spine/settings.json", &settings.to_string());
    let input = r#"{"tool_input": {"command": "ls"}}"#;
    let text =
        s.spine().args(["hooks", "test", "PreToolUse", "--tool", "Bash", "--input", input]).output().expect("runs");
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    let shown = stdout(&text);
    assert!(shown.contains("stdout: (hidden: the hook answered suppressOutput)"), "{shown}");
    assert!(!shown.contains("raw-only-marker"), "{shown}");
    assert!(shown.contains("deny"), "the decision is shown: {shown}");
    let as_json = s
        .spine()
        .args(["hooks", "test", "PreToolUse", "--tool", "Bash", "--input", input, "--output-format", "json"])
        .output()
        .expect("runs");
    let v = json(&as_json);
    assert_eq!(v["hooks"][0]["suppressed"], true, "{v}");
    assert_eq!(v["hooks"][0]["raw"]["stdout"], "", "{v}");
    assert!(!v.to_string().contains("raw-only-marker"), "{v}");
    // In a run the deny applies, and the trace records that the hook asked.
    let trace = s.dir.path().join("trace.jsonl");
    let script = s.script(bash_then_answer("echo hi"));
    let out =
        s.run(&script, &["--output-format", "json", "--include-messages", "--trace", &trace.display().to_string()]);
    assert_eq!(first_tool_result(&json(&out)), "Error [permission_denied]: not here");
    let stream = s.run(&script, &["--output-format", "stream-json", "--include-hook-events"]);
    let lines = spine_testkit::files::parse_json_lines(&stdout(&stream));
    let responses: Vec<&Value> = lines.iter().filter(|l| l["subtype"] == "hook_response").collect();
    assert!(!responses.is_empty() && responses.iter().all(|r| r["stdout"] == ""), "{responses:?}");
    assert!(!stdout(&stream).contains("raw-only-marker"), "stream-json hook lines hide it");
    let traced = std::fs::read_to_string(&trace).unwrap_or_default();
    assert!(traced.contains("\"suppress_output\":true") && !traced.contains("raw-only-marker"), "{traced}");
}

/// The transcript of the sandbox's one session.
fn transcript(s: &Sandbox) -> String {
    let files: Vec<_> = s.session_files().into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    files.first().map(|p| std::fs::read_to_string(p).unwrap_or_default()).unwrap_or_default()
}

fn write_script(s: &Sandbox, name: &str, turns: Value) -> std::path::PathBuf {
    let path = s.dir.path().join(name);
    spine_testkit::script::write_script_file(&path, turns).expect("script");
    path
}

#[test]
fn a_rewake_while_the_session_waits_at_its_prompt_starts_a_turn_with_the_hooks_message() {
    let s = Sandbox::new();
    let go: &Path = &s.dir.path().join("release");
    let tests = script_file(
        &s,
        "tests.sh",
        &format!("cat > /dev/null\n{}\necho 'test_io failed' >&2\nexit 2", until(&format!("[ -f {} ]", go.display()))),
    );
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": tests, "asyncRewake": true, "rewakeSummary": "background tests failed"}]}]}
    });
    s.write(".claude/settings.json", &settings.to_string());
    s.trust();
    let script = write_script(
        &s,
        "chat.json",
        json!([
            {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo edited"}}]},
            {"text": "first answer"},
            {"text": "fixed test_io"}
        ]),
    );
    let tmux = chat_session(&s, &script, &[], "");
    tmux.send_line("edit the code");
    tmux.wait_for("first answer");
    // Typing shows once the prompt is back (the turn ended, the hook still waits); releasing
    // the hook then wakes the session.
    let typed = tmux.cmd().args(["send-keys", "-t", "t", "-l", "half-typed"]).status().expect("send-keys");
    assert!(typed.success());
    tmux.wait_for("> half-typed");
    std::fs::write(go, "").expect("release");
    let screen = tmux.wait_for("fixed test_io");
    assert!(screen.contains("a hook woke the session"), "{screen}");
    assert!(screen.contains("background tests failed"), "the summary: {screen}");
    let all = tmux.wait_for_count("> half-typed", 2);
    assert!(all.contains("fixed test_io"), "the prompt comes back with the text typed so far: {all}");
    // Keys typed in the same read as a Ctrl-C that clears a line are dropped by the line
    // editor: the test waits for the cleared prompt before typing.
    tmux.wait_for_last_line("> half-typed");
    tmux.send_key("C-c");
    tmux.wait_for_last_line(">");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let transcript = transcript(&s);
    assert!(transcript.contains("test_io failed"), "the model read the hook's message: {transcript}");
}
