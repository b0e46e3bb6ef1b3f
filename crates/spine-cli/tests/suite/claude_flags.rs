//! The command line Claude Code users type (issue #13, part 4): `spine -p "PROMPT"`, the
//! prompt as a positional argument, piped stdin appended, permission rules from flags, prompt
//! and model flags, sessions and the turn limit. Every test goes through the binary with the
//! scripted model or a local HTTP server.

use std::process::Output;

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::support::*;

fn answer(text: &str) -> Value {
    json!([{"text": text}])
}

fn scripted(script: &std::path::Path) -> String {
    format!("scripted:{}", script.display())
}

/// `spine ARGS… --model scripted:SCRIPT --output-format json` (no `run`, no prompt added).
fn spine_json(s: &Sandbox, script: &std::path::Path, args: &[&str]) -> Output {
    s.spine()
        .args(args)
        .args(["--model", &scripted(script), "--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs")
}

fn user_prompt(v: &Value) -> String {
    v["messages"][1]["content"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn top_level_print_flag_runs_like_spine_run() {
    let s = Sandbox::new();
    let script = s.script(answer("hi"));
    let out = spine_json(&s, &script, &["-p", "hello there"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!((v["subtype"].as_str(), v["result"].as_str()), (Some("success"), Some("hi")));
    assert_eq!(user_prompt(&v), "hello there");
}

#[test]
fn the_prompt_is_positional_before_or_after_the_print_flag_with_or_without_run() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    for args in [
        &["-p", "x"][..],
        &["x", "-p"][..],
        &["--print", "x"][..],
        &["x"][..],
        &["run", "-p", "x"][..],
        &["run", "x"][..],
        &["run", "x", "-p"][..],
    ] {
        let out = spine_json(&s, &script, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(user_prompt(&json(&out)), "x", "{args:?}");
    }
}

#[test]
fn piped_stdin_is_appended_to_the_prompt_after_a_newline() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    let out = s
        .spine()
        .args(["-p", "summarize this:", "--model", &scripted(&script), "--output-format", "json", "--include-messages"])
        .write_stdin("line one\nline two\n")
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(user_prompt(&json(&out)), "summarize this:\nline one\nline two");
}

#[test]
fn piped_stdin_alone_is_the_prompt_of_the_print_flag() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    let out = s
        .spine()
        .args(["-p", "--model", &scripted(&script), "--output-format", "json", "--include-messages"])
        .write_stdin("from stdin\n")
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(user_prompt(&json(&out)), "from stdin");
}

#[test]
fn bare_spine_prints_the_usage_and_exits_2() {
    let s = Sandbox::new();
    let out = s.spine().output().expect("spine runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Usage:"), "{}", stderr(&out));
}

#[test]
fn subcommands_still_win_over_a_prompt_of_the_same_name() {
    let s = Sandbox::new();
    let out = s.spine().args(["trust", "--list"]).output().expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

fn two_shell_calls() -> Value {
    json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": "echo allowed"}},
            {"id": "c2", "name": "Bash", "arguments": {"command": "echo a,b"}}
        ]},
        {"text": "done"}
    ])
}

