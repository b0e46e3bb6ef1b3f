//! A live child process whose life is not bound to one tool call: the engine of command runs
//! and background processes.
//!
//! Contract:
//! - [`Live::spawn`] starts `bash -c COMMAND` (`sh -c` without `/bin/bash`) in the call's
//!   working directory with the run's environment file applied and the call's
//!   [`ChildEnv`](spine_process::ChildEnv) (the settings' `env`, the provider keys passed
//!   through), as the leader of a **new process group** ([`spine_process::GroupChild`]), with
//!   pipes or a pseudo-terminal ([`pty`]).
//! - Output is read as it comes into one bounded [`OutputRing`](crate::ring::OutputRing) per stream (bytes counted, the
//!   newest kept) and forwarded, decoded, to the listeners attached with [`Live::listen`] (the
//!   tool calls currently waiting on the process, which stream it as progress).
//! - A supervisor task waits for the leader to exit (or for the kill token), then ends the
//!   child as [`spine_process::run()`] does ([`spine_process::drain`]: the output gets
//!   [`DRAIN_GRACE`](spine_process::DRAIN_GRACE) to reach end-of-file, whatever the command
//!   left in its group is ended), and only then records the [`Exit`]: once a process reads as
//!   exited, its output is complete.
//! - [`Live::terminate`] ends the group (SIGTERM, then SIGKILL) and waits for the supervisor.
//!   Canceling the kill token has the same effect without waiting; it is a child of the owning
//!   registry's token, so dropping the registry ends every process it holds. If the runtime
//!   itself goes away first, the supervisor's [`spine_process::GroupChild`] guard SIGKILLs the
//!   group.
//! - Input ([`Live::write`]) goes to the stdin pipe or the pty; end of input closes the pipe,
//!   or sends `^D` on a pty. Writing to an exited process or after end of input is an
//!   [`InputError`].
//!
//! Layout: `process` holds [`Live`] (spawn, pumps, input, supervisor), [`pty`] the
//! pseudo-terminal, [`registry`] the per-run [`LiveRegistry`] each tool family keeps its
//! processes in.

mod process;
pub(crate) mod pty;
pub(crate) mod registry;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use spine_core::tool::{OutputStream, ToolContext};
use spine_process::ChildEnv;
use thiserror::Error;

use crate::ring::Tail;

pub(crate) use process::Live;
pub(crate) use registry::{Enlist, Entry, Family, LiveRegistry};

/// How long a write may wait for a process that does not read its input.
pub(crate) const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// How the child's standard streams are connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Terminal {
    /// stdin, stdout and stderr are pipes.
    Pipes,
    /// stdin, stdout and stderr are one pseudo-terminal.
    Pty,
}

/// Whether the child's stdin can be written to (pipes only; a pty is always writable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StdinMode {
    /// A pipe the tools write to.
    Piped,
    /// `/dev/null`.
    Null,
}

/// What to start.
pub(crate) struct SpawnSpec<'a> {
    /// Run as `bash -c COMMAND`.
    pub command: &'a str,
    pub cwd: &'a Path,
    /// The run's `export NAME=value` file.
    pub env_file: Option<&'a PathBuf>,
    /// The environment the agent gives its children.
    pub env: &'a ChildEnv,
    /// Pipes or a pty.
    pub terminal: Terminal,
    /// stdin for pipes.
    pub stdin: StdinMode,
    /// Bytes kept per output stream.
    pub ring_cap: usize,
}

impl<'a> SpawnSpec<'a> {
    /// A spec for a call's context: its working directory and environment file.
    pub(crate) fn for_call(command: &'a str, ctx: &'a ToolContext, ring_cap: usize) -> Self {
        SpawnSpec {
            command,
            cwd: &ctx.cwd,
            env_file: ctx.env_file.as_ref(),
            env: &ctx.child_env,
            terminal: Terminal::Pipes,
            stdin: StdinMode::Null,
            ring_cap,
        }
    }
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exit {
    /// The exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// Whether we ended it (terminate, cancellation, shutdown).
    pub terminated: bool,
}

impl Exit {
    /// The state word of a run or process with this exit (`running` while there is none).
    pub(crate) fn status_word(exit: Option<Exit>) -> &'static str {
        match exit {
            None => "running",
            Some(Exit { terminated: true, .. }) => "terminated",
            Some(Exit { code: Some(_), .. }) => "exited",
            Some(Exit { code: None, .. }) => "killed",
        }
    }

    fn from_status(status: Option<std::process::ExitStatus>, terminated: bool) -> Self {
        use std::os::unix::process::ExitStatusExt;
        Exit { code: status.and_then(|s| s.code()), signal: status.and_then(|s| s.signal()), terminated }
    }

    /// "exited with status 0" / "was killed by signal 9" / "was terminated".
    pub(crate) fn describe(&self) -> String {
        match (self.code, self.signal, self.terminated) {
            (Some(code), _, _) => format!("exited with status {code}"),
            (None, Some(signal), true) => format!("was terminated (signal {signal})"),
            (None, Some(signal), false) => format!("was killed by signal {signal}"),
            (None, None, true) => "was terminated".to_owned(),
            (None, None, false) => "ended without an exit status".to_owned(),
        }
    }
}

/// Writing to a process failed.
#[derive(Debug, Error)]
pub(crate) enum InputError {
    /// The process has exited.
    #[error("it has ended ({}); it cannot read input", .0.describe())]
    Exited(Exit),
    /// End of input was already sent.
    #[error("its input was already closed (eof)")]
    Closed,
    /// The process closed its end of the input (or is exiting).
    #[error("it no longer reads its input")]
    Gone,
    /// It was started without an input pipe.
    #[error("it was started without an input")]
    NoInput,
    /// The process did not take the input in time.
    #[error("it did not read its input within {} ms", WRITE_TIMEOUT.as_millis())]
    Stalled,
    /// The pipe or pty failed.
    #[error("writing failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Receives decoded output chunks.
pub(crate) type Emit = Arc<dyn Fn(OutputStream, &str) + Send + Sync>;

/// A point-in-time view of a process.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    /// Tail of stdout (of the pty, for a pty run).
    pub stdout: Tail,
    pub stderr: Tail,
    /// How it ended; `None` while it runs.
    pub exit: Option<Exit>,
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// The process exited and its output is complete.
    Exited,
    /// The time passed (or, for [`Live::settle`], output went quiet).
    TimedOut,
    /// The call was canceled.
    Canceled,
}

/// An emitter that streams a call's output as progress, when the call has a progress sink.
pub(crate) fn progress_emit(ctx: &ToolContext) -> Option<Emit> {
    ctx.progress.as_ref()?;
    let ctx = ctx.clone();
    Some(Arc::new(move |stream, text| ctx.emit(stream, text)))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
