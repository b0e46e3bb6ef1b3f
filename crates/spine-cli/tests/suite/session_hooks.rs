//! Events around the session rather than a tool call, through the `spine` binary and real
//! command hooks: Setup (`--init`, `--init-only`, `--maintenance`), UserPromptExpansion (a
//! custom command in a session) and PreModelSwitch/PostModelSwitch (`/model` in a session).

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// A hook that appends its stdin (one JSON line) to `log`, then runs `then` (a shell snippet).
fn logging_then(log: &Path, then: &str) -> Value {
    let log = shell_quote(&log.to_string_lossy());
    json!({"type": "command", "command": format!("cat >> {log}; echo >> {log}; {then}")})
}

fn events(inputs: &[Value]) -> Vec<&str> {
    inputs.iter().filter_map(|v| v["hook_event_name"].as_str()).collect()
}

/// Project settings with `hooks`, trusted.
fn with_hooks(s: &Sandbox, hooks: Value) {
    s.write(".claude/settings.json", &json!({"hooks": hooks}).to_string());
    s.trust();
}

/// `hook` with `onFailure: "block"`.
fn blocking(mut hook: Value) -> Value {
    hook["onFailure"] = json!("block");
    hook
}

fn context_answer(event: &str, text: &str) -> String {
    let answer = json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}});
    format!("printf '%s' {}", shell_quote(&answer.to_string()))
}

