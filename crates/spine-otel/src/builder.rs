//! The span builder: one thread per [`crate::Exporter`] that turns the runs' trace entries into
//! spans (an [`Emitter`] per run) off the runs' own threads, and its handle [`Jobs`].
//!
//! The builder takes each open run's collected entries when the run wakes it (every
//! [`crate::run::HANDOVER_ENTRIES`] entries), when it ends, and at least every [`PULL_EVERY`]
//! (a run waiting on a slow model has its finished steps exported meanwhile). Jobs are handled
//! in the order they are sent, so a flush sent after a run's end finds that run's spans queued. The builder keeps the batch processor's queue from
//! overflowing: after every half queue of spans it waits for them to be exported.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use crate::config::ContentCapture;
use crate::exporter::Flushed;
use crate::run::{Collector, RunInfo};
use crate::spans::Emitter;
use crate::traceparent::TraceParent;

/// The longest an open run's finished steps wait for the builder to take them.
pub const PULL_EVERY: Duration = Duration::from_millis(100);

/// What the builder is asked to do.
enum Job {
    /// A run began; it collects into `collector`.
    Start { run: u64, info: RunInfo, collector: Arc<Collector> },
    /// A run has entries waiting.
    Ready { run: u64 },
    /// A run ended: the rest of it is taken and its span ends.
    End { run: u64 },
    /// A span of its own (`spine submit`'s): started now as a child of `parent` (or as a new
    /// trace's root), its context answered on `reply`; it ends on [`Job::Close`].
    Open { span: u64, open: crate::span::OpenRequest, reply: Sender<Option<TraceParent>> },
    /// Ends a span of [`Job::Open`].
    Close { span: u64 },
    /// Ends every run still open, sends everything queued (the answer goes to `reply`), then
    /// shuts the provider down within `bound`; the builder stops.
    Finish { bound: Duration, reply: Sender<Flushed> },
}

/// The way to the builder thread. A send to a builder that has stopped is dropped: export
/// never fails a run.
#[derive(Debug, Clone)]
pub(crate) struct Jobs {
    tx: Sender<Job>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Job::Start { run, .. } => write!(f, "Start({run})"),
            Job::Ready { run } => write!(f, "Ready({run})"),
            Job::End { run } => write!(f, "End({run})"),
            Job::Open { span, .. } => write!(f, "Open({span})"),
            Job::Close { span } => write!(f, "Close({span})"),
            Job::Finish { .. } => write!(f, "Finish"),
        }
    }
}

impl Jobs {
    /// Starts the builder thread, which first calls `setup` for the tracer and its provider
    /// (jobs sent meanwhile wait in the channel).
    pub(crate) fn spawn(
        setup: impl FnOnce() -> (SdkTracer, SdkTracerProvider) + Send + 'static,
        content: ContentCapture,
        queue: usize,
    ) -> std::io::Result<Jobs> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new().name("spine-otel-spans".into()).spawn(move || {
            let (tracer, provider) = setup();
            Builder {
                tracer,
                provider,
                content,
                runs: HashMap::new(),
                spans: HashMap::new(),
                since_flush: 0,
                flush_every: (queue / 2).max(1),
            }
            .serve(rx);
        })?;
        Ok(Jobs { tx })
    }

    pub(crate) fn start(&self, run: u64, info: RunInfo, collector: Arc<Collector>) {
        let _ = self.tx.send(Job::Start { run, info, collector });
    }

    pub(crate) fn ready(&self, run: u64) {
        let _ = self.tx.send(Job::Ready { run });
    }

    pub(crate) fn end(&self, run: u64) {
        let _ = self.tx.send(Job::End { run });
    }

    /// Opens a span of its own ([`Job::Open`]); `reply` gets its context.
    pub(crate) fn open(&self, span: u64, open: crate::span::OpenRequest, reply: Sender<Option<TraceParent>>) {
        let _ = self.tx.send(Job::Open { span, open, reply });
    }

    /// Ends a span of [`Jobs::open`].
    pub(crate) fn close(&self, span: u64) {
        let _ = self.tx.send(Job::Close { span });
    }

    /// Asks for the final flush; the answer comes on the returned channel (closed if the
    /// builder has already stopped).
    pub(crate) fn finish(&self, bound: Duration) -> Receiver<Flushed> {
        let (reply, answer) = mpsc::channel();
        let _ = self.tx.send(Job::Finish { bound, reply });
        answer
    }
}

/// The builder thread's state.
struct Builder {
    tracer: SdkTracer,
    provider: SdkTracerProvider,
    content: ContentCapture,
    runs: HashMap<u64, (Emitter, Arc<Collector>)>,
    /// Spans of [`Job::Open`] not closed yet.
    spans: HashMap<u64, opentelemetry_sdk::trace::Span>,
    /// Spans ended since the last flush.
    since_flush: usize,
    /// Half the batch processor's queue: the spans ended between two flushes.
    flush_every: usize,
}

