//! The distributed mailbox: NATS JetStream (`nats://HOST:PORT`).
//!
//! Names derive from a prefix `p` (default `spine`; streams use it upper-cased, `P`):
//!
//! | what | stream | subjects | retention |
//! | --- | --- | --- | --- |
//! | items | `P_ITEMS` | `p.items` | work queue; one durable pull consumer `p-workers` shared by every worker: explicit ack, `ack_wait` = the lease, `max_deliver` = the mailbox's + 1 |
//! | reports | `P_REPORTS` | `p.reports.<item>` | limits (kept); one subject per item so that `spine reports --item ID` filters on the server |
//! | executions | `P_EXEC` | `p.exec.<item>` | limits, 8 per subject: the idempotency store (claim, cancel flag, terminal report per attempt), updated with compare-and-set (`Nats-Expected-Last-Subject-Sequence`) |
//! | dead letters | `P_DEAD` | `p.dead.<item>` | limits: items that exhausted their deliveries, with the reason in the `Spine-Dead-Reason` header |
//!
//! The first connection is retried with backoff (100 ms doubling to 2 s) for the URL's
//! `connect_wait_ms` when the server is unreachable, so that a worker started before its broker
//! waits for it instead of exiting; later disconnections are handled by the client.
//!
//! Cancellation signals are core NATS messages on `p.cancel` (every worker subscribes).
//! Streams and the consumer are created when missing. `<item>` is the item id with every byte
//! outside `[A-Za-z0-9_-]` written `=XX`.
//!
//! `attempt_no` counts deliveries: the message's delivery count from JetStream. Long items
//! send in-progress acks (`+WPI`) through [`Lease::keep_alive`], so ack-wait redelivery only
//! happens when the worker is gone. The consumer allows one delivery beyond the mailbox's
//! `max_deliver`: the worker that receives it does not run the item but dead-letters it —
//! publishes it to `p.dead.<item>`, reports the failure and terminates the message (`+TERM`) —
//! so an item whose last worker crashed is still reported and kept, without relying on
//! JetStream's max-deliveries advisories.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::consumer::pull::{self, OrderedConfig};
use async_nats::jetstream::consumer::{AckPolicy, DeliverPolicy, PullConsumer};
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::{self, RetentionPolicy, StorageType};
use async_nats::jetstream::{self, AckKind};
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use futures_util::{FutureExt, TryFutureExt};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use spine_protocol::report::Report;
use tokio::sync::Mutex;

use crate::url::ConnectRetry;

use super::{
    Begin, CancelSignal, CancelState, Claim, DeadLetter, Delivery, Lease, LeaseStatus, Mailbox, MailboxError,
    PendingPublish, ReportQuery,
};

/// Compare-and-set retries before giving up on a contended record.
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
}

impl Default for NatsOptions {
    fn default() -> Self {
        NatsOptions {
            prefix: "spine".to_owned(),
            ack_wait: Duration::from_secs(30),
            max_deliver: 5,
            connect_wait: None,
        }
    }
}

/// The first pause between connection attempts; it doubles up to [`MAX_CONNECT_BACKOFF`].
const FIRST_CONNECT_BACKOFF: Duration = Duration::from_millis(100);
/// The longest pause between connection attempts.
const MAX_CONNECT_BACKOFF: Duration = Duration::from_secs(2);

/// Connects to the server, retrying with backoff for `options.connect_wait`; `observe` hears of
/// every failed attempt that is followed by another.
async fn connect_with_retry(
    url: &str,
    options: &NatsOptions,
    observe: &(dyn Fn(&ConnectRetry) + Send + Sync),
) -> Result<async_nats::Client, MailboxError> {
    let wait = options.connect_wait.unwrap_or(Duration::ZERO);
    let started = tokio::time::Instant::now();
    let mut backoff = FIRST_CONNECT_BACKOFF;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let error = match async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(3))
            .name("spine-worker")
            .connect(url)
            .await
        {
            Ok(client) => return Ok(client),
            Err(e) => e.to_string(),
        };
        let remaining = wait.saturating_sub(started.elapsed());
        if remaining.is_zero() {
            let message = if wait.is_zero() {
                format!("cannot connect: {error}")
            } else {
                format!(
                    "cannot connect within connect_wait_ms={} ({attempt} attempts; last: {error})",
                    wait.as_millis()
                )
            };
            return Err(MailboxError::Nats { url: url.to_owned(), message });
        }
        let pause = backoff.min(remaining);
        observe(&ConnectRetry { url: url.to_owned(), attempt, error, retry_in: pause, remaining });
        tokio::time::sleep(pause).await;
        backoff = (backoff * 2).min(MAX_CONNECT_BACKOFF);
    }
}

