//! spine-otel's public API end to end: an [`Exporter`] started on an OTLP/HTTP endpoint of
//! 127.0.0.1, a run's trace entries and observer events fed to its [`RunSpans`], and the spans
//! read back from the `ExportTraceServiceRequest`s (protobuf) a receiver in the test got.

// Test targets link every dependency of the package; each one is used by the library or here.
#![allow(unused_crate_dependencies)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::{Span, span, status};
use prost::Message as _;
use serde_json::{Value, json};
use spine_core::observer::{RunEvent, RunObserver as _};
use spine_core::trace::TraceSink as _;
use spine_otel::config::Endpoint;
use spine_otel::{ContentCapture, ExportConfig, Exporter, Flushed, Protocol, RunInfo, TraceParent};
use spine_protocol::trace::TraceEntry;

/// An OTLP/HTTP receiver on 127.0.0.1: `POST /v1/traces` answers 200 and keeps the body.
struct Receiver {
    addr: std::net::SocketAddr,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
    _runtime: tokio::runtime::Runtime,
}

impl Receiver {
    fn start() -> Receiver {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("receiver runtime");
        let bodies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let kept = Arc::clone(&bodies);
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |body: axum::body::Bytes| {
                let kept = Arc::clone(&kept);
                async move {
                    kept.lock().expect("lock").push(body.to_vec());
                    ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
                }
            }),
        );
        let addr = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("addr");
            tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
            addr
        });
        Receiver { addr, bodies, _runtime: runtime }
    }

    /// An export configuration that sends here over HTTP/protobuf.
    fn config(&self, content: ContentCapture) -> ExportConfig {
        ExportConfig {
            endpoint: Endpoint::Url(format!("http://{}/v1/traces", self.addr)),
            protocol: Protocol::HttpProtobuf,
            content,
            default_service_name: "spine-otel-test".into(),
        }
    }

    fn requests(&self) -> Vec<ExportTraceServiceRequest> {
        let bodies = self.bodies.lock().expect("lock").clone();
        bodies.iter().map(|b| ExportTraceServiceRequest::decode(b.as_slice()).expect("an export request")).collect()
    }

    /// Every span received.
    fn spans(&self) -> Vec<Span> {
        self.requests()
            .into_iter()
            .flat_map(|r| r.resource_spans)
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
            .collect()
    }

    /// Everything received, decoded, as text.
    fn decoded_text(&self) -> String {
        self.requests().iter().map(|r| format!("{r:?}")).collect()
    }
}

/// An attribute value as JSON.
fn value(v: &AnyValue) -> Value {
    match &v.value {
        Some(any_value::Value::StringValue(s)) => json!(s),
        Some(any_value::Value::IntValue(i)) => json!(i),
        Some(any_value::Value::DoubleValue(d)) => json!(d),
        Some(any_value::Value::BoolValue(b)) => json!(b),
        Some(any_value::Value::ArrayValue(a)) => Value::Array(a.values.iter().map(value).collect()),
        other => json!(format!("{other:?}")),
    }
}

fn attrs(list: &[KeyValue]) -> HashMap<String, Value> {
    list.iter().map(|kv| (kv.key.clone(), kv.value.as_ref().map(value).unwrap_or(Value::Null))).collect()
}

fn attr(span: &Span, key: &str) -> Value {
    attrs(&span.attributes).remove(key).unwrap_or(Value::Null)
}

/// The one span named `name`.
fn one<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one `{name}` span among {:?}", spans.iter().map(|s| &s.name).collect::<Vec<_>>());
    found[0]
}

fn entry(seq: u64, t_us: u64, record: Value) -> Arc<TraceEntry> {
    let mut fields = record;
    fields["seq"] = json!(seq);
    fields["t_us"] = json!(t_us);
    Arc::new(serde_json::from_value(fields).expect("a trace entry"))
}

