//! A span of its own, outside any run: `spine submit`'s, whose W3C `traceparent` goes with the
//! item it submits so that the worker's run of the item joins the same trace as its child.
//!
//! Contract: the span is started on the exporter's builder thread (where the tracer lives) and
//! its context answered back, so that its `traceparent` is known before the work it covers is
//! done; it ends when [`OpenSpan::end`] is called or the handle is dropped, or at the
//! exporter's final flush at the latest. A span whose context never came back (the builder
//! stopped, or it did not answer in time) has no `traceparent` and exports nothing.

use opentelemetry::trace::{SpanKind, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};

use crate::builder::Jobs;
use crate::traceparent::TraceParent;

/// What a span of its own starts with.
#[derive(Debug)]
pub(crate) struct OpenRequest {
    /// The span's name.
    pub(crate) name: String,
    /// The remote parent, if any.
    pub(crate) parent: Option<TraceParent>,
    /// String attributes.
    pub(crate) attributes: Vec<(String, String)>,
}

impl OpenRequest {
    /// Starts the span (a producer: what it submits is consumed elsewhere).
    pub(crate) fn start(self, tracer: &SdkTracer) -> Span {
        let cx = match &self.parent {
            Some(parent) => Context::new().with_remote_span_context(parent.span_context()),
            None => Context::new(),
        };
        let attributes: Vec<KeyValue> = self.attributes.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect();
        tracer
            .span_builder(self.name)
            .with_kind(SpanKind::Producer)
            .with_attributes(attributes)
            .start_with_context(tracer, &cx)
    }
}

/// The `traceparent` of a started span (`None` when it is not valid: nothing to join).
pub(crate) fn context_of(span: &Span) -> Option<TraceParent> {
    let context = opentelemetry::trace::Span::span_context(span);
    context.is_valid().then(|| TraceParent {
        trace_id: context.trace_id(),
        parent_id: context.span_id(),
        flags: context.trace_flags(),
        state: context.trace_state().clone(),
    })
}

/// A started span of its own (see the module documentation); ends when dropped.
#[derive(Debug)]
pub struct OpenSpan {
    jobs: Jobs,
    id: u64,
    context: Option<TraceParent>,
    ended: bool,
}

impl OpenSpan {
    pub(crate) fn new(jobs: Jobs, id: u64, context: Option<TraceParent>) -> Self {
        OpenSpan { jobs, id, context, ended: false }
    }

    /// The span's `traceparent`: the parent of what it starts.
    pub fn traceparent(&self) -> Option<TraceParent> {
        self.context.clone()
    }

    /// Ends the span now.
    pub fn end(mut self) {
        self.close();
    }

    fn close(&mut self) {
        if !self.ended {
            self.ended = true;
            self.jobs.close(self.id);
        }
    }
}

impl Drop for OpenSpan {
    fn drop(&mut self) {
        self.close();
    }
}
