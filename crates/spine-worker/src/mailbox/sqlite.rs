//! The embedded mailbox: one SQLite file (`sqlite:PATH`), for one machine, no server.
//!
//! Tables:
//! - `items`: the queue. A row is `queued`, `leased` (with a lease token and an expiry) or
//!   `dead`; acknowledged rows are deleted. One `UPDATE … RETURNING` statement claims ready
//!   rows — queued ones, and leased ones whose lease expired — so two workers (threads or
//!   processes) never hold the same row at once; every claim raises `deliveries`.
//! - `reports`: every report, in insertion order (`seq`).
//! - `executions` + `terminals`: the idempotency store — who runs an item (delivery, attempt,
//!   cancel flag) and its terminal report per (item, attempt).
//! - `cancels`: cancellation signals, polled by every worker.
//!
//! The database runs in WAL mode (`synchronous=NORMAL`) with a busy handler of short sleeps;
//! every call runs on the blocking pool with the connection behind a mutex, and
//! multi-statement decisions run in `BEGIN IMMEDIATE` transactions. Checkpoints (the only
//! writes that wait for the disk) run on a background thread with its own connection every
//! [`CHECKPOINT_EVERY`], so that no commit pays for an fsync.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use spine_protocol::report::Report;

use super::{
    Begin, CancelSignal, CancelState, Claim, DeadLetter, Delivery, Lease, LeaseStatus, Mailbox, MailboxError,
    PendingPublish, ReportQuery, millis, now_ms,
};

/// How often workers poll for cancellation signals.
const POLL: Duration = Duration::from_millis(25);
/// The longest pause of a report follower between two polls (it polls again at once while
/// reports keep coming, and backs off from 1 ms when they do not).
const MAX_FOLLOW_PAUSE: Duration = Duration::from_millis(2);
/// How often the background thread checkpoints the WAL.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);
/// WAL frames past which the checkpoint also truncates the file (64 MiB of 4 KiB pages).
const WAL_TRUNCATE_FRAMES: i64 = 16_384;
/// The longest pause between two claims while the queue is empty…
const MAX_IDLE_PAUSE: Duration = Duration::from_millis(2);
/// …and once it has been empty for [`LONG_IDLE`] (polling costs CPU; the first item after a
/// quiet spell waits up to this long).
const MAX_LONG_IDLE_PAUSE: Duration = Duration::from_millis(20);
/// How long the queue must stay empty before the longer pause applies.
const LONG_IDLE: Duration = Duration::from_secs(1);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    body BLOB NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    deliveries INTEGER NOT NULL DEFAULT 0,
    available_at INTEGER NOT NULL,
    lease_token TEXT,
    lease_expires_at INTEGER,
    dead_reason TEXT,
    submitted_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS items_ready ON items(state, available_at);
CREATE TABLE IF NOT EXISTS reports (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS reports_item ON reports(item_id, seq);
CREATE TABLE IF NOT EXISTS executions (
    item_id TEXT PRIMARY KEY,
    delivery_id TEXT,
    attempt_no INTEGER,
    worker TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS terminals (
    item_id TEXT NOT NULL,
    attempt_no INTEGER NOT NULL,
    report TEXT NOT NULL,
    PRIMARY KEY (item_id, attempt_no)
);
CREATE TABLE IF NOT EXISTS cancels (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id TEXT NOT NULL,
    requested_by TEXT NOT NULL
);
";

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
    last_hit_ms: std::sync::atomic::AtomicI64,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop_checkpoints.store(true, Ordering::SeqCst);
    }
}

/// Checkpoints the WAL of `path` until `stop` is set.
fn checkpoint_loop(path: PathBuf, stop: Arc<AtomicBool>) {
    let Ok(mut conn) = Connection::open(&path) else { return };
    if conn.busy_handler(Some(busy_wait)).is_err() {
        return;
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(CHECKPOINT_EVERY);
        let frames = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(1));
        if let Ok(frames) = frames
            && frames > WAL_TRUNCATE_FRAMES
            && let Err(e) = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        {
            tracing::warn!("checkpoint of {}: {e}", path.display());
        }
    }
}

