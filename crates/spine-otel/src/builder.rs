//! The span builder: one thread per [`crate::Exporter`] that turns the runs' trace entries into
//! spans (an [`Emitter`] per run) off the runs' own threads, and its handle [`Jobs`].
//!
//! Jobs are handled in the order they are sent, so a flush sent after a run's last segment
//! finds that run's spans queued. The builder keeps the batch processor's queue from
//! overflowing: after every [`MAX_QUEUE`]` / 2` spans it waits for them to be exported.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use crate::config::ContentCapture;
use crate::exporter::{Flushed, MAX_QUEUE};
use crate::run::RunInfo;
use crate::spans::{Emitter, Segment};

/// What the builder is asked to do.
enum Job {
    /// A run began.
    Start { run: u64, info: RunInfo },
    /// More of a run.
    Segment { run: u64, segment: Segment },
    /// The rest of a run: its span ends.
    End { run: u64, segment: Segment },
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
            Job::Segment { run, .. } => write!(f, "Segment({run})"),
            Job::End { run, .. } => write!(f, "End({run})"),
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
    ) -> std::io::Result<Jobs> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new().name("spine-otel-spans".into()).spawn(move || {
            let (tracer, provider) = setup();
            Builder { tracer, provider, content, runs: HashMap::new(), since_flush: 0 }.serve(rx);
        })?;
        Ok(Jobs { tx })
    }

    pub(crate) fn start(&self, run: u64, info: RunInfo) {
        let _ = self.tx.send(Job::Start { run, info });
    }

    pub(crate) fn segment(&self, run: u64, segment: Segment) {
        let _ = self.tx.send(Job::Segment { run, segment });
    }

    pub(crate) fn end(&self, run: u64, segment: Segment) {
        let _ = self.tx.send(Job::End { run, segment });
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
    runs: HashMap<u64, Emitter>,
    /// Spans ended since the last flush.
    since_flush: usize,
}

impl Builder {
    fn serve(mut self, jobs: Receiver<Job>) {
        while let Ok(job) = jobs.recv() {
            if let Some((bound, reply)) = self.handle(job) {
                self.finish(bound, reply);
                return;
            }
        }
    }

    /// Handles one job; a [`Job::Finish`] is handed back.
    fn handle(&mut self, job: Job) -> Option<(Duration, Sender<Flushed>)> {
        let Builder { tracer, provider, content, runs, since_flush } = self;
        let mut ended = || {
            *since_flush += 1;
            if *since_flush >= MAX_QUEUE / 2 {
                *since_flush = 0;
                let _ = provider.force_flush();
            }
        };
        match job {
            Job::Start { run, info } => {
                runs.insert(run, Emitter::new(tracer.clone(), *content, info));
            }
            Job::Segment { run, segment } => {
                if let Some(emitter) = runs.get_mut(&run) {
                    emitter.absorb(segment, &mut ended);
                }
            }
            Job::End { run, segment } => {
                if let Some(mut emitter) = runs.remove(&run) {
                    emitter.absorb(segment, &mut ended);
                    emitter.finish(&mut ended);
                }
            }
            Job::Finish { bound, reply } => return Some((bound, reply)),
        }
        None
    }

    fn finish(mut self, bound: Duration, reply: Sender<Flushed>) {
        let open: Vec<u64> = self.runs.keys().copied().collect();
        for run in open {
            self.handle(Job::End { run, segment: Segment::default() });
        }
        let flushed = match self.provider.force_flush() {
            Ok(()) => Flushed::Done,
            Err(e) => Flushed::Failed(e.to_string()),
        };
        let _ = reply.send(flushed);
        let _ = self.provider.shutdown_with_timeout(bound);
    }
}
