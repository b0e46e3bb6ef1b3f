//! Opening the database file: WAL mode, the schema, the busy handler, and the background
//! thread that checkpoints the WAL.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::Connection;

use super::{Inner, SqliteMailbox, SqliteOptions, sql_error};
use crate::mailbox::{MailboxError, now_ms};

/// How often the background thread checkpoints the WAL.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);
/// WAL frames past which the checkpoint also truncates the file (64 MiB of 4 KiB pages).
const WAL_TRUNCATE_FRAMES: i64 = 16_384;

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
                last_hit_ms: AtomicI64::new(now_ms()),
            }),
        })
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
