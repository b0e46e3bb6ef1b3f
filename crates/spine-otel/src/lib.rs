//! OpenTelemetry export of spine's traces.
//!
//! spine records every stage, hook, model request and tool decision of a run as trace entries
//! ([`spine_core::trace::TraceSink`]). This crate turns those same entries into spans that
//! follow the OpenTelemetry GenAI semantic conventions and sends them over OTLP, so the JSONL
//! trace and the exported spans can never disagree, and `spine-core` stays free of OpenTelemetry
//! types.
//!
//! # Layout
//!
//! - [`config`]: when export is on (the `OTEL_EXPORTER_OTLP_*` variables or the settings'
//!   `telemetry.otlp`), which protocol, whether message content may be recorded.
//! - [`exporter`]: the [`Exporter`] — a tracer provider with a batch span processor and the
//!   OTLP exporter — and its bounded flush.
//! - [`run`]: [`RunSpans`], a trace sink and run observer for one run, whose entries the span
//!   builder takes while the run goes on and when it ends.
//! - `builder`: the exporter's thread that builds the spans, off the runs' threads.
//! - [`spans`]: the mapping from trace entries to spans and attributes, step by step: the
//!   open-span bookkeeping (`spans::emitter`), the span of each kind of record
//!   (`spans::kinds`), attribute naming (`spans::attributes`).
//! - [`span`]: [`OpenSpan`], a span of its own outside any run (`spine submit`'s), whose
//!   `traceparent` travels with what it starts.
//! - [`traceparent`]: W3C `traceparent` values, which link a worker's run to its submitter.
//!
//! Export never fails or slows a run: entries are handed to a background thread, which builds
//! the spans and queues them for the batch processor's thread, which sends them; a flush at exit
//! waits at most a bound, and an unreachable endpoint only loses spans.

// Unit-test builds link the dev-dependencies, which only the integration tests use.
#![cfg_attr(test, allow(unused_crate_dependencies))]

mod builder;
pub mod config;
pub mod exporter;
pub mod run;
pub mod span;
pub mod spans;
pub mod traceparent;

pub use config::{ContentCapture, ExportConfig, OtlpSettings, Protocol};
pub use exporter::{Exporter, Finishing, Flushed, OtelError};
pub use run::{RunInfo, RunSpans};
pub use span::OpenSpan;
pub use traceparent::TraceParent;
