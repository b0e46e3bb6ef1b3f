//! The engine: concurrent groups merge in configuration order, background hooks, `if`, dedup.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use spine_core::hooks::{GroupMode, HookContext, HookGroup, HookSpec, Matcher, async_hook_fn, hook_fn};
use spine_core::permission::PermissionRule;
use spine_protocol::hook::{
    HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput, PromptAction, UserPromptSubmit, UserPromptSubmitInput,
};
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
