//! The loop: max_turns, lifecycle events, transcript, trace, model errors.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use spine_core::hooks::{HookContext, hook_fn};
use spine_protocol::hook::{
    HookOutput, Observe, PostToolUse, PostToolUseAction, PostToolUseInput, SessionEnd, SessionEndInput, SessionStart,
    SessionStartAction, SessionStartInput,
};
use spine_protocol::run::RunSubtype;
use spine_protocol::trace::TraceRecord;

use crate::support::*;

#[tokio::test]
async fn max_turns_ends_the_run_with_error_max_turns_and_a_paired_history() {
    let mut h = Harness::new();
    h.max_turns = 2;
    let looping = (0..5).map(|i| calls(&[(&*format!("c{i}"), "value", json!({"value": i}))])).collect();
    let (outcome, script, _log) = h.run("go", looping).await;
    assert_eq!(outcome.subtype, RunSubtype::ErrorMaxTurns);
    assert_eq!(outcome.num_turns, 2);
    assert_eq!(script.requests().len(), 2);
    assert_eq!(results(&outcome.messages).len(), 2, "both calls answered before stopping");
}

#[tokio::test]
async fn session_start_and_end_fire_once_with_their_source_and_reason() {
    let mut h = Harness::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    h.hooks.on::<SessionStart>(
        "start",
        hook_fn(move |_c: &HookContext, i: &SessionStartInput| {
            s.lock().expect("seen").push(format!("start:{}", i.source.as_str()));
            Ok(HookOutput::new(SessionStartAction::context("project uses tabs")))
        }),
    );
    let s = Arc::clone(&seen);
    h.hooks.on::<SessionEnd>(
        "end",
        hook_fn(move |_c: &HookContext, i: &SessionEndInput| {
            s.lock().expect("seen").push(format!("end:{}", i.reason.as_str()));
            Ok(HookOutput::new(Observe))
        }),
    );
    let (outcome, script, _log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    assert_eq!(*seen.lock().expect("seen"), vec!["start:startup", "end:completed"]);
    assert_eq!(roles(&script.requests()[0]), vec!["system", "user", "context:UserPromptSubmit"]);
    assert_eq!(outcome.subtype, RunSubtype::Success);
}

#[tokio::test]
async fn the_transcript_is_flushed_before_each_hook_fires() {
    let mut h = Harness::new();
    let seen = Arc::new(Mutex::new(String::new()));
    let s = Arc::clone(&seen);
    h.hooks.on::<PostToolUse>(
        "reader",
        hook_fn(move |c: &HookContext, _i: &PostToolUseInput| {
            *s.lock().expect("seen") = std::fs::read_to_string(&c.session.transcript_path).unwrap_or_default();
            Ok(HookOutput::new(PostToolUseAction::default()))
        }),
    );
    let _ = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))]), text("ok")]).await;
    let transcript = seen.lock().expect("seen").clone();
    let lines: Vec<Value> = transcript.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert!(
        lines.iter().any(|l| l["type"] == "assistant" && l["message"]["content"][0]["id"] == "c1"),
        "the turn that made the call is on disk: {transcript}"
    );
}

#[tokio::test]
async fn each_tool_call_has_one_decision_record_and_stage_entries() {
    let h = Harness::new();
    let (outcome, _s, _log) =
        h.run("go", vec![calls(&[("c1", "value", json!({"value": 1})), ("c2", "nope", json!({}))]), text("ok")]).await;
    let entries = outcome.trace.entries();
    let decisions: Vec<(String, String)> = entries
        .iter()
        .filter_map(|e| match &e.record {
            TraceRecord::ToolDecision(d) => Some((d.tool_use_id.clone(), d.outcome.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(decisions, vec![("c1".to_owned(), "executed".to_owned()), ("c2".to_owned(), "invalid".to_owned())]);
    assert_eq!(
        outcome.trace.stage_names(),
        vec![
            "prepare_turn",
            "compact_context",
            "review_tool_call",
            "execute",
            "project_tool_result",
            "prepare_turn",
            "compact_context",
            "finalize_output"
        ]
    );
}

#[tokio::test]
async fn a_model_error_after_a_tool_round_fails_the_run_with_a_paired_history() {
    let h = Harness::new();
    let (outcome, _s, _log) = h.run("go", vec![calls(&[("c1", "value", json!({"value": 1}))])]).await;
    assert_eq!(outcome.subtype, RunSubtype::ErrorDuringExecution);
    assert!(outcome.result.contains("script exhausted"), "{}", outcome.result);
    assert_eq!(results(&outcome.messages).len(), 1);
}

#[tokio::test]
async fn duplicate_empty_and_reused_call_ids_get_unique_ids_before_anything_runs() {
    let h = Harness::new();
    let replies = vec![
        calls(&[
            ("dup", "value", json!({"value": 1})),
            ("dup", "value", json!({"value": 2})),
            ("", "value", json!({"value": 3})),
        ]),
        calls(&[("dup", "value", json!({"value": 4}))]),
        text("done"),
    ];
    let (outcome, script, _log) = h.run("go", replies).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    let ids: Vec<String> = results(&outcome.messages).iter().map(|r| r.tool_call_id.clone()).collect();
    assert_eq!(ids, ["dup", "spine_1_1", "spine_1_2", "spine_2_0"]);
    let contents: Vec<String> = results(&outcome.messages).iter().map(|r| r.content.clone()).collect();
    assert_eq!(contents, ["value=1", "value=2", "value=3", "value=4"], "each call ran exactly once");
    spine_protocol::pairing::validate_pairing(&outcome.messages).expect("paired");
    assert_eq!(script.requests().len(), 3);
    let renamed = outcome
        .trace
        .entries()
        .iter()
        .filter(|e| matches!(&e.record, TraceRecord::Warning(w) if w.message.contains("renamed")))
        .count();
    assert_eq!(renamed, 3);
}
