//! Files of a test's temporary directories: writing them (parents created), hook scripts,
//! FIFOs, reading the JSON lines that hooks, traces and reports leave, and waiting for a file
//! a process writes.
//!
//! These helpers panic on I/O errors: a test that cannot set up its files has failed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Writes `text` to `root/rel`, creating the parent directories; returns the path.
pub fn write_file(root: &Path, rel: &str, text: &str) -> PathBuf {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(&path, text).expect("write");
    path
}

/// Writes an executable script (mode 755) to `root/rel`, parents created; returns the path.
/// Python scripts name `/usr/bin/python3` in their `#!` line, never `python3` from `PATH`.
pub fn write_executable(root: &Path, rel: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = write_file(root, rel, body);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Makes a FIFO at `path`, creating its parent directories.
pub fn mkfifo(path: &Path) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    let status = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The JSON values of a file of JSON lines (blank lines skipped; a missing file has none).
/// Panics on a line that is not JSON.
pub fn json_lines(path: &Path) -> Vec<Value> {
    parse_json_lines(&std::fs::read_to_string(path).unwrap_or_default())
}

/// The records of a JSON-lines file spine wrote (a trace, a transcript): the file must exist
/// and every line must be one JSON value; panics otherwise.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect()
}

/// The JSON values of a text of JSON lines (blank lines skipped); panics on a line that is not
/// JSON.
pub fn parse_json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Waits until `path` exists, polling every 20 ms; panics after `timeout` (a liveness bound).
pub async fn wait_for_file(path: &Path, timeout: Duration) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !path.exists() {
        assert!(tokio::time::Instant::now() < deadline, "{} did not appear within {timeout:?}", path.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// [`wait_for_file`] for tests without a runtime: blocks the thread.
pub fn wait_for_file_blocking(path: &Path, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} did not appear within {timeout:?}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}
