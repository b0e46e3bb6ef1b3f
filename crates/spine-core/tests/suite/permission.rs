//! Hooks suggest, the policy decides; approval and handler see the same frozen arguments.

use std::sync::Arc;

use serde_json::json;
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::permission::Approval;
use spine_protocol::hook::{
    HookOutput, PermissionRequest, PermissionRequestAction, PermissionRequestInput, PreToolUse, PreToolUseAction,
    PreToolUseInput,
};
use spine_protocol::permission::{PermissionMode, PermissionSuggestion};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;
use spine_protocol::trace::TraceRecord;

use crate::support::*;

fn suggest(h: &mut Harness, id: &'static str, s: PermissionSuggestion) {
    h.hooks.on::<PreToolUse>(
        id,
        hook_fn(move |_c: &HookContext, _i: &PreToolUseInput| {
            Ok(HookOutput::new(PreToolUseAction::suggest(s.clone())))
        }),
    );
}

fn approver(h: &Harness, answer: Approval) -> Arc<RecordingApprover> {
    Arc::new(RecordingApprover { seen: Default::default(), answer, log: h.log.clone() })
}

#[tokio::test]
async fn policy_deny_beats_hook_allow() {
    let mut h = Harness::new();
    h.deny = vec!["value"];
    suggest(&mut h, "allow", PermissionSuggestion::Allow { reason: None });
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    let r = &results(&outcome.messages)[0];
    assert_eq!(r.content, "Error [permission_denied]: denied by rule value");
    assert!(log.take().is_empty());
}

#[tokio::test]
async fn ask_rule_still_asks_after_hook_allow() {
    let mut h = Harness::new();
    h.ask = vec!["value"];
    suggest(&mut h, "allow", PermissionSuggestion::Allow { reason: None });
    let a = approver(&h, Approval::Allow);
    h.approver = a.clone();
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(log.take(), vec!["approver:value", "handler:value:1"]);
    assert_eq!(results(&outcome.messages)[0].content, "value=1");
}

