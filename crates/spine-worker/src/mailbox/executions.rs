//! The executions' contract: the idempotency store (claims, fencing, terminal reports) and
//! cancellation.

use async_trait::async_trait;
use futures_util::stream::BoxStream;
use spine_protocol::report::Report;

use super::{MailboxError, PendingPublish, SettleTicket};

/// The execution records: who runs which item, and its terminal report. See the module
/// documentation of [`crate::mailbox`] ("Fencing" included).
#[async_trait]
pub trait Executions: Send + Sync {
    /// Claims the execution of `claim.item_id` for `claim.delivery_id` (sets `claim.version`).
    /// When the same delivery ran the item before (a redelivery), the new claim supersedes
    /// that run's, and `claim.attempt_no` is raised past that run's attempt if it equals it:
    /// attempts never repeat, whatever the backend's delivery counter says. When that run's
    /// attempt is already higher, this delivery is older than the one holding the item:
    /// [`Begin::Stale`], nothing changes.
    async fn begin(&self, claim: &mut Claim) -> Result<Begin, MailboxError>;

    /// Whether `claim` (set by `begin`) still holds, or a later delivery took over.
    async fn claim_status(&self, claim: &Claim) -> Result<ClaimStatus, MailboxError>;

    /// Stores the terminal report of a claimed execution and publishes it, after the item's
    /// reports that precede it (`before`, in order) and, when `settle` is given, with the
    /// delivery's acknowledgement. `None` when the claim no longer holds (another delivery took
    /// over, or a terminal report is already stored): no terminal report is stored or
    /// published then.
    ///
    /// SQLite: one transaction stores `before`, the terminal report and the deletion of the
    /// queued row — or, when the claim no longer holds, nothing at all. JetStream: `before` is
    /// published first (without waiting for its acks), then the terminal record is
    /// compare-and-set and the terminal report published; the delivery is not settled here
    /// ([`Finished::settled`] is `false`) and the worker acknowledges it once
    /// [`Finished::pending`] resolved.
    async fn finish(
        &self,
        claim: &Claim,
        before: &[Report],
        report: &Report,
        settle: Option<&SettleTicket>,
    ) -> Result<Option<Finished>, MailboxError>;

    /// The stored terminal report of an item, if it finished.
    async fn terminal(&self, item_id: &str) -> Result<Option<Report>, MailboxError>;

    /// Marks an execution canceled (a close request `requested_by`); signals the worker
    /// running it.
    async fn request_cancel(&self, item_id: &str, requested_by: &str) -> Result<CancelState, MailboxError>;

    /// The cancellations requested from now on, from any process.
    async fn cancel_signals(&self) -> Result<BoxStream<'static, CancelSignal>, MailboxError>;
}

/// A claim on one execution: who runs which attempt of which item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The item (or, for items without one, the delivery id).
    pub item_id: String,
    /// The attempt, from 1; it never repeats for one item (see [`Executions::begin`]).
    pub attempt_no: u32,
    /// The delivery running it.
    pub delivery_id: String,
    /// The worker running it (recorded in the execution record, for people).
    pub worker_id: String,
    /// The backend's version of the claim record (set by `begin`, checked by `finish`).
    pub version: u64,
}

/// What [`Executions::begin`] found.
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

/// How a claim stands, while its item runs (see "Fencing" in [`crate::mailbox`]).
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

/// A terminal report stored by [`Executions::finish`].
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

/// What [`Executions::request_cancel`] found.
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
