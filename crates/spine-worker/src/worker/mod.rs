//! The worker loop: lease items while a concurrency slot is free, run each in its own task,
//! settle its delivery, stop gracefully.
//!
//! Parts (mini-redis style): a [`Semaphore`] bounds the items running; a second one bounds
//! the items settling — once an item's flow ended, its running slot passes to a settling slot
//! while its reports become durable and its delivery is settled, so that the next item is
//! leased and claimed meanwhile (at concurrency 1: one item runs while the previous one
//! settles, never more); a [`Shutdown`] stops
//! leasing; a cancellation listener turns the mailbox's cancel signals into token
//! cancellations; per delivery, a keep-alive task extends the lease every
//! [`WorkerConfig::keep_alive`] while the item runs, and a claim watch cancels the item when a
//! later delivery superseded its claim (`fence`).
//!
//! One delivery, start to end — claim → plan → work → settle — is `delivery`; what it does is
//! decided once, by `plan`: run its flow, reject it, dead-letter it when its deliveries ran
//! out, report it canceled, re-publish its stored terminal report, hand it back for later, or
//! leave it to a later delivery of the same message.
//!
//! Shutdown (drain): stop leasing at once and turn not ready ([`crate::ops`]), hand back what
//! the mailbox prefetched ([`Queue::release`]), let in-flight items finish within
//! [`WorkerConfig::grace`] (`--drain-timeout`), then cancel the rest: they report nothing
//! terminal and are nacked at once (no delay), so another worker takes them without waiting for
//! the lease to expire.
//! `--once` ([`WorkerConfig::once`]): stop when nothing is in flight here and the mailbox is
//! drained (nothing queued or leased anywhere).
//!
//! Dependencies: the worker sits on top of every other module (it decodes with
//! [`crate::decode`], runs [`crate::flows`] in an [`crate::env`], guards deliveries with
//! `fence`, [`crate::running`] and [`crate::sink`], talks to the [`crate::mailbox`], stops on
//! [`crate::shutdown`]); none of them uses it.

mod delivery;
mod plan;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use thiserror::Error;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use crate::env::Environment;
use crate::mailbox::{Lease, Mailbox, MailboxError, Queue};
use crate::ops::Ops;
use crate::running::{CancelReason, RunningItems};
use crate::shutdown::Shutdown;

/// The worker could not start.
#[derive(Debug, Error)]
pub enum WorkerError {
    /// The mailbox failed at start-up.
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
}

/// Limits and timings of a worker.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Items running at once (as many more may be settling: their flow ended, their reports
    /// are on their way and their delivery is not settled yet).
    pub concurrency: usize,
    /// Stop when the mailbox is drained.
    pub once: bool,
    /// How long in-flight items may finish after a shutdown before they are canceled.
    pub grace: Duration,
    /// How long one lease call waits for an item.
    pub poll: Duration,
    /// How often a running item's lease is extended (a third of the lease time).
    pub keep_alive: Duration,
    /// How often a running item's claim is checked for a later delivery that took it over.
    pub fence_check: Duration,
    /// Redelivery delay for an item another delivery is running.
    pub busy_retry: Duration,
    /// How long a close request waits for its target to end.
    pub close_wait: Duration,
    /// This worker's id (in execution claims).
    pub worker_id: String,
    /// OpenTelemetry export, when on: each item's trace becomes one trace of spans, a child
    /// of the item's `traceparent` when it has one.
    pub telemetry: Option<Arc<spine_otel::Exporter>>,
    /// This worker's health, readiness and metrics ([`crate::ops`]): the loop and each
    /// delivery report to it; `spine worker --listen` serves it.
    pub ops: Arc<Ops>,
}