/// A small run: a stage, a model request answered on its second attempt with one tool call, the
/// call's PreToolUse hook, stages and decision record, then a failed Stop hook and the run's
/// usage.
fn small_run() -> Vec<Arc<TraceEntry>> {
    let source = "/p/.spine/settings.json hooks.PreToolUse[0].hooks[0]";
    vec![
        entry(0, 1_000, json!({"kind": "stage", "hook": "prepare_turn", "duration_us": 500, "messages": 2})),
        entry(
            1,
            2_000,
            json!({"kind": "model_attempt", "turn": 1, "attempt": 1, "duration_us": 400, "outcome": "retry",
                   "error_kind": "http 503", "wait_ms": 10}),
        ),
        entry(
            2,
            5_000,
            json!({"kind": "model_attempt", "turn": 1, "attempt": 2, "duration_us": 2_000, "outcome": "ok"}),
        ),
        entry(
            3,
            5_000,
            json!({"kind": "model", "turn": 1, "model": "claude-sonnet-4-5", "message_count": 2, "tool_calls": 1,
                   "duration_us": 4_000, "cost_usd": 0.25,
                   "usage": {"input_tokens": 120, "output_tokens": 30, "cache_creation_input_tokens": 0,
                             "cache_read_input_tokens": 100}}),
        ),
        entry(
            4,
            6_000,
            json!({"kind": "hook", "event": "PreToolUse", "hook_id": "guard", "source": source,
                   "tool_use_id": "call_1", "decision": "proceed", "applied": true, "duration_us": 300}),
        ),
        entry(
            5,
            7_000,
            json!({"kind": "stage", "hook": "review_tool_call", "tool_use_id": "call_1", "duration_us": 200}),
        ),
        entry(6, 8_500, json!({"kind": "stage", "hook": "execute", "tool_use_id": "call_1", "duration_us": 1_000})),
        entry(
            7,
            9_000,
            json!({"kind": "stage", "hook": "project_tool_result", "tool_use_id": "call_1", "duration_us": 100,
                   "content": "TOOL-OUTPUT-MARK"}),
        ),
        entry(
            8,
            9_500,
            json!({"kind": "tool_decision", "tool_use_id": "call_1", "tool_name": "read_file",
                   "arguments": {"path": "ARGUMENT-MARK"}, "pre_tool_use": [{"hook_id": "guard", "decision": "proceed"}],
                   "post_tool_use": [], "outcome": "executed"}),
        ),
        entry(
            9,
            10_000,
            json!({"kind": "hook", "event": "Stop", "hook_id": "stop-check", "source": "rust", "decision": "failed",
                   "applied": true, "duration_us": 100}),
        ),
        entry(
            10,
            11_000,
            json!({"kind": "run_usage", "total_cost_usd": 0.25,
                   "models": {"claude-sonnet-4-5": {"requests": 1, "requests_without_usage": 0, "cost_usd": 0.25,
                       "usage": {"input_tokens": 120, "output_tokens": 30, "cache_creation_input_tokens": 0,
                                 "cache_read_input_tokens": 100}}}}),
        ),
    ]
}

/// Runs `entries` through an exporter to `receiver` (with `info`), finishes the run and the
/// exporter, and returns what was received.
fn export(receiver: &Receiver, content: ContentCapture, info: RunInfo, entries: &[Arc<TraceEntry>]) -> Vec<Span> {
    let exporter = Exporter::start(&receiver.config(content)).expect("exporter");
    let run = exporter.run(info);
    run.on_event(&RunEvent::SessionStarted { session_id: "session-1", model: "claude-sonnet-4-5" });
    for entry in entries {
        run.record(entry);
    }
    run.finish();
    assert_eq!(exporter.finish(Duration::from_secs(20)), Flushed::Done, "the final flush reached the receiver");
    receiver.spans()
}

