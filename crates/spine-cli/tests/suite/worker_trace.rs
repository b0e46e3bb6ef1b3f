//! One trace from submission to execution: `spine submit` with OpenTelemetry export on starts
//! a `spine submit` span (a child of `TRACEPARENT` when set) and puts its `traceparent` in the
//! item; the worker that runs the item — exporting to the same collector double — makes its
//! run span a child of it, and the run's tool spans follow in the same trace; `TRACESTATE`
//! travels with it.

use serde_json::Value;

use crate::otel::{Receiver, attr, named};
use crate::support::*;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn submit(s: &Sandbox, url: &str, item: &Value, endpoint: &str, trace: Option<(&str, &str)>) {
    let path = s.dir.path().join(format!("{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, item.to_string()).expect("item file");
    let mut cmd = s.spine();
    cmd.args(["submit", "--mailbox", url]).arg(&path).env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
    match trace {
        Some((parent, state)) => cmd.env("TRACEPARENT", parent).env("TRACESTATE", state),
        None => cmd.env_remove("TRACEPARENT").env_remove("TRACESTATE"),
    };
    let out = cmd.output().expect("submit");
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_workers_run_of_a_submitted_item_is_a_child_of_the_submit_span_which_joins_traceparent_and_tracestate() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let endpoint = receiver.endpoint();
    let url = format!("sqlite:{}?lease_ms=5000", s.dir.path().join("mailbox.db").display());
    let ci_trace = "0af7651916cd43dd8448eb211c80319c";
    let ci_span = "b7ad6b7169203331";
    let example = spine_protocol::assignment::example_item;
    submit(
        &s,
        &url,
        &example("from-ci"),
        &endpoint,
        Some((&format!("00-{ci_trace}-{ci_span}-01"), "congo=t61rcWkgMzE")),
    );
    submit(&s, &url, &example("from-shell"), &endpoint, None);

    let out = s
        .spine()
        .args(["worker", "--mailbox", &url, "--once"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .output()
        .expect("worker");
    assert!(out.status.success(), "{}", stderr(&out));

    let spans = receiver.spans();
    let submits = named(&spans, "spine submit");
    assert_eq!(submits.len(), 2, "one span per submission");
    let by_item = |list: &[&'_ opentelemetry_proto::tonic::trace::v1::Span], id: &str| {
        list.iter()
            .copied()
            .find(|s| attr(s, "spine.mailbox_item_id") == id)
            .cloned()
            .unwrap_or_else(|| panic!("a span of {id}"))
    };
    let runs = named(&spans, "invoke_agent");

    // Under TRACEPARENT: CI's span → spine submit → the worker's run → its tools.
    let submitted = by_item(&submits, "from-ci");
    assert_eq!(hex(&submitted.trace_id), ci_trace);
    assert_eq!(hex(&submitted.parent_span_id), ci_span);
    let run = by_item(&runs, "from-ci");
    assert_eq!(run.trace_id, submitted.trace_id, "the run joins the submission's trace");
    assert_eq!(run.parent_span_id, submitted.span_id, "the run is the submit span's child");
    assert_eq!(submitted.trace_state, "congo=t61rcWkgMzE", "the submit span keeps TRACESTATE");
    assert_eq!(run.trace_state, "congo=t61rcWkgMzE", "the tracestate reaches the worker's run");
    assert!(
        spans.iter().any(|(s, _)| s.name == "execute" && s.trace_id == run.trace_id),
        "the run's tool call is in the same trace"
    );

    // Without it: the submit span is the trace's root.
    let root = by_item(&submits, "from-shell");
    assert!(root.parent_span_id.is_empty(), "a root span");
    assert_ne!(root.trace_id, submitted.trace_id);
    let run = by_item(&runs, "from-shell");
    assert_eq!((run.trace_id.clone(), run.parent_span_id.clone()), (root.trace_id.clone(), root.span_id.clone()));

    let services: Vec<Value> = spans
        .iter()
        .filter(|(s, _)| s.name == "spine submit")
        .map(|(_, resource)| {
            resource
                .iter()
                .find(|kv| kv.key == "service.name")
                .map_or(Value::Null, |kv| Value::String(format!("{:?}", kv.value)))
        })
        .collect();
    assert!(services.iter().all(|s| s.to_string().contains("spine-submit")), "{services:?}");
}
