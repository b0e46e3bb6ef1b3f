//! The [`Exporter`]: a tracer provider whose batch span processor hands spans to the OTLP
//! exporter on a background thread, and its bounded [`Exporter::finish`].
//!
//! The standard variables are read by the SDK and the OTLP exporter: `OTEL_EXPORTER_OTLP_HEADERS`
//! (and `..._TRACES_HEADERS`), `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_EXPORTER_OTLP_COMPRESSION`
//! where supported, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and
//! the `OTEL_BSP_*` batch settings. A failed export is dropped, not retried: export must never
//! hold a run up.
//!
//! Nothing costly happens on the run's path: the HTTP client (and its TLS roots) is built on
//! the exporter's thread when the first batch goes out, and the span queue is small (a run's
//! spans are pushed in chunks, see [`crate::spans`]).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracer, SdkTracerProvider};
use thiserror::Error;

use crate::config::{ContentCapture, Endpoint, ExportConfig, Protocol};
use crate::run::{RunInfo, RunSpans};

/// The instrumentation scope of spine's spans.
pub const SCOPE: &str = "spine";

/// The longest one export request may take before it is abandoned.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Spans the batch processor queues before it drops new ones (the SDK's default; its channel
/// is allocated up front); a run's spans are pushed in chunks of half this, each followed by a
/// flush.
pub const MAX_QUEUE: usize = 2_048;

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
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    content: ContentCapture,
}

impl Exporter {
    /// Builds the provider and the exporter. Nothing is sent until spans are queued; an
    /// unreachable endpoint is not an error here (exports to it fail later, silently).
    pub fn start(config: &ExportConfig) -> Result<Exporter, OtelError> {
        let exporter = build_span_exporter(config)?;
        let batch = BatchConfigBuilder::default().with_max_queue_size(MAX_QUEUE).build();
        let processor = BatchSpanProcessor::builder(exporter).with_batch_config(batch).build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(resource(&config.default_service_name, |name| std::env::var(name).ok()))
            .build();
        let tracer = provider.tracer(SCOPE);
        Ok(Exporter { provider, tracer, content: config.content })
    }

    /// Whether spans carry message content.
    pub fn content(&self) -> ContentCapture {
        self.content
    }

    /// The collector of one run's spans (a trace sink and a run observer); its spans are
    /// queued when [`RunSpans::finish`] is called.
    pub fn run(&self, info: RunInfo) -> Arc<RunSpans> {
        Arc::new(RunSpans::new(self.tracer.clone(), self.provider.clone(), self.content, info))
    }

    /// Sends what is queued, waiting at most `bound`, then shuts the exporter down. Whatever
    /// is still in flight after `bound` is abandoned (the process may exit under it).
    pub fn finish(&self, bound: Duration) -> Flushed {
        let (tx, rx) = std::sync::mpsc::channel();
        let provider = self.provider.clone();
        let spawned = std::thread::Builder::new().name("spine-otel-flush".into()).spawn(move || {
            let flushed = match provider.force_flush() {
                Ok(()) => Flushed::Done,
                Err(e) => Flushed::Failed(e.to_string()),
            };
            let _ = tx.send(flushed);
            let _ = provider.shutdown_with_timeout(bound);
        });
        match spawned {
            Ok(_) => rx.recv_timeout(bound).unwrap_or(Flushed::TimedOut),
            Err(e) => Flushed::Failed(format!("cannot start the flush thread: {e}")),
        }
    }
}

/// The OTLP span exporter of `config`.
fn build_span_exporter(config: &ExportConfig) -> Result<opentelemetry_otlp::SpanExporter, OtelError> {
    let built = match config.protocol {
        Protocol::HttpProtobuf => {
            let builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_shared_http_client(LazyClient::warming(tls_for(config)))
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_timeout(EXPORT_TIMEOUT)
                .with_retry_policy(RetryPolicy::disabled());
            match &config.endpoint {
                Endpoint::Environment => builder.build(),
                Endpoint::Url(url) => builder.with_endpoint(url.clone()).build(),
            }
        }
        Protocol::Grpc => return build_grpc_exporter(config),
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

/// A blocking reqwest client built off the run's path (building one loads the TLS roots and
/// starts a thread): a thread builds it while the run goes on, or the first request does.
#[derive(Debug)]
struct LazyClient {
    tls: Tls,
    client: OnceLock<Result<reqwest::blocking::Client, String>>,
}

/// Whether the exporter's client needs TLS roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tls {
    /// The endpoint may be `https://`: the platform's roots are loaded.
    Roots,
    /// The endpoint is `http://`: no roots are loaded (an `https://` URL would fail).
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
    /// A client whose building has started on a thread of its own.
    fn warming(tls: Tls) -> Arc<LazyClient> {
        let lazy = Arc::new(LazyClient { tls, client: OnceLock::new() });
        let warm = Arc::clone(&lazy);
        let _ = std::thread::Builder::new().name("spine-otel-client".into()).spawn(move || {
            warm.get();
        });
        lazy
    }

    fn get(&self) -> &Result<reqwest::blocking::Client, String> {
        self.client.get_or_init(|| {
            // The workspace's reqwest has no crypto provider of its own (no aws-lc): ring, as
            // for the model clients.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let builder = reqwest::blocking::Client::builder().timeout(EXPORT_TIMEOUT);
            let builder = match self.tls {
                Tls::Roots => builder,
                Tls::Plaintext => builder.tls_certs_only(std::iter::empty()),
            };
            builder.build().map_err(|e| e.to_string())
        })
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for LazyClient {
    async fn send_bytes(
        &self,
        request: opentelemetry_http::Request<opentelemetry_http::Bytes>,
    ) -> Result<opentelemetry_http::Response<opentelemetry_http::Bytes>, opentelemetry_http::HttpError> {
        match self.get() {
            Ok(client) => client.send_bytes(request).await,
            Err(e) => Err(format!("cannot build the OTLP HTTP client: {e}").into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