#[test]
fn a_run_is_one_invoke_agent_span_over_its_steps_and_a_tool_calls_steps_go_under_its_execute_tool_span() {
    let receiver = Receiver::start();
    let spans = export(&receiver, ContentCapture::Omit, RunInfo::default(), &small_run());
    let mut names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "chat claude-sonnet-4-5",
            "execute",
            "execute_tool read_file",
            "hook PreToolUse",
            "hook Stop",
            "invoke_agent",
            "prepare_turn",
            "project_tool_result",
            "review_tool_call",
        ]
    );
    let run = one(&spans, "invoke_agent");
    assert!(run.parent_span_id.is_empty(), "the run's span is a root without a traceparent");
    assert!(spans.iter().all(|s| s.trace_id == run.trace_id), "one trace");
    let tool = one(&spans, "execute_tool read_file");
    for name in ["prepare_turn", "chat claude-sonnet-4-5", "execute_tool read_file", "hook Stop"] {
        assert_eq!(one(&spans, name).parent_span_id, run.span_id, "`{name}` is a child of the run's span");
    }
    for name in ["hook PreToolUse", "review_tool_call", "execute", "project_tool_result"] {
        assert_eq!(one(&spans, name).parent_span_id, tool.span_id, "`{name}` is a child of its tool call's span");
    }
}

#[test]
fn span_times_come_from_the_entries_and_a_tool_call_spans_its_first_step_to_its_decision() {
    let receiver = Receiver::start();
    let spans = export(&receiver, ContentCapture::Omit, RunInfo::default(), &small_run());
    let run = one(&spans, "invoke_agent");
    let base = run.start_time_unix_nano;
    let at = |span: &Span| (span.start_time_unix_nano - base, span.end_time_unix_nano - base);
    // t_us is when a step ended, duration_us how long it took.
    assert_eq!(at(one(&spans, "prepare_turn")), (500_000, 1_000_000));
    assert_eq!(at(one(&spans, "chat claude-sonnet-4-5")), (1_000_000, 5_000_000));
    // From its PreToolUse hook's start (6,000 - 300 µs) to its decision record.
    assert_eq!(at(one(&spans, "execute_tool read_file")), (5_700_000, 9_500_000));
    // The run ends with its last entry.
    assert_eq!(at(run).1, 11_000_000);
}

