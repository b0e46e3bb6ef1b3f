//! Running a command in its own process group, with captured output, a time limit and
//! cancellation.
//!
//! Contract of [`run`]:
//! - The child starts in a **new process group** (`process_group(0)`), stdin is `/dev/null`,
//!   stdout and stderr are piped and read concurrently; each decoded chunk goes to the
//!   [`Emit`] callback as it arrives and into a [`CappedText`] (bounded memory).
//! - On time-out or cancellation the **whole group** gets SIGTERM, then SIGKILL once
//!   [`TERM_GRACE`] has passed with members left, so grandchildren (`sleep 100 &`) die too.
//! - After the shell exits on its own, the pipes get [`DRAIN_GRACE`] to reach end-of-file, then
//!   whatever is left of the group (background children) is terminated the same way: nothing
//!   a command starts outlives it. Long-lived services are not this module's business.
//! - If the future is dropped midway, a guard SIGKILLs the group.
//!
//! A process that leaves the group (`setsid`) escapes; that is the limit of process groups.

use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use spine_core::tool::OutputStream;
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::output::{CappedText, Utf8Stream};

/// How long a group has between SIGTERM and SIGKILL.
pub(crate) const TERM_GRACE: Duration = Duration::from_millis(1000);
/// How long the pipes may stay open after the shell exited (a background child holding them).
pub(crate) const DRAIN_GRACE: Duration = Duration::from_millis(250);
/// How often a terminating group is checked for members.
const POLL: Duration = Duration::from_millis(10);
/// Read size of the output pipes.
const CHUNK: usize = 8192;

/// Receives each decoded output chunk.
pub(crate) type Emit = Arc<dyn Fn(OutputStream, &str) + Send + Sync>;

/// Limits of one run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Wall-clock limit.
    pub(crate) timeout: Duration,
    /// Characters kept per stream (head and tail).
    pub(crate) output_cap: usize,
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The command exited (or was killed by someone else).
    Exited,
    /// The time limit passed; the group was terminated.
    TimedOut,
    /// The cancellation token fired; the group was terminated.
    Canceled,
}

/// A finished run.
#[derive(Debug)]
pub(crate) struct Finished {
    /// Why it ended.
    pub(crate) ending: Ending,
    /// The shell's exit status, when it was collected.
    pub(crate) status: Option<ExitStatus>,
    /// Captured standard output.
    pub(crate) stdout: CappedText,
    /// Captured standard error.
    pub(crate) stderr: CappedText,
}

/// A run that could not happen.
#[derive(Debug, Error)]
pub(crate) enum ProcessError {
    /// The program could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: io::Error,
    },
}

/// SIGKILLs the group if the run is abandoned midway (its future dropped).
struct GroupGuard {
    pgid: Pid,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }
}

/// Runs `command` (program, arguments, cwd and environment already set) to completion, time
/// limit or cancellation.
pub(crate) async fn run(
    mut command: Command,
    limits: Limits,
    cancel: &CancellationToken,
    emit: Option<Emit>,
) -> Result<Finished, ProcessError> {
    let program = command.as_std().get_program().to_string_lossy().into_owned();
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|source| ProcessError::Spawn { program, source })?;
    // A freshly spawned child has not been reaped, so its id is known; it leads its group.
    let pgid = Pid::from_raw(child.id().map_or(0, |id| id as i32));
    let mut guard = GroupGuard { pgid, armed: pgid.as_raw() > 0 };

    let stdout = Arc::new(Mutex::new(CappedText::new(limits.output_cap)));
    let stderr = Arc::new(Mutex::new(CappedText::new(limits.output_cap)));
    let mut readers: Vec<JoinHandle<()>> = Vec::with_capacity(2);
    if let Some(pipe) = child.stdout.take() {
        readers.push(tokio::spawn(pump(pipe, Arc::clone(&stdout), emit.clone(), OutputStream::Stdout)));
    }
    if let Some(pipe) = child.stderr.take() {
        readers.push(tokio::spawn(pump(pipe, Arc::clone(&stderr), emit, OutputStream::Stderr)));
    }

    let (ending, mut status) = tokio::select! {
        waited = child.wait() => (Ending::Exited, waited.ok()),
        () = tokio::time::sleep(limits.timeout) => (Ending::TimedOut, None),
        () = cancel.cancelled() => (Ending::Canceled, None),
    };
    if guard.armed {
        if ending != Ending::Exited {
            terminate_group(pgid, Some(&mut child)).await;
            status = child.wait().await.ok();
        }
        let drained = join_readers(&mut readers, DRAIN_GRACE).await;
        // Background children the shell left behind.
        terminate_group(pgid, None).await;
        if !drained {
            join_readers(&mut readers, DRAIN_GRACE).await;
        }
        guard.armed = false;
    } else {
        join_readers(&mut readers, DRAIN_GRACE).await;
    }
    for reader in &readers {
        reader.abort();
    }

    Ok(Finished { ending, status, stdout: take(&stdout), stderr: take(&stderr) })
}

/// SIGTERM to the group, then SIGKILL once [`TERM_GRACE`] has passed with members left. The
/// leader, when given, is reaped along the way (an unreaped leader keeps the group alive).
async fn terminate_group(pgid: Pid, mut leader: Option<&mut Child>) {
    if killpg(pgid, Signal::SIGTERM) == Err(Errno::ESRCH) {
        return;
    }
    let deadline = tokio::time::Instant::now() + TERM_GRACE;
    loop {
        if let Some(child) = leader.as_deref_mut() {
            let _ = child.try_wait();
        }
        if killpg(pgid, None) == Err(Errno::ESRCH) {
            return;
        }
        if tokio::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    let _ = killpg(pgid, Signal::SIGKILL);
}

/// Waits up to `limit` for the readers to reach end-of-file; true when they all did.
async fn join_readers(readers: &mut [JoinHandle<()>], limit: Duration) -> bool {
    tokio::time::timeout(limit, async {
        for reader in readers.iter_mut() {
            if !reader.is_finished() {
                let _ = reader.await;
            }
        }
    })
    .await
    .is_ok()
}

/// Copies a pipe into a capped buffer, emitting each decoded chunk.
async fn pump(
    mut pipe: impl AsyncRead + Unpin,
    buffer: Arc<Mutex<CappedText>>,
    emit: Option<Emit>,
    stream: OutputStream,
) {
    let mut decoder = Utf8Stream::default();
    let mut chunk = vec![0u8; CHUNK];
    let deliver = |text: &str| {
        if text.is_empty() {
            return;
        }
        buffer.lock().unwrap_or_else(PoisonError::into_inner).push(text);
        if let Some(emit) = &emit {
            emit(stream, text);
        }
    };
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => deliver(&decoder.push(chunk.get(..n).unwrap_or(&[]))),
        }
    }
    deliver(&decoder.finish());
}

fn take(buffer: &Mutex<CappedText>) -> CappedText {
    buffer.lock().unwrap_or_else(PoisonError::into_inner).clone()
}
