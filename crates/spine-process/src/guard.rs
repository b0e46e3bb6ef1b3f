//! The guard: a small companion process that kills the process groups this process started
//! when this process dies without ending them itself (SIGKILL, a crash, an abort).
//!
//! Contract:
//! - [`start`] spawns the guard (the calling binary, re-run with arguments that make it call
//!   [`serve`]) with a pipe on its stdin, once per process. A failure to start is returned; the
//!   caller goes on unguarded.
//! - Every [`GroupChild`](crate::GroupChild) registers its process group with the guard when it
//!   is spawned and unregisters it when it ends the group (terminate, reap, drop). Without a
//!   guard both are no-ops.
//! - [`serve`] runs in the guard: it leaves the terminal's session (so Ctrl-C reaches only
//!   spine, which cleans up itself), keeps the set of live groups from the pipe, and when the
//!   pipe closes — its parent is gone, however it died — SIGKILLs every group still registered.
//!
//! This gives what `PR_SET_PDEATHSIG` would, without code between fork and exec (which needs
//! `unsafe`) and independent of which thread spawned the child. The limit: a group whose leader
//! ended without the owner noticing stays registered, so its id is killed at the end even if
//! the kernel reused it meanwhile for another group; `ESRCH` is the usual answer.

use std::collections::HashSet;
use std::io::{self, BufRead, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

static GUARD: OnceLock<Mutex<ChildStdin>> = OnceLock::new();

/// Starts the guard: `program args…` must end up calling [`serve`]. Does nothing when a guard
/// is already running.
pub fn start(program: &Path, args: &[&str]) -> io::Result<()> {
    if GUARD.get().is_some() {
        return Ok(());
    }
    let mut child =
        Command::new(program).args(args).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
    let stdin = child.stdin.take().ok_or_else(|| io::Error::other("the guard has no stdin pipe"))?;
    // The guard outlives this process on purpose; it is never waited for.
    drop(child);
    let _ = GUARD.set(Mutex::new(stdin));
    Ok(())
}

/// Tells the guard about a new process group.
pub(crate) fn register(pgid: Pid) {
    send('+', pgid);
}

/// Tells the guard a process group has been ended.
pub(crate) fn unregister(pgid: Pid) {
    send('-', pgid);
}

fn send(op: char, pgid: Pid) {
    if let Some(pipe) = GUARD.get()
        && let Ok(mut pipe) = pipe.lock()
    {
        // A guard that is gone cannot help; the owner still cleans up on a normal end.
        let _ = writeln!(pipe, "{op}{pgid}");
    }
}

/// The guard's main loop (see the module documentation). Returns when its parent is gone
/// and the remaining groups have been killed.
pub fn serve() -> io::Result<()> {
    // Out of the terminal's session: Ctrl-C goes to spine, which cleans up itself.
    let _ = nix::unistd::setsid();
    let mut live: HashSet<i32> = HashSet::new();
    for line in io::stdin().lock().lines() {
        let line = line?;
        let (add, id) = match (line.strip_prefix('+'), line.strip_prefix('-')) {
            (Some(id), _) => (true, id),
            (None, Some(id)) => (false, id),
            (None, None) => continue,
        };
        let Ok(id) = id.parse::<i32>() else { continue };
        if add {
            live.insert(id);
        } else {
            live.remove(&id);
        }
    }
    for id in live {
        if id > 1 {
            let _ = killpg(Pid::from_raw(id), Signal::SIGKILL);
        }
    }
    Ok(())
}
