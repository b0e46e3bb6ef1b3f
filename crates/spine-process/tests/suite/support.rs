//! Helpers: process liveness and pid files written by test commands.

use std::path::Path;
use std::time::Duration;

/// Whether a process is gone (or only a zombie waiting to be reaped).
pub fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])).unwrap_or(false),
    }
}

/// Polls `dead(pid)` for up to three seconds.
pub async fn eventually_dead(pid: u32) -> bool {
    for _ in 0..300 {
        if dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    dead(pid)
}

/// Reads a pid written by a test command, waiting for the file to appear.
pub async fn read_pid(path: &Path) -> u32 {
    for _ in 0..300 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no pid in {}", path.display());
}

/// `sh -c SCRIPT`.
pub fn sh(script: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c").arg(script);
    cmd
}
