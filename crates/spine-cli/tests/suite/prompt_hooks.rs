//! `"type": "prompt"` hooks through the `spine` binary: one model request over the event's
//! JSON decides — `{"ok": false, "reason"}` means what exit 2 means for the event — with the
//! hook's own model or the session's, and a model that cannot answer is a hook failure
//! decided by `onFailure`.

use serde_json::{Value, json};

use crate::support::*;

/// A scripted model file answering `text` to its one request.
fn verdict_model(s: &Sandbox, name: &str, text: &str) -> String {
    let path = s.write(&format!("{name}.json"), &json!({"turns": [{"text": text}]}).to_string());
    format!("scripted:{}", path.display())
}

fn prompt_hook(model: &str, extra: Value) -> Value {
    let mut hook =
        json!({"type": "prompt", "prompt": "Refuse destructive commands. The call: $ARGUMENTS", "model": model});
    if let (Some(h), Some(e)) = (hook.as_object_mut(), extra.as_object()) {
        h.extend(e.clone());
    }
    hook
}

#[test]
fn a_prompt_hook_that_answers_not_ok_blocks_the_call_with_its_reason() {
    let s = Sandbox::new();
    let model = verdict_model(&s, "judge", r#"{"ok": false, "reason": "rm -rf is destructive"}"#);
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [prompt_hook(&model, json!({}))]}]}
    });
    let out = s.run(
        &s.script(bash_then_answer("rm -rf build")),
        &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tool_results(&json(&out)), ["Error [hook_blocked]: rm -rf is destructive"]);

    let s = Sandbox::new();
    let model = verdict_model(&s, "judge", "Looks fine. {\"ok\": true}");
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [prompt_hook(&model, json!({}))]}]}
    });
    let out = s.run(
        &s.script(bash_then_answer("echo fine")),
        &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"],
    );
    assert!(tool_results(&json(&out))[0].contains("fine"), "ok lets the call run");
}

#[test]
fn a_prompt_hook_sends_the_event_json_in_place_of_arguments_to_its_model() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![anthropic_text(r#"{"ok": false, "reason": "not today"}"#)]);
    let hook = prompt_hook("anthropic:claude-haiku-4-5", json!({"continueOnBlock": false}));
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}
    });
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args([
            "run",
            "-p",
            "go",
            "--model",
            &format!("scripted:{}", s.script(bash_then_answer("rm -rf build")).display()),
        ])
        .args(["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs");
    let (_, body) = server.only();
    let sent = body.to_string();
    assert!(sent.contains("Refuse destructive commands. The call: {"), "{sent}");
    assert!(sent.contains(r#"\"tool_name\":\"Bash\""#) && sent.contains("rm -rf build"), "the event JSON: {sent}");
    assert!(sent.contains(r#"\"hook_event_name\":\"PreToolUse\""#), "{sent}");
    assert_eq!(body["tools"], Value::Null, "no tools: {body}");
    let result = json(&out);
    assert_eq!(result["subtype"], "blocked", "continueOnBlock false ends the run: {result}");
    assert_eq!(result["hook_stop_reason"], "not today", "{result}");
    assert!(tool_results(&result)[0].starts_with("Error [hook_stopped_continuation]"), "{result}");
}

#[test]
fn a_prompt_hook_without_a_verdict_is_a_failure_decided_by_on_failure() {
    for (on_failure, runs) in [("continue", true), ("block", false)] {
        let s = Sandbox::new();
        let model = verdict_model(&s, "judge", "I am not sure what to say.");
        let hook = prompt_hook(&model, json!({"onFailure": on_failure}));
        let settings = json!({
            "permissions": {"allow": ["Bash"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}
        });
        let out = s.run(&s.script(bash_then_answer("touch made")), &["--settings", &settings.to_string()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(s.project().join("made").exists(), runs, "onFailure {on_failure}");
    }
}

#[test]
fn a_prompt_hook_on_stop_forces_one_more_round_with_its_reason() {
    let s = Sandbox::new();
    let model = verdict_model(&s, "judge", r#"{"ok": false, "reason": "run the tests first"}"#);
    let settings = json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Did it verify? $ARGUMENTS", "model": model, "once": true}]}]}});
    let script = s.script(json!([{"text": "done"}, {"text": "tests pass"}]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["result"], "tests pass", "{result}");
    assert!(result["messages"].to_string().contains("run the tests first"), "{result}");
}

#[test]
fn a_prompt_hook_whose_model_spec_is_invalid_stops_the_run_naming_the_hook() {
    let s = Sandbox::new();
    let settings =
        json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "x", "model": "nonsense:model"}]}]}});
    let out = s.run(&s.script(json!([{"text": "done"}])), &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("hooks.Stop[0].hooks[0].model"), "{}", stderr(&out));
}
