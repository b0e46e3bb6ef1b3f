//! Descendants that left their process group (`setsid`, double forks) are not reached by
//! killing the group. [`become_subreaper`] makes this process the Linux child subreaper, so such
//! orphans are re-parented to it instead of to init; [`kill_orphans`] then finds every child
//! of this process still running and kills it, until none is left.
//!
//! Call [`kill_orphans`] only when nothing this process started should still run (the end of a
//! `spine run`, a worker's shutdown): it kills every child, not only orphans.

use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// Rounds of kill-and-rescan: a killed orphan's own children are re-parented in turn.
const MAX_ROUNDS: usize = 8;

/// Makes this process the child subreaper of its descendants (`PR_SET_CHILD_SUBREAPER`).
pub fn become_subreaper() -> nix::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)
}

/// Kills (SIGKILL) and reaps every running child of this process, including orphans
/// re-parented to it as subreaper. Returns how many were killed.
pub async fn kill_orphans() -> usize {
    let me = std::process::id();
    let mut killed = 0;
    for _ in 0..MAX_ROUNDS {
        let children = children_of(me);
        if children.is_empty() {
            break;
        }
        for pid in &children {
            let pid = Pid::from_raw(*pid);
            if kill(pid, Signal::SIGKILL).is_ok() {
                killed += 1;
            }
        }
        // Reap them (tokio reaps its own children; these are not tokio's).
        tokio::time::sleep(Duration::from_millis(5)).await;
        for pid in &children {
            let _ = waitpid(Pid::from_raw(*pid), Some(WaitPidFlag::WNOHANG));
        }
    }
    killed
}

/// The running (not zombie) children of `parent`, from `/proc/<pid>/stat`.
pub fn children_of(parent: u32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| parse_stat(&stat))
                .is_some_and(|(state, ppid)| ppid == parent && state != 'Z')
        })
        .collect()
}

/// The state and parent pid of a `/proc/<pid>/stat` line. The command name (field 2) is in
/// parentheses and may hold spaces and parentheses, so the fields are read after the last `)`.
fn parse_stat(stat: &str) -> Option<(char, u32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_after_the_command_name_whatever_it_holds() {
        assert_eq!(parse_stat("42 (sleep) S 7 42 42 0 -1"), Some(('S', 7)));
        assert_eq!(parse_stat("42 (a) b) (c) Z 9 1"), Some(('Z', 9)));
        assert_eq!(parse_stat("garbage"), None);
    }
}
