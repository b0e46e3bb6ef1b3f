//! Running a command to completion: optional stdin payload, captured output, a time limit and
//! cancellation.
//!
//! Contract of [`run`]:
//! - The child starts in a **new process group** ([`GroupChild`]), its environment prepared by
//!   the [`ChildEnv`] of [`RunOptions`] (required by [`RunOptions::new`]); stdout and stderr
//!   are piped and read concurrently, each decoded chunk going to the [`Emit`] callback as it
//!   arrives and into a [`CappedText`] of its own cap (bounded memory whatever the child
//!   prints).
//! - stdin is `/dev/null` without a payload. With one, the payload is written **in its own
//!   task** while the output is read (so a payload larger than the pipe buffer cannot deadlock
//!   against a child that writes first), then stdin is closed. A child that never reads its
//!   stdin is not an error: the write ends with EPIPE (or is abandoned when the child is gone)
//!   and [`Finished::stdin`] says [`StdinOutcome::NotRead`].
//! - On time-out or cancellation the **whole group** is terminated (SIGTERM, then SIGKILL).
//! - After the leader exits on its own, the pipes get [`DRAIN_GRACE`] to reach end-of-file,
//!   then whatever is left of the group (background children) is terminated the same way
//!   ([`drain`], the one ending sequence, shared with callers that pump output themselves).
//! - If the future is dropped midway, the [`GroupChild`] guard SIGKILLs the group.

use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, Command};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::capture::{CappedText, Utf8Stream};
use crate::group::{GroupChild, ProcessError};
use crate::launch::{ChildIo, IoEnd};
use crate::secrets::ChildEnv;

/// How long the pipes may stay open after the leader exited (a background child holding them).
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);
/// Read size of the output pipes.
const CHUNK: usize = 8192;

/// Which output stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Receives each decoded output chunk as it arrives.
pub type Emit = Arc<dyn Fn(Stream, &str) + Send + Sync>;

/// Limits of one run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock limit.
    pub timeout: Duration,
    /// Characters of stdout kept (head and tail).
    pub stdout_cap: usize,
    /// Characters of stderr kept (head and tail).
    pub stderr_cap: usize,
}

/// Everything about one run besides the command itself.
#[derive(Clone)]
pub struct RunOptions<'a> {
    /// Time limit and output caps.
    pub limits: Limits,
    /// The environment the child gets (the settings' `env`, the provider keys passed through).
    pub env: &'a ChildEnv,
    /// Bytes written to stdin before it is closed (`None`: stdin is `/dev/null`).
    pub stdin: Option<Vec<u8>>,
    /// Ends the run early when canceled.
    pub cancel: Option<&'a CancellationToken>,
    /// Receives output chunks as they arrive.
    pub emit: Option<Emit>,
}

impl<'a> RunOptions<'a> {
    /// Options with these limits and this child environment; no stdin, no cancellation, no
    /// callback.
    pub fn new(limits: Limits, env: &'a ChildEnv) -> Self {
        RunOptions { limits, env, stdin: None, cancel: None, emit: None }
    }

    /// Writes `payload` to stdin, then closes it.
    pub fn stdin(mut self, payload: Vec<u8>) -> Self {
        self.stdin = Some(payload);
        self
    }

    /// Ends the run when `token` is canceled.
    pub fn cancel(mut self, token: &'a CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sends each output chunk to `emit`.
    pub fn emit(mut self, emit: Emit) -> Self {
        self.emit = Some(emit);
        self
    }
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The command exited (or was killed by someone else).
    Exited,
    /// The time limit passed; the group was terminated.
    TimedOut,
    /// The cancellation token fired; the group was terminated.
    Canceled,
}

/// What happened to the stdin payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdinOutcome {
    /// There was no payload; stdin was `/dev/null`.
    Null,
    /// The whole payload was written and stdin closed.
    Written,
    /// The child did not read it all (EPIPE, or it ended first). Not a failure.
    NotRead,
    /// Writing failed for another reason.
    Failed(String),
}

/// A finished run.
#[derive(Debug)]
pub struct Finished {
    /// Why it ended.
    pub ending: Ending,
    /// The leader's exit status, when it was collected.
    pub status: Option<ExitStatus>,
    /// Captured standard output.
    pub stdout: CappedText,
    /// Captured standard error.
    pub stderr: CappedText,
    /// What happened to the stdin payload.
    pub stdin: StdinOutcome,
    /// What the confinement's guard said once the group was gone (empty unconfined).
    pub sandbox_notes: Vec<String>,
}

