//! `"type": "agent"` hooks through the `spine` binary: a read-only verifier agent investigates
//! with Read, Glob and Grep, then its verdict decides like a prompt hook's; it cannot change
//! anything, and a verifier that does not finish is a failure decided by `onFailure`;
//! `spine hooks test` runs the verifier as a run does.

use serde_json::{Value, json};

use crate::support::*;

/// A scripted verifier: `turns` then nothing.
fn verifier(s: &Sandbox, turns: Value) -> String {
    let path = s.write("verifier.json", &json!({"turns": turns}).to_string());
    format!("scripted:{}", path.display())
}

fn settings(model: &str, extra: Value) -> String {
    let mut hook = json!({"type": "agent", "prompt": "Has the test report been written? $ARGUMENTS", "model": model});
    if let (Some(h), Some(e)) = (hook.as_object_mut(), extra.as_object()) {
        h.extend(e.clone());
    }
    json!({"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
        .to_string()
}

#[test]
fn an_agent_hook_reads_the_workspace_and_its_verdict_blocks_the_call() {
    let s = Sandbox::new();
    s.write("status.txt", "tests: not run\n");
    let model = verifier(
        &s,
        json!([
            {"tool_calls": [{"id": "v1", "name": "Read", "arguments": {"file_path": "status.txt"}}]},
            {"text": "{\"ok\": false, \"reason\": \"status.txt says tests: not run\"}"}
        ]),
    );
    let out = s.run(
        &s.script(bash_then_answer("git push")),
        &["--settings", &settings(&model, json!({})), "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tool_results(&json(&out)), ["Error [hook_blocked]: status.txt says tests: not run"]);
}

#[test]
fn an_agent_hooks_verifier_cannot_write_or_run_anything() {
    let s = Sandbox::new();
    let model = verifier(
        &s,
        json!([
            {"tool_calls": [
                {"id": "v1", "name": "Write", "arguments": {"file_path": "planted.txt", "content": "x"}},
                {"id": "v2", "name": "Bash", "arguments": {"command": "touch planted-by-bash"}}
            ]},
            {"text": "{\"ok\": true}"}
        ]),
    );
    let out = s.run(
        &s.script(bash_then_answer("echo allowed")),
        &["--settings", &settings(&model, json!({})), "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(tool_results(&json(&out))[0].contains("allowed"), "ok lets the call run");
    assert!(!s.project().join("planted.txt").exists() && !s.project().join("planted-by-bash").exists());
}

#[test]
fn an_agent_hook_whose_verifier_does_not_finish_fails_by_its_on_failure() {
    for (on_failure, runs) in [("continue", true), ("block", false)] {
        let s = Sandbox::new();
        let model =
            verifier(&s, json!([{"tool_calls": [{"id": "v1", "name": "Glob", "arguments": {"pattern": "*"}}]}]));
        let out = s.run(
            &s.script(bash_then_answer("touch made")),
            &["--settings", &settings(&model, json!({"onFailure": on_failure}))],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(s.project().join("made").exists(), runs, "onFailure {on_failure}");
    }
}

#[test]
fn hooks_test_runs_an_agent_hooks_verifier_as_a_run_does_and_shows_its_verdict() {
    let s = Sandbox::new();
    s.write("status.txt", "tests: not run\n");
    let model = verifier(
        &s,
        json!([
            {"tool_calls": [{"id": "v1", "name": "Read", "arguments": {"file_path": "status.txt"}}]},
            {"text": "{\"ok\": false, \"reason\": \"status.txt says tests: not run\"}"}
        ]),
    );
    // No `model` of its own: the hook asks the session's, `--model`.
    let hook = json!({"type": "agent", "prompt": "Has the test report been written? $ARGUMENTS"});
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}).to_string();
    let args =
        ["hooks", "test", "PreToolUse", "--tool", "Bash", "--input", r#"{"tool_input": {"command": "git push"}}"#];
    let out = s.spine().args(args).args(["--settings", &settings, "--model", &model]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("the verifier answered"), "{text}");
    assert!(text.contains("\"decision\": \"block\"") && text.contains("status.txt says tests: not run"), "{text}");

    let out = s
        .spine()
        .args(args)
        .args(["--settings", &settings, "--model", &model, "--output-format", "json"])
        .output()
        .expect("runs");
    let report = json(&out);
    assert_eq!(report["merged"]["decision"], "block", "{report}");
    assert_eq!(report["merged"]["model_sees"], "Error [hook_blocked]: status.txt says tests: not run");
    assert_eq!(report["hooks"][0]["type"], "agent");
}
