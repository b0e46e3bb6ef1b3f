//! The mailbox contract: where items wait, how a worker leases and settles them, where reports
//! go, and the idempotency store that makes at-least-once delivery run each piece of work once.
//!
//! A [`Mailbox`] has four parts:
//!
//! - **Queue**: [`Mailbox::submit`] appends raw item bytes; [`Mailbox::lease`] hands out
//!   [`Delivery`]s. A delivery's [`Lease`] must be settled: `ack` (done), `nack` (redeliver,
//!   optionally after a delay), `dead_letter` (give up). A lease that is neither settled nor
//!   kept alive ([`Lease::keep_alive`]) within the lease time is redelivered with a higher
//!   [`Delivery::delivery_count`], up to the mailbox's `max_deliver`; one more delivery is
//!   then handed out so that a worker can dead-letter it (and report the failure).
//! - **Reports**: [`Mailbox::publish`] appends one report; per item, reports keep the order
//!   they were published in. [`Mailbox::reports`] reads them back (all, or one item's),
//!   optionally following new ones.
//! - **Executions** (the idempotency store): [`Mailbox::begin`] claims an item's execution for
//!   one delivery, or answers that it already finished (with the stored terminal report), that
//!   another delivery is running it, or that a close request canceled it first.
//!   [`Mailbox::finish`] stores and publishes the terminal report — only while the claim still
//!   holds, so at most one terminal report is ever stored (and published) per item.
//!   [`Mailbox::finish_with`] does the same with the reports that precede the terminal one and,
//!   given the delivery's [`SettleTicket`], its acknowledgement: one write where the backend can
//!   (SQLite: one transaction), so that a quick item costs three writes — lease, claim, and
//!   reports + terminal report + settlement. A delivery is never settled before its terminal
//!   report is durable.
//!   [`Mailbox::claim_status`] tells a running claim whether it still holds.
//! - **Fencing**: a claim is fenced by its `(delivery_id, attempt_no)`. When a lease expires
//!   under a live worker, the redelivery of the same message claims the execution with the next
//!   attempt ([`Mailbox::begin`]); the earlier claim is then [`ClaimStatus::Superseded`]:
//!   `finish` refuses it, and its worker stops the item, publishes nothing more for it (no
//!   progress reports either) and leaves the delivery to the new claim (it neither acks nor
//!   nacks it). Exactly one terminal report per item results.
//! - **Cancellation**: [`Mailbox::request_cancel`] marks an execution canceled and, when it
//!   runs somewhere, signals every worker ([`Mailbox::cancel_signals`]).
//!
//! Backends: [`sqlite`] (one machine, no server) and, with the `nats` feature, [`nats`]
//! (NATS JetStream). Both are opened from a URL by [`crate::url::MailboxUrl`].

use std::time::Duration;

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use spine_protocol::report::Report;
use thiserror::Error;

#[cfg(feature = "nats")]
pub mod nats;
pub mod sqlite;

/// A mailbox operation failed.
#[derive(Debug, Error)]
pub enum MailboxError {
    /// The SQLite store failed.
    #[error("sqlite mailbox {path}: {message}")]
    Sqlite {
        /// The database file, as the URL names it.
        path: String,
        /// What failed, with SQLite's own message.
        message: String,
    },
    /// The NATS server failed or could not be reached.
    #[error("nats mailbox {url}: {message}")]
    Nats {
        /// The server, as the URL names it.
        url: String,
        /// What failed, with the client's own message.
        message: String,
    },
    /// Something stored in the mailbox is not what the worker wrote (a report or execution
    /// record that does not parse).
    #[error("corrupt mailbox record: {0}")]
    Corrupt(String),
    /// The backend is closed.
    #[error("the mailbox is closed")]
    Closed,
}

/// One leased item.
pub struct Delivery {
    /// The backend's id of this queued message (stable across its redeliveries): it names
    /// reports of items too broken to have an `item_id`.
    pub delivery_id: String,
    /// How many times this message was handed out, this one included (from 1).
    pub delivery_count: u32,
    /// Deliveries allowed before the message is dead-lettered.
    pub max_deliver: u32,
    /// The item as submitted.
    pub body: Vec<u8>,
    /// Settles the delivery.
    pub lease: Box<dyn Lease>,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("delivery_id", &self.delivery_id)
            .field("delivery_count", &self.delivery_count)
            .field("bytes", &self.body.len())
            .finish()
    }
}

impl Delivery {
    /// Whether this delivery comes after the last one allowed: dead-letter it, do not run it.
    pub fn exhausted(&self) -> bool {
        self.delivery_count > self.max_deliver
    }
}

/// How a lease stands after a keep-alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseStatus {
    /// Still ours.
    Held,
    /// It expired and was handed to someone else.
    Lost,
}

/// The settlement side of one delivery.
#[async_trait]
pub trait Lease: Send + Sync {
    /// Done: remove the item from the queue.
    async fn ack(&self) -> Result<(), MailboxError>;
    /// Not done: deliver it again (after `delay`).
    async fn nack(&self, delay: Option<Duration>) -> Result<(), MailboxError>;
    /// Extends the lease by the mailbox's lease time (JetStream's `+WPI`).
    async fn keep_alive(&self) -> Result<LeaseStatus, MailboxError>;
    /// Gives up on the item: keep it in the dead-letter place with `reason`, never deliver it
    /// again.
    async fn dead_letter(&self, reason: &str) -> Result<(), MailboxError>;