/// Subjects and stream names of one prefix.
#[derive(Debug, Clone)]
struct Names {
    items_stream: String,
    items_subject: String,
    reports_stream: String,
    reports_prefix: String,
    exec_stream: String,
    exec_prefix: String,
    dead_stream: String,
    dead_prefix: String,
    cancel_subject: String,
    consumer: String,
}

impl Names {
    fn new(prefix: &str) -> Self {
        let upper = prefix.to_ascii_uppercase();
        Names {
            items_stream: format!("{upper}_ITEMS"),
            items_subject: format!("{prefix}.items"),
            reports_stream: format!("{upper}_REPORTS"),
            reports_prefix: format!("{prefix}.reports"),
            exec_stream: format!("{upper}_EXEC"),
            exec_prefix: format!("{prefix}.exec"),
            dead_stream: format!("{upper}_DEAD"),
            dead_prefix: format!("{prefix}.dead"),
            cancel_subject: format!("{prefix}.cancel"),
            consumer: format!("{prefix}-workers"),
        }
    }
}

/// Escaped tokens longer than this are replaced by a digest, so that every subject stays far
/// below the server's control-line limit (4 KiB by default, which drops the connection).
const MAX_SUBJECT_TOKEN: usize = 96;

/// One subject token for an item id: safe bytes kept, others escaped as `=XX`; a token that
/// would be longer than `MAX_SUBJECT_TOKEN` is `~` and the id's SHA-256 in hex.
pub fn subject_token(id: &str) -> String {
    if id.is_empty() {
        return "=".to_owned();
    }
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("={b:02X}"));
        }
    }
    if out.len() > MAX_SUBJECT_TOKEN {
        // `~` is escaped above, so a digest token never equals an escaped one.
        let digest = Sha256::digest(id.as_bytes());
        return digest.iter().fold(String::from("~"), |mut acc, b| {
            acc.push_str(&format!("{b:02x}"));
            acc
        });
    }
    out
}

