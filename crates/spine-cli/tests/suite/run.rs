//! `spine run`: output formats, exit codes, stderr lines, sessions, configuration errors.

use serde_json::{Value, json};

use spine_testkit::files::mkfifo;

use crate::support::*;

fn read_then_answer() -> Value {
    json!([
        {"tool_calls": [{"id": "call_1", "name": "Read", "arguments": {"file_path": "README.md"}}]},
        {"text": "The README says hello."}
    ])
}

#[test]
fn text_mode_prints_only_the_final_answer_on_stdout() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    let out = s.run(&s.script(read_then_answer()), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The README says hello.\n");
}

#[test]
fn json_mode_prints_one_result_object_with_the_whole_conversation() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    let out = s.run(&s.script(read_then_answer()), &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v["type"], "result");
    assert_eq!(v["subtype"], "success");
    assert_eq!(v["is_error"], false);
    assert_eq!(v["result"], "The README says hello.");
    assert_eq!(v["num_turns"], 2);
    assert!(v["duration_ms"].is_u64() && v["usage"].is_object());
    let roles: Vec<&str> =
        v["messages"].as_array().expect("messages").iter().map(|m| m["role"].as_str().unwrap_or("")).collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "tool", "assistant"]);
    assert!(v["messages"][3]["content"].as_str().expect("tool text").contains("hello"));
    let id = v["session_id"].as_str().expect("session id");
    let transcript = std::fs::read_to_string(s.session_file(id, "jsonl").expect("transcript")).expect("transcript");
    assert!(transcript.lines().count() >= 5, "{transcript}");
}

#[test]
fn verbose_prints_lifecycle_lines_on_stderr() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    let out = s.run(&s.script(read_then_answer()), &["-v"]);
    let err = stderr(&out);
    for line in [
        "[Hook] UserPromptSubmit",
        "[Hook] PreToolUse: Read",
        "[Permission] Read: allow (default) - read-only tool",
        "[Hook] PostToolUse: Read -> ok",
        "[Hook] Stop",
    ] {
        assert!(err.lines().any(|l| l == line), "missing `{line}` in:\n{err}");
    }
    assert_eq!(stdout(&out), "The README says hello.\n", "stdout stays clean");
    let quiet = s.run(&s.script(read_then_answer()), &[]);
    assert!(!stderr(&quiet).contains("[Hook]"), "no lifecycle lines without -v");
}

#[test]
fn a_denied_call_is_answered_with_permission_denied_and_the_run_goes_on() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "/bin/echo hi"}}]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--output-format", "json", "--include-messages"]);
    let v = json(&out);
    assert_eq!(v["subtype"], "success");
    let tool = &v["messages"][3];
    assert_eq!(tool["error_code"], "permission_denied");
    assert!(tool["content"].as_str().expect("content").starts_with("Error [permission_denied]: Bash needs approval"));
}

#[test]
fn settings_permissions_allow_a_command_and_deny_rules_win() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": "echo allowed"}},
            {"id": "c2", "name": "Bash", "arguments": {"command": "rm -f nothing"}}
        ]},
        {"text": "done"}
    ]));
    let settings = r#"{"permissions": {"allow": ["Bash"], "deny": ["Bash(rm *)"]}}"#;
    let out = s.run(&script, &["--settings", settings, "--output-format", "json", "--include-messages"]);
    let v = json(&out);
    assert!(v["messages"][3]["content"].as_str().expect("c1").contains("allowed"), "{}", v["messages"][3]);
    assert_eq!(v["messages"][4]["content"], "Error [permission_denied]: denied by rule Bash(rm *)");
}

#[test]
fn workspace_escapes_are_hard_denials_even_in_bypass_mode() {
    let s = Sandbox::new();
    std::fs::write(s.dir.path().join("outside.txt"), "secret").expect("write");
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Read", "arguments": {"file_path": "../outside.txt"}}]},
        {"text": "done"}
    ]));
    let out =
        s.run(&script, &["--permission-mode", "bypassPermissions", "--output-format", "json", "--include-messages"]);
    let v = json(&out);
    let content = v["messages"][3]["content"].as_str().expect("content");
    assert!(
        content.starts_with("Error [permission_denied]:") && content.contains("outside the workspace"),
        "{content}"
    );
    assert!(!content.contains("secret"));
}

#[test]
fn tools_flag_hides_the_others_with_tool_not_allowed() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Glob", "arguments": {"pattern": "*.md"}}]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--tools", "Read,Grep", "--output-format", "json", "--include-messages"]);
    let v = json(&out);
    assert_eq!(v["messages"][3]["error_code"], "tool_not_allowed");
}

#[test]
fn max_turns_exits_1_with_error_max_turns() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "1+1"}}]},
        {"tool_calls": [{"id": "c2", "name": "calculator", "arguments": {"expression": "2+2"}}]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--max-turns", "1", "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!((v["subtype"].as_str(), v["is_error"].as_bool()), (Some("error_max_turns"), Some(true)));
}

