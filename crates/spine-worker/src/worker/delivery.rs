//! One delivery, start to end: [`process`] = [`claim`] → [`Plan::of`] → [`work`] → [`settle`].
//!
//! 1. **claim** — decode the identity (the item id, else the delivery id) and compute the
//!    attempt: the envelope's `attempt_no` + deliveries − 1; register as running and claim the
//!    execution ([`Executions::begin`]).
//! 2. **plan** — the claim's answer, the decoded item and the delivery's counters decide, once,
//!    what the delivery does ([`Plan`]): run its flow, reject it, dead-letter it (deliveries
//!    exhausted), report it canceled, re-publish its stored terminal report, hand it back for
//!    later (nack with a delay), or leave it to a later delivery (no settlement at all).
//! 3. **work** — carry out the plan's [`Work`] with the delivery's report publisher; while the
//!    delivery holds the claim, the claim is checked every [`WorkerConfig::fence_check`]
//!    (`fence`), and once a later delivery superseded it the item is canceled and reports
//!    nothing more.
//! 4. **settle** — once the reports are durable: a stored (or re-published) terminal report →
//!    the plan's [`Settlement`] (ack, or dead-letter when exhausted); none (canceled for
//!    shutdown) or a mailbox failure → nack, so it is redelivered; a superseded claim →
//!    neither: the delivery belongs to the claim that took over (an ack would remove the
//!    message under it, a nack would hand it out once more).
//!
//! [`WorkerConfig::fence_check`]: super::WorkerConfig::fence_check

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use spine_core::reports::WorkIdentity;
use spine_core::trace::{Trace, TraceSink};
use tokio::sync::OwnedSemaphorePermit;

use super::plan::{Claimed, Plan, Settlement, Work};
use super::{Shared, Unclaimed};
use crate::decode::{Identity, decode};
use crate::fence::{ClaimWatch, KeepAlive};
use crate::flows::{self, ItemContext};
use crate::mailbox::{Claim, ClaimStatus, Delivery, Executions, Lease};
use crate::ops::Tee;
use crate::running::{CancelReason, Cancellation, RunningGuard};
use crate::sink::{Published, Publisher};

/// Handles one leased delivery to its settlement (see the module documentation). `slot` is
/// its running slot, held until its work ended; `unclaimed` counts it as unclaimed until its
/// claim returned.
pub(super) async fn process(
    shared: &Arc<Shared>,
    delivery: Delivery,
    slot: OwnedSemaphorePermit,
    unclaimed: Unclaimed,
) {
    shared.deliveries.fetch_add(1, Ordering::Relaxed);
    let Delivery { delivery_id, delivery_count, max_deliver, body, lease } = delivery;
    let _in_flight = shared.config.ops.leased(delivery_count);
    let lease: Arc<dyn Lease> = Arc::from(lease);
    let _held = super::Held::new(shared, Arc::clone(&lease));
    let decoded = decode(&body, &delivery_id);
    drop(body);
    let (id, item) = (decoded.identity, decoded.item);
    let trace = item.as_ref().ok().map(|item| (item.traceparent.clone(), item.tracestate.clone()));
    let cancellation = Cancellation::default();
    let keep_alive = KeepAlive::start(Arc::clone(&lease), shared.config.keep_alive, delivery_id.clone());
    let mut claim = Claim {
        item_id: id.item_id.clone(),
        attempt_no: id.attempt_no.saturating_add(delivery_count.saturating_sub(1)),
        delivery_id,
        worker_id: shared.config.worker_id.clone(),
        version: 0,
    };
    let (running, claimed) = self::claim(shared, &mut claim, &cancellation, unclaimed).await;
    let work = match Plan::of(claimed, item, delivery_count, max_deliver, shared.config.busy_retry) {
        Plan::Work(work) => work,
        Plan::Retry { after } => {
            drop(keep_alive);
            nack(&*lease, after, &claim.delivery_id).await;
            return;
        }
        Plan::Leave { attempt_no } => {
            tracing::warn!(
                "{} ({}) delivery {delivery_count} is stale: attempt {attempt_no} of a later delivery holds the \
                 item; not running it, leaving the message to that delivery",
                claim.item_id,
                claim.delivery_id
            );
            return;
        }
    };
    let settlement = work.settlement();
    // A re-published terminal report ended its item earlier: it is not counted again.
    let counts = !matches!(work, Work::Republish { .. });
    let publisher = self::work(shared, &claim, &id, work, trace, &cancellation, &*lease).await;
    // The item ran: what is left is waiting until its reports are durable and settling the
    // delivery. Its running slot passes to a settling slot (at most `concurrency` settle at
    // once), so that the next item is leased and claimed meanwhile.
    running.settling();
    let settling = Arc::clone(&shared.settling).acquire_owned().await.ok();
    drop(slot);
    let published = publisher.finish().await;
    drop(keep_alive);
    if counts && let Some(terminal) = &published.terminal {
        shared.config.ops.ended(terminal);
    }
    settle(shared, &claim, &cancellation, &*lease, settlement, &published).await;
    drop(settling);
}