/// A record of the executions stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum ExecRecord {
    /// A delivery runs the item.
    Claimed { delivery_id: String, attempt_no: u32, worker_id: String, cancel_requested: bool },
    /// A close request came before any delivery.
    CancelRequested,
    /// The item finished.
    Terminal { attempt_no: u32, report: Box<Report> },
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
    /// Connects and creates the streams and the consumer when missing.
    pub async fn connect(url: &str, options: NatsOptions) -> Result<Self, MailboxError> {
        Self::connect_observed(url, options, &|_| {}).await
    }

    /// [`NatsMailbox::connect`], retrying the first connection for `options.connect_wait` and
    /// telling `observe` of each failed attempt before the next.
    pub async fn connect_observed(
        url: &str,
        options: NatsOptions,
        observe: &(dyn Fn(&ConnectRetry) + Send + Sync),
    ) -> Result<Self, MailboxError> {
        let err = |m: String| MailboxError::Nats { url: url.to_owned(), message: m };
        if options.prefix.is_empty()
            || !options.prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(err(format!("invalid prefix `{}` (use letters, digits, `-`, `_`)", options.prefix)));
        }
        let client = connect_with_retry(url, &options, observe).await?;
        let js = jetstream::ContextBuilder::new().max_ack_inflight(20_000).build(client.clone());
        let names = Names::new(&options.prefix);
        let create = |name: &str, subjects: Vec<String>, retention: RetentionPolicy, per_subject: i64| stream::Config {
            name: name.to_owned(),
            subjects,
            retention,
            storage: StorageType::File,
            max_messages_per_subject: per_subject,
            ..Default::default()
        };
        let items = js
            .get_or_create_stream(create(
                &names.items_stream,
                vec![names.items_subject.clone()],
                RetentionPolicy::WorkQueue,
                -1,
            ))
            .await
            .map_err(|e| err(format!("stream {}: {e}", names.items_stream)))?;
        let reports = js
            .get_or_create_stream(create(
                &names.reports_stream,
                vec![format!("{}.>", names.reports_prefix)],
                RetentionPolicy::Limits,
                -1,
            ))
            .await
            .map_err(|e| err(format!("stream {}: {e}", names.reports_stream)))?;
        let exec = js
            .get_or_create_stream(create(
                &names.exec_stream,
                vec![format!("{}.>", names.exec_prefix)],
                RetentionPolicy::Limits,
                8,
            ))
            .await
            .map_err(|e| err(format!("stream {}: {e}", names.exec_stream)))?;
        let dead = js
            .get_or_create_stream(create(
                &names.dead_stream,
                vec![format!("{}.>", names.dead_prefix)],
                RetentionPolicy::Limits,
                -1,
            ))
            .await
            .map_err(|e| err(format!("stream {}: {e}", names.dead_stream)))?;
        let consumer: PullConsumer = items
            .get_or_create_consumer(
                &names.consumer,
                pull::Config {
                    durable_name: Some(names.consumer.clone()),
                    ack_policy: AckPolicy::Explicit,
                    ack_wait: options.ack_wait,
                    max_deliver: i64::from(options.max_deliver) + 1,
                    max_ack_pending: 100_000,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| err(format!("consumer {}: {e}", names.consumer)))?;
        Ok(NatsMailbox {
            inner: Arc::new(Inner {
                url: url.to_owned(),
                options,
                names,
                client,
                js,
                consumer,
                reports,
                exec,
                dead,
                pull: Mutex::new(None),
            }),
        })
    }

    /// The options.
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

    fn exec_subject(&self, item_id: &str) -> String {
        format!("{}.{}", self.inner.names.exec_prefix, subject_token(item_id))
    }

    async fn last_exec(&self, item_id: &str) -> Result<Option<(u64, ExecRecord)>, MailboxError> {
        match self.inner.exec.get_last_raw_message_by_subject(&self.exec_subject(item_id)).await {
            Ok(m) => {
                let record = serde_json::from_slice(&m.payload)
                    .map_err(|e| MailboxError::Corrupt(format!("execution record of {item_id}: {e}")))?;
                Ok(Some((m.sequence, record)))
            }
            Err(e) => match e.kind() {
                stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
                stream::LastRawMessageErrorKind::InvalidSubject
                | stream::LastRawMessageErrorKind::JetStream(_)
                | stream::LastRawMessageErrorKind::Other => Err(self.error(format!("execution record: {e}"))),
            },
        }
    }

    /// Writes a record if the item's last record is still `expected` (0: none); `None` when
    /// someone wrote first.
    async fn put_exec(&self, item_id: &str, record: &ExecRecord, expected: u64) -> Result<Option<u64>, MailboxError> {
        let payload = serde_json::to_vec(record)
            .map_err(|e| MailboxError::Corrupt(format!("execution record does not serialize: {e}")))?;
        let publish = PublishMessage::build().payload(Bytes::from(payload)).expected_last_subject_sequence(expected);
        let ack = self
            .inner
            .js
            .send_publish(self.exec_subject(item_id), publish)
            .await
            .map_err(|e| self.error(format!("execution record: {e}")))?;
        match ack.await {
            Ok(a) => Ok(Some(a.sequence)),
            Err(e) => match e.kind() {
                PublishErrorKind::WrongLastSequence => Ok(None),
                PublishErrorKind::StreamNotFound
                | PublishErrorKind::WrongLastMessageId
                | PublishErrorKind::TimedOut
                | PublishErrorKind::BrokenPipe
                | PublishErrorKind::MaxAckPending
                | PublishErrorKind::MaxPayloadExceeded
                | PublishErrorKind::Other => Err(self.error(format!("execution record: {e}"))),
            },
        }
    }

    fn contended(&self, item_id: &str) -> MailboxError {
        self.error(format!("execution record of {item_id} kept changing ({CAS_TRIES} tries)"))
    }
}

