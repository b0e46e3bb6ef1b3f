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
//! `queue` (the [`Queue`](super::Queue): submitting, leasing and settling items, the dead
//! letters), `exec` (the [`Executions`](super::Executions): the idempotency store and
//! cancellation) and `reports` (the [`ReportLog`](super::ReportLog)).

mod exec;
mod queue;
mod reports;
mod store;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension};
use spine_protocol::report::Report;

pub use store::CHECKPOINT_EVERY;

use super::MailboxError;

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