#[tokio::test]
async fn hook_allow_skips_the_default_ask() {
    let mut h = Harness::new();
    suggest(&mut h, "allow", PermissionSuggestion::Allow { reason: None });
    let a = approver(&h, Approval::Deny { reason: "nope".into() });
    h.approver = a;
    let (_outcome, _s, log) = h.run("go", vec![calls(&[("c1", "write_value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(log.take(), vec!["handler:write_value:1"], "no approval prompt");
}

#[tokio::test]
async fn strongest_suggestion_wins_allow_ask_deny_gives_deny() {
    let mut h = Harness::new();
    suggest(&mut h, "a", PermissionSuggestion::Allow { reason: None });
    suggest(&mut h, "b", PermissionSuggestion::Ask { reason: None });
    suggest(&mut h, "c", PermissionSuggestion::Deny { reason: Some("hook c says no".into()) });
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(results(&outcome.messages)[0].content, "Error [permission_denied]: hook c says no");
    assert!(log.take().is_empty());
    let record = outcome.trace.entries().into_iter().find_map(|e| match e.record {
        TraceRecord::ToolDecision(d) => Some(d),
        _ => None,
    });
    let record = record.expect("one decision record");
    assert_eq!(record.pre_tool_use.iter().map(|s| s.decision.as_str()).collect::<Vec<_>>(), ["allow", "ask", "deny"]);
    assert_eq!(record.outcome, "denied");
}

#[tokio::test]
async fn approval_and_handler_see_the_same_frozen_rewrite() {
    let mut h = Harness::new();
    let update = json!({"value": 2}).as_object().cloned().expect("obj");
    h.hooks.on::<PreToolUse>(
        "rewrite",
        hook_fn(move |_c: &HookContext, _i: &PreToolUseInput| {
            Ok(HookOutput::new(PreToolUseAction::rewrite(update.clone())))
        }),
    );
    let a = approver(&h, Approval::Allow);
    h.approver = a.clone();
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "write_value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(a.seen.lock().expect("seen").clone(), vec![json!({"value": 2})]);
    assert_eq!(log.take(), vec!["approver:write_value", "handler:write_value:2"]);
    assert_eq!(results(&outcome.messages)[0].content, "value=2");
}

#[tokio::test]
async fn ask_without_an_approver_fails_closed() {
    let h = Harness::new();
    let (outcome, _s, log) = h.run("go", vec![calls(&[("c1", "write_value", json!({"value": 1}))]), text("ok")]).await;
    let r = &results(&outcome.messages)[0];
    assert_eq!(r.error_code, Some(ErrorCode::PermissionDenied));
    assert!(r.content.contains("non-interactive"), "{}", r.content);
    assert!(log.take().is_empty());
}

#[tokio::test]
async fn permission_request_hook_answers_in_place_of_the_approver() {
    let mut h = Harness::new();
    h.hooks.on::<PermissionRequest>(
        "gate",
        hook_fn(|_c: &HookContext, i: &PermissionRequestInput| {
            Ok(HookOutput::new(if i.tool_input["value"] == 1 {
                PermissionRequestAction::Allow { updated_input: None, updated_permissions: Vec::new() }
            } else {
                PermissionRequestAction::Deny { message: "only value 1".into() }
            }))
        }),
    );
    let a = approver(&h, Approval::Deny { reason: "approver should not be asked".into() });
    h.approver = a;
    let (outcome, _s, log) = h
        .run(
            "go",
            vec![
                calls(&[("c1", "write_value", json!({"value": 1})), ("c2", "write_value", json!({"value": 2}))]),
                text("ok"),
            ],
        )
        .await;
    let r = results(&outcome.messages);
    assert_eq!(r[0].content, "value=1");
    assert_eq!(r[1].content, "Error [permission_denied]: only value 1");
    assert_eq!(log.take(), vec!["handler:write_value:1"]);
}

#[tokio::test]
async fn plan_mode_denies_a_write_even_with_hook_allow() {
    let mut h = Harness::new();
    h.mode = PermissionMode::Plan;
    suggest(&mut h, "allow", PermissionSuggestion::Allow { reason: None });
    let (outcome, _s, _log) = h.run("go", vec![calls(&[("c1", "write_value", json!({"value": 1}))]), text("ok")]).await;
    assert!(results(&outcome.messages)[0].content.starts_with("Error [permission_denied]: plan mode"));
}

#[tokio::test]
async fn defer_ends_the_run_with_the_call_pending_and_resume_fires_pre_tool_use_again() {
    let mut h = Harness::new();
    suggest(&mut h, "defer", PermissionSuggestion::Defer);
    let (outcome, script, _log) =
        h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("unused")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Deferred);
    let call = outcome.deferred.clone().expect("pending call");
    assert_eq!(call.id, "c1");
    assert_eq!(script.requests().len(), 1);
    assert!(results(&outcome.messages).is_empty(), "the deferred call has no result yet");

    // Resume: PreToolUse fires again for the pending call, now allowed.
    let mut h2 = Harness::new();
    let log = h2.log.clone();
    h2.hooks.on::<PreToolUse>(
        "resume",
        hook_fn(move |_c: &HookContext, i: &PreToolUseInput| {
            log.push(format!("pre:{}", i.tool_use_id));
            Ok(HookOutput::new(PreToolUseAction::suggest(PermissionSuggestion::Allow { reason: None })))
        }),
    );
    let history: Vec<_> = outcome
        .messages
        .into_iter()
        .filter(|m| !matches!(m, spine_protocol::message::Message::System { .. }))
        .collect();
    let model = Script::new(vec![text("done")]);
    let (resumed, log) = h2.run_with("", model, Some(call), history).await;
    assert_eq!(resumed.subtype, RunSubtype::Success);
    assert_eq!(log.take(), vec!["pre:c1", "handler:value:1"]);
    assert_eq!(results(&resumed.messages)[0].content, "value=1");
}

#[tokio::test]
async fn a_permission_request_allow_adds_its_rules_for_the_session_and_is_offered_the_covering_rule() {
    use spine_protocol::permission_update::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};
    let mut h = Harness::new();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let asked = Arc::clone(&seen);
    h.hooks.on::<PermissionRequest>(
        "remember",
        hook_fn(move |_c: &HookContext, i: &PermissionRequestInput| {
            asked.lock().expect("lock").push(i.permission_suggestions.clone());
            let updates = vec![PermissionUpdate::AddRules {
                rules: vec![RuleValue::from_rule("write_value")],
                behavior: RuleBehavior::Allow,
                destination: UpdateDestination::Session,
            }];
            Ok(HookOutput::new(PermissionRequestAction::Allow { updated_input: None, updated_permissions: updates }))
        }),
    );
    let replies = vec![
        calls(&[("c1", "write_value", json!({"value": 1}))]),
        calls(&[("c2", "write_value", json!({"value": 2}))]),
        text("ok"),
    ];
    let (outcome, _s, log) = h.run("go", replies).await;
    assert_eq!(log.take(), vec!["handler:write_value:1", "handler:write_value:2"]);
    let offered = seen.lock().expect("lock").clone();
    assert_eq!(offered.len(), 1, "the second call is allowed by the rule the hook added");
    let expected = PermissionUpdate::AddRules {
        rules: vec![RuleValue::from_rule("write_value")],
        behavior: RuleBehavior::Allow,
        destination: UpdateDestination::LocalSettings,
    };
    assert_eq!(offered[0], vec![expected]);
    assert!(outcome.subtype == RunSubtype::Success);
}
