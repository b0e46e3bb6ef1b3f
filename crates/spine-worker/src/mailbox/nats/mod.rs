//! The distributed mailbox: NATS JetStream (`nats://HOST:PORT[,HOST:PORT…]`, `tls://…`).
//!
//! Names derive from a prefix `p` (default `spine`; streams use it upper-cased, `P`):
//!
//! | what | stream | subjects | retention |
//! | --- | --- | --- | --- |
//! | items | `P_ITEMS` | `p.items` | work queue; one durable pull consumer `p-workers` shared by every worker: explicit ack, `ack_wait` = the lease, `max_deliver` = the mailbox's + 1 |
//! | reports | `P_REPORTS` | `p.reports.<item>` | limits (kept); one subject per item so that `spine reports --item ID` filters on the server, and so that a batch published again after a failed write can expect the subject's last sequence (`Nats-Expected-Last-Subject-Sequence`) and never land after the item's terminal report |
//! | executions | `P_EXEC` | `p.exec.<item>` | limits, 8 per subject: the idempotency store (claim, cancel flag, terminal report per attempt), updated with compare-and-set (`Nats-Expected-Last-Subject-Sequence`) |
//! | dead letters | `P_DEAD` | `p.dead.<item>` | limits: items that exhausted their deliveries, with the reason in the `Spine-Dead-Reason` header |
//!
//! Every stream gets the URL's replicas, storage, `max_age` and placement (`settings`); the
//! consumer inherits its stream's replicas. On start, existing streams and the consumer are
//! compared with what the URL asks for and updated in place where JetStream allows it (the
//! consumer's `ack_wait` and `max_deliver`; the streams' replicas, `max_age`, placement); a
//! change it does not allow (storage, retention, replicas above 1 on a server outside any
//! cluster) is [`super::MailboxError::Incompatible`], naming the
//! field (`streams`).
//!
//! The first connection is retried with backoff (100 ms doubling to 2 s) for the URL's
//! `connect_wait_ms` when the server is unreachable, so that a worker started before its broker
//! waits for it instead of exiting; later disconnections are handled by the client.
//!
//! **Reconnects.** The client reconnects by itself, without limit, to any server it knows (the
//! seeds and those the cluster announces); subscriptions (cancel signals, the pull stream) are
//! renewed. Acks, naks and in-progress acks are plain publishes: while disconnected they wait
//! in the client and are sent after the reconnect, to whichever server leads the consumer
//! then. So an item in flight keeps running across a reconnect; when the outage (or a consumer
//! leader election) outlasts the lease, JetStream redelivers and the fencing below keeps one
//! claim and one terminal report — the work may start again, nothing completes twice. A request
//! (a publish ack, a record read) that falls in the gap fails with a timeout and is reported
//! as a mailbox error of that operation, which the worker handles as any other (a claim that
//! fails hands the delivery back with a delay; a record written before its ack was lost is
//! found by the redelivery's claim).
//!
//! Cancellation signals are core NATS messages on `p.cancel` (every worker subscribes).
//! Streams and the consumer are created when missing. `<item>` is the item id with every byte
//! outside `[A-Za-z0-9_-]` written `=XX`.
//!
//! `attempt_no` counts deliveries: the message's delivery count from JetStream. Long items
//! send in-progress acks (`+WPI`) through [`Lease::keep_alive`](super::Lease::keep_alive), so
//! ack-wait redelivery normally happens only when the worker is gone — but a late `+WPI` (a
//! loaded machine) lets it happen under a live worker, and so does a message that waited in a
//! client's prefetch buffer past the ack wait. Both are fenced (see the mailbox's "Fencing"):
//! the later delivery's claim supersedes the earlier one, an earlier delivery never takes over
//! from a later one ([`Begin::Stale`](super::Begin::Stale)), the terminal record names the
//! delivery that stored it (so that any later copy of the same message only re-publishes what
//! is missing), and terminal reports carry a per-item `Nats-Msg-Id`, so that the server drops a
//! re-published copy that races the first publication (within its duplicate window, 2 minutes
//! by default). Acks and nacks of a superseded delivery would act on the message under its new
//! claim (JetStream settles by stream sequence), so the worker sends none. The consumer allows one delivery beyond the mailbox's
//! `max_deliver`: the worker that receives it does not run the item but dead-letters it —
//! publishes it to `p.dead.<item>`, reports the failure and terminates the message (`+TERM`) —
//! so an item whose last worker crashed is still reported and kept, without relying on
//! JetStream's max-deliveries advisories.
//!
//! The backend's parts, one module each: `connect` (the first connection and the streams),
//! `settings` (the URL's seeds, credentials, TLS and stream settings), `streams` (creating
//! and updating the streams and the consumer),
//! `names` (subjects and stream names), `queue` (the [`Queue`](super::Queue): submitting,
//! leasing and settling items, the dead letters), `exec` (the
//! [`Executions`](super::Executions): the idempotency store and cancellation) and `reports`
//! (the [`ReportLog`](super::ReportLog)).

mod connect;
mod exec;
mod names;
mod queue;
mod reports;
pub mod settings;
mod streams;

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::consumer::pull;
use async_nats::jetstream::{self, stream};
use tokio::sync::Mutex;

use names::Names;
pub use names::subject_token;

use super::MailboxError;

/// Compare-and-set retries before giving up on a contended record or subject.
const CAS_TRIES: usize = 16;

/// Options of the NATS mailbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NatsOptions {
    /// Prefix of subjects, streams and the consumer (`[A-Za-z0-9_-]+`).
    pub prefix: String,
    /// How long a delivery stays unacknowledged before redelivery (the consumer's ack wait).
    pub ack_wait: Duration,
    /// Deliveries before an item is dead-lettered.
    pub max_deliver: u32,
    /// How long the first connection is retried (with backoff) while the server is unreachable;
    /// `None` when the URL does not say (one attempt, unless the caller sets a default).
    pub connect_wait: Option<Duration>,
    /// Replicas, storage, age limit and placement of every stream.
    pub stream: settings::StreamSettings,
    /// Credentials and TLS of the connection.
    pub connection: settings::Connection,
}

impl Default for NatsOptions {
    fn default() -> Self {
        NatsOptions {
            prefix: "spine".to_owned(),
            ack_wait: Duration::from_secs(30),
            max_deliver: 5,
            connect_wait: None,
            stream: settings::StreamSettings::default(),
            connection: settings::Connection::default(),
        }
    }
}

/// A NATS JetStream mailbox. Cloning shares the connection.
#[derive(Clone)]
pub struct NatsMailbox {
    inner: Arc<Inner>,
}

struct Inner {
    url: String,
    options: NatsOptions,
    names: Names,
    client: async_nats::Client,
    js: jetstream::Context,
    consumer: PullConsumer,
    reports: stream::Stream,
    exec: stream::Stream,
    dead: stream::Stream,
    pull: Mutex<Option<pull::Stream>>,
}

impl NatsMailbox {
    /// The options it was opened with.
    pub fn options(&self) -> &NatsOptions {
        &self.inner.options
    }

    /// The dead-letter subject of an item.
    pub fn dead_letter_subject(&self, item_id: &str) -> String {
        format!("{}.{}", self.inner.names.dead_prefix, subject_token(item_id))
    }

    fn error(&self, message: impl std::fmt::Display) -> MailboxError {
        MailboxError::Nats { url: self.inner.url.clone(), message: message.to_string() }
    }
}