impl WorkerConfig {
    /// Defaults for a mailbox whose leases last `lease`.
    pub fn new(lease: Duration) -> Self {
        WorkerConfig {
            concurrency: 4,
            once: false,
            grace: Duration::from_secs(10),
            poll: Duration::from_millis(250),
            keep_alive: (lease / 3).max(Duration::from_millis(50)),
            fence_check: (lease / 3).max(Duration::from_millis(50)),
            busy_retry: lease.min(Duration::from_secs(5)),
            close_wait: Duration::from_secs(10),
            worker_id: format!("worker-{}-{}", std::process::id(), uuid::Uuid::new_v4().simple()),
            telemetry: None,
            ops: Ops::new(),
        }
    }
}

/// What a worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    /// Deliveries handled (settled or abandoned).
    pub deliveries: u64,
    /// In-flight items canceled at shutdown.
    pub canceled_at_shutdown: usize,
}

/// A worker over one mailbox.
pub struct Worker {
    shared: Arc<Shared>,
}

struct Shared {
    mailbox: Arc<dyn Mailbox>,
    env: Arc<Environment>,
    config: WorkerConfig,
    running: Arc<RunningItems>,
    deliveries: AtomicU64,
    /// Slots of items whose flow ended and whose reports and settlement are on their way.
    settling: Arc<Semaphore>,
    /// Deliveries handed to a task whose claim
    /// ([`Executions::begin`](crate::mailbox::Executions::begin)) has not returned yet: the
    /// loop leases again only once it is 0, so items are claimed in the order they were leased
    /// even though slots free up before settlement.
    unclaimed: watch::Sender<usize>,
    /// The leases of deliveries not settled yet, by a number of their own: what a drain hands
    /// back when their tasks had to be aborted.
    held: std::sync::Mutex<HashMap<u64, Arc<dyn Lease>>>,
    next_held: AtomicU64,
}

/// Keeps a delivery's lease in [`Shared::held`] until dropped (once the delivery settled).
struct Held<'a> {
    shared: &'a Shared,
    id: u64,
}

