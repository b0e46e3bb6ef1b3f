//! Cancellation wins: mid-tool, the running tool is stopped and every pending call is answered;
//! during a hook (Stop, UserPromptSubmit), the run ends canceled whatever the hook answered.

use serde_json::json;
use spine_core::hooks::{HookContext, hook_fn};
use spine_protocol::hook::{
    HookOutput, PromptAction, Stop, StopAction, StopInput, UserPromptSubmit, UserPromptSubmitInput,
};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;

use crate::support::*;

#[tokio::test]
async fn cancellation_mid_tool_kills_it_and_answers_every_pending_call() {
    let h = Harness::new();
    let cancel = h.cancel.clone();
    let log = h.log.clone();
    tokio::spawn(async move {
        for _ in 0..500 {
            if log.take().iter().any(|l| l == "slow:start") {
                cancel.cancel();
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    let (outcome, script, log) = h
        .run(
            "go",
            vec![
                calls(&[
                    ("c1", "slow", json!({})),
                    ("c2", "value", json!({"value": 2})),
                    ("c3", "value", json!({"value": 3})),
                ]),
                text("never"),
            ],
        )
        .await;
    assert_eq!(outcome.subtype, RunSubtype::Canceled);
    assert_eq!(log.take(), vec!["slow:start", "slow:killed"]);
    let r = results(&outcome.messages);
    assert_eq!(r.len(), 3);
    assert!(r.iter().all(|t| t.error_code == Some(ErrorCode::Canceled)), "{r:?}");
    assert_eq!(script.requests().len(), 1);
}

#[tokio::test]
async fn cancellation_during_a_stop_hook_ends_the_run_canceled_not_successful() {
    let mut h = Harness::new();
    h.hooks.on::<Stop>(
        "slow-verifier",
        hook_fn(|c: &HookContext, _i: &StopInput| {
            // Ctrl-C arrives while the Stop hook runs; the hook still answers "allow".
            c.cancel.cancel();
            Ok(HookOutput::new(StopAction::default()))
        }),
    );
    let (outcome, _script, _log) = h.run("go", vec![text("done")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Canceled);
}

#[tokio::test]
async fn cancellation_during_a_user_prompt_submit_hook_ends_the_run_before_any_model_request() {
    let mut h = Harness::new();
    h.hooks.on::<UserPromptSubmit>(
        "slow-gate",
        hook_fn(|c: &HookContext, _i: &UserPromptSubmitInput| {
            c.cancel.cancel();
            Ok(HookOutput::new(PromptAction::default()))
        }),
    );
    let (outcome, script, _log) = h.run("go", vec![text("never")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Canceled);
    assert!(script.requests().is_empty(), "no model request after the cancellation");
}
