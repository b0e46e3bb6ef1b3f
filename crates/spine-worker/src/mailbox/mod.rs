//! The mailbox contract: where items wait, how a worker leases and settles them, where reports
//! go, and the idempotency store that makes at-least-once delivery run each piece of work once.
//!
//! Three traits, one per concern, each implemented directly by every backend:
//!
//! - [`Queue`] — the items: [`Queue::submit`] appends raw item bytes; [`Queue::lease`] hands
//!   out [`Delivery`]s, each with a [`Lease`] that must be settled: `ack` (done), `nack`
//!   (redeliver, optionally after a delay), `dead_letter` (give up). A lease that is neither
//!   settled nor kept alive ([`Lease::keep_alive`]) within the lease time is redelivered with a
//!   higher [`Delivery::delivery_count`], up to the mailbox's `max_deliver`; one more delivery
//!   is then handed out so that a worker can dead-letter it (and report the failure).
//!   [`Queue::dead_letters`] reads the items given up.
//! - [`Executions`] — the idempotency store: [`Executions::begin`] claims an item's execution
//!   for one delivery, or answers that it already finished (with the stored terminal report),
//!   that another delivery is running it, or that a close request canceled it first.
//!   [`Executions::finish`] stores and publishes the terminal report — only while the claim
//!   still holds, so at most one terminal report is ever stored (and published) per item —
//!   together with the reports that precede it and, given the delivery's [`SettleTicket`], its
//!   acknowledgement: one write where the backend can (SQLite: one transaction), so that a
//!   quick item costs three writes — lease, claim, and reports + terminal report + settlement.
//!   A delivery is never settled before its terminal report is durable.
//!   [`Executions::claim_status`] tells a running claim whether it still holds;
//!   [`Executions::request_cancel`] marks an execution canceled and, when it runs somewhere,
//!   signals every worker ([`Executions::cancel_signals`]).
//! - [`ReportLog`] — the reports: [`ReportLog::publish`] appends reports; per item, reports keep
//!   the order they were published in. [`ReportLog::reports`] reads them back (all, or one
//!   item's), optionally following new ones.
//!
//! A [`Mailbox`] is all three (implemented for every type that implements them): what a
//! [`MailboxUrl`](crate::url::MailboxUrl) opens and what the worker holds. A part that needs
//! one concern takes only that trait (`Arc<dyn Mailbox>` coerces to `Arc<dyn Executions>`).
//!
//! **Fencing.** A claim is fenced by its `(delivery_id, attempt_no)`. When a lease expires
//! under a live worker, the redelivery of the same message claims the execution with the next
//! attempt ([`Executions::begin`]); the earlier claim is then [`ClaimStatus::Superseded`]:
//! `finish` refuses it, and its worker stops the item, publishes nothing more for it (no
//! progress reports either) and leaves the delivery to the new claim (it neither acks nor
//! nacks it). Exactly one terminal report per item results.
//!
//! Backends: [`sqlite`] (one machine, no server) and, with the `nats` feature, [`nats`]
//! (NATS JetStream). Both are opened from a URL by [`crate::url::MailboxUrl`].
//!
//! Dependencies: this module and its backends use nothing else of the crate (the URLs of
//! [`crate::url`] open them, not the other way round).

use std::time::Duration;

use thiserror::Error;

mod executions;
#[cfg(feature = "nats")]
pub mod nats;
mod queue;
mod redact;
mod report_log;
pub mod sqlite;

pub use executions::{Begin, CancelSignal, CancelState, Claim, ClaimStatus, Executions, Finished};
pub(crate) use queue::TicketKind;
pub use queue::{DeadLetter, Delivery, Lease, LeaseStatus, Queue, SettleTicket};
pub use redact::redact;
pub use report_log::{PendingPublish, REPUBLISH_FOR, ReportLog, ReportQuery, ReportStream, confirm, join_pending};

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
    /// An existing stream or consumer has a setting that cannot change in place and differs
    /// from what the mailbox URL asks for (e.g. a stream's storage).
    #[error("{object}: {field} is `{current}` but the mailbox URL asks for `{wanted}`; {remedy}")]
    Incompatible {
        /// What has the setting (`stream SPINE_ITEMS`, `consumer spine-workers`).
        object: String,
        /// The setting (`storage`, `retention`, `ack_policy`).
        field: &'static str,
        /// Its current value.
        current: String,
        /// The value the URL asks for.
        wanted: String,
        /// What to do.
        remedy: String,
    },
    /// Something stored in the mailbox is not what the worker wrote (a report or execution
    /// record that does not parse).
    #[error("corrupt mailbox record: {0}")]
    Corrupt(String),
    /// The backend is closed.
    #[error("the mailbox is closed")]
    Closed,
}

/// A failed first connection attempt that will be retried (see `connect_wait_ms` in
/// [`crate::url`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectRetry {
    /// The server URL.
    pub url: String,
    /// The attempt that failed, from 1.
    pub attempt: u32,
    /// Why it failed.
    pub error: String,
    /// The pause before the next attempt.
    pub retry_in: Duration,
    /// What is left of the connect wait.
    pub remaining: Duration,
}

/// A whole mailbox: its [`Queue`], its [`Executions`] and its [`ReportLog`]. Every type that
/// implements the three is one; there is nothing more to implement.
pub trait Mailbox: Queue + Executions + ReportLog {}

impl<T: Queue + Executions + ReportLog + ?Sized> Mailbox for T {}

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
