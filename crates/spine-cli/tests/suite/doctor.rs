//! `spine doctor`: each check ok, warning or failed with its fix; a key is never printed, only
//! the name of its variable; the exit status is 1 when a check failed.

use serde_json::{Value, json};

use crate::support::*;

const KEY: &str = "sk-ant-doctor-secret-0123456789";

fn doctor(s: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, Value) {
    let mut text = s.spine();
    text.arg("doctor").args(args);
    let mut json_cmd = s.spine();
    json_cmd.arg("doctor").args(args).args(["--output-format", "json"]);
    for (k, v) in env {
        text.env(k, v);
        json_cmd.env(k, v);
    }
    let out = text.output().expect("runs");
    let json_out = json_cmd.output().expect("runs");
    (out.status.code(), stdout(&out) + &stderr(&out), json(&json_out))
}

fn status<'a>(report: &'a Value, check: &str) -> &'a Value {
    let found = report["checks"].as_array().and_then(|c| c.iter().find(|c| c["check"] == check));
    &found.unwrap_or_else(|| panic!("no {check} check: {report}"))["status"]
}

#[test]
fn a_ready_project_passes_every_check_and_the_key_is_named_never_shown() {
    let s = Sandbox::new();
    let (code, text, report) = doctor(&s, &["--model", "anthropic:claude-sonnet-5"], &[("ANTHROPIC_API_KEY", KEY)]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("✓ model") && text.contains("key: ANTHROPIC_API_KEY is set"), "{text}");
    assert!(!text.contains(KEY) && !report.to_string().contains(KEY), "the key is never printed");
    assert_eq!(report["ok"], true);
    for check in ["settings", "trust", "model", "hooks", "rules", "mcp", "shell"] {
        assert_eq!(status(&report, check), "ok", "{check}: {report}");
    }
}

#[test]
fn a_missing_key_fails_the_model_check_with_the_variable_to_set() {
    let s = Sandbox::new();
    let (code, text, report) = doctor(&s, &["--model", "anthropic:claude-sonnet-5"], &[]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(status(&report, "model"), "failed");
    assert!(text.contains("✗ model") && text.contains("fix: export ANTHROPIC_API_KEY"), "{text}");
}

#[test]
fn malformed_settings_name_the_file_and_a_hook_with_a_missing_program_fails_the_hooks_check() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "x"}]));
    let model = format!("scripted:{}", script.display());
    s.write(".claude/settings.json", "{\"permissions\": {\"allow\": [\"Bash(\"]");
    let (code, text, report) = doctor(&s, &["--model", &model], &[]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(status(&report, "settings"), "failed");
    assert!(text.contains(".claude/settings.json"), "the file is named: {text}");

    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "/nonexistent/guard.sh"}]}]}});
    s.write(".claude/settings.json", &hooks.to_string());
    s.trust();
    let (code, text, report) = doctor(&s, &["--model", &model], &[]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(status(&report, "settings"), "ok");
    assert_eq!(status(&report, "hooks"), "failed", "{report}");
    assert!(text.contains("/nonexistent/guard.sh"), "{text}");
}

#[test]
fn the_mailbox_is_checked_only_when_configured_and_an_unreachable_one_fails() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "x"}]));
    let model = format!("scripted:{}", script.display());
    let (code, _, report) = doctor(&s, &["--model", &model], &[]);
    assert_eq!(code, Some(0));
    assert!(!report["checks"].as_array().expect("checks").iter().any(|c| c["check"] == "mailbox"));
    let port = spine_testkit::http::free_port();
    let nats = format!("nats://127.0.0.1:{port}");
    let (code, text, report) = doctor(&s, &["--model", &model, "--mailbox", &nats], &[]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(status(&report, "mailbox"), "failed");
    assert!(text.contains("nats-server -js"), "{text}");
    let db = s.dir.path().join("mail.db");
    let sqlite = format!("sqlite:{}", db.display());
    let (code, text, _) = doctor(&s, &["--model", &model, "--mailbox", &sqlite], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("not created yet"), "{text}");
}
