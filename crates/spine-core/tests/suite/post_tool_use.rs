//! PostToolUse: output rewrites chain, prevent continuation, failure policy; PostToolUseFailure.

use serde_json::json;
use spine_core::hooks::{FailurePolicy, HookContext, HookError, HookSpec, Matcher, hook_fn};
use spine_protocol::hook::{
    ContextAction, HookOutput, PostToolUse, PostToolUseAction, PostToolUseFailure, PostToolUseFailureInput,
    PostToolUseInput, UpdatedOutput,
};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;

use crate::support::*;

#[tokio::test]
async fn post_rewrites_chain_in_order() {
    let mut h = Harness::new();
    for (id, text) in [("first", "rewritten once"), ("second", "rewritten twice")] {
        let log = h.log.clone();
        h.hooks.on::<PostToolUse>(
            id,
            hook_fn(move |_c: &HookContext, i: &PostToolUseInput| {
                log.push(format!("{id} saw {}", i.tool_response));
                Ok(HookOutput::new(PostToolUseAction::replace_text(text)))
            }),
        );
    }
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(log.take(), vec!["handler:value:1", r#"first saw {"value":1}"#, r#"second saw "rewritten once""#]);
    assert_eq!(results(&outcome.messages)[0].content, "rewritten twice");
}

#[tokio::test]
async fn structured_output_rewrite_is_projected_again() {
    let mut h = Harness::new();
    h.hooks.on::<PostToolUse>(
        "redact",
        hook_fn(|_c: &HookContext, _i: &PostToolUseInput| {
            Ok(HookOutput::new(PostToolUseAction {
                updated_output: Some(UpdatedOutput::Structured(json!({"value": 42}))),
                ..Default::default()
            }))
        }),
    );
    let (outcome, _s, _log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(results(&outcome.messages)[0].content, "value=42");
}

#[tokio::test]
async fn post_stop_on_call_one_of_three_skips_the_rest_and_ends_with_call_ones_result() {
    let mut h = Harness::new();
    h.hooks.on::<PostToolUse>(
        "enough",
        hook_fn(|_c: &HookContext, i: &PostToolUseInput| {
            let out = HookOutput::new(PostToolUseAction::default());
            Ok(if i.tool_use_id == "c1" { out.halt(Some("one is enough".into())) } else { out })
        }),
    );
    let batch = calls(&[
        ("c1", "value", json!({"value": 1})),
        ("c2", "value", json!({"value": 2})),
        ("c3", "value", json!({"value": 3})),
    ]);
    let (outcome, script, log) = h.run("go", vec![batch, text("never asked")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success);
    assert_eq!(outcome.result, "value=1");
    assert_eq!(log.take(), vec!["handler:value:1"]);
    let r = results(&outcome.messages);
    assert_eq!(r.len(), 3, "all three calls answered");
    for skipped in &r[1..] {
        assert_eq!(skipped.content, "Error [hook_stopped_continuation]: Skipped after PostToolUse requested a stop");
    }
    assert_eq!(script.requests().len(), 1, "no further model request");
}

#[tokio::test]
async fn post_hook_error_failing_open_keeps_the_real_output() {
    let mut h = Harness::new();
    let spec =
        HookSpec::new("flaky", hook_fn(|_c: &HookContext, _i: &PostToolUseInput| Err(HookError::failed("boom"))))
            .on_failure(FailurePolicy::Open);
    h.hooks.add::<PostToolUse>(Matcher::All, spec);
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(log.take(), vec!["handler:value:1"]);
    assert_eq!(results(&outcome.messages)[0].content, "value=1");
}

#[tokio::test]
async fn post_hook_error_failing_closed_replaces_the_output_after_the_handler_ran() {
    let mut h = Harness::new();
    h.hooks
        .on::<PostToolUse>("strict", hook_fn(|_c: &HookContext, _i: &PostToolUseInput| Err(HookError::failed("boom"))));
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(log.take(), vec!["handler:value:1"], "the side effect happened");
    assert_eq!(results(&outcome.messages)[0].content, "Error [hook_execution_error]: PostToolUse hook failed");
}

#[tokio::test]
async fn post_block_reason_reaches_the_model_beside_the_unchanged_result() {
    let mut h = Harness::new();
    h.hooks.on::<PostToolUse>(
        "review",
        hook_fn(|_c: &HookContext, _i: &PostToolUseInput| {
            Ok(HookOutput::new(PostToolUseAction {
                block_reason: Some("check the value".into()),
                ..Default::default()
            }))
        }),
    );
    let (outcome, _s, _log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(results(&outcome.messages)[0].content, "value=1");
    assert_eq!(roles(&outcome.messages)[4], "context:PostToolUse");
    assert!(outcome.messages[4].text().expect("text").contains("check the value"));
}

#[tokio::test]
async fn tool_errors_fire_post_tool_use_failure_not_post_tool_use() {
    let mut h = Harness::new();
    let log = h.log.clone();
    h.hooks.on::<PostToolUse>(
        "post",
        hook_fn(move |_c: &HookContext, _i: &PostToolUseInput| {
            log.push("post");
            Ok(HookOutput::new(PostToolUseAction::default()))
        }),
    );
    let log = h.log.clone();
    h.hooks.on::<PostToolUseFailure>(
        "failure",
        hook_fn(move |_c: &HookContext, i: &PostToolUseFailureInput| {
            log.push(format!("failure:{}", i.error));
            Ok(HookOutput::new(ContextAction::context("try another way")))
        }),
    );
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "fail", json!({}))]), text("ok")]).await;
    assert_eq!(log.take(), vec!["failure:it broke"]);
    let r = &results(&outcome.messages)[0];
    assert_eq!((r.error_code, r.content.as_str()), (Some(ErrorCode::RuntimeError), "Error [runtime_error]: it broke"));
    assert_eq!(roles(&outcome.messages)[4], "context:PostToolUseFailure");
}