fn tool_result(v: &Value, index: usize) -> String {
    v["messages"][index]["content"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn allowed_tools_flag_takes_permission_rules_separated_by_spaces_or_commas() {
    let s = Sandbox::new();
    let script = s.script(two_shell_calls());
    for flag in ["--allowedTools", "--allowed-tools"] {
        let out = s.run(
            &script,
            &[flag, "Bash(echo allowed) Edit,Bash(echo a,b)", "--output-format", "json", "--include-messages"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = json(&out);
        assert!(tool_result(&v, 3).contains("allowed"), "{flag}: {}", v["messages"][3]);
        assert!(tool_result(&v, 4).contains("a,b"), "{flag}: {}", v["messages"][4]);
    }
}

#[test]
fn without_an_allow_rule_a_non_interactive_shell_call_is_refused() {
    let s = Sandbox::new();
    let out = s.run(
        &s.script(two_shell_calls()),
        &["--allowedTools", "Bash(echo allowed)", "--output-format", "json", "--include-messages"],
    );
    let v = json(&out);
    assert!(tool_result(&v, 3).contains("allowed"), "{}", v["messages"][3]);
    assert!(tool_result(&v, 4).starts_with("Error [permission_denied]"), "{}", v["messages"][4]);
}

#[test]
fn disallowed_tools_flag_denies_even_when_permissions_are_skipped() {
    let s = Sandbox::new();
    let script = s.script(two_shell_calls());
    for flag in ["--disallowedTools", "--disallowed-tools"] {
        let out = s.run(
            &script,
            &[
                "--dangerously-skip-permissions",
                flag,
                "Bash(echo a,b)",
                "--output-format",
                "json",
                "--include-messages",
            ],
        );
        let v = json(&out);
        assert!(tool_result(&v, 3).contains("allowed"), "{flag}: {}", v["messages"][3]);
        assert_eq!(tool_result(&v, 4), "Error [permission_denied]: denied by rule Bash(echo a,b)", "{flag}");
    }
}

#[test]
fn dangerously_skip_permissions_is_bypass_permissions() {
    let s = Sandbox::new();
    let out = s.run(
        &s.script(two_shell_calls()),
        &["--dangerously-skip-permissions", "--output-format", "json", "--include-messages"],
    );
    let v = json(&out);
    assert!(tool_result(&v, 3).contains("allowed") && tool_result(&v, 4).contains("a,b"), "{v}");
    let out = s.run(&s.script(two_shell_calls()), &["--dangerously-skip-permissions", "--permission-mode", "default"]);
    assert_eq!(out.status.code(), Some(2), "the two flags conflict: {}", stderr(&out));
}

#[test]
fn a_settings_deny_rule_wins_over_a_flag_allow_rule() {
    let s = Sandbox::new();
    let settings = r#"{"permissions": {"deny": ["Bash(echo a,b)"]}}"#;
    let out = s.run(
        &s.script(two_shell_calls()),
        &["--settings", settings, "--allowedTools", "Bash", "--output-format", "json", "--include-messages"],
    );
    let v = json(&out);
    assert!(tool_result(&v, 3).contains("allowed"), "{}", v["messages"][3]);
    assert_eq!(tool_result(&v, 4), "Error [permission_denied]: denied by rule Bash(echo a,b)");
}

#[test]
fn a_flag_deny_rule_wins_over_a_settings_allow_rule() {
    let s = Sandbox::new();
    let settings = r#"{"permissions": {"allow": ["Bash"]}}"#;
    let out = s.run(
        &s.script(two_shell_calls()),
        &[
            "--settings",
            settings,
            "--disallowedTools",
            "Bash(echo allowed)",
            "--output-format",
            "json",
            "--include-messages",
        ],
    );
    let v = json(&out);
    assert_eq!(tool_result(&v, 3), "Error [permission_denied]: denied by rule Bash(echo allowed)");
    assert!(tool_result(&v, 4).contains("a,b"), "{}", v["messages"][4]);
}

#[test]
fn a_bad_rule_in_a_flag_exits_2_naming_the_flag() {
    let s = Sandbox::new();
    let out = s.run(&s.script(answer("x")), &["--allowedTools", "Bash(unclosed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--allowedTools: `Bash(unclosed`"), "{}", stderr(&out));
}

#[test]
fn tools_flag_sets_visibility_and_default_means_every_tool() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Glob", "arguments": {"pattern": "*.md"}}]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--tools", "Read Grep", "--output-format", "json", "--include-messages"]);
    assert_eq!(json(&out)["messages"][3]["error_code"], "tool_not_allowed");
    let out = s.run(&script, &["--tools", "default", "--output-format", "json", "--include-messages"]);
    assert!(tool_result(&json(&out), 3).contains("README.md"), "{}", stdout(&out));
    let out = s.run(&script, &["--tools", ""]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn system_prompt_replaces_the_built_in_agent_prompt() {
    let s = Sandbox::new();
    let out = s.run(
        &s.script(answer("ok")),
        &["--system-prompt", "You are a terse reviewer.", "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = json(&out)["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains("You are a terse reviewer."), "{system}");
    assert!(!system.contains("You are spine"), "{system}");
}

#[test]
fn append_system_prompt_follows_the_agent_prompt() {
    let s = Sandbox::new();
    let out = s.run(
        &s.script(answer("ok")),
        &["--append-system-prompt", "Answer in French.", "--output-format", "json", "--include-messages"],
    );
    let system = json(&out)["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    let (built_in, appended) = (system.find("You are spine"), system.find("Answer in French."));
    assert!(matches!((built_in, appended), (Some(a), Some(b)) if a < b), "{system}");
    let out = s.run(
        &s.script(answer("ok")),
        &[
            "--system-prompt",
            "Base.",
            "--append-system-prompt",
            "Extra.",
            "--output-format",
            "json",
            "--include-messages",
        ],
    );
    let system = json(&out)["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains("Base.\n\nExtra.") && !system.contains("You are spine"), "{system}");
}

fn openai_text(text: &str) -> String {
    let events = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ];
    let mut out: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[test]
fn anthropic_auth_token_is_sent_as_bearer_with_the_custom_headers_and_anthropic_model() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![anthropic_text("hello")]);
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_AUTH_TOKEN", "tok-0123456789")
        .env("ANTHROPIC_CUSTOM_HEADERS", "X-Team: core\nX-Trace-Id: 42\n")
        .env("ANTHROPIC_MODEL", "haiku")
        .args(["-p", "hi", "--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["result"], "hello");
    let (headers, body) = server.only();
    assert_eq!(header(&headers, "authorization"), Some("Bearer tok-0123456789"));
    assert_eq!(header(&headers, "x-api-key"), None);
    assert_eq!((header(&headers, "x-team"), header(&headers, "x-trace-id")), (Some("core"), Some("42")));
    assert_eq!(body["model"], spine_models::spec::HAIKU);
}

#[test]
fn anthropic_api_key_alone_is_sent_as_x_api_key() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![anthropic_text("hello")]);
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", "sk-0123456789")
        .args(["-p", "hi", "--model", "sonnet"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (headers, body) = server.only();
    assert_eq!((header(&headers, "x-api-key"), header(&headers, "authorization")), (Some("sk-0123456789"), None));
    assert_eq!(body["model"], spine_models::spec::SONNET);
}

#[test]
fn a_bad_custom_header_line_exits_2_naming_the_variable() {
    let s = Sandbox::new();
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("ANTHROPIC_CUSTOM_HEADERS", "no colon here")
        .args(["-p", "hi", "--model", "opus"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ANTHROPIC_CUSTOM_HEADERS: `no colon here`"), "{}", stderr(&out));
}

#[test]
fn bare_openai_model_names_select_openai() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![openai_text("hi from gpt")]);
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .args(["-p", "hi", "--model", "gpt-4.1-mini"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "hi from gpt");
    assert_eq!(server.only().1["model"], "gpt-4.1-mini");
}

#[test]
fn model_flag_beats_anthropic_model_which_beats_the_settings_model() {
    let s = Sandbox::new();
    let script = s.script(answer("from the script"));
    let settings = r#"{"model": "scripted:/nonexistent.json"}"#;
    let out = s
        .spine()
        .env("ANTHROPIC_MODEL", "opus")
        .args(["-p", "hi", "--settings", settings, "--model", &scripted(&script)])
        .output()
        .expect("spine runs");
    assert_eq!(stdout(&out).trim(), "from the script", "{}", stderr(&out));

    let server = SseServer::start(vec![anthropic_text("from opus")]);
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_MODEL", "opus")
        .args(["-p", "hi", "--settings", settings])
        .output()
        .expect("spine runs");
    assert_eq!(stdout(&out).trim(), "from opus", "{}", stderr(&out));
    assert_eq!(server.only().1["model"], spine_models::spec::OPUS);
}

#[test]
fn an_unknown_bare_model_name_exits_2() {
    let s = Sandbox::new();
    let out = s.spine().args(["-p", "hi", "--model", "llama3"]).output().expect("spine runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--model: invalid model spec `llama3`"), "{}", stderr(&out));
}

fn session_of(out: &Output) -> String {
    json(out)["session_id"].as_str().expect("session_id").to_owned()
}

fn user_prompts(v: &Value) -> Vec<String> {
    v["messages"]
        .as_array()
        .map(|m| {
            m.iter().filter(|m| m["role"] == "user").filter_map(|m| m["content"].as_str().map(str::to_owned)).collect()
        })
        .unwrap_or_default()
}

#[test]
fn continue_picks_the_most_recent_session_of_this_project() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    let first = s
        .spine()
        .args(["-p", "first", "--model", &scripted(&script), "--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    let first_id = session_of(&first);
    // A later session of another project is not this project's.
    let other = s.dir.path().join("other");
    std::fs::create_dir_all(&other).expect("other");
    let elsewhere = s
        .spine()
        .args(["-p", "elsewhere", "--cwd", other.to_str().expect("utf8"), "--model", &scripted(&script)])
        .args(["--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_ne!(session_of(&elsewhere), first_id);
    for flag in ["-c", "--continue"] {
        let out = spine_json(&s, &script, &[flag, "-p", "again"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(session_of(&out), first_id, "{flag}");
        let prompts = user_prompts(&json(&out));
        assert_eq!(prompts.first().map(String::as_str), Some("first"), "{flag}: {prompts:?}");
        assert_eq!(prompts.last().map(String::as_str), Some("again"), "{flag}: {prompts:?}");
    }
}

#[test]
fn continue_without_a_session_of_this_project_exits_2() {
    let s = Sandbox::new();
    let out = s.run(&s.script(answer("x")), &["--continue"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--continue: no session of"), "{}", stderr(&out));
}

#[test]
fn session_id_names_the_new_session_and_is_validated() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let out = s.run(&script, &["--session-id", &id.to_uppercase(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(session_of(&out), id);
    assert!(s.session_file(id, "jsonl").is_some_and(|p| p.is_file()));

    let out = s.run(&script, &["--session-id", id]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("already in use"), "{}", stderr(&out));
    let out = s.run(&script, &["--session-id", "../../etc/passwd"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a UUID"), "{}", stderr(&out));
    let out = s.run(&script, &["--session-id", id, "--resume", id]);
    assert_eq!(out.status.code(), Some(2), "the flags conflict");
}

#[test]
fn no_session_persistence_writes_no_transcript() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    let out = s.run(&script, &["--no-session-persistence", "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = session_of(&out);
    assert_eq!(s.session_files(), Vec::<std::path::PathBuf>::new(), "nothing written for {id}");
    let out = s.resume(&id, "again", &script);
    assert_eq!(out.status.code(), Some(2), "nothing to resume: {}", stderr(&out));
}

#[test]
fn resume_restores_the_sessions_model() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![anthropic_text("one"), anthropic_text("two")]);
    let base = format!("http://{}", server.addr);
    let run = |args: &[&str]| {
        s.spine()
            .env("ANTHROPIC_BASE_URL", &base)
            .args(args)
            .args(["--output-format", "json", "--include-messages"])
            .output()
            .expect("runs")
    };
    let first = run(&["-p", "hi", "--model", "opus"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let id = session_of(&first);
    let second = run(&["-p", "more", "--resume", &id]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let models: Vec<Value> = server.bodies().into_iter().map(|b| b["model"].clone()).collect();
    assert_eq!(models, [json!(spine_models::spec::OPUS), json!(spine_models::spec::OPUS)]);
}

#[test]
fn resume_restores_the_sessions_directory() {
    let s = Sandbox::new();
    s.write("README.md", "hello from the project\n");
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Read", "arguments": {"file_path": "README.md"}}]},
        {"text": "done"}
    ]));
    let first = s.run(&script, &["--output-format", "json", "--include-messages"]);
    let id = session_of(&first);
    let out = s
        .spine()
        .current_dir(s.dir.path())
        .args([
            "-p",
            "again",
            "--resume",
            &id,
            "--model",
            &scripted(&script),
            "--output-format",
            "json",
            "--include-messages",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let last_read = v["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "tool"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(last_read.contains("hello from the project"), "{last_read}");
}

fn calculator_turns(n: usize) -> Value {
    let mut turns: Vec<Value> = (0..n)
        .map(|i| json!({"tool_calls": [{"id": format!("c{i}"), "name": "calculator", "arguments": {"expression": "1 + 1"}}]}))
        .collect();
    turns.push(json!({"text": "done"}));
    Value::Array(turns)
}

#[test]
fn max_turns_has_no_default_limit() {
    let s = Sandbox::new();
    let out = s.run(&s.script(calculator_turns(25)), &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!((v["subtype"].as_str(), v["num_turns"].as_u64()), (Some("success"), Some(26)));
}

#[test]
fn a_max_turns_setting_is_a_safety_limit_and_the_flag_overrides_it() {
    let s = Sandbox::new();
    let script = s.script(calculator_turns(3));
    let out = s.run(&script, &["--settings", r#"{"maxTurns": 2}"#, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["subtype"], "error_max_turns");
    let out = s.run(
        &script,
        &["--settings", r#"{"maxTurns": 2}"#, "--max-turns", "10", "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn an_open_silent_stdin_does_not_hold_a_run_that_has_a_prompt() {
    let s = Sandbox::new();
    let script = s.script(answer("went on"));
    let mut child = s
        .spine_process()
        .args(["-p", "hi", "--model", &scripted(&script)])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn spine");
    // The write end stays open (and silent) until the run has ended.
    let stdin = child.stdin.take();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        assert!(std::time::Instant::now() < deadline, "spine waited for stdin for a minute");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(stdin);
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "went on");
    assert!(stderr(&out).contains("no stdin data received"), "{}", stderr(&out));
}

#[test]
fn list_flags_take_every_word_up_to_the_next_flag_as_in_claude_code() {
    let s = Sandbox::new();
    let script = s.script(two_shell_calls());
    let out = s
        .spine()
        .args(["-p", "go", "--allowedTools", "Bash(echo allowed)", "Bash(echo a,b)", "--model", &scripted(&script)])
        .args(["--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert!(tool_result(&v, 3).contains("allowed") && tool_result(&v, 4).contains("a,b"), "{v}");

    // A prompt after the list is one more rule, as in Claude Code: no prompt is left.
    let out = s
        .spine()
        .args(["--model", &scripted(&script), "-p", "--allowedTools", "Read", "summarize the notes"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no prompt") && stderr(&out).contains("put the prompt before them"),
        "{}",
        stderr(&out)
    );
}