#[test]
fn init_fires_setup_before_session_start_and_its_context_reaches_the_model() {
    let s = Sandbox::new();
    let log = s.dir.path().join("hooks.jsonl");
    with_hooks(
        &s,
        json!({
            "Setup": [{"matcher": "init", "hooks": [logging_then(&log, &context_answer("Setup", "deps installed"))]}],
            "SessionStart": [{"hooks": [logging_then(&log, "true")]}]
        }),
    );
    let script = s.script(json!([{"text": "ready"}]));
    let out = s.run(&script, &["--init", "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let inputs = logged(&log);
    assert_eq!(events(&inputs), ["Setup", "SessionStart"], "Setup first, once");
    assert_eq!(inputs[0]["trigger"], "init");
    let messages = json(&out)["messages"].to_string();
    assert!(messages.contains("deps installed"), "the Setup context reaches the model: {messages}");
}

#[test]
fn init_only_runs_the_setup_hooks_and_exits_without_a_session_or_a_model_request() {
    let s = Sandbox::new();
    let log = s.dir.path().join("hooks.jsonl");
    with_hooks(
        &s,
        json!({
            "Setup": [{"hooks": [logging_then(&log, &context_answer("Setup", "database migrated"))]}],
            "SessionStart": [{"hooks": [logging_then(&log, "true")]}],
            "UserPromptSubmit": [{"hooks": [logging_then(&log, "true")]}]
        }),
    );
    // A script with no turns: a model request would fail the run.
    let script = s.script(json!([]));
    let out =
        s.spine().args(["--model", &format!("scripted:{}", script.display()), "--init-only"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "database migrated", "the hooks' context is printed");
    let inputs = logged(&log);
    assert_eq!(events(&inputs), ["Setup"], "no session starts: {inputs:?}");
    assert_eq!(inputs[0]["trigger"], "init");
}

#[test]
fn maintenance_fires_setup_with_its_trigger_and_a_setup_hook_failing_closed_fails_the_run() {
    let s = Sandbox::new();
    let log = s.dir.path().join("hooks.jsonl");
    with_hooks(
        &s,
        json!({
            "Setup": [{"matcher": "maintenance", "hooks": [
                blocking(logging_then(&log, "echo 'cannot reach the database' >&2; exit 1"))
            ]}],
            "SessionStart": [{"hooks": [logging_then(&log, "true")]}]
        }),
    );
    let script = s.script(json!([{"text": "never asked"}]));
    let out = s.run(&script, &["--maintenance", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let inputs = logged(&log);
    assert_eq!(events(&inputs), ["Setup"], "the session does not start: {inputs:?}");
    assert_eq!(inputs[0]["trigger"], "maintenance");
    let result = json(&out);
    assert_eq!(result["subtype"], "error_during_execution", "{result}");

    let out = s.run(&script, &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "without the flag Setup does not fire: {}", stderr(&out));
    assert_eq!(events(&logged(&log)), ["Setup", "SessionStart"]);
}

#[test]
fn a_custom_command_fires_user_prompt_expansion_with_the_typed_line_and_a_block_keeps_it_from_the_model() {
    let s = Sandbox::new();
    let log = s.dir.path().join("hooks.jsonl");
    with_hooks(
        &s,
        json!({
            "UserPromptExpansion": [
                {"matcher": "greet", "hooks": [logging_then(&log, &context_answer("UserPromptExpansion", "greet politely"))]},
                {"matcher": "deploy", "hooks": [logging_then(&log, "echo 'no deploys on Friday' >&2; exit 2")]}
            ],
            "UserPromptSubmit": [{"hooks": [logging_then(&log, "true")]}]
        }),
    );
    s.write(".claude/commands/greet.md", "Say hello to $ARGUMENTS\n");
    s.write(".claude/commands/deploy.md", "Deploy $ARGUMENTS now\n");
    let script = s.dir.path().join("chat.json");
    spine_testkit::script::write_script_file(&script, json!([{"text": "hello given"}])).expect("script");
    let tmux = chat_session(&s, &script, &[], "");
    tmux.send_line("/deploy production");
    let screen = tmux.wait_for("no deploys on Friday");
    assert!(screen.contains("Original prompt: /deploy production"), "{screen}");
    tmux.send_line("/greet Ada");
    tmux.wait_for("hello given");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let inputs = logged(&log);
    assert_eq!(
        events(&inputs),
        ["UserPromptExpansion", "UserPromptExpansion", "UserPromptSubmit"],
        "a blocked expansion never reaches UserPromptSubmit: {inputs:?}"
    );
    let greet = &inputs[1];
    assert_eq!(greet["expansion_type"], "slash_command");
    assert_eq!(greet["command_name"], "greet");
    assert_eq!(greet["command_args"], "Ada");
    assert_eq!(greet["command_source"], "projectSettings");
    assert_eq!(greet["prompt"], "/greet Ada", "the command line as typed, as Claude Code sends it");
    assert_eq!(inputs[2]["prompt"], "Say hello to Ada", "UserPromptSubmit sees the expansion");
    let transcripts: String = s
        .session_files()
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| std::fs::read_to_string(p).expect("transcript"))
        .collect();
    assert!(transcripts.contains("greet politely"), "the expansion's context reaches the model");
    assert!(!transcripts.contains("Deploy production now"), "the blocked expansion is not sent");
}

#[test]
fn model_switch_hooks_keep_the_model_on_a_deny_and_add_context_after_an_allowed_switch() {
    let s = Sandbox::new();
    let log = s.dir.path().join("hooks.jsonl");
    let deny = r#"tail -n 1 LOG | grep -q forbidden && { echo "that model is not approved" >&2; exit 2; }; true"#
        .replace("LOG", &shell_quote(&log.to_string_lossy()));
    with_hooks(
        &s,
        json!({
            "PreModelSwitch": [{"hooks": [logging_then(&log, &deny)]}],
            "PostModelSwitch": [{"hooks": [logging_then(&log, &context_answer("PostModelSwitch", "switched: mind the new limits"))]}]
        }),
    );
    let first = s.dir.path().join("first.json");
    spine_testkit::script::write_script_file(&first, json!([{"text": "one"}])).expect("script");
    let forbidden = s.dir.path().join("forbidden.json");
    spine_testkit::script::write_script_file(&forbidden, json!([{"text": "never"}])).expect("script");
    let second = s.dir.path().join("second.json");
    spine_testkit::script::write_script_file(&second, json!([{"text": "two"}])).expect("script");
    let tmux = chat_session(&s, &first, &[], "");
    tmux.send_line("first");
    tmux.wait_for("one");
    tmux.send_line(&format!("/model scripted:{}", forbidden.display()));
    let screen = tmux.wait_for("that model is not approved");
    assert!(screen.contains("the model stays"), "{screen}");
    tmux.send_line(&format!("/model scripted:{}", second.display()));
    tmux.wait_for("from the next prompt on");
    tmux.send_line("second");
    tmux.wait_for("two");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let inputs = logged(&log);
    assert_eq!(events(&inputs), ["PreModelSwitch", "PreModelSwitch", "PostModelSwitch"], "{inputs:?}");
    let allowed = &inputs[1];
    assert_eq!(allowed["source"], "command");
    assert_eq!(allowed["requested_model"], format!("scripted:{}", second.display()));
    for field in [
        "from_model",
        "to_model",
        "context_tokens",
        "prompt_cache_warm",
        "cache_ttl",
        "estimated_cache_write_usd",
        "pricing",
    ] {
        assert!(allowed.get(field).is_some(), "Claude Code's field {field}: {allowed}");
    }
    assert!(allowed["context_tokens"].as_u64().is_some_and(|n| n > 0), "the first exchange counts: {allowed}");
    assert_eq!(inputs[2]["to_model"], allowed["to_model"]);
    let transcripts: String = s
        .session_files()
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| std::fs::read_to_string(p).expect("transcript"))
        .collect();
    assert!(transcripts.contains("mind the new limits"), "PostModelSwitch's context reaches the next request");
}