impl SqliteMailbox {
    /// Opens (creating) the database file.
    pub fn open(path: &Path, options: SqliteOptions) -> Result<Self, MailboxError> {
        let err = |e: rusqlite::Error| sql_error(path, e);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| MailboxError::Sqlite {
                path: path.display().to_string(),
                message: format!("cannot create {}: {e}", dir.display()),
            })?;
        }
        let mut conn = Connection::open(path).map_err(err)?;
        conn.busy_handler(Some(busy_wait)).map_err(err)?;
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)).map_err(err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(MailboxError::Sqlite {
                path: path.display().to_string(),
                message: format!("cannot switch to WAL mode (journal_mode is {mode})"),
            });
        }
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(err)?;
        conn.pragma_update(None, "wal_autocheckpoint", 0).map_err(err)?;
        conn.execute_batch(SCHEMA).map_err(err)?;
        let stop_checkpoints = Arc::new(AtomicBool::new(false));
        let (p, stop) = (path.to_path_buf(), Arc::clone(&stop_checkpoints));
        std::thread::Builder::new()
            .name("spine-sqlite-checkpoint".into())
            .spawn(move || checkpoint_loop(p, stop))
            .map_err(|e| MailboxError::Sqlite {
                path: path.display().to_string(),
                message: format!("cannot start the checkpoint thread: {e}"),
            })?;
        Ok(SqliteMailbox {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                conn: Mutex::new(conn),
                options,
                nonce: uuid::Uuid::new_v4().simple().to_string(),
                leases: AtomicU64::new(0),
                stop_checkpoints,
                last_hit_ms: std::sync::atomic::AtomicI64::new(now_ms()),
            }),
        })
    }

    /// The options.
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

    fn lease_for(&self, seq: i64, token: &str) -> SqliteLease {
        SqliteLease { mailbox: self.clone(), seq, token: token.to_owned() }
    }

    async fn claim(&self, max: usize) -> Result<Vec<Delivery>, MailboxError> {
        let n = self.inner.leases.fetch_add(1, Ordering::Relaxed);
        let token = format!("{}-{n}", self.inner.nonce);
        let lease_ms = millis(self.inner.options.lease);
        let max_deliver = self.inner.options.max_deliver;
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        let t = token.clone();
        let rows = self
            .call(move |c| {
                let now = now_ms();
                let mut st = c.prepare_cached(
                    "UPDATE items SET state = 'leased', deliveries = deliveries + 1, lease_token = ?1, \
                     lease_expires_at = ?2 + ?3 \
                     WHERE seq IN (SELECT seq FROM items \
                        WHERE (state = 'queued' AND available_at <= ?2) \
                           OR (state = 'leased' AND lease_expires_at <= ?2) \
                        ORDER BY seq LIMIT ?4) \
                     RETURNING seq, body, deliveries",
                )?;
                let rows = st.query_map(params![t, now, lease_ms, limit], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?, r.get::<_, u32>(2)?))
                })?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })
            .await?;
        let mut rows = rows;
        rows.sort_by_key(|(seq, _, _)| *seq);
        let deliveries: Vec<Delivery> = rows
            .into_iter()
            .map(|(seq, body, count)| Delivery {
                delivery_id: delivery_id(seq),
                delivery_count: count,
                max_deliver,
                body,
                lease: Box::new(self.lease_for(seq, &token)),
            })
            .collect();
        Ok(deliveries)
    }
}

