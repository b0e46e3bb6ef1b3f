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
//! One delivery, start to end:
//!
//! 1. decode the identity (the item id, else the delivery id) and compute the attempt:
//!    the envelope's `attempt_no` + deliveries − 1;
//! 2. register as running — when the same delivery of the item already runs here (its lease
//!    expired under this worker and the message came back), wait for that copy instead of
//!    starting a second one, then go on; when another delivery of the item finished its flow
//!    here and is settling, wait for it too (the claim then finds the item finished) — then
//!    claim the execution ([`Mailbox::begin`]):
//!    `Done` → re-publish the stored terminal report (a duplicate delivery never runs twice;
//!    a redelivery of the same message re-publishes it only when the reports lack it);
//!    `Redelivered` (it finished under this same message) → re-publish only when missing,
//!    whatever the delivery counter says; `Stale` (a later delivery of the message holds it)
//!    → nothing, not even a settlement;
//!    `Busy` → nack with a delay; `CancelRequested` → report `execution_canceled`;
//!    `Run` → dead-letter it if its deliveries ran out, else reject it (malformed,
//!    unsupported) or run its flow;
//!    while it runs, the claim is checked every [`WorkerConfig::fence_check`]; once a later
//!    delivery superseded it, the item is canceled and reports nothing more;
//! 3. settle: a stored (or re-published) terminal report → ack (dead-letter when exhausted);
//!    none (canceled for shutdown) or a mailbox failure → nack, so it is redelivered;
//!    a superseded claim → neither: the delivery belongs to the claim that took over (an ack
//!    would remove the message under it, a nack would hand it out once more).
//!
//! Shutdown: stop leasing, let in-flight items finish within [`WorkerConfig::grace`], then
//! cancel the rest (they report nothing terminal and are nacked for redelivery).
//! `--once` ([`WorkerConfig::once`]): stop when nothing is in flight here and the mailbox is
//! drained (nothing queued or leased anywhere).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use spine_core::reports::WorkIdentity;
use spine_core::trace::Trace;
use thiserror::Error;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

use crate::decode::decode;
use crate::env::Environment;
use crate::fence::{ClaimWatch, KeepAlive};
use crate::flows::{self, ItemContext};
use crate::mailbox::{Begin, Claim, ClaimStatus, Delivery, Lease, Mailbox, MailboxError};
use crate::running::{CancelReason, Cancellation, RunningItems};
use crate::shutdown::Shutdown;
use crate::sink::{Published, Publisher, Republish};

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
    /// Deliveries handed to a task whose claim ([`Mailbox::begin`]) has not returned yet: the
    /// loop leases again only once it is 0, so items are claimed in the order they were leased
    /// even though slots free up before settlement.
    unclaimed: watch::Sender<usize>,
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
                config,
            }),
        }
    }

    /// Runs until `shutdown` fires (or, with `once`, until the mailbox is drained).
    pub async fn run(self, mut shutdown: Shutdown) -> Result<WorkerSummary, WorkerError> {
        let shared = self.shared;
        let mut signals = shared.mailbox.cancel_signals().await?;
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
                tasks.spawn(async move { process(&shared, delivery, slot, unclaimed).await });
            }
        }
        shared.mailbox.release().await;
        let canceled = drain(&shared, &mut tasks).await;
        listener.abort();
        Ok(WorkerSummary { deliveries: shared.deliveries.load(Ordering::Relaxed), canceled_at_shutdown: canceled })
    }
}