    /// A ticket to acknowledge this delivery in the same write that stores its terminal report
    /// ([`Mailbox::finish_with`]); `None` (the default) where the backend cannot.
    fn settle_ticket(&self) -> Option<SettleTicket> {
        None
    }
}

/// A claim on one execution: who runs which attempt of which item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The item (or, for items without one, the delivery id).
    pub item_id: String,
    /// The attempt, from 1; it never repeats for one item (see [`Mailbox::begin`]).
    pub attempt_no: u32,
    /// The delivery running it.
    pub delivery_id: String,
    /// The worker running it (recorded in the execution record, for people).
    pub worker_id: String,
    /// The backend's version of the claim record (set by `begin`, checked by `finish`).
    pub version: u64,
}

/// What [`Mailbox::begin`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Begin {
    /// The execution is ours: run it.
    Run,
    /// A close request canceled it before it started: it is ours, to report it canceled.
    CancelRequested,
    /// It already finished: this is its stored terminal report (re-publish it, do not run).
    Done(Box<Report>),
    /// It already finished under an earlier delivery of this same message (whatever this
    /// delivery's counter says: a copy that waited in a prefetch buffer still counts 1): this
    /// is its stored terminal report — re-publish it only when the item's reports lack it.
    Redelivered(Box<Report>),
    /// Another delivery of the same item is running it now: try again later.
    Busy,
    /// A later delivery of the same message holds the execution, as `attempt_no`: this
    /// delivery is stale (it waited in a prefetch buffer past its lease). Do not run it and do
    /// not settle it: the message belongs to the later delivery.
    Stale {
        /// The attempt of the later delivery.
        attempt_no: u32,
    },
}

/// How a claim stands, while its item runs (see "Fencing" in the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimStatus {
    /// The execution is still this claim's: run on, and `finish` will store its report.
    Held,
    /// A later delivery of the same message (its lease expired) claimed the execution as
    /// `attempt_no`: stop, report nothing more, leave the delivery to that claim.
    Superseded {
        /// The attempt that took over.
        attempt_no: u32,
    },
    /// The claim no longer holds for another reason: the item's terminal report is stored, or
    /// another message of the item holds it, or nothing is recorded.
    Released,
}

/// What [`Mailbox::request_cancel`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum CancelState {
    /// Not started: it will end canceled when delivered.
    NotStarted,
    /// Running: every worker was signalled.
    Running,
    /// Already finished, with this terminal report.
    Finished(Box<Report>),
}

/// A cancellation request for a running item.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CancelSignal {
    /// The item to cancel.
    pub item_id: String,
    /// The close request that asked for it.
    pub requested_by: String,
}

/// An item in the dead-letter place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    /// The message's [`Delivery::delivery_id`].
    pub delivery_id: String,
    /// Why it was given up.
    pub reason: String,
    /// The item as submitted.
    pub body: Vec<u8>,
}

/// Which reports to read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReportQuery {
    /// Only this item's.
    pub item_id: Option<String>,
    /// Keep streaming new reports after the existing ones.
    pub follow: bool,
}

/// Reports read from a mailbox, for callers that do not use `futures` themselves.
pub struct ReportStream(BoxStream<'static, Result<Report, MailboxError>>);

impl ReportStream {
    /// Reads reports as [`Mailbox::reports`] describes.
    pub async fn open(mailbox: &dyn Mailbox, query: &ReportQuery) -> Result<Self, MailboxError> {
        Ok(ReportStream(mailbox.reports(query).await?))
    }

    /// The next report; `None` at the end (never, when following).
    pub async fn next(&mut self) -> Option<Result<Report, MailboxError>> {
        futures_util::StreamExt::next(&mut self.0).await
    }
}

/// A report's durable write, awaited later so that publishing does not wait for each one.
pub type PendingPublish = BoxFuture<'static, Result<(), MailboxError>>;

/// Waits for every write of `pending`; the first failure wins.
pub fn join_pending(pending: Vec<PendingPublish>) -> PendingPublish {
    Box::pin(async move {
        let mut first = Ok(());
        for p in futures_util::future::join_all(pending).await {
            if let Err(e) = p
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    })
}

/// A terminal report stored by [`Mailbox::finish_with`].
pub struct Finished {
    /// Resolves when the terminal report (and the reports before it) are durable.
    pub pending: PendingPublish,
    /// The delivery was settled (acknowledged) with the terminal report, in the same write.
    pub settled: bool,
}

impl std::fmt::Debug for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finished").field("settled", &self.settled).finish_non_exhaustive()
    }
}

/// What a backend needs to acknowledge a delivery inside [`Mailbox::finish_with`]'s write,
/// from [`Lease::settle_ticket`]. Opaque: only the backend that leased the delivery reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettleTicket(pub(crate) TicketKind);