#[test]
fn an_exhausted_script_fails_the_run_with_exit_1_and_a_clear_message() {
    let s = Sandbox::new();
    let script =
        s.script(json!([{"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "1+1"}}]}]));
    let out = s.run(&script, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("scripted model exhausted after 1 turns"), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn raw_unparsable_arguments_become_invalid_arguments() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [{"id": "call_2", "name": "Bash", "arguments_raw": "{not json"}]},
        {"text": "done"}
    ]));
    let v = json(&s.run(&script, &["--output-format", "json", "--include-messages"]));
    assert_eq!(v["messages"][3]["error_code"], "invalid_arguments");
    assert_eq!(v["messages"][2]["tool_calls"][0]["arguments_raw"], "{not json");
}

#[test]
fn configuration_errors_exit_2_and_name_the_file_and_field() {
    let s = Sandbox::new();
    s.trust();
    let script = s.script(read_then_answer());
    s.write(".spine/settings.json", r#"{"permissions": {"allow": ["Read", 7]}}"#);
    let out = s.run(&script, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(".spine/settings.json") && err.contains("permissions.allow[1]"), "{err}");

    let s = Sandbox::new();
    let out = s.run(&s.script(read_then_answer()), &["--settings", r#"{"permissions": {"deny": ["Bash(rm *"]}}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--settings #1") && stderr(&out).contains("permissions.deny[0]"), "{}", stderr(&out));

    let out = s.spine().args(["run", "-p", "x", "--model", "llama3"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid model spec"), "{}", stderr(&out));

    let out = s.spine().args(["run", "-p", "x", "--model", "scripted:/nonexistent.json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent.json"));

    let out = s.spine().args(["run", "-p", "x"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no model configured"), "{}", stderr(&out));

    let out = s.run(&s.script(read_then_answer()), &["--permission-mode", "yolo"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_prompt_can_come_from_stdin_and_missing_prompts_are_usage_errors() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "echoed"}]));
    let out = s
        .spine()
        .args([
            "run",
            "--model",
            &format!("scripted:{}", script.display()),
            "--output-format",
            "json",
            "--include-messages",
        ])
        .write_stdin("from stdin\n")
        .output()
        .expect("runs");
    let v = json(&out);
    assert_eq!(v["messages"][1]["content"], "from stdin");
    let out = s
        .spine()
        .args(["run", "--model", &format!("scripted:{}", script.display())])
        .write_stdin("")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no prompt"));
}

#[test]
fn stream_json_with_hook_events_and_reports_prints_them_then_the_result() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "2 + 2"}}]},
        {"text": "four"}
    ]));
    let out = s.run(&script, &["--output-format", "stream-json", "--include-hook-events", "--include-reports"]);
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap_or("")).collect();
    assert_eq!(types.first(), Some(&"report"));
    assert_eq!(types.last(), Some(&"result"));
    assert!(types.contains(&"permission") && types.contains(&"assistant"));
    assert!(!types.contains(&"hook"), "hooks print Claude Code's `system` hook lines, no `hook` line");
    let methods: Vec<&str> =
        lines.iter().filter(|l| l["type"] == "report").map(|l| l["method_id"].as_str().unwrap_or("")).collect();
    assert_eq!(methods, vec!["execution_started", "execution_progress", "execution_complete"]);
    let complete = lines.iter().find(|l| l["method_id"] == "execution_complete").expect("complete");
    assert_eq!(
        complete["terminal_payload"]["tool_invocations"][0]["response_payload"]["content"],
        "The calculator returned 4."
    );
}

