//! The pipeline stages through the runner: compaction (sandwich, summarize, fallback,
//! PreCompact block, SessionStart(compact)), review classes, reports of a run.

use std::sync::{Arc, Mutex};

use serde_json::json;
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::registry::ToolRegistryBuilder;
use spine_core::reports::{MemorySink, ReportCollector, WorkIdentity};
use spine_core::stages::compact_context::CompactStrategy;
use spine_core::stages::review_tool_call::{ReviewError, Visibility, review_tool_call};
use spine_core::trace::Trace;
use spine_protocol::hook::{
    HookOutput, PreCompact, PreCompactAction, PreCompactInput, SessionStart, SessionStartAction, SessionStartInput,
};
use spine_protocol::message::Message;
use spine_protocol::report::{FailureKind, ReportBody};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{Classification, Effect, ErrorCode};
use spine_protocol::trace::TraceRecord;

use crate::support::*;

fn compacting(h: &mut Harness, strategy: CompactStrategy) {
    h.configure = Some(Box::new(move |c| {
        c.compaction_threshold = Some(40);
        c.compaction_strategy = strategy;
        c.turn.agent_prompt = Some("short".into());
        c.turn.profile = "worker".into();
    }));
}

fn long_round(i: usize) -> spine_protocol::message::AssistantMessage {
    calls(&[(&*format!("c{i}"), "value", json!({"value": i}))])
}

fn compaction_fields(trace: &Trace) -> Vec<serde_json::Map<String, serde_json::Value>> {
    trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::Stage(s) if s.hook == "compact_context" && s.fields["compacted"] == true => Some(s.fields),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn sandwich_compaction_keeps_pairs_whole_and_fires_pre_post_compact_and_session_start() {
    let mut h = Harness::new();
    compacting(&mut h, CompactStrategy::Sandwich);
    let sources = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&sources);
    h.hooks.on::<SessionStart>(
        "ss",
        hook_fn(move |_c: &HookContext, i: &SessionStartInput| {
            seen.lock().expect("seen").push(i.source.as_str().to_owned());
            Ok(HookOutput::new(SessionStartAction::default()))
        }),
    );
    let long = "word ".repeat(30);
    let (outcome, script, _log) = h.run(&long, vec![long_round(1), long_round(2), text("done")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success);
    let compactions = compaction_fields(&outcome.trace);
    assert!(!compactions.is_empty(), "the context passed 40 tokens and was compacted");
    assert_eq!(compactions[0]["strategy"], "sandwich");
    assert_eq!(script.requests()[1].len(), 4, "four messages cannot shrink: not compacted yet");
    let after = &script.requests()[2];
    assert_eq!(after[1], Message::user("Earlier context compacted for script."));
    assert!(matches!(after[2], Message::Assistant(_)), "the tail starts at the call, not at its result");
    assert_eq!(*sources.lock().expect("sources"), vec!["startup", "compact"]);
}

#[tokio::test]
async fn summarize_asks_the_model_once_and_keeps_the_summary_as_the_note() {
    let mut h = Harness::new();
    compacting(&mut h, CompactStrategy::Summarize);
    let long = "word ".repeat(30);
    let (outcome, script, _log) = h
        .run(
            &long,
            vec![long_round(1), long_round(2), text("The user asked about values; value 1 was read."), text("done")],
        )
        .await;
    assert_eq!(outcome.result, "done");
    let requests = script.requests();
    let summary_request = &requests[2];
    assert_eq!(summary_request.last(), Some(&Message::user(spine_core::stages::compact_context::SUMMARY_INSTRUCTION)));
    assert!(
        summary_request.iter().all(|m| !matches!(m, Message::Tool(t) if t.tool_call_id == "c2")),
        "only the dropped middle"
    );
    let note = requests[3][1].text().expect("note");
    assert!(note.contains("The user asked about values; value 1 was read."), "{note}");
    assert_eq!(compaction_fields(&outcome.trace)[0]["strategy"], "summarize");
    // The summary request counts towards the run's usage like any other request.
    assert_eq!(outcome.model_usage["script"].requests as usize, requests.len());
}

#[tokio::test]
async fn a_failed_summary_falls_back_to_sandwich_and_is_recorded() {
    let mut h = Harness::new();
    compacting(&mut h, CompactStrategy::Summarize);
    let long = "word ".repeat(30);
    let replies = vec![long_round(1), long_round(2), calls(&[("bad", "value", json!({"value": 9}))]), text("done")];
    let (outcome, _script, _log) = h.run(&long, replies).await;
    let fields = &compaction_fields(&outcome.trace)[0];
    assert_eq!(fields["strategy"], "sandwich");
    assert_eq!(fields["fallback"]["from"], "summarize");
    assert!(fields["fallback"]["reason"].as_str().expect("reason").contains("no text"));
}

#[tokio::test]
async fn a_pre_compact_block_keeps_the_context_as_it_is() {
    let mut h = Harness::new();
    compacting(&mut h, CompactStrategy::Sandwich);
    h.hooks.on::<PreCompact>(
        "keep",
        hook_fn(|_c: &HookContext, _i: &PreCompactInput| {
            Ok(HookOutput::new(PreCompactAction::Block { reason: "keep everything".into() }))
        }),
    );
    let long = "word ".repeat(30);
    let (outcome, script, _log) = h.run(&long, vec![long_round(1), long_round(2), text("done")]).await;
    assert!(compaction_fields(&outcome.trace).is_empty());
    assert_eq!(script.requests()[2].len(), 6, "system, user, two rounds: nothing dropped");
    assert!(outcome.trace.entries().iter().any(
        |e| matches!(&e.record, TraceRecord::Warning(w) if w.message.contains("compaction blocked by PreCompact hook `keep`"))
    ));
}

#[test]
fn review_checks_the_registry_first_then_visibility_with_their_classes() {
    let log = Log::default();
    let mut b = ToolRegistryBuilder::new();
    b.register(ValueTool { name: "calculator", effect: Effect::Read, log });
    let tools = b.build().expect("registry");
    let trace = Trace::default();
    let hidden = Visibility::Only(vec!["compact_context".into()]);
    let unknown = review_tool_call(&tools, &hidden, "workspace_delete", None, &trace).expect_err("unknown");
    assert!(matches!(unknown, ReviewError::Unsupported(_)) && unknown.to_string().contains("workspace_delete"));
    let e = unknown.to_tool_error();
    assert_eq!((e.code, e.code.classification()), (ErrorCode::UnsupportedTool, Classification::Semantic));
    let masked = review_tool_call(&tools, &hidden, "calculator", None, &trace).expect_err("masked");
    assert!(masked.to_string().contains("calculator") && masked.to_string().contains("not visible"));
    let e = masked.to_tool_error();
    assert_eq!((e.code, e.code.classification()), (ErrorCode::ToolNotAllowed, Classification::Authorization));
    assert!(review_tool_call(&tools, &Visibility::All, "calculator", None, &trace).is_ok());
    assert_eq!(trace.stage_names(), vec!["review_tool_call"; 3]);
}

fn collector() -> (Arc<ReportCollector>, Arc<MemorySink>) {
    let sink = Arc::new(MemorySink::default());
    let identity = WorkIdentity {
        mailbox_item_id: "item-1".into(),
        logical_work_id: "work-1".into(),
        attempt_no: 1,
        ..Default::default()
    };
    (Arc::new(ReportCollector::new(identity, sink.clone())), sink)
}

fn methods(sink: &MemorySink) -> Vec<&'static str> {
    sink.0.lock().expect("sink").iter().map(|r| r.body.method_id()).collect()
}