/// Lets in-flight items finish within the grace period, then cancels the rest.
async fn drain(shared: &Shared, tasks: &mut JoinSet<()>) -> usize {
    let graceful =
        tokio::time::timeout(shared.config.grace, async { while tasks.join_next().await.is_some() {} }).await;
    if graceful.is_ok() {
        return 0;
    }
    let canceled = shared.running.cancel_all_for_shutdown();
    tracing::info!("shutdown: canceled {canceled} in-flight item(s); they will be redelivered");
    let stopped = tokio::time::timeout(shared.config.grace.max(Duration::from_secs(1)), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if stopped.is_err() {
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
    canceled
}

/// What the delivery's flow decided about settlement.
enum Settle {
    /// Ack (or dead-letter) when a terminal report is stored.
    Normal,
    /// Dead-letter after reporting.
    DeadLetter(String),
    /// Nack after this delay.
    Retry(Option<Duration>),
}

async fn process(shared: &Arc<Shared>, delivery: Delivery, slot: OwnedSemaphorePermit, unclaimed: Unclaimed) {
    let mut unclaimed = Some(unclaimed);
    shared.deliveries.fetch_add(1, Ordering::Relaxed);
    let Delivery { delivery_id, delivery_count, max_deliver, body, lease } = delivery;
    let lease: Arc<dyn Lease> = Arc::from(lease);
    let decoded = decode(&body, &delivery_id);
    drop(body);
    let id = decoded.identity.clone();
    let attempt_no = id.attempt_no.saturating_add(delivery_count.saturating_sub(1));
    let cancellation = Cancellation::default();
    let keep_alive = KeepAlive::start(Arc::clone(&lease), shared.config.keep_alive, delivery_id.clone());
    let running = loop {
        match shared.running.register(&id.item_id, &delivery_id, cancellation.clone()) {
            Ok(guard) => break guard,
            Err(copy) => {
                // Its item is claimed here already: the loop need not wait for this delivery.
                unclaimed.take();
                tracing::info!(
                    "{} ({delivery_id}) came back while it runs here (its lease expired): waiting for the \
                     running copy instead of starting a second one",
                    id.item_id
                );
                copy.ended().await;
            }
        }
    };
    // A duplicate of an item whose flow just ended here waits until that copy settled: it then
    // finds the item finished (and re-publishes its terminal report) rather than busy.
    for copy in shared.running.settling_copies(&id.item_id, &delivery_id) {
        copy.ended().await;
    }
    if cancellation.reason() == Some(CancelReason::Shutdown) {
        drop(keep_alive);
        settle_retry(&*lease, None, &delivery_id).await;
        return;
    }
    let mut claim = Claim {
        item_id: id.item_id.clone(),
        attempt_no,
        delivery_id: delivery_id.clone(),
        worker_id: shared.config.worker_id.clone(),
        version: 0,
    };
    let begin = match shared.mailbox.begin(&mut claim).await {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!("claim of {} ({delivery_id}): {e}", id.item_id);
            drop(keep_alive);
            settle_retry(&*lease, Some(shared.config.busy_retry), &delivery_id).await;
            return;
        }
    };
    drop(unclaimed);
    match begin {
        Begin::Busy => {
            drop(keep_alive);
            settle_retry(&*lease, Some(shared.config.busy_retry), &delivery_id).await;
            return;
        }
        Begin::Stale { attempt_no: holder } => {
            tracing::warn!(
                "{} ({delivery_id}) delivery {delivery_count} is stale: attempt {holder} of a later delivery \
                 holds the item; not running it, leaving the message to that delivery",
                id.item_id
            );
            return;
        }
        Begin::Run | Begin::CancelRequested | Begin::Done(_) | Begin::Redelivered(_) => {}
    }
    let watch = match begin {
        Begin::Run | Begin::CancelRequested => Some(ClaimWatch::start(
            Arc::clone(&shared.mailbox),
            claim.clone(),
            shared.config.fence_check,
            cancellation.clone(),
        )),
        Begin::Done(_) | Begin::Redelivered(_) | Begin::Busy | Begin::Stale { .. } => None,
    };
    // `begin` may raise the attempt past a previous run of the same delivery.
    let identity = WorkIdentity {
        mailbox_item_id: id.item_id.clone(),
        logical_work_id: id.logical_work_id.clone(),
        attempt_no: claim.attempt_no,
        conversation_id: id.conversation_id.clone(),
        turn_id: id.turn_id.clone(),
    };
    // A run that ends normally is acknowledged with its terminal report where the backend can
    // (one write); a dead-lettered one is settled afterwards.
    let settle_ticket = match begin {
        Begin::Run if delivery_count > max_deliver => None,
        Begin::Run | Begin::CancelRequested => lease.settle_ticket(),
        Begin::Done(_) | Begin::Redelivered(_) | Begin::Busy | Begin::Stale { .. } => None,
    };
    let publisher = Publisher::start(
        Arc::clone(&shared.mailbox),
        claim.clone(),
        identity.clone(),
        cancellation.clone(),
        settle_ticket,
    );
    let spans = shared.config.telemetry.as_ref().map(|exporter| exporter.run(run_info(&decoded, &identity)));
    let ctx = ItemContext {
        env: Arc::clone(&shared.env),
        mailbox: Arc::clone(&shared.mailbox),
        running: Arc::clone(&shared.running),
        sink: Arc::clone(publisher.sink()),
        identity,
        cancellation: cancellation.clone(),
        trace: Trace::new(spans.clone().map(|s| s as Arc<dyn spine_core::trace::TraceSink>)),
        close_wait: shared.config.close_wait,
    };
    let settle = match begin {
        Begin::Done(report) => {
            // A redelivery of the same message re-publishes only what is missing.
            let when = if delivery_count > 1 { Republish::IfMissing } else { Republish::Always };
            ctx.sink.republish(*report, when);
            Settle::Normal
        }
        Begin::Redelivered(report) => {
            ctx.sink.republish(*report, Republish::IfMissing);
            Settle::Normal
        }
        Begin::CancelRequested => {
            ctx.collector().canceled("execution canceled by a close request before it started");
            Settle::Normal
        }
        Begin::Busy | Begin::Stale { .. } => Settle::Retry(Some(shared.config.busy_retry)),
        Begin::Run if delivery_count > max_deliver => {
            flows::exhausted(&ctx, &id, max_deliver);
            Settle::DeadLetter(format!("{max_deliver} deliveries without a result"))
        }
        Begin::Run => {
            match decoded.item {
                Ok(item) => flows::run(&ctx, item).await,
                Err(rejection) => flows::reject(&ctx, &id, &rejection),
            }
            Settle::Normal
        }
    };
    drop(ctx);
    if let Some(spans) = &spans {
        spans.finish();
    }
    drop(watch);
    // The item ran: what is left is waiting until its reports are durable and settling the
    // delivery. Its running slot passes to a settling slot (at most `concurrency` settle at
    // once), so that the next item is leased and claimed meanwhile.
    running.settling();
    let settling = Arc::clone(&shared.settling).acquire_owned().await.ok();
    drop(slot);
    let published = publisher.finish().await;
    drop(keep_alive);
    if let Some(attempt) = superseded_by(shared, &claim, &cancellation, &published).await {
        tracing::warn!(
            "item {} attempt {} ({delivery_id}) stopped: attempt {attempt} took it over; its delivery is left \
             to that attempt",
            claim.item_id,
            claim.attempt_no
        );
        return;
    }
    settle_delivery(&*lease, &delivery_id, settle, &published).await;
    drop(settling);
}

/// The attempt that superseded `claim`, if one did (noticed while it ran, or when `finish`
/// refused its terminal report).
async fn superseded_by(
    shared: &Shared,
    claim: &Claim,
    cancellation: &Cancellation,
    published: &Published,
) -> Option<u32> {
    if let Some(CancelReason::Superseded { attempt_no }) = cancellation.reason() {
        return Some(attempt_no);
    }
    if !published.lost_claim {
        return None;
    }
    match shared.mailbox.claim_status(claim).await {
        Ok(ClaimStatus::Superseded { attempt_no }) => Some(attempt_no),
        Ok(ClaimStatus::Held | ClaimStatus::Released) => None,
        Err(e) => {
            tracing::warn!("claim check of {} ({}): {e}", claim.item_id, claim.delivery_id);
            None
        }
    }
}

async fn settle_delivery(lease: &dyn Lease, delivery_id: &str, settle: Settle, published: &Published) {
    for e in &published.errors {
        tracing::warn!("reports of {delivery_id}: {e}");
    }
    if published.settled {
        return;
    }
    let done = published.terminal.is_some() || published.lost_claim;
    let result = match settle {
        Settle::Retry(delay) => lease.nack(delay).await,
        _ if !published.errors.is_empty() => lease.nack(Some(Duration::from_secs(1))).await,
        _ if !done => lease.nack(None).await,
        Settle::DeadLetter(reason) => lease.dead_letter(&reason).await,
        Settle::Normal => lease.ack().await,
    };
    if let Err(e) = result {
        tracing::warn!("settle {delivery_id}: {e}");
    }
}

async fn settle_retry(lease: &dyn Lease, delay: Option<Duration>, delivery_id: &str) {
    if let Err(e) = lease.nack(delay).await {
        tracing::warn!("nack {delivery_id}: {e}");
    }
}

/// What an item's spans say about it: its ids, and the submitter's span from its
/// `traceparent` (an invalid one is ignored with a warning: the item gets a trace of its own).
fn run_info(decoded: &crate::decode::Decoded, identity: &WorkIdentity) -> spine_otel::RunInfo {
    let parent = decoded.item.as_ref().ok().and_then(|item| item.traceparent.as_deref()).and_then(|text| {
        text.parse::<spine_otel::TraceParent>()
            .inspect_err(|e| tracing::warn!("item {}: {e}; its trace starts a new one", identity.mailbox_item_id))
            .ok()
    });
    spine_otel::RunInfo {
        provider: None,
        parent,
        attributes: vec![
            ("spine.mailbox_item_id".to_owned(), identity.mailbox_item_id.clone()),
            ("spine.logical_work_id".to_owned(), identity.logical_work_id.clone()),
            ("spine.attempt_no".to_owned(), identity.attempt_no.to_string()),
        ],
    }
}
