//! The embedded mailbox: one SQLite file (`sqlite:PATH`), for one machine, no server.
//!
//! Tables:
//! - `items`: the queue. A row is `queued`, `leased` (with a lease token and an expiry) or
//!   `dead`; acknowledged rows are deleted. One `UPDATE … RETURNING` statement claims ready
//!   rows — queued ones, and leased ones whose lease expired — so two workers (threads or
//!   processes) never hold the same row at once; every claim raises `deliveries`.
//! - `reports`: every report, in insertion order (`seq`).
//! - `executions` + `terminals`: the idempotency store — who runs an item (delivery, attempt,
//!   cancel flag; kept after it finished, so that the claim that stored the terminal report is
//!   known) and its terminal report per (item, attempt). A claim holds while its
//!   `(delivery_id, attempt_no)` is the row's; a lease that expired under a live worker is
//!   re-leased with a new token, and the new delivery's claim supersedes the old one.
//! - `cancels`: cancellation signals, polled by every worker.
//!
//! The database runs in WAL mode (`synchronous=NORMAL`) with a busy handler of short sleeps;
//! every call runs on the blocking pool with the connection behind a mutex, and
//! multi-statement decisions run in `BEGIN IMMEDIATE` transactions. Checkpoints (the only
//! writes that wait for the disk) run on a background thread with its own connection every
//! [`CHECKPOINT_EVERY`], so that no commit pays for an fsync.
//!
//! The backend's parts, one module each: `store` (opening the file, the schema, checkpoints),
//! `queue` (submitting, leasing and settling items, dead-lettering one), `exec` (the
//! idempotency store and cancellation) and `reports` (reports, and reading the dead letters
//! back).

mod exec;
mod queue;
mod reports;
mod store;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::stream::BoxStream;
use rusqlite::{Connection, OptionalExtension};
use spine_protocol::report::Report;

pub use store::CHECKPOINT_EVERY;

use super::{
    Begin, CancelSignal, CancelState, Claim, ClaimStatus, DeadLetter, Delivery, Finished, Mailbox, MailboxError,
    PendingPublish, ReportQuery, SettleTicket,
};

/// Options of the SQLite mailbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long a lease lasts without a keep-alive.
    pub lease: Duration,
    /// Deliveries before an item is dead-lettered.
    pub max_deliver: u32,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions { lease: Duration::from_secs(30), max_deliver: 5 }
    }
}

/// A SQLite mailbox. Cloning shares the connection.
#[derive(Clone)]
pub struct SqliteMailbox {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
    options: SqliteOptions,
    nonce: String,
    leases: AtomicU64,
    stop_checkpoints: Arc<AtomicBool>,
    /// When a claim last found something (ms since the epoch).
    last_hit_ms: AtomicI64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop_checkpoints.store(true, Ordering::SeqCst);
    }
}

impl SqliteMailbox {
    /// The options it was opened with.
    pub fn options(&self) -> SqliteOptions {
        self.inner.options
    }

    /// Runs `f` on the connection, on the blocking pool.
    async fn call<T, F>(&self, f: F) -> Result<T, MailboxError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        self.try_call(move |c| f(c).map_err(|e| sql_error(&inner.path, e))).await
    }

    /// Runs `f` (which builds its own errors) on the connection, on the blocking pool.
    async fn try_call<T, F>(&self, f: F) -> Result<T, MailboxError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, MailboxError> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let path = inner.path.display().to_string();
        tokio::task::spawn_blocking(move || {
            let mut conn = match inner.conn.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            f(&mut conn)
        })
        .await
        .map_err(|e| MailboxError::Sqlite { path, message: format!("blocking task failed: {e}") })?
    }
}

fn delivery_id(seq: i64) -> String {
    format!("sqlite-{seq}")
}

fn sql_error(path: &Path, e: rusqlite::Error) -> MailboxError {
    MailboxError::Sqlite { path: path.display().to_string(), message: e.to_string() }
}

fn parse_report(text: &str) -> Result<Report, MailboxError> {
    serde_json::from_str(text).map_err(|e| MailboxError::Corrupt(format!("stored report: {e}")))
}

fn to_json(report: &Report) -> Result<String, MailboxError> {
    serde_json::to_string(report).map_err(|e| MailboxError::Corrupt(format!("report does not serialize: {e}")))
}

fn latest_terminal(c: &Connection, item_id: &str) -> rusqlite::Result<Option<String>> {
    c.prepare_cached("SELECT report FROM terminals WHERE item_id = ?1 ORDER BY attempt_no DESC LIMIT 1")?
        .query_row([item_id], |r| r.get(0))
        .optional()
}

#[async_trait]
impl Mailbox for SqliteMailbox {
    fn describe(&self) -> String {
        format!("sqlite:{}", self.inner.path.display())
    }

    async fn submit(&self, body: &[u8]) -> Result<String, MailboxError> {
        self.submit_item(body).await
    }

    async fn lease(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, MailboxError> {
        self.lease_batch(max, wait).await
    }

    async fn drained(&self) -> Result<bool, MailboxError> {
        self.queue_drained().await
    }

    async fn begin(&self, claim: &mut Claim) -> Result<Begin, MailboxError> {
        self.begin_execution(claim).await
    }

    async fn finish(&self, claim: &Claim, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        self.finish_execution(claim, report).await
    }

    async fn finish_with(
        &self,
        claim: &Claim,
        before: &[Report],
        report: &Report,
        settle: Option<&SettleTicket>,
    ) -> Result<Option<Finished>, MailboxError> {
        self.finish_execution_with(claim, before, report, settle).await
    }

    async fn claim_status(&self, claim: &Claim) -> Result<ClaimStatus, MailboxError> {
        self.fence_status(claim).await
    }

    async fn terminal(&self, item_id: &str) -> Result<Option<Report>, MailboxError> {
        self.stored_terminal(item_id).await
    }

    async fn request_cancel(&self, item_id: &str, requested_by: &str) -> Result<CancelState, MailboxError> {
        self.flag_cancel(item_id, requested_by).await
    }

    async fn cancel_signals(&self) -> Result<BoxStream<'static, CancelSignal>, MailboxError> {
        self.poll_cancels().await
    }

    async fn publish(&self, report: &Report) -> Result<PendingPublish, MailboxError> {
        self.publish_report(report).await
    }

    async fn publish_all(&self, reports: &[Report]) -> Result<PendingPublish, MailboxError> {
        self.publish_reports(reports).await
    }

    async fn republish_terminal(&self, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        self.republish_unless_present(report).await
    }

    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, MailboxError> {
        self.read_dead_letters().await
    }

    async fn reports(
        &self,
        query: &ReportQuery,
    ) -> Result<BoxStream<'static, Result<Report, MailboxError>>, MailboxError> {
        self.read_reports(query).await
    }
}
