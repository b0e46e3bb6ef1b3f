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