/// **Claim.** Registers the delivery as running here and claims the execution of its item.
///
/// Contract: when the same delivery of the item already runs here (its lease expired under
/// this worker and the message came back), waits for that copy instead of starting a second
/// one; when another delivery of the item finished its flow here and is settling, waits for it
/// too (the claim then finds the item finished rather than busy). `unclaimed` is released once
/// the item is claimed here (by that copy) or [`Executions::begin`] returned. Returns the
/// registration, held until the delivery ends, and what the claim found: the mailbox's answer,
/// [`Claimed::Stopping`] when `cancellation` says [`CancelReason::Shutdown`] before the claim,
/// or [`Claimed::Failed`] (logged). Sets `claim.attempt_no` and `claim.version` as `begin`
/// does; never settles the delivery.
async fn claim(
    shared: &Shared,
    claim: &mut Claim,
    cancellation: &Cancellation,
    unclaimed: Unclaimed,
) -> (RunningGuard, Claimed) {
    let mut unclaimed = Some(unclaimed);
    let running = loop {
        match shared.running.register(&claim.item_id, &claim.delivery_id, cancellation.clone()) {
            Ok(guard) => break guard,
            Err(copy) => {
                // Its item is claimed here already: the loop need not wait for this delivery.
                unclaimed.take();
                tracing::info!(
                    "{} ({}) came back while it runs here (its lease expired): waiting for the running copy \
                     instead of starting a second one",
                    claim.item_id,
                    claim.delivery_id
                );
                copy.ended().await;
            }
        }
    };
    // A duplicate of an item whose flow just ended here waits until that copy settled: it then
    // finds the item finished (and re-publishes its terminal report) rather than busy.
    for copy in shared.running.settling_copies(&claim.item_id, &claim.delivery_id) {
        copy.ended().await;
    }
    if cancellation.reason() == Some(CancelReason::Shutdown) {
        return (running, Claimed::Stopping);
    }
    let begun = shared.mailbox.begin(claim).await;
    drop(unclaimed);
    match begun {
        Ok(begin) => (running, Claimed::Begun(begin)),
        Err(e) => {
            tracing::warn!("claim of {} ({}): {e}", claim.item_id, claim.delivery_id);
            (running, Claimed::Failed)
        }
    }
}

/// **Work.** Carries out a claimed delivery's [`Work`] and returns its report publisher, not
/// finished yet.
///
/// Contract: the reports carry the claim's attempt (`begin` may have raised it past a previous
/// run of the same delivery); at most one terminal report is stored, and only while the claim
/// holds (the publisher's [`Executions::finish`]); while the work holds the claim it is watched
/// and a superseded copy is canceled; the delivery is acknowledged together with its terminal
/// report where the backend can ([`Work::acks_with_its_terminal_report`]). With telemetry on,
/// the item's spans end here. Never settles the delivery otherwise.
async fn work(
    shared: &Shared,
    claim: &Claim,
    id: &Identity,
    work: Work,
    trace: Option<(Option<String>, Option<String>)>,
    cancellation: &Cancellation,
    lease: &dyn Lease,
) -> Publisher {
    let watch = work.holds_the_claim().then(|| {
        let executions: Arc<dyn Executions> = Arc::clone(&shared.mailbox) as Arc<dyn Executions>;
        ClaimWatch::start(executions, claim.clone(), shared.config.fence_check, cancellation.clone())
    });
    let identity = WorkIdentity {
        mailbox_item_id: id.item_id.clone(),
        logical_work_id: id.logical_work_id.clone(),
        attempt_no: claim.attempt_no,
        conversation_id: id.conversation_id.clone(),
        turn_id: id.turn_id.clone(),
    };
    let ticket = if work.acks_with_its_terminal_report() { lease.settle_ticket() } else { None };
    let publisher =
        Publisher::start(Arc::clone(&shared.mailbox), claim.clone(), identity.clone(), cancellation.clone(), ticket);
    let spans = shared.config.telemetry.as_ref().map(|exporter| exporter.run(run_info(trace, &identity)));
    let mut sinks = vec![shared.config.ops.latencies()];
    if let Some(spans) = &spans {
        sinks.push(Arc::clone(spans) as Arc<dyn TraceSink>);
    }
    let ctx = ItemContext {
        env: Arc::clone(&shared.env),
        executions: Arc::clone(&shared.mailbox) as Arc<dyn Executions>,
        running: Arc::clone(&shared.running),
        sink: Arc::clone(publisher.sink()),
        identity,
        cancellation: cancellation.clone(),
        trace: Trace::new(Some(Arc::new(Tee(sinks)))),
        close_wait: shared.config.close_wait,
    };
    match work {
        Work::Run(item) => flows::run(&ctx, *item).await,
        Work::Reject(rejection) => flows::reject(&ctx, id, &rejection),
        Work::Exhausted { max_deliver } => flows::exhausted(&ctx, id, max_deliver),
        Work::Canceled => ctx.collector().canceled("execution canceled by a close request before it started"),
        Work::Republish { report, when } => ctx.sink.republish(*report, when),
    }
    drop(ctx);
    if let Some(spans) = &spans {
        spans.finish();
    }
    drop(watch);
    publisher
}

