//! The command line Claude Code users type (issue #13, part 4): `spine -p "PROMPT"`, the
//! prompt as a positional argument, piped stdin appended, permission rules from flags, prompt
//! and model flags, sessions and the turn limit. Every test goes through the binary with the
//! scripted model or a local HTTP server.

use std::process::Output;

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
    s.spine().args(args).args(["--model", &scripted(script), "--output-format", "json"]).output().expect("spine runs")
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
        .args(["-p", "summarize this:", "--model", &scripted(&script), "--output-format", "json"])
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
        .args(["-p", "--model", &scripted(&script), "--output-format", "json"])
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
        let out = s.run(&script, &[flag, "Bash(echo allowed) Edit,Bash(echo a,b)", "--output-format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = json(&out);
        assert!(tool_result(&v, 3).contains("allowed"), "{flag}: {}", v["messages"][3]);
        assert!(tool_result(&v, 4).contains("a,b"), "{flag}: {}", v["messages"][4]);
    }
}

#[test]
fn without_an_allow_rule_a_non_interactive_shell_call_is_refused() {
    let s = Sandbox::new();
    let out = s.run(&s.script(two_shell_calls()), &["--allowedTools", "Bash(echo allowed)", "--output-format", "json"]);
    let v = json(&out);
    assert!(tool_result(&v, 3).contains("allowed"), "{}", v["messages"][3]);
    assert!(tool_result(&v, 4).starts_with("Error [permission_denied]"), "{}", v["messages"][4]);
}

#[test]
fn disallowed_tools_flag_denies_even_when_permissions_are_skipped() {
    let s = Sandbox::new();
    let script = s.script(two_shell_calls());
    for flag in ["--disallowedTools", "--disallowed-tools"] {
        let out =
            s.run(&script, &["--dangerously-skip-permissions", flag, "Bash(echo a,b)", "--output-format", "json"]);
        let v = json(&out);
        assert!(tool_result(&v, 3).contains("allowed"), "{flag}: {}", v["messages"][3]);
        assert_eq!(tool_result(&v, 4), "Error [permission_denied]: denied by rule Bash(echo a,b)", "{flag}");
    }
}

#[test]
fn dangerously_skip_permissions_is_bypass_permissions() {
    let s = Sandbox::new();
    let out = s.run(&s.script(two_shell_calls()), &["--dangerously-skip-permissions", "--output-format", "json"]);
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
        &["--settings", settings, "--allowedTools", "Bash", "--output-format", "json"],
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
        &["--settings", settings, "--disallowedTools", "Bash(echo allowed)", "--output-format", "json"],
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
    let out = s.run(&script, &["--tools", "Read Grep", "--output-format", "json"]);
    assert_eq!(json(&out)["messages"][3]["error_code"], "tool_not_allowed");
    let out = s.run(&script, &["--tools", "default", "--output-format", "json"]);
    assert!(tool_result(&json(&out), 3).contains("README.md"), "{}", stdout(&out));
    let out = s.run(&script, &["--tools", ""]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