/// Runs `command` (program, arguments, cwd and environment already set) to completion, time
/// limit or cancellation.
pub async fn run(mut command: Command, options: RunOptions<'_>) -> Result<Finished, ProcessError> {
    let RunOptions { limits, env, stdin: payload, cancel, emit } = options;
    let io = ChildIo {
        stdin: if payload.is_some() { IoEnd::Piped } else { IoEnd::Null },
        stdout: IoEnd::Piped,
        stderr: IoEnd::Piped,
    };
    let mut child = GroupChild::spawn_io(&mut command, env, io)?;

    let writer = match (payload, child.take_stdin()) {
        (Some(bytes), Some(pipe)) => Some(tokio::spawn(write_stdin(pipe, bytes))),
        _ => None,
    };
    let stdout = Arc::new(Mutex::new(CappedText::new(limits.stdout_cap)));
    let stderr = Arc::new(Mutex::new(CappedText::new(limits.stderr_cap)));
    let mut readers: Vec<JoinHandle<()>> = Vec::with_capacity(2);
    if let Some(pipe) = child.take_stdout() {
        readers.push(tokio::spawn(pump(pipe, Arc::clone(&stdout), emit.clone(), Stream::Stdout)));
    }
    if let Some(pipe) = child.take_stderr() {
        readers.push(tokio::spawn(pump(pipe, Arc::clone(&stderr), emit, Stream::Stderr)));
    }

    let never = CancellationToken::new();
    let cancel = cancel.unwrap_or(&never);
    let (ending, mut status) = tokio::select! {
        waited = child.wait() => (Ending::Exited, waited.ok()),
        () = tokio::time::sleep(limits.timeout) => (Ending::TimedOut, None),
        () = cancel.cancelled() => (Ending::Canceled, None),
    };
    if ending != Ending::Exited {
        status = child.terminate().await;
    }
    drain(&mut child, &mut readers).await;
    let stdin = match writer {
        None => StdinOutcome::Null,
        Some(task) if task.is_finished() => task.await.unwrap_or(StdinOutcome::NotRead),
        Some(task) => {
            // The child is gone, yet the write is still blocked: someone else holds the pipe.
            task.abort();
            StdinOutcome::NotRead
        }
    };

    let sandbox_notes = child.take_sandbox_notes();
    Ok(Finished { ending, status, stdout: take(&stdout), stderr: take(&stderr), stdin, sandbox_notes })
}

/// Writes the payload and closes stdin; EPIPE means the child did not read it.
async fn write_stdin(mut pipe: ChildStdin, bytes: Vec<u8>) -> StdinOutcome {
    let written = pipe.write_all(&bytes).await;
    drop(pipe);
    match written {
        Ok(()) => StdinOutcome::Written,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => StdinOutcome::NotRead,
        Err(e) => StdinOutcome::Failed(e.to_string()),
    }
}

/// Waits up to `limit` for the output readers of a child to reach end-of-file; true when they
/// all did. Readers still running afterwards are left to the caller (to wait again, or abort):
/// members of the child's group may hold the output open after the leader exits.
pub async fn join_readers(readers: &mut [JoinHandle<()>], limit: Duration) -> bool {
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

/// The end of a child whose leader is gone (exited, or terminated): its output readers get
/// [`DRAIN_GRACE`] to reach end-of-file, whatever the leader left running in its group is ended
/// ([`GroupChild::reap_leftovers`]: members of the group may hold the output open), the readers
/// not yet done get [`DRAIN_GRACE`] once more, and any still running are aborted. Once it
/// returns, every reader has ended (or was aborted) and nothing of the group is left.
pub async fn drain(child: &mut GroupChild, readers: &mut [JoinHandle<()>]) {
    let drained = join_readers(readers, DRAIN_GRACE).await;
    child.reap_leftovers().await;
    if !drained {
        join_readers(readers, DRAIN_GRACE).await;
    }
    for reader in readers.iter() {
        reader.abort();
    }
}

/// Copies a pipe into a capped buffer, emitting each decoded chunk.
pub async fn pump(
    mut pipe: impl AsyncRead + Unpin,
    buffer: Arc<Mutex<CappedText>>,
    emit: Option<Emit>,
    stream: Stream,
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
