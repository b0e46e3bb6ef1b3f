//! The [`Exporter`]: a tracer provider whose batch span processor hands spans to the OTLP
//! exporter on a background thread, and its bounded [`Exporter::finish`].
//!
//! The standard variables are read by the SDK and the OTLP exporter: `OTEL_EXPORTER_OTLP_HEADERS`
//! (and `..._TRACES_HEADERS`), `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_EXPORTER_OTLP_COMPRESSION`
//! where supported, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and
//! the `OTEL_BSP_*` batch settings. A failed export is dropped, not retried: export must never
//! hold a run up.
//!
//! Nothing costly happens on the run's path: the processor, the provider and the HTTP client
//! (hyper's plain client for an `http://` endpoint, reqwest with the TLS roots otherwise) are
//! set up on the span builder's thread (the crate's `builder` module), which builds the spans
//! as the run's steps complete; the batch processor sends them from its own thread, in batches
//! (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, 512 by default), every `OTEL_BSP_SCHEDULE_DELAY` (5 s),
//! and whenever half its queue has filled, so a long run's spans leave while it goes on.
//! [`Exporter::begin_finish`] starts the final flush as soon as the last run ends, so that a
//! process tidies up while its last spans are sent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use thiserror::Error;

use crate::builder::Jobs;
use crate::config::{ContentCapture, Endpoint, ExportConfig, Protocol};
use crate::run::{RunInfo, RunSpans};
use crate::span::OpenSpan;
use crate::traceparent::TraceParent;

/// The instrumentation scope of spine's spans.
pub const SCOPE: &str = "spine";

/// The longest one export request may take before it is abandoned.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Spans the batch processor queues before it drops new ones, unless `OTEL_BSP_MAX_QUEUE_SIZE`
/// says otherwise; the builder waits for an export after every half of the queue. The queue is
/// allocated (and its memory touched) up front: the SDK's 2,048 cost a short run more than the
/// extra exports of a smaller queue.
pub const MAX_QUEUE: usize = 512;

/// The batch processor's queue size: `OTEL_BSP_MAX_QUEUE_SIZE` when it is a positive number
/// (as the SDK reads it), else [`MAX_QUEUE`].
fn queue_size(env: impl Fn(&str) -> Option<String>) -> usize {
    env("OTEL_BSP_MAX_QUEUE_SIZE").and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0).unwrap_or(MAX_QUEUE)
}

/// Export could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OtelError {
    /// The configuration is invalid (an unknown protocol…).
    #[error("OpenTelemetry export: {0}")]
    Config(String),
    /// The OTLP exporter did not build (an invalid endpoint…).
    #[error("OpenTelemetry export: cannot build the OTLP exporter: {0}")]
    Build(String),
    /// A `traceparent` value is invalid.
    #[error("invalid traceparent {0}")]
    TraceParent(String),
    /// A `tracestate` value is invalid.
    #[error("invalid tracestate {0}")]
    TraceState(String),
}

/// How a bounded flush ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flushed {
    /// Every queued span was handed to the exporter, which answered.
    Done,
    /// The exporter reported an error (spans were lost).
    Failed(String),
    /// The bound passed first; the rest is abandoned.
    TimedOut,
}

/// Sends spans over OTLP. Cheap to share: runs get [`RunSpans`] from it.
#[derive(Debug)]
pub struct Exporter {
    content: ContentCapture,
    jobs: Jobs,
    runs: AtomicU64,
}