#[async_trait]
impl Mailbox for NatsMailbox {
    fn describe(&self) -> String {
        format!("{} (prefix {})", self.inner.url, self.inner.options.prefix)
    }

    async fn submit(&self, body: &[u8]) -> Result<String, MailboxError> {
        let ack = self
            .inner
            .js
            .publish(self.inner.names.items_subject.clone(), Bytes::copy_from_slice(body))
            .await
            .map_err(|e| self.error(format!("submit: {e}")))?
            .await
            .map_err(|e| self.error(format!("submit: {e}")))?;
        Ok(format!("nats-{}", ack.sequence))
    }

    async fn lease(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, MailboxError> {
        let mut guard = self.inner.pull.lock().await;
        if guard.is_none() {
            // The pull stream asks the server for about as many messages as one lease may take
            // (at least 2, so that the next one is on its way while one runs), so that a busy
            // worker does not sit on messages other workers could run.
            let messages = self
                .inner
                .consumer
                .stream()
                .max_messages_per_batch(max.max(2))
                .heartbeat(Duration::from_secs(5))
                .expires(Duration::from_secs(10))
                .messages()
                .await
                .map_err(|e| self.error(format!("pull: {e}")))?;
            *guard = Some(messages);
        }
        let Some(messages) = guard.as_mut() else { return Ok(Vec::new()) };
        let deadline = tokio::time::Instant::now() + wait;
        let mut out = Vec::new();
        while out.len() < max.max(1) {
            let next = if out.is_empty() {
                match tokio::time::timeout_at(deadline, messages.next()).await {
                    Err(_elapsed) => return Ok(out),
                    Ok(next) => next,
                }
            } else {
                match messages.next().now_or_never() {
                    Some(next) => next,
                    None => return Ok(out),
                }
            };
            match next {
                Some(Ok(message)) => out.push(self.delivery(message)?),
                // A missed heartbeat (also seen when a busy worker did not pull for a while) or
                // any other failure: start a new pull stream. Nothing is lost — a message
                // delivered to the old one and never leased is redelivered after the ack wait.
                Some(Err(e)) => {
                    *guard = None;
                    if out.is_empty() {
                        return Err(self.error(format!("pull: {e}")));
                    }
                    tracing::debug!("pull stream restarts: {e}");
                    return Ok(out);
                }
                None => {
                    *guard = None;
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }

    async fn release(&self) {
        let Some(mut messages) = self.inner.pull.lock().await.take() else { return };
        while let Some(Some(Ok(message))) = messages.next().now_or_never() {
            if let Err(e) = message.ack_with(AckKind::Nak(None)).await {
                tracing::warn!("release: {e}");
            }
        }
    }

    async fn drained(&self) -> Result<bool, MailboxError> {
        let info = self.inner.consumer.get_info().await.map_err(|e| self.error(format!("consumer info: {e}")))?;
        Ok(info.num_pending == 0 && info.num_ack_pending == 0)
    }

    async fn begin(&self, claim: &mut Claim) -> Result<Begin, MailboxError> {
        let mine = |claim: &Claim, cancel_requested: bool| ExecRecord::Claimed {
            delivery_id: claim.delivery_id.clone(),
            attempt_no: claim.attempt_no,
            worker_id: claim.worker_id.clone(),
            cancel_requested,
        };
        // Fast path: nothing recorded yet.
        if let Some(v) = self.put_exec(&claim.item_id, &mine(claim, false), 0).await? {
            claim.version = v;
            return Ok(Begin::Run);
        }
        for _ in 0..CAS_TRIES {
            let (seq, record) = match self.last_exec(&claim.item_id).await? {
                Some(last) => last,
                None => match self.put_exec(&claim.item_id, &mine(claim, false), 0).await? {
                    Some(v) => {
                        claim.version = v;
                        return Ok(Begin::Run);
                    }
                    None => continue,
                },
            };
            let cancel = match record {
                ExecRecord::Terminal { report, .. } => return Ok(Begin::Done(report)),
                ExecRecord::Claimed { delivery_id, cancel_requested, attempt_no, .. }
                    if delivery_id == claim.delivery_id =>
                {
                    if attempt_no >= claim.attempt_no {
                        claim.attempt_no = attempt_no.saturating_add(1);
                    }
                    cancel_requested
                }
                ExecRecord::Claimed { .. } => return Ok(Begin::Busy),
                ExecRecord::CancelRequested => true,
            };
            if let Some(v) = self.put_exec(&claim.item_id, &mine(claim, cancel), seq).await? {
                claim.version = v;
                return Ok(if cancel { Begin::CancelRequested } else { Begin::Run });
            }
        }
        Err(self.contended(&claim.item_id))
    }

    async fn finish(&self, claim: &Claim, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        let record = ExecRecord::Terminal { attempt_no: claim.attempt_no, report: Box::new(report.clone()) };
        let mut expected = claim.version;
        for _ in 0..CAS_TRIES {
            if self.put_exec(&claim.item_id, &record, expected).await?.is_some() {
                return self.publish(report).await.map(Some);
            }
            // A close request may have flagged our claim meanwhile: still ours, try again.
            match self.last_exec(&claim.item_id).await? {
                Some((seq, ExecRecord::Claimed { delivery_id, attempt_no, .. }))
                    if delivery_id == claim.delivery_id && attempt_no == claim.attempt_no =>
                {
                    expected = seq;
                }
                Some((_, ExecRecord::Claimed { .. } | ExecRecord::Terminal { .. } | ExecRecord::CancelRequested))
                | None => return Ok(None),
            }
        }
        Err(self.contended(&claim.item_id))
    }

    async fn terminal(&self, item_id: &str) -> Result<Option<Report>, MailboxError> {
        Ok(match self.last_exec(item_id).await? {
            Some((_, ExecRecord::Terminal { report, .. })) => Some(*report),
            Some((_, ExecRecord::Claimed { .. } | ExecRecord::CancelRequested)) | None => None,
        })
    }

    async fn request_cancel(&self, item_id: &str, requested_by: &str) -> Result<CancelState, MailboxError> {
        for _ in 0..CAS_TRIES {
            match self.last_exec(item_id).await? {
                None => {
                    if self.put_exec(item_id, &ExecRecord::CancelRequested, 0).await?.is_some() {
                        return Ok(CancelState::NotStarted);
                    }
                }
                Some((_, ExecRecord::Terminal { report, .. })) => return Ok(CancelState::Finished(report)),
                Some((_, ExecRecord::CancelRequested)) => return Ok(CancelState::NotStarted),
                Some((seq, ExecRecord::Claimed { delivery_id, attempt_no, worker_id, .. })) => {
                    let flagged = ExecRecord::Claimed { delivery_id, attempt_no, worker_id, cancel_requested: true };
                    if self.put_exec(item_id, &flagged, seq).await?.is_some() {
                        let signal =
                            CancelSignal { item_id: item_id.to_owned(), requested_by: requested_by.to_owned() };
                        let payload = serde_json::to_vec(&signal)
                            .map_err(|e| MailboxError::Corrupt(format!("cancel signal: {e}")))?;
                        self.inner
                            .client
                            .publish(self.inner.names.cancel_subject.clone(), Bytes::from(payload))
                            .await
                            .map_err(|e| self.error(format!("cancel signal: {e}")))?;
                        self.inner.client.flush().await.map_err(|e| self.error(format!("cancel signal: {e}")))?;
                        return Ok(CancelState::Running);
                    }
                }
            }
        }
        Err(self.contended(item_id))
    }

    async fn cancel_signals(&self) -> Result<BoxStream<'static, CancelSignal>, MailboxError> {
        let sub = self
            .inner
            .client
            .subscribe(self.inner.names.cancel_subject.clone())
            .await
            .map_err(|e| self.error(format!("cancel signals: {e}")))?;
        // Make sure the server knows the subscription before anyone relies on it.
        self.inner.client.flush().await.map_err(|e| self.error(format!("cancel signals: {e}")))?;
        Ok(sub.filter_map(|m| async move { serde_json::from_slice::<CancelSignal>(&m.payload).ok() }).boxed())
    }

    async fn publish(&self, report: &Report) -> Result<PendingPublish, MailboxError> {
        let payload =
            serde_json::to_vec(report).map_err(|e| MailboxError::Corrupt(format!("report does not serialize: {e}")))?;
        let subject = format!("{}.{}", self.inner.names.reports_prefix, subject_token(&report.mailbox_item_id));
        let ack = self
            .inner
            .js
            .publish(subject, Bytes::from(payload))
            .await
            .map_err(|e| self.error(format!("report: {e}")))?;
        let url = self.inner.url.clone();
        Ok(ack
            .into_future()
            .map_ok(drop)
            .map_err(move |e| MailboxError::Nats { url, message: format!("report: {e}") })
            .boxed())
    }

    async fn republish_terminal(&self, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        // The terminal report is the last one of its item: published already when the item's
        // last report is terminal.
        let subject = format!("{}.{}", self.inner.names.reports_prefix, subject_token(&report.mailbox_item_id));
        match self.inner.reports.get_last_raw_message_by_subject(&subject).await {
            Ok(m) => {
                let last: Report = serde_json::from_slice(&m.payload)
                    .map_err(|e| MailboxError::Corrupt(format!("report of {}: {e}", report.mailbox_item_id)))?;
                if last.body.is_terminal() {
                    return Ok(None);
                }
            }
            Err(e) => match e.kind() {
                stream::LastRawMessageErrorKind::NoMessageFound => {}
                stream::LastRawMessageErrorKind::InvalidSubject
                | stream::LastRawMessageErrorKind::JetStream(_)
                | stream::LastRawMessageErrorKind::Other => {
                    return Err(self.error(format!("reports of {}: {e}", report.mailbox_item_id)));
                }
            },
        }
        self.publish(report).await.map(Some)
    }

    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, MailboxError> {
        let consumer = self
            .inner
            .dead
            .create_consumer(OrderedConfig { deliver_policy: DeliverPolicy::All, ..Default::default() })
            .await
            .map_err(|e| self.error(format!("dead letters: {e}")))?;
        let mut out = Vec::new();
        if consumer.cached_info().num_pending == 0 {
            return Ok(out);
        }
        let mut messages = consumer.messages().await.map_err(|e| self.error(format!("dead letters: {e}")))?;
        while let Some(next) = messages.next().await {
            let message = next.map_err(|e| self.error(format!("dead letters: {e}")))?;
            let header = |name: &str| {
                message.headers.as_ref().and_then(|h| h.get(name)).map(|v| v.as_str().to_owned()).unwrap_or_default()
            };
            let last = message.info().map(|i| i.pending == 0).unwrap_or(true);
            out.push(DeadLetter {
                delivery_id: header("Spine-Delivery-Id"),
                reason: header("Spine-Dead-Reason"),
                body: message.payload.to_vec(),
            });
            if last {
                break;
            }
        }
        Ok(out)
    }

    async fn reports(
        &self,
        query: &ReportQuery,
    ) -> Result<BoxStream<'static, Result<Report, MailboxError>>, MailboxError> {
        let filter = match &query.item_id {
            Some(id) => format!("{}.{}", self.inner.names.reports_prefix, subject_token(id)),
            None => format!("{}.>", self.inner.names.reports_prefix),
        };
        let consumer = self
            .inner
            .reports
            .create_consumer(OrderedConfig {
                filter_subject: filter,
                deliver_policy: DeliverPolicy::All,
                ..Default::default()
            })
            .await
            .map_err(|e| self.error(format!("reports: {e}")))?;
        if !query.follow && consumer.cached_info().num_pending == 0 {
            return Ok(futures_util::stream::empty().boxed());
        }
        let messages = consumer.messages().await.map_err(|e| self.error(format!("reports: {e}")))?;
        let follow = query.follow;
        let url = self.inner.url.clone();
        let out = futures_util::stream::unfold(Some(messages), move |state| {
            let url = url.clone();
            async move {
                let mut messages = state?;
                let next = messages.next().await?;
                let message = match next {
                    Ok(m) => m,
                    Err(e) => return Some((Err(MailboxError::Nats { url, message: format!("reports: {e}") }), None)),
                };
                let last = !follow && message.info().map(|i| i.pending == 0).unwrap_or(false);
                let report = serde_json::from_slice::<Report>(&message.payload)
                    .map_err(|e| MailboxError::Corrupt(format!("report: {e}")));
                Some((report, if last { None } else { Some(messages) }))
            }
        });
        Ok(out.boxed())
    }
}

impl NatsMailbox {
    fn delivery(&self, message: jetstream::Message) -> Result<Delivery, MailboxError> {
        let info = message.info().map_err(|e| self.error(format!("message info: {e}")))?;
        let delivery_id = format!("nats-{}", info.stream_sequence);
        let delivery_count = u32::try_from(info.delivered).unwrap_or(u32::MAX).max(1);
        Ok(Delivery {
            delivery_id,
            delivery_count,
            max_deliver: self.inner.options.max_deliver,
            body: message.payload.to_vec(),
            lease: Box::new(NatsLease { mailbox: self.clone(), message }),
        })
    }
}

/// The lease of one JetStream message.
struct NatsLease {
    mailbox: NatsMailbox,
    message: jetstream::Message,
}

#[async_trait]
impl Lease for NatsLease {
    async fn ack(&self) -> Result<(), MailboxError> {
        self.message.ack().await.map_err(|e| self.mailbox.error(format!("ack: {e}")))
    }

    async fn nack(&self, delay: Option<Duration>) -> Result<(), MailboxError> {
        self.message.ack_with(AckKind::Nak(delay)).await.map_err(|e| self.mailbox.error(format!("nak: {e}")))
    }

    async fn keep_alive(&self) -> Result<LeaseStatus, MailboxError> {
        self.message
            .ack_with(AckKind::Progress)
            .await
            .map(|()| LeaseStatus::Held)
            .map_err(|e| self.mailbox.error(format!("in-progress ack: {e}")))
    }

    async fn dead_letter(&self, reason: &str) -> Result<(), MailboxError> {
        let item = serde_json::from_slice::<serde_json::Value>(&self.message.payload)
            .ok()
            .and_then(|v| v.get("item_id").and_then(|i| i.as_str()).map(str::to_owned));
        let sequence = self.message.info().map(|i| i.stream_sequence).unwrap_or(0);
        let delivery_id = format!("nats-{sequence}");
        let subject = self.mailbox.dead_letter_subject(item.as_deref().unwrap_or(&delivery_id));
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Spine-Dead-Reason", reason.replace(['\r', '\n'], " ").as_str());
        headers.insert("Spine-Delivery-Id", delivery_id.as_str());
        self.mailbox
            .inner
            .js
            .publish_with_headers(subject, headers, self.message.payload.clone())
            .await
            .map_err(|e| self.mailbox.error(format!("dead letter: {e}")))?
            .await
            .map_err(|e| self.mailbox.error(format!("dead letter: {e}")))?;
        self.message.ack_with(AckKind::Term).await.map_err(|e| self.mailbox.error(format!("term: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subject_tokens_keep_safe_bytes_and_escape_the_rest() {
        assert_eq!(subject_token("item-0001_a"), "item-0001_a");
        assert_eq!(subject_token("a.b c*>"), "a=2Eb=20c=2A=3E");
        assert_eq!(subject_token("x=y"), "x=3Dy");
        assert_eq!(subject_token(""), "=");
    }

    #[test]
    fn long_ids_become_a_digest_token_of_bounded_length() {
        let long = "x".repeat(10_000);
        let token = subject_token(&long);
        assert!(token.starts_with('~') && token.len() == 65, "{token}");
        assert_ne!(token, subject_token(&"x".repeat(10_001)), "different ids, different tokens");
        let newlines = "a\n".repeat(40);
        assert!(subject_token(&newlines).len() <= 65);
        assert!(!subject_token(&newlines).contains('\n'));
        assert_eq!(subject_token(&"y".repeat(MAX_SUBJECT_TOKEN)), "y".repeat(MAX_SUBJECT_TOKEN));
    }
}