impl Builder {
    /// Handles jobs until [`Job::Finish`] (or until every handle is gone). Every open run is
    /// pulled when [`PULL_EVERY`] has passed since the last pull, however busy the channel is
    /// with other runs' jobs.
    fn serve(mut self, jobs: Receiver<Job>) {
        let mut last_pull = Instant::now();
        loop {
            let job = if self.runs.is_empty() {
                last_pull = Instant::now();
                jobs.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                jobs.recv_timeout(PULL_EVERY.saturating_sub(last_pull.elapsed()))
            };
            match job {
                Ok(job) => {
                    if let Some((bound, reply)) = self.handle(job) {
                        self.finish(bound, reply);
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            if last_pull.elapsed() >= PULL_EVERY {
                last_pull = Instant::now();
                let open: Vec<u64> = self.runs.keys().copied().collect();
                for run in open {
                    self.handle(Job::Ready { run });
                }
            }
        }
    }

    /// Handles one job; a [`Job::Finish`] is handed back.
    fn handle(&mut self, job: Job) -> Option<(Duration, Sender<Flushed>)> {
        let Builder { tracer, provider, content, runs, spans, since_flush, flush_every } = self;
        let mut ended = || {
            *since_flush += 1;
            if *since_flush >= *flush_every {
                *since_flush = 0;
                let _ = provider.force_flush();
            }
        };
        match job {
            Job::Start { run, info, collector } => {
                runs.insert(run, (Emitter::new(tracer.clone(), *content, info), collector));
            }
            Job::Ready { run } => {
                if let Some((emitter, collector)) = runs.get_mut(&run) {
                    emitter.absorb(collector.take(), &mut ended);
                }
            }
            Job::End { run } => {
                if let Some((mut emitter, collector)) = runs.remove(&run) {
                    emitter.absorb(collector.take(), &mut ended);
                    emitter.finish(&mut ended);
                }
            }
            Job::Open { span, open, reply } => {
                let started = open.start(tracer);
                let _ = reply.send(crate::span::context_of(&started));
                spans.insert(span, started);
            }
            Job::Close { span } => {
                if let Some(mut span) = spans.remove(&span) {
                    opentelemetry::trace::Span::end(&mut span);
                    ended();
                }
            }
            Job::Finish { bound, reply } => return Some((bound, reply)),
        }
        None
    }

    fn finish(mut self, bound: Duration, reply: Sender<Flushed>) {
        let open: Vec<u64> = self.runs.keys().copied().collect();
        for run in open {
            self.handle(Job::End { run });
        }
        let open: Vec<u64> = self.spans.keys().copied().collect();
        for span in open {
            self.handle(Job::Close { span });
        }
        let flushed = match self.provider.force_flush() {
            Ok(()) => Flushed::Done,
            Err(e) => Flushed::Failed(e.to_string()),
        };
        let _ = reply.send(flushed);
        let _ = self.provider.shutdown_with_timeout(bound);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use opentelemetry::Context;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};
    use spine_core::trace::TraceSink as _;
    use spine_protocol::trace::{StageName, StageTrace, TraceEntry, TraceRecord};

    use super::*;
    use crate::run::RunSpans;

    /// Keeps the names of the spans that ended.
    #[derive(Debug, Default)]
    struct Names(Arc<Mutex<Vec<String>>>);

    impl SpanProcessor for Names {
        fn on_start(&self, _span: &mut Span, _cx: &Context) {}
        fn on_end(&self, span: SpanData) {
            if let Ok(mut names) = self.0.lock() {
                names.push(span.name.to_string());
            }
        }
        fn force_flush(&self) -> OTelSdkResult {
            Ok(())
        }
        fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
            Ok(())
        }
    }

    fn stage(seq: u64, hook: StageName) -> Arc<TraceEntry> {
        let record =
            TraceRecord::Stage(StageTrace { hook, tool_use_id: None, duration_us: 5, fields: Default::default() });
        Arc::new(TraceEntry { seq, t_us: 10 + seq, record, subagent: None })
    }

    #[test]
    fn a_quiet_runs_steps_are_pulled_within_the_pull_interval_while_other_runs_keep_the_builder_busy() {
        let names = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&names);
        let setup = move || {
            let provider = SdkTracerProvider::builder().with_span_processor(Names(recorded)).build();
            (provider.tracer("test"), provider)
        };
        let jobs = Jobs::spawn(setup, ContentCapture::Omit, 512).expect("builder thread");
        let quiet = RunSpans::new(jobs.clone(), 1, ContentCapture::Omit, RunInfo::default());
        let busy = RunSpans::new(jobs.clone(), 2, ContentCapture::Omit, RunInfo::default());
        // One finished step: far fewer entries than wake the builder.
        quiet.record(&stage(0, StageName::PrepareTurn));
        let seen = |name: &str| names.lock().map(|n| n.iter().any(|s| s == name)).unwrap_or(false);
        let started = Instant::now();
        // The busy run wakes the builder every 5 ms, so its channel never stays quiet for the
        // whole interval.
        let mut seq = 0;
        while !seen("prepare_turn") && started.elapsed() < PULL_EVERY * 20 {
            seq += 1;
            busy.record(&stage(seq, StageName::CompactContext));
            jobs.ready(2);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            seen("prepare_turn"),
            "the quiet run's step was never pulled while the other run kept waking the builder"
        );
        assert!(!seen("invoke_agent"), "the quiet run is still open: its own span has not ended");
        quiet.finish();
        busy.finish();
        assert_eq!(jobs.finish(Duration::from_secs(5)).recv_timeout(Duration::from_secs(5)), Ok(Flushed::Done));
        let names = names.lock().map(|n| n.clone()).unwrap_or_default();
        assert_eq!(names.iter().filter(|n| *n == "invoke_agent").count(), 2, "both runs ended: {names:?}");
    }
}
