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

/// A tool with a time limit that waits for ever: it stops when its token fires, or ignores it.
struct Hangs {
    name: &'static str,
    heeds_cancel: bool,
    log: Log,
}

#[async_trait::async_trait]
impl spine_core::tool::Tool for Hangs {
    fn spec(&self) -> spine_protocol::tool::ToolSpec {
        spine_protocol::tool::ToolSpec {
            name: self.name.into(),
            description: "hangs".into(),
            input_schema: json!({"type": "object"}),
        }
    }
    fn effect(&self) -> spine_protocol::tool::Effect {
        spine_protocol::tool::Effect::Read
    }
    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_millis(200))
    }
    async fn execute(
        &self,
        _a: &serde_json::Map<String, serde_json::Value>,
        ctx: &spine_core::tool::ToolContext,
    ) -> Result<serde_json::Value, spine_protocol::tool::ToolError> {
        self.log.push(format!("{}:start", self.name));
        if self.heeds_cancel {
            ctx.cancel.cancelled().await;
            self.log.push(format!("{}:stopped", self.name));
            Err(spine_protocol::tool::ToolError::new(ErrorCode::Canceled, "stopped"))
        } else {
            std::future::pending().await
        }
    }
}

#[tokio::test]
async fn a_call_past_its_tools_time_limit_is_stopped_with_timeout_and_the_run_goes_on() {
    let mut h = Harness::new();
    h.tools.register(Hangs { name: "heeds", heeds_cancel: true, log: h.log.clone() });
    h.tools.register(Hangs { name: "deaf", heeds_cancel: false, log: h.log.clone() });
    h.allow = vec!["heeds", "deaf", "value"];
    let run = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        h.run(
            "go",
            vec![
                calls(&[("c1", "heeds", json!({})), ("c2", "deaf", json!({})), ("c3", "value", json!({"value": 3}))]),
                text("done"),
            ],
        ),
    )
    .await;
    let (outcome, script, log) = run.expect("the run ends although its tools hang");
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    let r = results(&outcome.messages);
    assert_eq!(r[0].error_code, Some(ErrorCode::Timeout), "{}", r[0].content);
    assert!(r[0].content.contains("heeds timed out after 200 ms"), "{}", r[0].content);
    assert_eq!(r[1].error_code, Some(ErrorCode::Timeout), "{}", r[1].content);
    assert_eq!(r[2].error_code, None, "{}", r[2].content);
    let log = log.take();
    assert!(log.iter().any(|l| l == "heeds:stopped"), "the call's token fired: {log:?}");
    assert_eq!(script.requests().len(), 2);
}