impl<'a> Held<'a> {
    fn new(shared: &'a Shared, lease: Arc<dyn Lease>) -> Self {
        let id = shared.next_held.fetch_add(1, Ordering::Relaxed);
        lock(&shared.held).insert(id, lease);
        Held { shared, id }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        lock(&self.shared.held).remove(&self.id);
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Counts a delivery as unclaimed until dropped.
struct Unclaimed(watch::Sender<usize>);

impl Unclaimed {
    fn new(counter: &watch::Sender<usize>) -> Self {
        counter.send_modify(|n| *n += 1);
        Unclaimed(counter.clone())
    }
}

impl Drop for Unclaimed {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Worker {
    /// A worker.
    pub fn new(mailbox: Arc<dyn Mailbox>, env: Arc<Environment>, config: WorkerConfig) -> Self {
        Worker {
            shared: Arc::new(Shared {
                mailbox,
                env,
                running: Arc::new(RunningItems::default()),
                deliveries: AtomicU64::new(0),
                settling: Arc::new(Semaphore::new(config.concurrency.max(1))),
                unclaimed: watch::Sender::new(0),
                held: std::sync::Mutex::new(HashMap::new()),
                next_held: AtomicU64::new(0),
                config,
            }),
        }
    }

    /// Runs until `shutdown` fires (or, with `once`, until the mailbox is drained).
    pub async fn run(self, mut shutdown: Shutdown) -> Result<WorkerSummary, WorkerError> {
        let shared = self.shared;
        let mut signals = shared.mailbox.cancel_signals().await?;
        let ops = Arc::clone(&shared.config.ops);
        ops.started(Arc::clone(&shared.mailbox) as Arc<dyn Queue>);
        let running = Arc::clone(&shared.running);
        let listener = tokio::spawn(async move {
            while let Some(signal) = signals.next().await {
                running.cancel(&signal.item_id, CancelReason::CloseRequest(signal.requested_by));
            }
        });
        let concurrency = shared.config.concurrency.max(1);
        let semaphore = Arc::new(Semaphore::new(concurrency));
        let mut tasks: JoinSet<()> = JoinSet::new();
        let mut backoff = Duration::from_millis(50);
        loop {
            while tasks.try_join_next().is_some() {}
            let permit = tokio::select! {
                biased;
                () = shutdown.fired() => break,
                permit = Arc::clone(&semaphore).acquire_owned() => match permit {
                    Ok(p) => p,
                    Err(_) => break,
                },
            };
            let mut unclaimed = shared.unclaimed.subscribe();
            tokio::select! {
                biased;
                () = shutdown.fired() => break,
                _ = unclaimed.wait_for(|n| *n == 0) => {}
            }
            let want = 1 + semaphore.available_permits();
            let leased = tokio::select! {
                biased;
                () = shutdown.fired() => break,
                r = shared.mailbox.lease(want, shared.config.poll) => r,
            };
            ops.lease_answered(leased.as_ref().map(|_| ()).map_err(ToString::to_string));
            let deliveries = match leased {
                Ok(d) => {
                    backoff = Duration::from_millis(50);
                    d
                }
                Err(e) => {
                    tracing::warn!("lease from {}: {e}", shared.mailbox.describe());
                    drop(permit);
                    tokio::select! {
                        () = shutdown.fired() => break,
                        () = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                    continue;
                }
            };
            if deliveries.is_empty() {
                drop(permit);
                while tasks.try_join_next().is_some() {}
                if shared.config.once && tasks.is_empty() {
                    match shared.mailbox.drained().await {
                        Ok(true) => break,
                        Ok(false) => {}
                        Err(e) => tracing::warn!("drained check: {e}"),
                    }
                }
                continue;
            }
            let mut permit = Some(permit);
            for delivery in deliveries {
                let slot = match permit.take() {
                    Some(p) => Some(p),
                    None => Arc::clone(&semaphore).try_acquire_owned().ok(),
                };
                let Some(slot) = slot else {
                    // More than asked for: give it back at once.
                    if let Err(e) = delivery.lease.nack(None).await {
                        tracing::warn!("nack {}: {e}", delivery.delivery_id);
                    }
                    continue;
                };
                let shared = Arc::clone(&shared);
                let unclaimed = Unclaimed::new(&shared.unclaimed);
                tasks.spawn(async move { delivery::process(&shared, delivery, slot, unclaimed).await });
            }
        }
        // Draining: not ready from now on; what is held finishes within the grace period.
        ops.draining();
        shared.mailbox.release().await;
        let canceled = drain(&shared, &mut tasks).await;
        listener.abort();
        ops.stopped();
        Ok(WorkerSummary { deliveries: shared.deliveries.load(Ordering::Relaxed), canceled_at_shutdown: canceled })
    }
}

/// How long items canceled by a drain get to stop and settle (their nack) at least: a canceled
/// tool's process group gets a second between SIGTERM and SIGKILL (spine-process's
/// `TERM_GRACE`), and its reports must still be written.
const CANCELED_WAIT: Duration = Duration::from_secs(5);

/// Lets in-flight items finish within the grace period, then cancels the rest; those that have
/// not stopped and settled (nacked) within [`CANCELED_WAIT`] (or the grace period, if longer)
/// are aborted and their leases handed back here, so that no delivery waits for its lease to
/// expire.
async fn drain(shared: &Shared, tasks: &mut JoinSet<()>) -> usize {
    let graceful =
        tokio::time::timeout(shared.config.grace, async { while tasks.join_next().await.is_some() {} }).await;
    if graceful.is_ok() {
        return 0;
    }
    let canceled = shared.running.cancel_all_for_shutdown();
    tracing::info!("shutdown: canceled {canceled} in-flight item(s); they will be redelivered");
    let stopped = tokio::time::timeout(shared.config.grace.max(CANCELED_WAIT), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if stopped.is_err() {
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        let leases: Vec<Arc<dyn Lease>> = lock(&shared.held).drain().map(|(_, lease)| lease).collect();
        for lease in leases {
            shared.config.ops.released();
            if let Err(e) = lease.nack(None).await {
                tracing::warn!("shutdown: hand back an aborted delivery: {e}");
            }
        }
    }
    canceled
}
