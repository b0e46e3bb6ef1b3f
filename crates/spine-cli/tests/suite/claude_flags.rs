//! The command line Claude Code users type: `spine -p "PROMPT"`, the prompt as a positional
//! argument, piped stdin appended, permission rules from flags, prompt and model flags (the
//! session flags and the turn limit are in `claude_session_flags`). Every test goes through the
//! binary with the scripted model or a local HTTP server.

use std::process::Output;

use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::support::*;

pub(crate) fn answer(text: &str) -> Value {
    json!([{"text": text}])
}

pub(crate) fn scripted(script: &std::path::Path) -> String {
    format!("scripted:{}", script.display())
}

/// `spine ARGS… --model scripted:SCRIPT --output-format json` (no `run`, no prompt added).
pub(crate) fn spine_json(s: &Sandbox, script: &std::path::Path, args: &[&str]) -> Output {
    s.spine()
        .args(args)
        .args(["--model", &scripted(script), "--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs")
}

pub(crate) fn user_prompt(v: &Value) -> String {
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

pub(crate) fn two_shell_calls() -> Value {
    json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": "echo allowed"}},
            {"id": "c2", "name": "Bash", "arguments": {"command": "echo a,b"}}
        ]},
        {"text": "done"}
    ])
}

pub(crate) fn tool_result(v: &Value, index: usize) -> String {
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
    // `/bin/echo`, not `echo`: a bare `echo` is a read-only command that needs no rule.
    let calls = json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": "echo allowed"}},
            {"id": "c2", "name": "Bash", "arguments": {"command": "/bin/echo a,b"}}
        ]},
        {"text": "done"}
    ]);
    let out = s.run(
        &s.script(calls),
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
