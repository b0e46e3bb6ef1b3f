//! The engine: concurrent groups merge in configuration order, background hooks (and hooks that
//! go to the background and wake the model), `if`, dedup.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use spine_core::hooks::{
    GroupMode, Hook, HookContext, HookError, HookGroup, HookSpec, Late, Matcher, Started, Wake, async_hook_fn, hook_fn,
};
use spine_core::permission::PermissionRule;
use spine_protocol::hook::{
    HookOutput, PostToolUse, PostToolUseAction, PostToolUseInput, PreToolUse, PreToolUseAction, PreToolUseInput,
    PromptAction, Stop, StopInput, UserPromptSubmit, UserPromptSubmitInput,
};
use spine_protocol::message::Message;
use spine_protocol::trace::TraceRecord;

use crate::support::*;

fn delayed_rewrite(log: Log, id: &'static str, delay_ms: u64, value: i64) -> HookSpec<PreToolUse> {
    HookSpec::new(
        id,
        async_hook_fn(move |_c: HookContext, i: PreToolUseInput| {
            let log = log.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                log.push(format!("{id} saw {} and finished", i.tool_input));
                Ok(HookOutput::new(PreToolUseAction::rewrite(
                    json!({"value": value}).as_object().cloned().unwrap_or_default(),
                )))
            }
        }),
    )
}

#[tokio::test]
async fn concurrent_group_answers_merge_in_configuration_order_not_completion_order() {
    let mut h = Harness::new();
    let slow_first = delayed_rewrite(h.log.clone(), "slow", 80, 10);
    let fast_second = delayed_rewrite(h.log.clone(), "fast", 0, 20);
    h.hooks.add_group::<PreToolUse>(HookGroup {
        matcher: Matcher::All,
        mode: GroupMode::Concurrent,
        hooks: vec![slow_first, fast_second],
    });
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    let log = log.take();
    assert_eq!(
        log[..2],
        [r#"fast saw {"value":1} and finished"#.to_owned(), r#"slow saw {"value":1} and finished"#.to_owned()],
        "both ran on the original input; fast finished first"
    );
    assert_eq!(results(&outcome.messages)[0].content, "value=20", "the later hook in configuration order wins");
}

/// Records the hooks' started and ended events, in order.
#[derive(Default)]
struct HookEvents(std::sync::Mutex<Vec<String>>);

impl spine_core::observer::RunObserver for HookEvents {
    fn on_event(&self, event: &spine_core::observer::RunEvent<'_>) {
        use spine_core::observer::RunEvent;
        let line = match event {
            RunEvent::HookStarted { hook_id, .. } => format!("started {hook_id}"),
            RunEvent::HookEnded { hook_id, .. } => format!("ended {hook_id}"),
            _ => return,
        };
        self.0.lock().expect("lock").push(line);
    }
}

#[tokio::test]
async fn every_hook_of_a_concurrent_group_is_announced_before_any_ends_even_one_answering_at_once() {
    let mut h = Harness::new();
    let at_once = |id: &'static str| {
        HookSpec::new(
            id,
            hook_fn(|_c: &HookContext, _i: &PreToolUseInput| Ok(HookOutput::new(PreToolUseAction::default()))),
        )
    };
    h.hooks.add_group::<PreToolUse>(HookGroup {
        matcher: Matcher::All,
        mode: GroupMode::Concurrent,
        hooks: vec![at_once("first"), at_once("second")],
    });
    let events = Arc::new(HookEvents::default());
    h.observer = Some(Arc::clone(&events) as Arc<dyn spine_core::observer::RunObserver>);
    h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    let events = events.0.lock().expect("lock").clone();
    assert_eq!(events, ["started first", "started second", "ended first", "ended second"]);
}

#[tokio::test]
async fn in_a_concurrent_group_an_earlier_block_discards_later_answers() {
    let mut h = Harness::new();
    let blocker = HookSpec::new(
        "blocker",
        async_hook_fn(|_c: HookContext, _i: PreToolUseInput| async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            Ok(HookOutput::new(PreToolUseAction::block("blocked first")))
        }),
    );
    let rewriter = delayed_rewrite(h.log.clone(), "rewriter", 0, 5);
    h.hooks.add_group::<PreToolUse>(HookGroup {
        matcher: Matcher::All,
        mode: GroupMode::Concurrent,
        hooks: vec![blocker, rewriter],
    });
    let (outcome, _s, _log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(results(&outcome.messages)[0].content, "Error [hook_blocked]: blocked first");
    let applied: Vec<(String, bool)> = outcome
        .trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::Hook(h) => Some((h.hook_id, h.applied)),
            _ => None,
        })
        .collect();
    assert_eq!(applied, vec![("blocker".to_owned(), true), ("rewriter".to_owned(), false)]);
}

