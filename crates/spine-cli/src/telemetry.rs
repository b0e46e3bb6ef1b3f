//! OpenTelemetry export for `spine run`, the interactive session and `spine worker` (see `spine-otel` and
//! docs/observability.md): resolves the configuration from the `OTEL_*` variables and the
//! settings' `telemetry.otlp`, attaches a run's span collector to its trace and observers, and
//! flushes at exit for at most [`FLUSH_BOUND`]. A configuration problem is a warning, never a
//! failed run.

use std::sync::Arc;
use std::time::Duration;

use spine_core::observer::RunObserver;
use spine_core::trace::TraceSink;
use spine_otel::{ExportConfig, Exporter, Finishing, OtlpSettings, Protocol, RunInfo, RunSpans};
use spine_protocol::trace::TraceEntry;
use spine_settings::{Settings, TelemetryProtocol};

/// The longest a process waits at exit for its spans to be sent.
pub const FLUSH_BOUND: Duration = Duration::from_secs(2);

/// The exporter of this process, when export is on (a warning on stderr when its
/// configuration is invalid, unless `quiet`).
pub fn exporter(settings: &Settings, service_name: &str, quiet: bool) -> Option<Arc<Exporter>> {
    let otlp = OtlpSettings {
        endpoint: settings.telemetry_otlp_endpoint.clone(),
        protocol: settings.telemetry_otlp_protocol.map(|p| match p {
            TelemetryProtocol::HttpProtobuf => Protocol::HttpProtobuf,
            TelemetryProtocol::Grpc => Protocol::Grpc,
        }),
    };
    let started = ExportConfig::resolve(&otlp, service_name, |name| std::env::var(name).ok())
        .and_then(|config| config.map(|c| Exporter::start(&c)).transpose());
    match started {
        Ok(exporter) => exporter.map(Arc::new),
        Err(e) => {
            if !quiet {
                eprintln!("warning: {e}; traces are not exported");
            }
            None
        }
    }
}

/// Sends what `exporter` still holds, for at most [`FLUSH_BOUND`] (a worker at exit).
#[cfg(feature = "sqlite")]
pub fn flush(exporter: Option<&Exporter>) {
    if let Some(exporter) = exporter {
        let _ = exporter.finish(FLUSH_BOUND);
    }
}

/// Export of one `spine run`: the final flush starts when the run ends ([`RunTelemetry::ended`])
/// and is waited for, at most [`FLUSH_BOUND`], when this is dropped.
pub struct RunTelemetry {
    exporter: Arc<Exporter>,
    spans: Arc<RunSpans>,
    finishing: Option<Finishing>,
}

impl RunTelemetry {
    /// The run is over: its last spans are built and sent while the process tidies up and
    /// writes its output.
    pub fn ended(&mut self) {
        if self.finishing.is_none() {
            self.spans.finish();
            self.finishing = Some(self.exporter.begin_finish(FLUSH_BOUND));
        }
    }
}

impl Drop for RunTelemetry {
    fn drop(&mut self) {
        self.ended();
        if let Some(finishing) = self.finishing.take() {
            let _ = finishing.wait();
        }
    }
}

/// Attaches export to a run when it is on: the run's span collector joins `trace_sink` and
/// `observers`. Keep the result until the run's output is written.
pub fn install(
    settings: &Settings,
    trace_sink: &mut Option<Arc<dyn TraceSink>>,
    observers: &mut Vec<Arc<dyn RunObserver>>,
    quiet: bool,
) -> Option<RunTelemetry> {
    let exporter = exporter(settings, "spine", quiet)?;
    let spans = exporter.run(RunInfo::default());
    observers.push(Arc::clone(&spans) as Arc<dyn RunObserver>);
    let ours = Arc::clone(&spans) as Arc<dyn TraceSink>;
    *trace_sink = Some(match trace_sink.take() {
        Some(file) => Arc::new(Tee(vec![file, ours])),
        None => ours,
    });
    Some(RunTelemetry { exporter, spans, finishing: None })
}

/// Forwards each entry to every sink, in order.
struct Tee(Vec<Arc<dyn TraceSink>>);

impl TraceSink for Tee {
    fn record(&self, entry: &Arc<TraceEntry>) {
        for sink in &self.0 {
            sink.record(entry);
        }
    }
}

/// Export of an interactive session: each prompt is one run (one `invoke_agent` trace, the
/// session id as `gen_ai.conversation.id`), its spans sent as it goes; what is left is flushed,
/// for at most [`FLUSH_BOUND`], when the session's value drops.
pub struct SessionTelemetry {
    exporter: Arc<Exporter>,
    current: Arc<PromptSink>,
}

/// The session's trace sink: the trace file, if any, and the current prompt's span collector.
struct PromptSink {
    file: Option<Arc<dyn TraceSink>>,
    spans: std::sync::Mutex<Option<Arc<RunSpans>>>,
}

impl PromptSink {
    fn spans(&self) -> std::sync::MutexGuard<'_, Option<Arc<RunSpans>>> {
        match self.spans.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

impl TraceSink for PromptSink {
    fn record(&self, entry: &Arc<TraceEntry>) {
        if let Some(file) = &self.file {
            file.record(entry);
        }
        if let Some(spans) = self.spans().as_ref() {
            spans.record(entry);
        }
    }
}

impl SessionTelemetry {
    /// Starts collecting a prompt's run; its observer joins the run's observers.
    pub fn begin(&self) -> Arc<dyn RunObserver> {
        let spans = self.exporter.run(RunInfo::default());
        if let Some(previous) = self.current.spans().replace(Arc::clone(&spans)) {
            previous.finish();
        }
        spans
    }

    /// Ends the prompt's run: its last spans are handed over.
    pub fn end(&self) {
        if let Some(spans) = self.current.spans().take() {
            spans.finish();
        }
    }
}

impl Drop for SessionTelemetry {
    fn drop(&mut self) {
        self.end();
        let _ = self.exporter.finish(FLUSH_BOUND);
    }
}

/// Attaches export to an interactive session when it is on: `trace_sink` becomes the sink
/// that also feeds each prompt's spans (see [`SessionTelemetry::begin`]).
pub fn session(settings: &Settings, trace_sink: &mut Option<Arc<dyn TraceSink>>) -> Option<SessionTelemetry> {
    let exporter = exporter(settings, "spine", false)?;
    let current = Arc::new(PromptSink { file: trace_sink.take(), spans: std::sync::Mutex::new(None) });
    *trace_sink = Some(Arc::clone(&current) as Arc<dyn TraceSink>);
    Some(SessionTelemetry { exporter, current })
}