impl Exporter {
    /// Builds the OTLP exporter here (so that an invalid endpoint is reported) and the rest —
    /// the batch processor and its thread, the tracer provider, the HTTP client — on the span
    /// builder's thread, while the run goes on. Nothing is sent until spans are queued; an
    /// unreachable endpoint is not an error here (exports to it fail later, silently).
    pub fn start(config: &ExportConfig) -> Result<Exporter, OtelError> {
        let (exporter, client) = build_span_exporter(config)?;
        let service_name = config.default_service_name.clone();
        let queue = queue_size(|name| std::env::var(name).ok());
        let setup = move || {
            let batch = BatchConfigBuilder::default().with_max_queue_size(queue).build();
            let processor = BatchSpanProcessor::builder(exporter).with_batch_config(batch).build();
            let provider = SdkTracerProvider::builder()
                .with_span_processor(processor)
                .with_resource(resource(&service_name, |name| std::env::var(name).ok()))
                .build();
            // The client is ready before the first batch goes out.
            if let Some(client) = client {
                client.get();
            }
            (provider.tracer(SCOPE), provider)
        };
        let jobs = Jobs::spawn(setup, config.content, queue)
            .map_err(|e| OtelError::Build(format!("cannot start the span builder thread: {e}")))?;
        Ok(Exporter { content: config.content, jobs, runs: AtomicU64::new(0) })
    }

    /// Whether spans carry message content.
    pub fn content(&self) -> ContentCapture {
        self.content
    }

    /// The collector of one run's spans (a trace sink and a run observer); its spans are
    /// built and queued as the run goes on, the last ones when [`RunSpans::finish`] is called.
    pub fn run(&self, info: RunInfo) -> Arc<RunSpans> {
        let id = self.runs.fetch_add(1, Ordering::Relaxed);
        Arc::new(RunSpans::new(self.jobs.clone(), id, self.content, info))
    }

    /// Starts a span of its own (`spine submit`'s), named `name`, a child of `parent` or the
    /// root of a new trace, with `attributes`; it ends when the [`OpenSpan`] is ended or
    /// dropped. Waits at most `bound` for the builder thread to start it (its context is the
    /// `traceparent` handed on); after that, or when the exporter has finished, the span has
    /// no context and nothing is exported.
    pub fn open_span(
        &self,
        name: &str,
        parent: Option<TraceParent>,
        attributes: Vec<(String, String)>,
        bound: Duration,
    ) -> OpenSpan {
        let id = self.runs.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = std::sync::mpsc::channel();
        let request = crate::span::OpenRequest { name: name.to_owned(), parent, attributes };
        self.jobs.open(id, request, reply);
        let context = answer.recv_timeout(bound).ok().flatten();
        OpenSpan::new(self.jobs.clone(), id, context)
    }

    /// Ends the spans of every run not finished yet, sends what is queued, waiting at most
    /// `bound`, then shuts the exporter down. Whatever is still in flight after `bound` is
    /// abandoned (the process may exit under it). Only the first call sends anything.
    pub fn finish(&self, bound: Duration) -> Flushed {
        self.begin_finish(bound).wait()
    }

    /// [`Exporter::finish`] without the wait: the flush starts now (the process can tidy up
    /// meanwhile) and [`Finishing::wait`] waits for it, until `bound` from now.
    pub fn begin_finish(&self, bound: Duration) -> Finishing {
        Finishing { answer: self.jobs.finish(bound), deadline: Instant::now() + bound }
    }
}

/// A final flush under way (see [`Exporter::begin_finish`]).
#[derive(Debug)]
#[must_use = "the flush is only waited for by `wait`"]
pub struct Finishing {
    answer: Receiver<Flushed>,
    deadline: Instant,
}

impl Finishing {
    /// Waits for the flush, at most until its bound runs out.
    pub fn wait(self) -> Flushed {
        match self.answer.recv_timeout(self.deadline.saturating_duration_since(Instant::now())) {
            Ok(flushed) => flushed,
            Err(RecvTimeoutError::Timeout) => Flushed::TimedOut,
            Err(RecvTimeoutError::Disconnected) => Flushed::Failed("the exporter has already finished".into()),
        }
    }
}