/// Waits for another connection's write lock: short sleeps (SQLite's own busy timeout sleeps
/// up to 100 ms between tries, which workers sharing a file turn into latency), giving up after
/// about ten seconds.
fn busy_wait(tries: i32) -> bool {
    let pause = match tries {
        0..100 => Duration::from_micros(50),
        100..1000 => Duration::from_micros(500),
        _ => Duration::from_millis(5),
    };
    std::thread::sleep(pause);
    tries < 3_000
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
        let body = body.to_vec();
        let seq = self
            .call(move |c| {
                let now = now_ms();
                c.prepare_cached("INSERT INTO items (body, available_at, submitted_at) VALUES (?1, ?2, ?2)")?
                    .execute(params![body, now])?;
                Ok(c.last_insert_rowid())
            })
            .await?;
        Ok(delivery_id(seq))
    }

    async fn lease(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, MailboxError> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut pause = Duration::from_millis(1);
        loop {
            let got = self.claim(max.max(1)).await?;
            if !got.is_empty() {
                self.inner.last_hit_ms.store(now_ms(), Ordering::Relaxed);
                return Ok(got);
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(got);
            }
            let idle = now_ms().saturating_sub(self.inner.last_hit_ms.load(Ordering::Relaxed));
            let cap = if idle > millis(LONG_IDLE) { MAX_LONG_IDLE_PAUSE } else { MAX_IDLE_PAUSE };
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(cap);
        }
    }

    async fn drained(&self) -> Result<bool, MailboxError> {
        self.call(|c| {
            c.query_row("SELECT COUNT(*) FROM items WHERE state IN ('queued', 'leased')", [], |r| r.get::<_, i64>(0))
        })
        .await
        .map(|n| n == 0)
    }

    async fn begin(&self, claim: &mut Claim) -> Result<Begin, MailboxError> {
        let mut c2 = claim.clone();
        let path = self.inner.path.clone();
        self.try_call(move |c| {
            let err = |e| sql_error(&path, e);
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
            if let Some(text) = latest_terminal(&tx, &c2.item_id).map_err(err)? {
                tx.commit().map_err(err)?;
                return Ok((Begin::Done(Box::new(parse_report(&text)?)), c2.attempt_no));
            }
            let row: Option<(Option<String>, i64, Option<u32>)> = tx
                .prepare_cached("SELECT delivery_id, cancel_requested, attempt_no FROM executions WHERE item_id = ?1")
                .and_then(|mut st| st.query_row([&c2.item_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional())
                .map_err(err)?;
            let outcome = match row {
                None => {
                    tx.prepare_cached(
                        "INSERT INTO executions (item_id, delivery_id, attempt_no, worker) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .and_then(|mut st| st.execute(params![c2.item_id, c2.delivery_id, c2.attempt_no, c2.worker_id]))
                    .map_err(err)?;
                    Begin::Run
                }
                Some((holder, cancel, previous))
                    if holder.is_none() || holder.as_deref() == Some(c2.delivery_id.as_str()) =>
                {
                    if let Some(previous) = previous.filter(|p| *p >= c2.attempt_no) {
                        c2.attempt_no = previous.saturating_add(1);
                    }
                    tx.execute(
                        "UPDATE executions SET delivery_id = ?2, attempt_no = ?3, worker = ?4 WHERE item_id = ?1",
                        params![c2.item_id, c2.delivery_id, c2.attempt_no, c2.worker_id],
                    )
                    .map_err(err)?;
                    if cancel != 0 { Begin::CancelRequested } else { Begin::Run }
                }
                Some(_) => Begin::Busy,
            };
            tx.commit().map_err(err)?;
            Ok((outcome, c2.attempt_no))
        })
        .await
        .map(|(outcome, attempt_no)| {
            claim.attempt_no = attempt_no;
            outcome
        })
    }

    async fn finish(&self, claim: &Claim, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        let c2 = claim.clone();
        let text = to_json(report)?;
        let item = report.mailbox_item_id.clone();
        let stored = self
            .call(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                if latest_terminal(&tx, &c2.item_id)?.is_some() {
                    return Ok(false);
                }
                let holder: Option<(Option<String>, Option<u32>)> = tx
                    .prepare_cached("SELECT delivery_id, attempt_no FROM executions WHERE item_id = ?1")?
                    .query_row([&c2.item_id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?;
                if holder != Some((Some(c2.delivery_id.clone()), Some(c2.attempt_no))) {
                    return Ok(false);
                }
                tx.prepare_cached("INSERT INTO terminals (item_id, attempt_no, report) VALUES (?1, ?2, ?3)")?
                    .execute(params![c2.item_id, c2.attempt_no, text])?;
                tx.prepare_cached("INSERT INTO reports (item_id, body) VALUES (?1, ?2)")?
                    .execute(params![item, text])?;
                tx.commit()?;
                Ok(true)
            })
            .await?;
        Ok(stored.then(|| Box::pin(async { Ok(()) }) as PendingPublish))
    }

    async fn terminal(&self, item_id: &str) -> Result<Option<Report>, MailboxError> {
        let id = item_id.to_owned();
        let text = self.call(move |c| latest_terminal(c, &id)).await?;
        text.as_deref().map(parse_report).transpose()
    }

    async fn request_cancel(&self, item_id: &str, requested_by: &str) -> Result<CancelState, MailboxError> {
        let id = item_id.to_owned();
        let by = requested_by.to_owned();
        let path = self.inner.path.clone();
        self.try_call(move |c| {
            let err = |e| sql_error(&path, e);
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
            if let Some(text) = latest_terminal(&tx, &id).map_err(err)? {
                tx.commit().map_err(err)?;
                return Ok(CancelState::Finished(Box::new(parse_report(&text)?)));
            }
            let holder: Option<Option<String>> = tx
                .query_row("SELECT delivery_id FROM executions WHERE item_id = ?1", [&id], |r| r.get(0))
                .optional()
                .map_err(err)?;
            let state = match holder {
                None => {
                    tx.execute("INSERT INTO executions (item_id, cancel_requested) VALUES (?1, 1)", [&id])
                        .map_err(err)?;
                    CancelState::NotStarted
                }
                Some(None) => CancelState::NotStarted,
                Some(Some(_)) => {
                    tx.execute("UPDATE executions SET cancel_requested = 1 WHERE item_id = ?1", [&id]).map_err(err)?;
                    tx.execute("INSERT INTO cancels (item_id, requested_by) VALUES (?1, ?2)", [&id, &by])
                        .map_err(err)?;
                    CancelState::Running
                }
            };
            tx.commit().map_err(err)?;
            Ok(state)
        })
        .await
    }

    async fn cancel_signals(&self) -> Result<BoxStream<'static, CancelSignal>, MailboxError> {
        let start: i64 =
            self.call(|c| c.query_row("SELECT COALESCE(MAX(seq), 0) FROM cancels", [], |r| r.get(0))).await?;
        let mailbox = self.clone();
        let batches = stream::unfold((mailbox, start), |(mailbox, last)| async move {
            loop {
                let polled = mailbox
                    .call(move |c| {
                        let mut st = c.prepare_cached(
                            "SELECT seq, item_id, requested_by FROM cancels WHERE seq > ?1 ORDER BY seq",
                        )?;
                        let rows = st.query_map([last], |r| {
                            Ok((r.get::<_, i64>(0)?, CancelSignal { item_id: r.get(1)?, requested_by: r.get(2)? }))
                        })?;
                        rows.collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .await;
                match polled {
                    Ok(rows) if !rows.is_empty() => {
                        let next = rows.last().map_or(last, |(seq, _)| *seq);
                        let ids: Vec<CancelSignal> = rows.into_iter().map(|(_, s)| s).collect();
                        return Some((stream::iter(ids), (mailbox, next)));
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("cancel signals: {e}"),
                }
                tokio::time::sleep(POLL).await;
            }
        });
        Ok(batches.flatten().boxed())
    }

    async fn publish(&self, report: &Report) -> Result<PendingPublish, MailboxError> {
        let text = to_json(report)?;
        let item = report.mailbox_item_id.clone();
        self.call(move |c| {
            c.prepare_cached("INSERT INTO reports (item_id, body) VALUES (?1, ?2)")?.execute(params![item, text])
        })
        .await?;
        Ok(Box::pin(async { Ok(()) }))
    }

    async fn republish_terminal(&self, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        let text = to_json(report)?;
        let item = report.mailbox_item_id.clone();
        let inserted = self
            .call(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let present = tx
                    .prepare_cached("SELECT 1 FROM reports WHERE item_id = ?1 AND body = ?2")?
                    .query_row(params![item, text], |_| Ok(()))
                    .optional()?
                    .is_some();
                if !present {
                    tx.prepare_cached("INSERT INTO reports (item_id, body) VALUES (?1, ?2)")?
                        .execute(params![item, text])?;
                }
                tx.commit()?;
                Ok(!present)
            })
            .await?;
        Ok(inserted.then(|| Box::pin(async { Ok(()) }) as PendingPublish))
    }

    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, MailboxError> {
        self.call(|c| {
            let mut st =
                c.prepare("SELECT seq, COALESCE(dead_reason, ''), body FROM items WHERE state = 'dead' ORDER BY seq")?;
            let rows = st.query_map([], |r| {
                Ok(DeadLetter { delivery_id: delivery_id(r.get(0)?), reason: r.get(1)?, body: r.get(2)? })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })
        .await
    }

    async fn reports(
        &self,
        query: &ReportQuery,
    ) -> Result<BoxStream<'static, Result<Report, MailboxError>>, MailboxError> {
        let mailbox = self.clone();
        let query = query.clone();
        let batches = stream::unfold(Some((mailbox, 0_i64)), move |state| {
            let query = query.clone();
            async move {
                let (mailbox, last) = state?;
                let mut pause = Duration::from_millis(1);
                loop {
                    let item = query.item_id.clone();
                    let polled = mailbox
                        .call(move |c| {
                            let mut st = c.prepare_cached(
                                "SELECT seq, body FROM reports WHERE seq > ?1 AND (?2 IS NULL OR item_id = ?2) \
                                 ORDER BY seq LIMIT 1000",
                            )?;
                            let rows = st.query_map(params![last, item], |r| Ok((r.get(0)?, r.get(1)?)))?;
                            rows.collect::<rusqlite::Result<Vec<(i64, String)>>>()
                        })
                        .await;
                    match polled {
                        Err(e) => return Some((vec![Err(e)], None)),
                        Ok(rows) if rows.is_empty() => {
                            if !query.follow {
                                return None;
                            }
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(MAX_FOLLOW_PAUSE);
                        }
                        Ok(rows) => {
                            let next = rows.last().map_or(last, |(seq, _)| *seq);
                            let reports = rows.into_iter().map(|(_, body)| parse_report(&body)).collect();
                            return Some((reports, Some((mailbox, next))));
                        }
                    }
                }
            }
        });
        Ok(batches.flat_map(stream::iter).boxed())
    }
}

/// The lease of one SQLite row: every settlement checks the token, so a worker whose lease
/// expired (and was re-leased) changes nothing.
struct SqliteLease {
    mailbox: SqliteMailbox,
    seq: i64,
    token: String,
}

#[async_trait]
impl Lease for SqliteLease {
    async fn ack(&self) -> Result<(), MailboxError> {
        let (seq, token) = (self.seq, self.token.clone());
        self.mailbox
            .call(move |c| {
                c.prepare_cached("DELETE FROM items WHERE seq = ?1 AND lease_token = ?2")?.execute(params![seq, token])
            })
            .await
            .map(drop)
    }

    async fn nack(&self, delay: Option<Duration>) -> Result<(), MailboxError> {
        let (seq, token) = (self.seq, self.token.clone());
        let delay = delay.map_or(0, millis);
        self.mailbox
            .call(move |c| {
                c.prepare_cached(
                    "UPDATE items SET state = 'queued', available_at = ?3, lease_token = NULL, lease_expires_at = NULL \
                     WHERE seq = ?1 AND lease_token = ?2",
                )?
                .execute(params![seq, token, now_ms().saturating_add(delay)])
            })
            .await
            .map(drop)
    }

    async fn keep_alive(&self) -> Result<LeaseStatus, MailboxError> {
        let (seq, token) = (self.seq, self.token.clone());
        let lease = millis(self.mailbox.inner.options.lease);
        let n = self
            .mailbox
            .call(move |c| {
                c.prepare_cached(
                    "UPDATE items SET lease_expires_at = ?3 WHERE seq = ?1 AND lease_token = ?2 AND state = 'leased'",
                )?
                .execute(params![seq, token, now_ms().saturating_add(lease)])
            })
            .await?;
        Ok(if n == 1 { LeaseStatus::Held } else { LeaseStatus::Lost })
    }

    async fn dead_letter(&self, reason: &str) -> Result<(), MailboxError> {
        let (seq, token, reason) = (self.seq, self.token.clone(), reason.to_owned());
        self.mailbox
            .call(move |c| {
                c.prepare_cached(
                    "UPDATE items SET state = 'dead', dead_reason = ?3, lease_token = NULL, lease_expires_at = NULL \
                     WHERE seq = ?1 AND lease_token = ?2",
                )?
                .execute(params![seq, token, reason])
            })
            .await
            .map(drop)
    }
}
