//! PreToolUse: block, rewrite, re-validation, contract and execution errors.

use serde_json::json;
use spine_core::hooks::{HookContext, HookError, hook_fn};
use spine_protocol::hook::{
    HookOutput, PostToolUse, PostToolUseAction, PostToolUseInput, PreToolUse, PreToolUseAction, PreToolUseInput,
};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;

use crate::support::*;

fn log_pre(h: &mut Harness, id: &'static str, action: PreToolUseAction) {
    let log = h.log.clone();
    h.hooks.on::<PreToolUse>(
        id,
        hook_fn(move |_c: &HookContext, input: &PreToolUseInput| {
            log.push(format!("pre:{id}:{}", input.tool_input));
            Ok(HookOutput::new(action.clone()))
        }),
    );
}

fn log_post(h: &mut Harness) {
    let log = h.log.clone();
    h.hooks.on::<PostToolUse>(
        "post",
        hook_fn(move |_c: &HookContext, _i: &PostToolUseInput| {
            log.push("post");
            Ok(HookOutput::new(PostToolUseAction::default()))
        }),
    );
}

#[tokio::test]
async fn pre_block_gives_exact_hook_blocked_text_and_skips_later_hooks_policy_handler_and_post() {
    let mut h = Harness::new();
    log_pre(&mut h, "first", PreToolUseAction::block("no value tools today"));
    log_pre(&mut h, "second", PreToolUseAction::default());
    log_post(&mut h);
    let approver = std::sync::Arc::new(RecordingApprover {
        seen: Default::default(),
        answer: spine_core::permission::Approval::Allow,
        log: h.log.clone(),
    });
    h.approver = approver;
    let (outcome, script, log) =
        h.run("go", vec![calls(&[("c1", "write_value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success);
    let r = results(&outcome.messages);
    assert_eq!(r[0].content, "Error [hook_blocked]: no value tools today");
    assert_eq!(r[0].error_code, Some(ErrorCode::HookBlocked));
    assert_eq!(log.take(), vec![r#"pre:first:{"value":1}"#.to_owned()], "no later hook, approver, handler or post");
    let second_request = &script.requests()[1];
    assert!(
        matches!(second_request.last(), Some(spine_protocol::message::Message::Tool(t)) if t.content.starts_with("Error [hook_blocked]"))
    );
}

#[tokio::test]
async fn pre_rewrite_flows_to_the_next_hook_and_the_handler_runs_with_it() {
    let mut h = Harness::new();
    let update = json!({"value": 2}).as_object().cloned().expect("object");
    log_pre(&mut h, "rewriter", PreToolUseAction::rewrite(update));
    log_pre(&mut h, "observer", PreToolUseAction::default());
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(log.take(), vec![r#"pre:rewriter:{"value":1}"#, r#"pre:observer:{"value":2}"#, "handler:value:2"]);
    assert_eq!(results(&outcome.messages)[0].content, "value=2");
}

#[tokio::test]
async fn schema_invalid_rewrite_is_a_contract_error_and_the_handler_does_not_run() {
    let mut h = Harness::new();
    for (i, bad) in [json!({"value": "two"}), json!({"value": 2, "extra": true}), json!({})].into_iter().enumerate() {
        let _ = i;
        let update = bad.as_object().cloned().expect("object");
        log_pre(&mut h, "bad", PreToolUseAction::rewrite(update));
    }
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(
        results(&outcome.messages)[0].content,
        "Error [hook_contract_error]: PreToolUse hook returned an invalid update"
    );
    assert!(!log.take().iter().any(|l| l.starts_with("handler")), "handler must not run");
    assert!(
        outcome.trace.entries().iter().any(
            |e| matches!(&e.record, spine_protocol::trace::TraceRecord::Hook(t) if t.decision == "contract_error")
        ),
        "the contract error is traced"
    );
}

#[tokio::test]
async fn pre_hook_error_is_hook_execution_error_and_the_handler_does_not_run() {
    let mut h = Harness::new();
    h.hooks
        .on::<PreToolUse>("crashes", hook_fn(|_c: &HookContext, _i: &PreToolUseInput| Err(HookError::failed("boom"))));
    log_post(&mut h);
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(results(&outcome.messages)[0].content, "Error [hook_execution_error]: PreToolUse hook failed");
    assert!(log.take().is_empty(), "neither handler nor PostToolUse ran");
}

#[tokio::test]
async fn pre_hook_failing_open_lets_the_tool_run_with_a_warning() {
    let mut h = Harness::new();
    let spec = spine_core::hooks::HookSpec::new(
        "flaky",
        hook_fn(|_c: &HookContext, _i: &PreToolUseInput| Err(HookError::timeout("slow"))),
    )
    .on_failure(spine_core::hooks::FailurePolicy::Open);
    h.hooks.add::<PreToolUse>(spine_core::hooks::Matcher::All, spec);
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(results(&outcome.messages)[0].content, "value=1");
    assert_eq!(log.take(), vec!["handler:value:1"]);
    assert!(outcome.trace.entries().iter().any(
        |e| matches!(&e.record, spine_protocol::trace::TraceRecord::Warning(w) if w.message.contains("failing open"))
    ));
}

#[tokio::test]
async fn unknown_tools_and_invalid_arguments_never_reach_hooks() {
    let mut h = Harness::new();
    log_pre(&mut h, "pre", PreToolUseAction::default());
    let (outcome, _s, log) = h
        .run(
            "go",
            vec![
                calls(&[("c1", "nope", json!({})), ("c2", "value", json!({"value": "x"}))]),
                raw_call("c3", "value", "{not json"),
                text("ok"),
            ],
        )
        .await;
    let r = results(&outcome.messages);
    assert_eq!(r[0].error_code, Some(ErrorCode::UnknownTool));
    assert_eq!(r[1].error_code, Some(ErrorCode::InvalidArguments));
    assert!(r[1].content.contains("/value"), "names the failing JSON path: {}", r[1].content);
    assert_eq!(r[2].error_code, Some(ErrorCode::InvalidArguments));
    assert!(r[2].content.contains("not valid JSON"), "{}", r[2].content);
    assert!(log.take().is_empty(), "no hook and no handler ran");
}

#[tokio::test]
async fn pre_continue_false_answers_the_call_and_the_rest_of_the_batch_and_ends_the_run() {
    let mut h = Harness::new();
    let log = h.log.clone();
    h.hooks.on::<PreToolUse>(
        "halt",
        hook_fn(move |_c: &HookContext, _i: &PreToolUseInput| {
            log.push("pre");
            Ok(HookOutput::new(PreToolUseAction::default()).halt(Some("stop here".into())))
        }),
    );
    let (outcome, script, log) = h
        .run(
            "go",
            vec![calls(&[("c1", "value", json!({"value": 1})), ("c2", "value", json!({"value": 2}))]), text("never")],
        )
        .await;
    assert_eq!(outcome.subtype, RunSubtype::Blocked);
    assert_eq!(outcome.stop_reason.as_deref(), Some("stop here"));
    let r = results(&outcome.messages);
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|t| t.error_code == Some(ErrorCode::HookStoppedContinuation)));
    assert_eq!(log.take(), vec!["pre"], "the call is not executed (unlike Claude Code)");
    assert_eq!(script.requests().len(), 1);
}

#[tokio::test]
async fn pre_additional_context_lands_after_all_results_of_the_round() {
    let mut h = Harness::new();
    log_pre(&mut h, "ctx", PreToolUseAction::default().with_context("remember the rules"));
    let (outcome, _s, _log) = h
        .run(
            "go",
            vec![calls(&[("c1", "value", json!({"value": 1})), ("c2", "value", json!({"value": 2}))]), text("ok")],
        )
        .await;
    assert_eq!(
        roles(&outcome.messages),
        vec!["system", "user", "assistant", "tool", "tool", "context:PreToolUse", "context:PreToolUse", "assistant"]
    );
}

#[tokio::test]
async fn a_discarded_rewrite_is_recorded_in_the_trace() {
    let mut h = Harness::new();
    log_pre(&mut h, "rewriter", PreToolUseAction::rewrite(json!({"value": 5}).as_object().cloned().expect("obj")));
    log_pre(&mut h, "blocker", PreToolUseAction::block("no"));
    let (outcome, _s, _log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert!(outcome.trace.entries().iter().any(|e| matches!(&e.record,
        spine_protocol::trace::TraceRecord::Warning(w) if w.message.contains("rewrite by `rewriter` discarded"))));
}