/// The OTLP span exporter of `config`, and its HTTP client (over HTTP), built when first used.
fn build_span_exporter(
    config: &ExportConfig,
) -> Result<(opentelemetry_otlp::SpanExporter, Option<Arc<LazyClient>>), OtelError> {
    let built = match config.protocol {
        Protocol::HttpProtobuf => {
            let client = Arc::new(LazyClient { tls: tls_for(config), client: OnceLock::new() });
            let builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_shared_http_client(Arc::clone(&client) as Arc<dyn opentelemetry_http::HttpClient>)
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_timeout(EXPORT_TIMEOUT)
                .with_retry_policy(RetryPolicy::disabled());
            let built = match &config.endpoint {
                Endpoint::Environment => builder.build(),
                Endpoint::Url(url) => builder.with_endpoint(url.clone()).build(),
            };
            built.map(|exporter| (exporter, Some(client)))
        }
        Protocol::Grpc => return build_grpc_exporter(config).map(|exporter| (exporter, None)),
    };
    built.map_err(|e| OtelError::Build(e.to_string()))
}

#[cfg(feature = "grpc")]
fn build_grpc_exporter(config: &ExportConfig) -> Result<opentelemetry_otlp::SpanExporter, OtelError> {
    use opentelemetry_otlp::WithTonicConfig;
    let builder = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_protocol(opentelemetry_otlp::Protocol::Grpc)
        .with_timeout(EXPORT_TIMEOUT)
        .with_retry_policy(RetryPolicy::disabled());
    let built = match &config.endpoint {
        Endpoint::Environment => builder.build(),
        Endpoint::Url(url) => builder.with_endpoint(url.clone()).build(),
    };
    built.map_err(|e| OtelError::Build(e.to_string()))
}

#[cfg(not(feature = "grpc"))]
fn build_grpc_exporter(_config: &ExportConfig) -> Result<opentelemetry_otlp::SpanExporter, OtelError> {
    Err(OtelError::Config(
        "OTLP over gRPC needs spine built with the `grpc` feature; use `http/protobuf` (port 4318)".into(),
    ))
}

/// The resource: the SDK's (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the SDK's own
/// attributes), with `service.name` set to `default_service_name` when neither variable names
/// a service.
fn resource(default_service_name: &str, env: impl Fn(&str) -> Option<String>) -> Resource {
    let named = env("OTEL_SERVICE_NAME").is_some_and(|v| !v.trim().is_empty())
        || env("OTEL_RESOURCE_ATTRIBUTES")
            .is_some_and(|attrs| attrs.split(',').any(|kv| kv.trim_start().starts_with("service.name=")));
    let builder = Resource::builder();
    if named { builder.build() } else { builder.with_service_name(default_service_name.to_owned()).build() }
}

/// The exporter's HTTP client, built off the run's path (building the reqwest client loads the
/// TLS roots): the span builder's thread builds it while the run goes on, or the first request
/// does. It runs on a current-thread tokio runtime of its own that the exporting thread drives
/// while it waits for an answer, so the client has no thread of its own.
#[derive(Debug)]
struct LazyClient {
    tls: Tls,
    client: OnceLock<Result<Driven, String>>,
}

/// A client and the runtime that drives it.
#[derive(Debug)]
struct Driven {
    runtime: Option<tokio::runtime::Runtime>,
    client: Backend,
}

/// The client for the endpoint's scheme.
#[derive(Debug)]
enum Backend {
    /// `https://` (or an endpoint not known in advance): reqwest, with the platform's roots.
    Tls(reqwest::Client),
    /// `http://`: hyper's client with its plain TCP connector — no TLS set-up, proxy or
    /// redirect layers, and no URL re-parsed per request.
    Plain(Box<opentelemetry_http::hyper::HyperClient>),
}
/// Whether the exporter's client needs TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tls {
    /// The endpoint may be `https://`: reqwest, with the platform's roots.
    Roots,
    /// The endpoint is `http://`: a plain HTTP client (an `https://` URL would fail).
    Plaintext,
}

/// [`Tls::Plaintext`] when the endpoint the exporter will use is an `http://` URL.
fn tls_for(config: &ExportConfig) -> Tls {
    tls_of(&config.endpoint, |name| std::env::var(name).ok())
}

