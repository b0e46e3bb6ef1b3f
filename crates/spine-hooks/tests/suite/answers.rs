//! JSON answers per event: what each field becomes in the run, and contract errors.

use serde_json::{Value, json};
use spine_protocol::message::Message;
use spine_protocol::permission::PermissionMode;
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;

use crate::support::*;

/// A hook printing `answer` as its JSON answer (after reading stdin).
fn answer(answer: Value) -> Value {
    command(&format!("cat > /dev/null; printf '%s\\n' '{}'", answer.to_string().replace('\'', "'\\''")))
}

fn pre_answer(v: Value) -> Setup {
    Setup { layers: vec![hooks("PreToolUse", "Bash", vec![answer(v)])], ..Setup::default() }
}

fn pre_specific(fields: Value) -> Value {
    let mut specific = json!({"hookEventName": "PreToolUse"});
    if let (Some(s), Some(f)) = (specific.as_object_mut(), fields.as_object()) {
        s.extend(f.clone());
    }
    json!({"hookSpecificOutput": specific})
}

#[tokio::test]
async fn pre_permission_decision_deny_is_a_permission_denial_with_the_reason() {
    let p = Project::new();
    let v = pre_specific(json!({"permissionDecision": "deny", "permissionDecisionReason": "no network"}));
    let ran = run(&p, pre_answer(v), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [permission_denied]: no network");
    assert_eq!(ran.results()[0].error_code, Some(ErrorCode::PermissionDenied));
}

#[tokio::test]
async fn pre_permission_decision_allow_skips_the_approver() {
    let p = Project::new();
    let v = pre_specific(json!({"permissionDecision": "allow"}));
    let setup = Setup { mode: PermissionMode::Default, ..pre_answer(v) };
    let ran = run(&p, setup, vec![bash("c1", "/bin/echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"), "{}", ran.results()[0].content);
    let ran = run(
        &p,
        Setup { mode: PermissionMode::Default, ..Setup::default() },
        vec![bash("c1", "/bin/echo ran"), text("ok")],
    )
    .await;
    assert_eq!(
        ran.results()[0].error_code,
        Some(ErrorCode::PermissionDenied),
        "without the hook it asks, and no one answers"
    );
}

#[tokio::test]
async fn pre_updated_input_is_revalidated_applied_and_seen_by_the_handler() {
    let p = Project::new();
    let v = pre_specific(json!({"updatedInput": {"command": "echo rewritten"}}));
    let ran = run(&p, pre_answer(v), vec![bash("c1", "echo original"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Command exited with status 0.\nrewritten");

    let bad = pre_specific(json!({"updatedInput": {"cmd": "echo typo"}}));
    let ran = run(&p, pre_answer(bad), vec![bash("c1", "echo original"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [hook_contract_error]: PreToolUse hook returned an invalid update");
}

#[tokio::test]
async fn additional_context_goes_after_the_prompt_after_the_round_and_before_a_forced_message() {
    let p = Project::new();
    let ctx = |event: &str, text: &str| {
        answer(json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}))
    };
    let stop = answer(
        json!({"decision": "block", "reason": "check again", "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "stop ctx"}}),
    );
    let layers = vec![json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [ctx("UserPromptSubmit", "prompt ctx")]}],
        "PreToolUse": [{"hooks": [ctx("PreToolUse", "pre ctx")]}],
        "Stop": [{"hooks": [stop]}],
    }})];
    let replies = vec![
        calls(&[("c1", "Bash", json!({"command": "echo a"})), ("c2", "Bash", json!({"command": "echo b"}))]),
        text("first"),
        text("second"),
    ];
    let ran = run(&p, Setup { layers, ..Setup::default() }, replies).await;
    assert_eq!(
        ran.roles(),
        [
            "system",
            "user",
            "context:UserPromptSubmit",
            "assistant",
            "tool",
            "tool",
            "context:PreToolUse",
            "context:PreToolUse",
            "assistant",
            "context:Stop",
            "user",
            "assistant",
            "context:Stop",
        ]
    );
    assert!(ran.contexts().contains(&"UserPromptSubmit: prompt ctx".to_owned()));
    assert_eq!(ran.outcome.result, "second", "one forced round, then the cap strips the next");
}

#[tokio::test]
async fn post_updated_tool_output_string_replaces_the_text_and_object_the_structured_result() {
    let p = Project::new();
    let post = |out: Value| Setup {
        layers: vec![hooks(
            "PostToolUse",
            "Bash",
            vec![answer(json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": out}}))],
        )],
        ..Setup::default()
    };
    let ran = run(&p, post(json!("[redacted]")), vec![bash("c1", "echo secret"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "[redacted]");
    let structured = json!({"stdout": "clean\n", "stderr": "", "interrupted": false, "exit_code": 0});
    let ran = run(&p, post(structured), vec![bash("c1", "echo secret"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Command exited with status 0.\nclean");
}

#[tokio::test]
async fn post_decision_block_keeps_the_result_and_puts_the_reason_beside_it() {
    let p = Project::new();
    let layers =
        vec![hooks("PostToolUse", "Bash", vec![answer(json!({"decision": "block", "reason": "lint failed"}))])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![bash("c1", "echo built"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Command exited with status 0.\nbuilt");
    assert_eq!(ran.contexts(), vec!["PostToolUse: PostToolUse hook feedback on Bash call c1: lint failed"]);
}

#[tokio::test]
async fn stop_decision_block_forces_a_round_and_the_next_stop_sees_stop_hook_active() {
    let p = Project::new();
    let log = p.path("stop.jsonl");
    let hook = p.script(
        "stop.py",
        &format!(
            "import json, sys\nev = json.load(sys.stdin)\nopen('{log}', 'a').write(json.dumps(ev) + '\\n')\n\
             if not ev['stop_hook_active']:\n    print(json.dumps({{'decision': 'block', 'reason': 'add tests'}}))\n"
        ),
    );
    let layers = vec![hooks("Stop", "", vec![command(&format!("/usr/bin/python3 {hook}"))])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![text("draft"), text("with tests")]).await;
    assert_eq!(ran.outcome.result, "with tests");
    let stops = json_lines(std::path::Path::new(&log));
    assert_eq!(stops.len(), 2);
    assert_eq!(
        (stops[0]["stop_hook_active"].clone(), stops[1]["stop_hook_active"].clone()),
        (json!(false), json!(true))
    );
    assert_eq!(stops[1]["last_assistant_message"], "with tests");
    assert!(
        ran.script.requests()[1].iter().any(|m| matches!(m, Message::User { content, .. } if content == "add tests"))
    );
}

#[tokio::test]
async fn stop_block_without_a_reason_is_a_contract_error_and_the_run_fails() {
    let p = Project::new();
    let layers = vec![hooks("Stop", "", vec![answer(json!({"decision": "block"}))])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![text("draft")]).await;
    assert_eq!(ran.outcome.subtype, RunSubtype::ErrorDuringExecution);
    assert!(ran.outcome.result.contains("without a reason"), "{}", ran.outcome.result);
}

#[tokio::test]
async fn user_prompt_submit_decision_block_refuses_the_prompt() {
    let p = Project::new();
    let layers = vec![hooks("UserPromptSubmit", "", vec![answer(json!({"decision": "block", "reason": "off-topic"}))])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![text("never")]).await;
    assert_eq!(ran.outcome.subtype, RunSubtype::Blocked);
    assert_eq!(ran.outcome.result, "off-topic");
    assert!(ran.script.requests().is_empty());
}

#[tokio::test]
async fn fields_the_event_does_not_own_are_a_contract_error_whatever_the_failure_policy() {
    let p = Project::new();
    for bad in [
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedToolOutput": "x"}}),
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "x"}}),
        json!({"permissionDecision": "deny"}),
        json!({"continue": "no"}),
    ] {
        let ran = run(&p, pre_answer(bad.clone()), vec![bash("c1", "echo ran"), text("ok")]).await;
        assert_eq!(ran.results()[0].error_code, Some(ErrorCode::HookContractError), "{bad}");
    }
    let ran =
        run(&p, pre_answer(json!({"permissionDecision": "deny", "foo": 1})), vec![bash("c1", "x"), text("ok")]).await;
    let detail = ran.warnings().join("\n");
    assert!(detail.contains("`permissionDecision`") && detail.contains("`foo`"), "{detail}");
}

#[tokio::test]
async fn fields_claude_code_defines_for_the_event_are_ignored_and_the_rest_applies() {
    let p = Project::new();
    let start = json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "from start",
        "initialUserMessage": "hello", "sessionTitle": "t", "watchPaths": ["/tmp/x"], "reloadSkills": true}});
    let setup = Setup { layers: vec![hooks("SessionStart", "", vec![answer(start)])], ..Setup::default() };
    let ran = run(&p, setup, vec![text("ok")]).await;
    assert_eq!(ran.outcome.subtype, RunSubtype::Success, "a 2.1 SessionStart answer does not fail the run");
    assert!(ran.contexts().iter().any(|c| c.ends_with(": from start")), "{:?}", ran.contexts());
    let pre = json!({"terminalSequence": "osc-9", "hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "still applied", "permissionDisplay": {}}});
    let ran = run(&p, pre_answer(pre), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [permission_denied]: still applied");
    let typo = pre_specific(json!({"permissionDecison": "deny"}));
    let ran = run(&p, pre_answer(typo), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].error_code, Some(ErrorCode::HookContractError), "a misspelt field is still caught");
}

#[tokio::test]
async fn legacy_pre_decisions_approve_and_block_still_work() {
    let p = Project::new();
    let ran = run(
        &p,
        pre_answer(json!({"decision": "block", "reason": "legacy no"})),
        vec![bash("c1", "echo ran"), text("ok")],
    )
    .await;
    assert_eq!(ran.results()[0].content, "Error [hook_blocked]: legacy no");
    let setup = Setup { mode: PermissionMode::Default, ..pre_answer(json!({"decision": "approve"})) };
    let ran = run(&p, setup, vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"));
    let ran =
        run(&p, pre_answer(json!({"decision": "undefined-legacy"})), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"), "other legacy values are ignored");
}

#[tokio::test]
async fn continue_false_on_pre_tool_use_does_not_run_the_call_and_ends_the_run() {
    let p = Project::new();
    let marker = p.path("ran");
    let v = json!({"continue": false, "stopReason": "maintenance window"});
    let replies = vec![
        calls(&[
            ("c1", "Bash", json!({"command": format!("touch {marker}")})),
            ("c2", "Bash", json!({"command": "true"})),
        ]),
        text("never"),
    ];
    let ran = run(&p, pre_answer(v), replies).await;
    assert!(!std::path::Path::new(&marker).exists());
    assert_eq!(ran.outcome.subtype, RunSubtype::Blocked);
    assert_eq!(ran.outcome.stop_reason.as_deref(), Some("maintenance window"));
    assert!(ran.results().iter().all(|r| r.error_code == Some(ErrorCode::HookStoppedContinuation)));
}

#[tokio::test]
async fn permission_request_hooks_answer_in_the_approvers_place() {
    let p = Project::new();
    let decide = |d: Value| Setup {
        layers: vec![hooks(
            "PermissionRequest",
            "Bash",
            vec![answer(json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": d}}))],
        )],
        mode: PermissionMode::Default,
        ..Setup::default()
    };
    let ran = run(&p, decide(json!({"behavior": "allow"})), vec![bash("c1", "/bin/echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"));
    let ran = run(
        &p,
        decide(json!({"behavior": "deny", "message": "not today"})),
        vec![bash("c1", "/bin/echo ran"), text("ok")],
    )
    .await;
    assert_eq!(ran.results()[0].content, "Error [permission_denied]: not today");
}

#[tokio::test]
async fn async_hooks_deliver_context_on_the_next_turn_and_their_decisions_are_ignored() {
    let p = Project::new();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "additionalContext": "background note"}});
    let hook = json!({
        "type": "command",
        "command": format!("cat > /dev/null; printf '%s\\n' '{deny}'"),
        "async": true,
    });
    let layers = vec![hooks("PreToolUse", "Bash", vec![hook])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![bash("c1", "sleep 0.5; echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"), "the deny of an async hook is ignored");
    let second = &ran.script.requests()[1];
    assert!(
        second.iter().any(|m| matches!(m, Message::Context(c) if c.content == "background note")),
        "the context reached the next request"
    );
}

#[tokio::test]
async fn a_once_hook_runs_at_its_first_firing_only() {
    let p = Project::new();
    let guard = json!({"type": "command", "command": "cat > /dev/null; echo fired >> once.log; echo 'first only' >&2; exit 2", "once": true});
    let setup = Setup { layers: vec![hooks("PreToolUse", "Bash", vec![guard])], ..Setup::default() };
    let ran =
        run(&p, setup, vec![bash("c1", "echo one"), bash("c2", "echo two"), bash("c3", "echo three"), text("ok")])
            .await;
    let results = ran.results();
    assert_eq!(results[0].content, "Error [hook_blocked]: first only");
    assert!(results[1].error_code.is_none() && results[2].error_code.is_none(), "{results:?}");
    assert_eq!(p.read("once.log"), "fired\n", "the process ran once");
}
