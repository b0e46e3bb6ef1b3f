//! `spine submit`: put an item in a mailbox and print its item id. The item is decoded as the
//! worker will decode it; an invalid or unsupported one is refused (exit 2, naming the
//! problem) unless `--no-validate`, which enqueues the bytes as they are (the worker then
//! answers with a `validation_error` or `unsupported_request_kind` report). Items without an
//! id print the mailbox's delivery id, under which their reports appear.
//!
//! Trace propagation: the item's parent span is its own `traceparent` (with its `tracestate`),
//! else the `TRACEPARENT` and `TRACESTATE` environment variables (set by the SDKs and CI
//! systems; an invalid one is a warning, an invalid `tracestate` alone is dropped). With
//! OpenTelemetry export on (docs/observability.md), a `spine submit` span, child of that
//! parent, covers the submission and its `traceparent` goes with the item, so that the
//! worker's run of it — on whichever worker — joins the same trace; without export the parent
//! itself goes with the item. A body that is not a JSON object is enqueued untouched.

use std::io::Read;
use std::time::Duration;

use serde_json::Value;
use spine_otel::TraceParent;
use spine_protocol::assignment::check_item_id;
use spine_worker::MailboxUrl;
use spine_worker::decode::decode;

use super::context;
use crate::cli::SubmitArgs;
use crate::error::{config, exit};
use crate::out;

/// The longest `spine submit` waits for its span to start.
const SPAN_START_BOUND: Duration = Duration::from_secs(2);

/// Runs `spine submit`.
pub async fn submit(args: SubmitArgs) -> anyhow::Result<u8> {
    let url: MailboxUrl = args.mailbox.parse().map_err(|e: spine_worker::url::UrlError| config(e.to_string()))?;
    let name = args.item.display().to_string();
    let mut body = if name == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map_err(|e| config(format!("cannot read the item from stdin: {e}")))?;
        buf
    } else {
        std::fs::read(&args.item).map_err(|e| config(format!("{name}: {e}")))?
    };
    let decoded = decode(&body, "");
    // Even an unvalidated item must carry an id every mailbox can hold.
    if !decoded.identity.item_id.is_empty()
        && let Err(e) = check_item_id(&decoded.identity.item_id)
    {
        return Err(config(format!("{name}: item_id: {e}")));
    }
    if let Err(rejection) = &decoded.item
        && !args.no_validate
    {
        return Err(config(format!("{name}: {rejection} (use --no-validate to submit it anyway)")));
    }
    let item_id = decoded.identity.item_id;
    let own = decoded.item.as_ref().ok().map(|item| (item.traceparent.clone(), item.tracestate.clone()));
    let (own, own_state) = own.unwrap_or_default();
    let parent = parent_span(own.as_deref(), own_state.as_deref());
    let exporter = telemetry();
    let span = exporter.as_ref().map(|exporter| {
        let attributes =
            vec![("spine.mailbox_item_id".to_owned(), item_id.clone()), ("spine.mailbox".to_owned(), url.to_string())];
        exporter.open_span("spine submit", parent.clone(), attributes, SPAN_START_BOUND)
    });
    let traceparent = span.as_ref().and_then(spine_otel::OpenSpan::traceparent).or(parent);
    if let Some(traceparent) = traceparent
        && (own.as_deref() != Some(traceparent.to_string().as_str()) || own_state != traceparent.tracestate())
    {
        body = with_traceparent(body, &traceparent);
    }
    let submitted = async {
        let mailbox = url.open().await.map_err(|e| anyhow::anyhow!("cannot open the mailbox: {e}"))?;
        mailbox.submit(&body).await.map_err(|e| anyhow::anyhow!("submit: {e}"))
    }
    .await;
    drop(span);
    crate::telemetry::flush(exporter.as_deref());
    let delivery_id = submitted?;
    let _ = out::line(if item_id.is_empty() { delivery_id } else { item_id });
    Ok(exit::OK)
}

/// The submission's parent: the item's own `traceparent` and `tracestate`, else `TRACEPARENT`
/// and `TRACESTATE` (an invalid `traceparent` is ignored with a warning; an invalid
/// `tracestate` is dropped with one, the `traceparent` kept).
fn parent_span(own: Option<&str>, own_state: Option<&str>) -> Option<TraceParent> {
    let from_env = |name: &str| std::env::var(name).ok().filter(|t| !t.trim().is_empty());
    let (text, state, source) = match own {
        Some(text) => (text.to_owned(), own_state.map(str::to_owned), "the item's"),
        None => (from_env("TRACEPARENT")?, from_env("TRACESTATE"), "the environment's"),
    };
    let parent = text
        .parse::<TraceParent>()
        .inspect_err(|e| eprintln!("warning: {source} traceparent: {e}; the submission starts a trace of its own"))
        .ok()?;
    let Some(state) = state else { return Some(parent) };
    Some(parent.clone().with_state(&state).unwrap_or_else(|e| {
        eprintln!("warning: {source} tracestate: {e}; the traceparent is kept without it");
        parent
    }))
}

/// The exporter when OpenTelemetry export is on (the `OTEL_*` variables, or the settings'
/// `telemetry.otlp` when they load; a settings problem only means the variables alone decide).
fn telemetry() -> Option<std::sync::Arc<spine_otel::Exporter>> {
    let settings = context::spine_home()
        .and_then(|home| {
            let project = context::project_dir(None)?;
            context::settings_with(&home, &project, &[], false, None, &[])
        })
        .unwrap_or_default();
    crate::telemetry::exporter(&settings, "spine-submit", false)
}

/// `body` with its `traceparent` and `tracestate` set from `traceparent` (no `tracestate` when
/// it has none; unchanged when the body is not a JSON object).
fn with_traceparent(body: Vec<u8>, traceparent: &TraceParent) -> Vec<u8> {
    let Ok(Value::Object(mut item)) = serde_json::from_slice::<Value>(&body) else {
        return body;
    };
    item.insert("traceparent".to_owned(), Value::String(traceparent.to_string()));
    match traceparent.tracestate() {
        Some(state) => item.insert("tracestate".to_owned(), Value::String(state)),
        None => item.remove("tracestate"),
    };
    serde_json::to_vec(&Value::Object(item)).unwrap_or(body)
}