fn tls_of(endpoint: &Endpoint, env: impl Fn(&str) -> Option<String>) -> Tls {
    let url = match endpoint {
        Endpoint::Url(url) => Some(url.clone()),
        Endpoint::Environment => ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"]
            .iter()
            .find_map(|name| env(name).filter(|v| !v.trim().is_empty())),
    };
    match url {
        Some(url) if url.trim().get(..7).is_some_and(|s| s.eq_ignore_ascii_case("http://")) => Tls::Plaintext,
        Some(_) | None => Tls::Roots,
    }
}

impl LazyClient {
    /// The client, built by the first caller.
    fn get(&self) -> &Result<Driven, String> {
        self.client.get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start its runtime: {e}"))?;
            let entered = runtime.enter();
            let client = match self.tls {
                Tls::Plaintext => Backend::Plain(Box::new(
                    opentelemetry_http::hyper::HyperClient::with_default_connector(EXPORT_TIMEOUT, None),
                )),
                Tls::Roots => {
                    // The workspace's reqwest has no crypto provider of its own (no aws-lc):
                    // ring, as for the model clients.
                    let _ = rustls::crypto::ring::default_provider().install_default();
                    let client =
                        reqwest::Client::builder().timeout(EXPORT_TIMEOUT).build().map_err(|e| e.to_string())?;
                    Backend::Tls(client)
                }
            };
            drop(entered);
            Ok(Driven { runtime: Some(runtime), client })
        })
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for LazyClient {
    /// Sends on the client's runtime, blocking the calling thread (the batch processor's,
    /// which exports from a plain thread) until the answer comes.
    async fn send_bytes(
        &self,
        request: opentelemetry_http::Request<opentelemetry_http::Bytes>,
    ) -> Result<opentelemetry_http::Response<opentelemetry_http::Bytes>, opentelemetry_http::HttpError> {
        match self.get() {
            Ok(Driven { runtime: Some(runtime), client }) => {
                if tokio::runtime::Handle::try_current().is_ok() {
                    return Err("the OTLP HTTP client cannot be driven from an async runtime's thread".into());
                }
                match client {
                    Backend::Tls(client) => runtime.block_on(client.send_bytes(request)),
                    Backend::Plain(client) => runtime.block_on(client.send_bytes(request)),
                }
            }
            Ok(Driven { runtime: None, .. }) => Err("the OTLP HTTP client has shut down".into()),
            Err(e) => Err(format!("cannot build the OTLP HTTP client: {e}").into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_size_follows_otel_bsp_max_queue_size_when_it_is_a_positive_number() {
        let set = |value: &'static str| move |name: &str| (name == "OTEL_BSP_MAX_QUEUE_SIZE").then(|| value.to_owned());
        assert_eq!(queue_size(|_| None), MAX_QUEUE);
        assert_eq!(queue_size(set("256")), 256);
        assert_eq!(queue_size(set(" 4096 ")), 4096);
        assert_eq!(queue_size(set("0")), MAX_QUEUE);
        assert_eq!(queue_size(set("lots")), MAX_QUEUE);
    }

    #[test]
    fn only_an_http_endpoint_skips_the_tls_roots_and_the_traces_variable_decides_first() {
        let url = |u: &str| Endpoint::Url(u.to_owned());
        assert_eq!(tls_of(&url("http://127.0.0.1:4318/v1/traces"), |_| None), Tls::Plaintext);
        assert_eq!(tls_of(&url("HTTP://collector:4318/v1/traces"), |_| None), Tls::Plaintext);
        assert_eq!(tls_of(&url("https://collector/v1/traces"), |_| None), Tls::Roots);
        let env = |name: &str| match name {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => Some("https://traces.example/v1/traces".to_owned()),
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://127.0.0.1:4318".to_owned()),
            _ => None,
        };
        assert_eq!(tls_of(&Endpoint::Environment, env), Tls::Roots);
        assert_eq!(
            tls_of(&Endpoint::Environment, |n| (n == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://h:1".into())),
            Tls::Plaintext
        );
    }
}