#[test]
fn resume_continues_a_session_with_its_history() {
    let s = Sandbox::new();
    let first = s.run(&s.script(json!([{"text": "first answer"}])), &["--output-format", "json", "--include-messages"]);
    let id = json(&first)["session_id"].as_str().expect("id").to_owned();
    let script = s.script(json!([{"text": "second answer"}]));
    let out = s
        .spine()
        .args([
            "run",
            "-p",
            "again",
            "--resume",
            &id,
            "--model",
            &format!("scripted:{}", script.display()),
            "--output-format",
            "json",
            "--include-messages",
        ])
        .output()
        .expect("runs");
    let v = json(&out);
    assert_eq!(v["session_id"], id.as_str());
    let texts: Vec<&str> =
        v["messages"].as_array().expect("m").iter().skip(1).map(|m| m["content"].as_str().unwrap_or("")).collect();
    assert_eq!(texts, vec!["go", "first answer", "again", "second answer"]);
    let out = s
        .spine()
        .args(["run", "-p", "x", "--resume", "no-such-session", "--model", "scripted:x"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn version_and_help_exit_0() {
    let s = Sandbox::new();
    let out = s.spine().arg("--version").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("spine "));
    assert_eq!(s.spine().args(["run", "--help"]).output().expect("runs").status.code(), Some(0));
}

#[test]
fn a_deferred_call_ends_the_run_and_resume_fires_pre_tool_use_for_it_again() {
    let s = Sandbox::new();
    // The hook defers until a file named `approved` exists, then allows.
    let hook = s.write(
        "hooks/gate.sh",
        "#!/bin/sh\ncat >/dev/null\nif [ -f approved ]; then d=allow; else d=defer; fi\n\
         printf '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"%s\"}}' $d\n",
    );
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("sh {}", hook.display())}]}]}})
    .to_string();
    let first = s
        .script(json!([{"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo deferred-ran"}}]}]));
    let out = s.run(&first, &["--settings", &settings, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["subtype"], "deferred");
    assert_eq!(v["deferred_tool_use"]["id"], "c1");
    let id = v["session_id"].as_str().expect("session").to_owned();

    s.write("approved", "");
    let second = s.script(json!([{"text": "finished"}]));
    let out = s
        .spine()
        .args(["run", "--resume", &id, "--model", &format!("scripted:{}", second.display())])
        .args(["--settings", &settings, "--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["subtype"], "success");
    let tool =
        v["messages"].as_array().expect("messages").iter().find(|m| m["role"] == "tool").expect("tool result").clone();
    assert_eq!(tool["tool_call_id"], "c1");
    assert!(tool["content"].as_str().expect("content").contains("deferred-ran"), "{tool}");
}

#[test]
fn a_bad_model_in_a_settings_file_exits_2_naming_the_file_and_key() {
    let s = Sandbox::new();
    let file = s.write("conf/settings.json", r#"{"model": "gpt-4.1"}"#);
    let out = s.spine().args(["run", "-p", "go", "--settings"]).arg(&file).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}", file.display())) && err.contains(": model: "), "{err}");
    assert!(!err.contains("--model"), "the flag was not used: {err}");

    let missing = s.write("conf/missing.json", r#"{"model": "scripted:/nonexistent/script.json"}"#);
    let out = s.spine().args(["run", "-p", "go", "--settings"]).arg(&missing).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}", missing.display())) && err.contains(": model: "), "{err}");
    assert!(err.contains("/nonexistent/script.json"), "{err}");
}

#[test]
fn a_bad_model_flag_is_still_reported_as_model_flag() {
    let s = Sandbox::new();
    s.write(".spine/settings.json", r#"{"model": "scripted:/elsewhere.json"}"#);
    let out = s.spine().args(["run", "-p", "go", "--model", "gpt-4.1"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--model: "), "{err}");
    assert!(!err.contains("settings.json"), "{err}");
}

/// `spine run` with `args`, killed if it has not ended within 30 s (a liveness bound: a hang
/// fails the test instead of the CI job).
fn run_bounded(s: &Sandbox, args: &[&str]) -> std::process::Output {
    let script = s.script(read_then_answer());
    let mut cmd = s.spine();
    cmd.arg("run").arg("-p").arg("go").arg("--model").arg(format!("scripted:{}", script.display()));
    cmd.args(args).timeout(std::time::Duration::from_secs(30));
    cmd.output().expect("spine runs")
}

#[test]
fn settings_files_that_are_fifos_or_devices_exit_2_naming_the_file() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    let fifo = s.dir.path().join("settings.fifo");
    mkfifo(&fifo);
    let fifo_arg = fifo.to_string_lossy().into_owned();
    for (arg, why) in [(fifo_arg.as_str(), "is a FIFO"), ("/dev/zero", "is a character device")] {
        let out = run_bounded(&s, &["--settings", arg]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(arg) && err.contains("--settings #1") && err.contains(why), "{err}");
    }

    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    mkfifo(&s.project().join(".spine/settings.json"));
    let out = run_bounded(&s, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(".spine/settings.json") && err.contains("is a FIFO, not a regular file"), "{err}");
}

#[test]
fn settings_files_over_4_mib_exit_2_naming_the_file() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    let big = s.dir.path().join("big.json");
    std::fs::File::create(&big).expect("create").set_len(1 << 30).expect("sparse 1 GiB");
    let arg = big.to_string_lossy().into_owned();
    let out = run_bounded(&s, &["--settings", &arg]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&arg) && err.contains("is larger than 4194304 bytes"), "{err}");
}

#[test]
fn the_env_file_exists_only_once_a_session_start_hook_writes_it_and_bash_then_sees_it() {
    let s = Sandbox::new();
    let plain = s.run(&s.script(json!([{"text": "hi"}])), &["--output-format", "json"]);
    let id = json(&plain)["session_id"].as_str().expect("id").to_owned();
    assert!(s.session_file(&id, "jsonl").is_some(), "the transcript is there");
    assert_eq!(s.session_file(&id, "env"), None, "no empty env file per run");

    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo 'export FROM_HOOK=yes' >> \"$CLAUDE_ENV_FILE\""}]}]}
    })
    .to_string();
    let out = s.run(
        &s.script(bash_then_answer("echo \"hook says $FROM_HOOK\"")),
        &["--settings", &settings, "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert!(first_tool_result(&v).contains("hook says yes"), "{}", first_tool_result(&v));
    let id = v["session_id"].as_str().expect("id");
    let env = std::fs::read_to_string(s.session_file(id, "env").expect("the hook made it")).expect("read");
    assert_eq!(env, "export FROM_HOOK=yes\n");
}