/// **Settle.** Settles a delivery whose work ended and whose reports are `published` (durable,
/// or failed).
///
/// Contract: a superseded claim (noticed while it ran, or when `finish` refused its terminal
/// report) is neither acknowledged nor nacked — the delivery belongs to the attempt that took
/// over. Otherwise: nothing more when the terminal report's write settled it already; a
/// mailbox failure → nack after 1 s (the stored terminal report is re-published on
/// redelivery); no terminal report (canceled for shutdown) → nack at once; else `settlement`
/// (ack, or dead-letter). Failures are logged, never returned.
async fn settle(
    shared: &Shared,
    claim: &Claim,
    cancellation: &Cancellation,
    lease: &dyn Lease,
    settlement: Settlement,
    published: &Published,
) {
    if let Some(attempt) = superseded_by(shared, claim, cancellation, published).await {
        return tracing::warn!(
            "item {} attempt {} ({}) stopped: attempt {attempt} took it over; its delivery is left to that attempt",
            claim.item_id,
            claim.attempt_no,
            claim.delivery_id
        );
    }
    let delivery_id = &claim.delivery_id;
    for e in &published.errors {
        tracing::warn!("reports of {delivery_id}: {e}");
    }
    if published.settled {
        return;
    }
    let done = published.terminal.is_some() || published.lost_claim;
    let result = match settlement {
        _ if !published.errors.is_empty() => lease.nack(Some(Duration::from_secs(1))).await,
        _ if !done => {
            shared.config.ops.released();
            lease.nack(None).await
        }
        Settlement::DeadLetter(reason) => lease.dead_letter(&reason).await,
        Settlement::Ack => lease.ack().await,
    };
    if let Err(e) = result {
        tracing::warn!("settle {delivery_id}: {e}");
    }
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

/// Hands a delivery back, to be delivered again after `delay`.
async fn nack(lease: &dyn Lease, delay: Option<Duration>, delivery_id: &str) {
    if let Err(e) = lease.nack(delay).await {
        tracing::warn!("nack {delivery_id}: {e}");
    }
}

/// What an item's spans say about it: its ids, and the submitter's span from its
/// `traceparent` and `tracestate` (an invalid `traceparent` is ignored with a warning: the item
/// gets a trace of its own; an invalid `tracestate` is dropped, the `traceparent` kept).
fn run_info(trace: Option<(Option<String>, Option<String>)>, identity: &WorkIdentity) -> spine_otel::RunInfo {
    let item = &identity.mailbox_item_id;
    let (traceparent, tracestate) = trace.unwrap_or_default();
    let parent = traceparent.and_then(|text| {
        text.parse::<spine_otel::TraceParent>()
            .inspect_err(|e| tracing::warn!("item {item}: {e}; its trace starts a new one"))
            .ok()
    });
    let parent = parent.map(|parent| match tracestate {
        Some(state) => parent.clone().with_state(&state).unwrap_or_else(|e| {
            tracing::warn!("item {item}: {e}; the traceparent is kept without it");
            parent
        }),
        None => parent,
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
