//! Operating a worker: its health, its readiness and its metrics, as `spine worker --listen`
//! serves them ([`http`]).
//!
//! One [`Ops`] per worker, created with it (never process-wide) and passed down: the loop
//! tells it when it runs, when a lease call failed or succeeded and when it drains; each
//! delivery holds an `InFlight` from its lease to its settlement; each item's trace feeds
//! `Ops::latencies` (model request and tool call durations).
//!
//! Contract:
//! - liveness: the loop runs (from [`Worker::run`](crate::Worker::run)'s start until it
//!   returned, draining included);
//! - readiness: the loop runs, the last lease call succeeded (the mailbox answers) and the
//!   worker is not draining; otherwise the reason, one line;
//! - `/metrics`: counters count as things happen; the in-flight, oldest-lease-age, pending and
//!   draining gauges are set at each scrape (pending asks the mailbox,
//!   [`crate::Queue::pending`]).
//!
//! Dependencies: [`crate::mailbox`] (the queue it asks for pending messages) and spine-core's
//! trace sink; used by [`crate::worker`].

pub mod http;
mod metrics;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use prometheus_client::registry::Registry;
use spine_core::trace::TraceSink;
use spine_protocol::report::{Report, ReportBody};
use spine_protocol::trace::{StageName, TraceEntry, TraceRecord};

use crate::mailbox::Queue;
use metrics::Metrics;

/// A worker's health, readiness and metrics (see the module documentation).
pub struct Ops {
    metrics: Metrics,
    registry: Registry,
    queue: OnceLock<Arc<dyn Queue>>,
    running: AtomicBool,
    draining: AtomicBool,
    /// Why the mailbox is not ready (`None`: the last lease call succeeded).
    mailbox: Mutex<Option<String>>,
    held: Mutex<HashMap<u64, Instant>>,
    next: AtomicU64,
}

impl std::fmt::Debug for Ops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ops")
            .field("running", &self.running.load(Ordering::Relaxed))
            .field("draining", &self.draining.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Default for Ops {
    fn default() -> Self {
        let (metrics, registry) = Metrics::new();
        Ops {
            metrics,
            registry,
            queue: OnceLock::new(),
            running: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            mailbox: Mutex::new(Some("not connected to the mailbox yet".to_owned())),
            held: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        }
    }
}

impl Ops {
    /// A new, unregistered-anywhere set of metrics and health state.
    pub fn new() -> Arc<Ops> {
        Arc::new(Ops::default())
    }

    /// 200 or why not (see the module documentation).
    pub fn liveness(&self) -> Result<(), String> {
        if self.running.load(Ordering::Acquire) { Ok(()) } else { Err("the worker loop is not running".to_owned()) }
    }

    /// 200 or why not (see the module documentation).
    pub fn readiness(&self) -> Result<(), String> {
        self.liveness()?;
        if self.draining.load(Ordering::Acquire) {
            return Err("draining: not leasing new items".to_owned());
        }
        match lock(&self.mailbox).as_ref() {
            Some(reason) => Err(reason.clone()),
            None => Ok(()),
        }
    }

    /// The metrics in the Prometheus text format, the moment gauges refreshed first.
    pub async fn render(&self) -> Result<String, std::fmt::Error> {
        let pending = match self.queue.get() {
            Some(queue) => match queue.pending().await {
                Ok(Some(n)) => i64::try_from(n).unwrap_or(i64::MAX),
                Ok(None) => -1,
                Err(e) => {
                    tracing::warn!("pending messages of {}: {e}", queue.describe());
                    self.metrics.pending.get()
                }
            },
            None => -1,
        };
        self.metrics.pending.set(pending);
        {
            let held = lock(&self.held);
            self.metrics.in_flight.set(i64::try_from(held.len()).unwrap_or(i64::MAX));
            let oldest = held.values().min().map_or(0.0, |at| at.elapsed().as_secs_f64());
            self.metrics.oldest_lease_age.set(oldest);
        }
        self.metrics.draining.set(i64::from(self.draining.load(Ordering::Acquire)));
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }

    /// The loop started over `queue` (connected: its cancellation signals answered).
    pub(crate) fn started(&self, queue: Arc<dyn Queue>) {
        let _ = self.queue.set(queue);
        *lock(&self.mailbox) = None;
        self.running.store(true, Ordering::Release);
    }

    /// The loop returned.
    pub(crate) fn stopped(&self) {
        self.running.store(false, Ordering::Release);
    }

    /// The worker stopped leasing and drains.
    pub(crate) fn draining(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// A lease call answered (`Err`: why it failed).
    pub(crate) fn lease_answered(&self, result: Result<(), String>) {
        *lock(&self.mailbox) = result.err().map(|e| format!("mailbox unavailable: {e}"));
    }

    /// A delivery was leased (its `delivery_count`); held until the guard drops.
    pub(crate) fn leased(self: &Arc<Self>, delivery_count: u32) -> InFlight {
        self.metrics.leased.inc();
        if delivery_count > 1 {
            self.metrics.redelivered.inc();
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.held).insert(id, Instant::now());
        InFlight { ops: Arc::clone(self), id }
    }

    /// An item ended with `terminal`.
    pub(crate) fn ended(&self, terminal: &Report) {
        match terminal.body {
            ReportBody::ExecutionFail { .. } | ReportBody::AgentProgramFailed { .. } => self.metrics.failed.inc(),
            _ => self.metrics.completed.inc(),
        };
    }

    /// A delivery was handed back unfinished at shutdown.
    pub(crate) fn released(&self) {
        self.metrics.released.inc();
    }

    /// The trace sink that times model requests and tool calls.
    pub(crate) fn latencies(self: &Arc<Self>) -> Arc<dyn TraceSink> {
        Arc::new(Latencies(Arc::clone(self)))
    }
}

/// A held delivery (see [`Ops::leased`]).
pub(crate) struct InFlight {
    ops: Arc<Ops>,
    id: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.ops.held).remove(&self.id);
    }
}