#[tokio::test]
async fn matchers_and_if_rules_select_hooks_and_duplicates_run_once() {
    let mut h = Harness::new();
    let log = h.log.clone();
    let mk = move |id: &'static str| {
        let log = log.clone();
        HookSpec::new(
            id,
            hook_fn(move |_c: &HookContext, i: &PreToolUseInput| {
                log.push(format!("{id}:{}", i.tool_name));
                Ok(HookOutput::new(PreToolUseAction::default()))
            }),
        )
    };
    h.hooks.add::<PreToolUse>(Matcher::parse("write_.*").expect("regex"), mk("regex"));
    h.hooks.add::<PreToolUse>(Matcher::All, mk("only_if").when(PermissionRule::parse("value").expect("rule")));
    let mut dup_a = mk("dup");
    dup_a.dedup_key = Some("cmd".into());
    let mut dup_b = mk("dup-again");
    dup_b.dedup_key = Some("cmd".into());
    h.hooks.add_group::<PreToolUse>(HookGroup {
        matcher: Matcher::All,
        mode: GroupMode::Concurrent,
        hooks: vec![dup_a, dup_b],
    });
    h.allow = vec!["write_value"];
    let (_outcome, _s, log) = h
        .run(
            "go",
            vec![
                calls(&[("c1", "value", json!({"value": 1})), ("c2", "write_value", json!({"value": 2}))]),
                text("ok"),
            ],
        )
        .await;
    assert_eq!(
        log.take(),
        vec![
            "only_if:value",
            "dup:value",
            "handler:value:1",
            "regex:write_value",
            "dup:write_value",
            "handler:write_value:2"
        ]
    );
}

#[tokio::test]
async fn background_hook_context_reaches_the_model_on_the_next_turn_and_its_decisions_are_ignored() {
    let mut h = Harness::new();
    let spec = HookSpec::new(
        "bg",
        hook_fn(|_c: &HookContext, _i: &UserPromptSubmitInput| {
            Ok(HookOutput::new(PromptAction::Block { reason: "ignored".into() }).with_system_message("background note"))
        }),
    )
    .background();
    h.hooks.add::<UserPromptSubmit>(Matcher::All, spec);
    let script =
        Script::with_delay(vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")], Duration::from_millis(50));
    let (outcome, _log) =
        h.run_with("go", Arc::clone(&script) as Arc<dyn spine_core::model::ModelClient>, None, vec![]).await;
    assert_eq!(outcome.result, "ok", "the block was ignored");
    let second = &script.requests()[1];
    assert!(second.iter().any(|m| m.text() == Some("background note")), "{:?}", roles(second));
}

/// A PostToolUse hook that goes to the background at once, blocks (ignored), and wakes the
/// model with `message` once `release` is notified.
struct Waker {
    release: Arc<tokio::sync::Notify>,
    message: &'static str,
}

#[async_trait::async_trait]
impl Hook<PostToolUse> for Waker {
    async fn call(&self, _c: &HookContext, _i: &PostToolUseInput) -> Result<HookOutput<PostToolUseAction>, HookError> {
        Ok(HookOutput::default())
    }

    async fn start(&self, _c: &HookContext, _i: &PostToolUseInput) -> Started<PostToolUseAction> {
        let release = Arc::clone(&self.release);
        let message = self.message;
        let answer = Box::pin(async move {
            release.notified().await;
            let wake = Wake { message: message.to_owned(), summary: "woken".to_owned() };
            let block = PostToolUseAction { block_reason: Some("ignored".into()), ..Default::default() };
            Late { result: Ok(HookOutput::new(block)), wake: Some(wake) }
        });
        Started::Background { answer, wakes: true }
    }
}

#[tokio::test]
async fn a_hook_that_goes_to_the_background_is_no_opinion_and_a_run_about_to_end_waits_for_its_wake() {
    let mut h = Harness::new();
    let release = Arc::new(tokio::sync::Notify::new());
    h.hooks.on::<PostToolUse>("waker", Waker { release: Arc::clone(&release), message: "fix the tests" });
    // Stop releases the waker: it can only wake the model after the run decided to end.
    let at_stop = Arc::clone(&release);
    h.hooks.on::<Stop>(
        "release",
        hook_fn(move |_c: &HookContext, _i: &StopInput| {
            at_stop.notify_one();
            Ok(HookOutput::default())
        }),
    );
    let (outcome, script, _log) =
        h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("done"), text("fixed")]).await;
    assert_eq!(results(&outcome.messages)[0].content, "value=1", "the background block is ignored");
    assert_eq!(outcome.result, "fixed", "the wake sent the loop on");
    let third = &script.requests()[2];
    assert!(third.iter().any(|m| matches!(m, Message::User { content, .. } if content == "fix the tests")));
    let wakes = outcome
        .trace
        .entries()
        .into_iter()
        .filter(|e| matches!(&e.record, TraceRecord::Hook(t) if t.hook_id == "waker" && t.decision == "wake"))
        .count();
    assert_eq!(wakes, 1);
}