/// The backends' tickets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TicketKind {
    /// A SQLite `items` row and the token of its lease.
    Sqlite {
        /// The row.
        seq: i64,
        /// The lease token the row must still carry.
        token: String,
    },
}

/// The mailbox. See the module documentation for the contract.
#[async_trait]
pub trait Mailbox: Send + Sync + 'static {
    /// A short description for logs (`sqlite:./spine.db`, `nats://…`).
    fn describe(&self) -> String;

    /// Appends an item; returns its delivery id.
    async fn submit(&self, body: &[u8]) -> Result<String, MailboxError>;

    /// Leases up to `max` items, waiting at most `wait` for the first one.
    async fn lease(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, MailboxError>;

    /// Hands back what this process fetched but did not lease yet (JetStream's prefetched
    /// messages), so that other workers get them now rather than after the lease time. Called
    /// when a worker stops.
    async fn release(&self) {}

    /// Whether nothing is queued or leased anywhere (`--once` stops then).
    async fn drained(&self) -> Result<bool, MailboxError>;

    /// Claims the execution of `claim.item_id` for `claim.delivery_id` (sets `claim.version`).
    /// When the same delivery ran the item before (a redelivery), the new claim supersedes
    /// that run's, and `claim.attempt_no` is raised past that run's attempt if it equals it:
    /// attempts never repeat, whatever the backend's delivery counter says. When that run's
    /// attempt is already higher, this delivery is older than the one holding the item:
    /// [`Begin::Stale`], nothing changes.
    async fn begin(&self, claim: &mut Claim) -> Result<Begin, MailboxError>;

    /// Stores the terminal report of a claimed execution and publishes it — atomically where
    /// the backend can (SQLite: one transaction; JetStream: compare-and-set, then publish).
    /// `None` when the claim no longer holds (another delivery took over, or a terminal report
    /// is already stored): nothing is stored or published then.
    async fn finish(&self, claim: &Claim, report: &Report) -> Result<Option<PendingPublish>, MailboxError>;

    /// [`Mailbox::finish`] with the item's reports that precede the terminal one (`before`, in
    /// order) and, when `settle` is given, the delivery's acknowledgement — one step where the
    /// backend can. SQLite: one transaction stores `before`, the terminal report and the
    /// deletion of the queued row, or (when the claim no longer holds) nothing at all. JetStream
    /// and the default: `before` is published first (without waiting for its acks), then
    /// `finish`; the delivery is not settled here ([`Finished::settled`] is `false`) and the
    /// worker acknowledges it once the returned future resolved.
    async fn finish_with(
        &self,
        claim: &Claim,
        before: &[Report],
        report: &Report,
        settle: Option<&SettleTicket>,
    ) -> Result<Option<Finished>, MailboxError> {
        let _ = settle;
        let earlier = self.publish_all(before).await?;
        Ok(self
            .finish(claim, report)
            .await?
            .map(|terminal| Finished { pending: join_pending(vec![earlier, terminal]), settled: false }))
    }

    /// Whether `claim` (set by `begin`) still holds, or a later delivery took over.
    async fn claim_status(&self, claim: &Claim) -> Result<ClaimStatus, MailboxError>;

    /// The stored terminal report of an item, if it finished.
    async fn terminal(&self, item_id: &str) -> Result<Option<Report>, MailboxError>;

    /// Marks an execution canceled (a close request `requested_by`); signals the worker
    /// running it.
    async fn request_cancel(&self, item_id: &str, requested_by: &str) -> Result<CancelState, MailboxError>;

    /// The cancellations requested from now on, from any process.
    async fn cancel_signals(&self) -> Result<BoxStream<'static, CancelSignal>, MailboxError>;

    /// Appends a report. The returned future resolves when it is durable; reports of one
    /// item keep the order of the `publish` calls.
    async fn publish(&self, report: &Report) -> Result<PendingPublish, MailboxError>;

    /// Appends several reports in order, as one write where the backend can (SQLite: one
    /// transaction; JetStream: the publishes go out back to back and the returned future awaits
    /// their acks together).
    async fn publish_all(&self, reports: &[Report]) -> Result<PendingPublish, MailboxError> {
        let mut pending = Vec::with_capacity(reports.len());
        for report in reports {
            pending.push(self.publish(report).await?);
        }
        Ok(join_pending(pending))
    }

    /// Publishes an item's stored terminal report again — a duplicate delivery of a finished
    /// item, whose first worker may have died between storing and publishing it — unless the
    /// item's reports already hold a terminal report (anywhere among them: reports of a
    /// superseded claim may have followed it), so that every item keeps exactly one terminal
    /// report. `None` when it was already there.
    async fn republish_terminal(&self, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        self.publish(report).await.map(Some)
    }

    /// Items given up after their last delivery, oldest first.
    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, MailboxError>;

    /// Reads reports in order; the stream ends after the last one unless `follow`.
    async fn reports(
        &self,
        query: &ReportQuery,
    ) -> Result<BoxStream<'static, Result<Report, MailboxError>>, MailboxError>;
}

/// Milliseconds since the Unix epoch (the clock of leases).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Milliseconds of a duration, saturating.
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
