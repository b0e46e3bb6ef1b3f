//! The queue's contract: items submitted, leased as deliveries, settled, dead-lettered.

use std::time::Duration;

use async_trait::async_trait;

use super::MailboxError;

/// The queue of items. See the module documentation of [`crate::mailbox`].
#[async_trait]
pub trait Queue: Send + Sync {
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

    /// Messages waiting to be delivered (not leased by anyone), for the worker's consumer-lag
    /// gauge: SQLite's queued rows, JetStream's consumer `num_pending`. `None` (the default)
    /// where the backend cannot tell.
    async fn pending(&self) -> Result<Option<u64>, MailboxError> {
        Ok(None)
    }

    /// Items given up after their last delivery ([`Lease::dead_letter`]), oldest first.
    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, MailboxError>;
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
    /// ([`Executions::finish`](super::Executions::finish)); `None` (the default) where the
    /// backend cannot.
    fn settle_ticket(&self) -> Option<SettleTicket> {
        None
    }
}

/// What a backend needs to acknowledge a delivery inside
/// [`Executions::finish`](super::Executions::finish)'s write, from [`Lease::settle_ticket`].
/// Opaque: only the backend that leased the delivery reads it.
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
