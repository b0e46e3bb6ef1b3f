//! Process liveness, for tests that check nothing outlives what started it, and the peak
//! memory of the test process.

use std::path::Path;
use std::time::Duration;

/// Whether a process is gone (or only a zombie waiting to be reaped).
pub fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Polls [`dead`] for up to three seconds.
pub async fn eventually_dead(pid: u32) -> bool {
    for _ in 0..300 {
        if dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    dead(pid)
}

/// Reads a pid written by a test command, waiting up to three seconds for the file.
pub async fn read_pid(path: &Path) -> Option<u32> {
    for _ in 0..300 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return Some(pid);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

/// The pids of live (non-zombie) processes whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return found };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) && !dead(pid) {
            found.push(pid);
        }
    }
    found
}

/// Polls until no live process has `needle` in its command line (up to five seconds); returns
/// those left.
pub async fn eventually_none_with(needle: &str) -> Vec<u32> {
    for _ in 0..500 {
        let left = processes_with(needle);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    processes_with(needle)
}

/// A string no other process on the machine has in its command line (to find a test's
/// processes with [`processes_with`]).
pub fn marker() -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{}.{:09}", 50_000 + std::process::id() % 10_000, nanos)
}

/// The test process's peak resident set (`VmHWM` of `/proc/self/status`), in KiB; `None` when
/// it cannot be read.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