#[test]
fn each_span_carries_the_genai_attributes_of_its_record() {
    let receiver = Receiver::start();
    let spans = export(&receiver, ContentCapture::Omit, RunInfo::default(), &small_run());

    let run = one(&spans, "invoke_agent");
    assert_eq!(attr(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(run, "gen_ai.provider.name"), "anthropic", "guessed from the model name");
    assert_eq!(attr(run, "gen_ai.conversation.id"), "session-1");
    assert_eq!(attr(run, "gen_ai.request.model"), "claude-sonnet-4-5");
    assert_eq!(attr(run, "gen_ai.usage.input_tokens"), 120, "the run's usage totals");
    assert_eq!(attr(run, "spine.cost_usd"), 0.25);

    let chat = one(&spans, "chat claude-sonnet-4-5");
    assert_eq!(chat.kind, span::SpanKind::Client as i32);
    assert_eq!(attr(chat, "gen_ai.operation.name"), "chat");
    assert_eq!(attr(chat, "spine.turn"), 1);
    assert_eq!(attr(chat, "gen_ai.usage.output_tokens"), 30);
    assert_eq!(attr(chat, "gen_ai.usage.cache_read.input_tokens"), 100);
    assert_eq!(attr(chat, "gen_ai.response.finish_reasons"), json!(["tool_calls"]));
    assert_eq!(attr(chat, "gen_ai.conversation.id"), "session-1");
    let attempts: Vec<HashMap<String, Value>> = chat.events.iter().map(|e| attrs(&e.attributes)).collect();
    assert!(chat.events.iter().all(|e| e.name == "spine.model.attempt"));
    assert_eq!(attempts.len(), 2, "each attempt is an event of its request's span");
    assert_eq!(
        (&attempts[0]["spine.attempt.outcome"], &attempts[0]["error.type"]),
        (&json!("retry"), &json!("http 503"))
    );
    assert_eq!(attempts[1]["spine.attempt.outcome"], "ok");

    let tool = one(&spans, "execute_tool read_file");
    assert_eq!(attr(tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(attr(tool, "gen_ai.tool.call.id"), "call_1");
    assert_eq!(attr(tool, "spine.decision.outcome"), "executed");
    assert_eq!(attr(tool, "spine.decision.pre_tool_use"), json!(["guard: proceed"]));
    assert!(tool.status.as_ref().is_none_or(|s| s.code != status::StatusCode::Error as i32));

    let hook = one(&spans, "hook PreToolUse");
    assert_eq!(attr(hook, "spine.hook.id"), "guard");
    assert_eq!(attr(hook, "spine.hook.source.file"), "/p/.spine/settings.json");
    assert_eq!(attr(hook, "spine.hook.source.path"), "hooks.PreToolUse[0].hooks[0]");
    assert_eq!(attr(hook, "gen_ai.tool.call.id"), "call_1");

    let stage = one(&spans, "prepare_turn");
    assert_eq!(attr(stage, "spine.stage.messages"), 2, "a stage's fields are `spine.stage.*` attributes");
}

#[test]
fn a_failed_hook_is_an_error_span() {
    let receiver = Receiver::start();
    let spans = export(&receiver, ContentCapture::Omit, RunInfo::default(), &small_run());
    let stop = one(&spans, "hook Stop");
    let status = stop.status.as_ref().expect("a status");
    assert_eq!(status.code, status::StatusCode::Error as i32);
    assert_eq!(status.message, "hook stop-check failed");
    assert_eq!(attr(stop, "spine.hook.decision"), "failed");
    assert_eq!(attr(stop, "spine.hook.source.file"), Value::Null, "a hook without a settings file");
}

#[test]
fn message_content_is_exported_only_with_the_opt_in() {
    let omitted = Receiver::start();
    export(&omitted, ContentCapture::Omit, RunInfo::default(), &small_run());
    let text = omitted.decoded_text();
    assert!(text.contains("execute_tool read_file"), "spans were exported");
    assert!(!text.contains("ARGUMENT-MARK"), "no tool argument without the opt-in");
    assert!(!text.contains("TOOL-OUTPUT-MARK"), "no tool output without the opt-in");

    let recorded = Receiver::start();
    let spans = export(&recorded, ContentCapture::Record, RunInfo::default(), &small_run());
    let text = recorded.decoded_text();
    assert!(text.contains("ARGUMENT-MARK"), "the decision record keeps the arguments with the opt-in");
    assert_eq!(attr(one(&spans, "project_tool_result"), "spine.stage.content"), "TOOL-OUTPUT-MARK");
}

#[test]
fn a_run_with_a_traceparent_joins_the_submitters_trace_as_a_child_of_its_span() {
    let receiver = Receiver::start();
    let parent: TraceParent =
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".parse().expect("a valid traceparent");
    let info = RunInfo {
        provider: Some("openai".into()),
        parent: Some(parent.clone()),
        attributes: vec![("spine.worker.item".into(), "item-7".into())],
    };
    let spans = export(&receiver, ContentCapture::Omit, info, &small_run());
    let run = one(&spans, "invoke_agent");
    assert_eq!(run.trace_id, parent.trace_id.to_bytes().to_vec());
    assert_eq!(run.parent_span_id, parent.parent_id.to_bytes().to_vec());
    assert!(spans.iter().all(|s| s.trace_id == run.trace_id), "every span of the run joins the trace");
    assert_eq!(attr(run, "gen_ai.provider.name"), "openai", "the run's provider wins over the guess");
    assert_eq!(attr(run, "spine.worker.item"), "item-7");
}

#[test]
fn a_tool_step_whose_call_never_got_a_decision_is_exported_under_the_run_span() {
    let receiver = Receiver::start();
    let entries = [
        entry(0, 1_000, json!({"kind": "stage", "hook": "prepare_turn", "duration_us": 500})),
        entry(
            1,
            2_000,
            json!({"kind": "stage", "hook": "review_tool_call", "tool_use_id": "call_9", "duration_us": 200}),
        ),
    ];
    let spans = export(&receiver, ContentCapture::Omit, RunInfo::default(), &entries);
    let run = one(&spans, "invoke_agent");
    assert_eq!(one(&spans, "review_tool_call").parent_span_id, run.span_id);
    assert!(spans.iter().all(|s| !s.name.starts_with("execute_tool")), "no span for an undecided call");
}

#[test]
fn a_run_without_entries_exports_nothing() {
    let receiver = Receiver::start();
    let spans = export(&receiver, ContentCapture::Omit, RunInfo::default(), &[]);
    assert!(spans.is_empty(), "no span before a run's first entry: {spans:?}");
}