#[tokio::test]
async fn a_run_reports_started_progress_and_complete_with_its_tool_invocations() {
    let mut h = Harness::new();
    let (c, sink) = collector();
    h.reports = Some(c);
    let (_outcome, _s, _log) = h.run("go", vec![long_round(4), text("value is 4")]).await;
    assert_eq!(methods(&sink), vec!["execution_started", "execution_progress", "execution_complete"]);
    let reports = sink.0.lock().expect("sink").clone();
    let ReportBody::ExecutionComplete { terminal_payload } = &reports[2].body else { panic!("complete") };
    assert_eq!(terminal_payload.output, "value is 4");
    assert_eq!(terminal_payload.tool_invocations[0].response_payload.as_ref().expect("resp")["content"], "value=4");
}

#[tokio::test]
async fn a_failed_run_reports_execution_fail_with_the_failure_payload() {
    let mut h = Harness::new();
    let (c, sink) = collector();
    h.reports = Some(c);
    let (_outcome, _s, _log) = h.run("go", vec![calls(&[("c1", "nope", json!({}))])]).await;
    let reports = sink.0.lock().expect("sink").clone();
    let ReportBody::ExecutionFail { terminal_payload } = &reports.last().expect("last").body else { panic!("fail") };
    assert_eq!(terminal_payload.failure.failure_kind, FailureKind::ModelError);
    assert_eq!((terminal_payload.failure.logical_work_id.as_str(), terminal_payload.failure.attempt_no), ("work-1", 1));
    assert_eq!(terminal_payload.tool_invocations[0].error_payload.as_ref().expect("err").code, ErrorCode::UnknownTool);
}

#[tokio::test]
async fn a_canceled_run_reports_execution_canceled() {
    let mut h = Harness::new();
    let (c, sink) = collector();
    h.reports = Some(c);
    h.cancel.cancel();
    let (outcome, _s, _log) = h.run("go", vec![text("never")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Canceled);
    assert_eq!(methods(&sink).last(), Some(&"execution_canceled"));
}