/// Observes model requests and tool calls in an item's trace.
struct Latencies(Arc<Ops>);

impl TraceSink for Latencies {
    fn record(&self, entry: &Arc<TraceEntry>) {
        let seconds = |us: u64| us as f64 / 1e6;
        match &entry.record {
            TraceRecord::Model(model) => self.0.metrics.model_request.observe(seconds(model.duration_us)),
            TraceRecord::Stage(stage) if stage.hook == StageName::Execute => {
                self.0.metrics.tool_call.observe(seconds(stage.duration_us));
            }
            _ => {}
        }
    }
}

/// Several sinks as one: an item's spans and its latencies.
pub(crate) struct Tee(pub(crate) Vec<Arc<dyn TraceSink>>);

impl TraceSink for Tee {
    fn record(&self, entry: &Arc<TraceEntry>) {
        for sink in &self.0 {
            sink.record(entry);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_needs_a_running_loop_an_answering_mailbox_and_no_drain() {
        let ops = Ops::new();
        assert_eq!(ops.readiness(), Err("the worker loop is not running".to_owned()));
        ops.running.store(true, Ordering::Release);
        assert_eq!(ops.readiness(), Err("not connected to the mailbox yet".to_owned()));
        ops.lease_answered(Ok(()));
        assert_eq!(ops.readiness(), Ok(()));
        ops.lease_answered(Err("connection refused".to_owned()));
        assert_eq!(ops.readiness(), Err("mailbox unavailable: connection refused".to_owned()));
        ops.lease_answered(Ok(()));
        ops.draining();
        assert!(ops.readiness().is_err_and(|reason| reason.starts_with("draining")));
        assert_eq!(ops.liveness(), Ok(()), "alive while draining");
        ops.stopped();
        assert!(ops.liveness().is_err());
    }

    #[tokio::test]
    async fn in_flight_counts_held_deliveries_until_their_guards_drop_and_redeliveries_are_counted() {
        let ops = Ops::new();
        let first = ops.leased(1);
        let second = ops.leased(3);
        let text = ops.render().await.expect("encodes");
        assert!(text.contains("spine_worker_items_in_flight 2"), "{text}");
        assert!(text.contains("spine_worker_items_leased_total 2"), "{text}");
        assert!(text.contains("spine_worker_items_redelivered_total 1"), "{text}");
        assert!(text.contains("spine_worker_mailbox_pending -1"), "no mailbox yet: {text}");
        drop((first, second));
        let text = ops.render().await.expect("encodes");
        assert!(text.contains("spine_worker_items_in_flight 0"), "{text}");
        assert!(text.contains("spine_worker_oldest_lease_age_seconds 0.0"), "{text}");
    }
}
