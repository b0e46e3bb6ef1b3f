//! The [`Live`] process itself: spawning (pipes or pty), the output pumps feeding the rings and
//! the listeners, input writes, and the supervisor that records the exit once the output is
//! complete (the contract is the parent module's).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use spine_core::tool::OutputStream;
use spine_process::capture::Utf8Stream;
use spine_process::{ChildIo, GroupChild, IoEnd, ProcessError};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{Emit, Exit, InputError, Snapshot, SpawnSpec, StdinMode, Terminal, WRITE_TIMEOUT, WaitEnd, lock, pty};
use crate::env_file;
use crate::ring::OutputRing;

/// Read size of the output pipes and the pty.
const CHUNK: usize = 256 * 1024;
/// The pipe buffer asked for.
const PIPE_SIZE: i32 = 1024 * 1024;

struct Listener {
    id: u64,
    emit: Option<Emit>,
    chunks: Arc<AtomicU64>,
}

struct State {
    stdout: OutputRing,
    stderr: OutputRing,
    exit: Option<Exit>,
    listeners: Vec<Listener>,
    next_listener: u64,
}

enum Input {
    Pipe(ChildStdin),
    Pty { writer: tokio::net::unix::pipe::Sender, at_line_start: bool },
    Closed,
    None,
}

/// A live child process.
pub(crate) struct Live {
    pid: Option<u32>,
    terminal: Terminal,
    state: Mutex<State>,
    changed: watch::Sender<u64>,
    input: tokio::sync::Mutex<Input>,
    kill: CancellationToken,
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

impl Live {
    /// Starts a process; `owner` is the registry's token (canceling it ends the process).
    pub(crate) fn spawn(spec: SpawnSpec<'_>, owner: &CancellationToken) -> Result<Arc<Live>, ProcessError> {
        let shell = if Path::new("/bin/bash").exists() { "/bin/bash" } else { "/bin/sh" };
        let mut cmd = spec.env.command(shell);
        cmd.arg("-c").arg(spec.command).current_dir(spec.cwd);
        if let Some(path) = spec.env_file {
            cmd.envs(env_file::load(path));
        }
        let spawn_error = |source: std::io::Error| ProcessError::Spawn { program: shell.to_owned(), source };
        let mut pty_ends = None;
        let io = match spec.terminal {
            Terminal::Pipes => ChildIo {
                stdin: match spec.stdin {
                    StdinMode::Piped => IoEnd::Piped,
                    StdinMode::Null => IoEnd::Null,
                },
                stdout: IoEnd::Piped,
                stderr: IoEnd::Piped,
            },
            Terminal::Pty => {
                let pty = pty::open().map_err(spawn_error)?;
                let out = pty.slave.try_clone().map_err(spawn_error)?;
                let err = pty.slave.try_clone().map_err(spawn_error)?;
                pty_ends = Some((pty.reader, pty.writer));
                ChildIo { stdin: IoEnd::Fd(pty.slave), stdout: IoEnd::Fd(out), stderr: IoEnd::Fd(err) }
            }
        };
        let mut child = GroupChild::spawn_io(&mut cmd, spec.env, io)?;
        // The command keeps its copies of the pty slave: drop them, or the pty never reports
        // end of output.
        drop(cmd);

        let (pty_reader, input) = match (pty_ends, child.take_stdin()) {
            (Some((reader, writer)), _) => (Some(reader), Input::Pty { writer, at_line_start: true }),
            (None, Some(pipe)) => (None, Input::Pipe(pipe)),
            (None, None) => (None, Input::None),
        };
        let (changed, _) = watch::channel(0u64);
        let live = Arc::new(Live {
            pid: child.id(),
            terminal: spec.terminal,
            state: Mutex::new(State {
                stdout: OutputRing::new(spec.ring_cap),
                stderr: OutputRing::new(spec.ring_cap),
                exit: None,
                listeners: Vec::new(),
                next_listener: 0,
            }),
            changed,
            input: tokio::sync::Mutex::new(input),
            kill: owner.child_token(),
            supervisor: Mutex::new(None),
        });
        let mut readers = Vec::with_capacity(2);
        if let Some(reader) = pty_reader {
            readers.push(tokio::spawn(pump(reader, Arc::clone(&live), OutputStream::Stdout)));
        }
        if let Some(pipe) = child.take_stdout() {
            widen(&pipe);
            readers.push(tokio::spawn(pump(pipe, Arc::clone(&live), OutputStream::Stdout)));
        }
        if let Some(pipe) = child.take_stderr() {
            widen(&pipe);
            readers.push(tokio::spawn(pump(pipe, Arc::clone(&live), OutputStream::Stderr)));
        }
        let sandbox = spec.env.confinement().map(|c| (Arc::clone(c), spec.cwd.to_path_buf()));
        let handle = tokio::spawn(supervise(child, Arc::clone(&live), readers, sandbox));
        *lock(&live.supervisor) = Some(handle);
        Ok(live)
    }

    /// The leader's process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the process runs on a pty.
    pub(crate) fn is_pty(&self) -> bool {
        self.terminal == Terminal::Pty
    }

    /// How it ended, once it has.
    pub(crate) fn exit(&self) -> Option<Exit> {
        lock(&self.state).exit
    }

    /// The tails (at most `tail_max` bytes each) and the ending.
    pub(crate) fn snapshot(&self, tail_max: usize) -> Snapshot {
        let state = lock(&self.state);
        Snapshot { stdout: state.stdout.tail(tail_max), stderr: state.stderr.tail(tail_max), exit: state.exit }
    }

    /// Bytes of output so far (stdout, stderr).
    pub(crate) fn byte_counts(&self) -> (u64, u64) {
        let state = lock(&self.state);
        (state.stdout.total(), state.stderr.total())
    }

    /// Counts output chunks, and streams them to `emit` when given, until the guard is
    /// dropped.
    pub(crate) fn listen(self: &Arc<Self>, emit: Option<Emit>) -> ListenGuard {
        let chunks = Arc::new(AtomicU64::new(0));
        let mut state = lock(&self.state);
        let id = state.next_listener;
        state.next_listener += 1;
        state.listeners.push(Listener { id, emit, chunks: Arc::clone(&chunks) });
        ListenGuard { live: Arc::clone(self), id, chunks }
    }

    /// Waits until the process exited, `limit` passed, or `cancel` fired.
    pub(crate) async fn wait_exit(&self, limit: Duration, cancel: &CancellationToken) -> WaitEnd {
        let mut rx = self.changed.subscribe();
        let deadline = Instant::now() + limit;
        loop {
            if self.exit().is_some() {
                return WaitEnd::Exited;
            }
            tokio::select! {
                r = rx.changed() => if r.is_err() { return WaitEnd::Exited },
                () = tokio::time::sleep_until(deadline) => return WaitEnd::TimedOut,
                () = cancel.cancelled() => return WaitEnd::Canceled,
            }
        }
    }

    /// Waits until the process exited, or output arrived and then stayed quiet for `quiet`,
    /// or `limit` passed, or `cancel` fired. Subscribe before acting ([`Live::changes`]) so
    /// output caused by the action is not missed.
    pub(crate) async fn settle(
        &self,
        mut rx: watch::Receiver<u64>,
        limit: Duration,
        quiet: Duration,
        cancel: &CancellationToken,
    ) -> WaitEnd {
        let deadline = Instant::now() + limit;
        let mut until = deadline;
        loop {
            if self.exit().is_some() {
                return WaitEnd::Exited;
            }
            tokio::select! {
                r = rx.changed() => {
                    if r.is_err() {
                        return WaitEnd::Exited;
                    }
                    until = (Instant::now() + quiet).min(deadline);
                }
                () = tokio::time::sleep_until(until) => return WaitEnd::TimedOut,
                () = cancel.cancelled() => return WaitEnd::Canceled,
            }
        }
    }

    /// A receiver that sees every later output chunk and the exit.
    pub(crate) fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Writes `text` to the process's input, then closes it when `eof`. Returns the bytes
    /// written.
    pub(crate) async fn write(&self, text: &str, eof: bool) -> Result<usize, InputError> {
        let mut input = self.input.lock().await;
        if let Some(exit) = self.exit() {
            return Err(InputError::Exited(exit));
        }
        match &mut *input {
            Input::Closed => Err(InputError::Closed),
            Input::None => Err(InputError::NoInput),
            Input::Pipe(pipe) => {
                if !text.is_empty() {
                    timed(write_all(pipe, text.as_bytes())).await?;
                }
                if eof {
                    *input = Input::Closed;
                }
                Ok(text.len())
            }
            Input::Pty { writer, at_line_start } => {
                if !text.is_empty() {
                    timed(write_all(writer, text.as_bytes())).await?;
                    *at_line_start = text.ends_with('\n');
                }
                if eof {
                    // ^D ends a pending partial line first; at the start of a line it is EOF.
                    let eof_bytes: &[u8] = if *at_line_start { b"\x04" } else { b"\x04\x04" };
                    timed(write_all(writer, eof_bytes)).await?;
                    *input = Input::Closed;
                }
                Ok(text.len())
            }
        }
    }

    /// Ends the process group (SIGTERM, then SIGKILL) and waits until the output is complete.
    pub(crate) async fn terminate(&self) -> Option<Exit> {
        self.kill.cancel();
        let handle = lock(&self.supervisor).take();
        if let Some(handle) = handle {
            let _ = handle.await;
        }
        self.exit()
    }

    /// Asks the supervisor to end the process group, without waiting.
    pub(crate) fn kill(&self) {
        self.kill.cancel();
    }

    fn record(&self, stream: OutputStream, bytes: &[u8], decoder: &mut Utf8Stream) {
        {
            let mut state = lock(&self.state);
            match stream {
                OutputStream::Stdout => state.stdout.push(bytes),
                OutputStream::Stderr => state.stderr.push(bytes),
            }
            for l in &state.listeners {
                l.chunks.fetch_add(1, Ordering::Relaxed);
            }
            if state.listeners.iter().any(|l| l.emit.is_some()) {
                let text = decoder.push(bytes);
                if !text.is_empty() {
                    for emit in state.listeners.iter().filter_map(|l| l.emit.as_ref()) {
                        emit(stream, &text);
                    }
                }
            } else {
                // Nobody decodes: start afresh when someone streams again.
                *decoder = Utf8Stream::default();
            }
        }
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    fn finish(&self, exit: Exit) {
        lock(&self.state).exit = Some(exit);
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }
}

/// Detaches a listener when dropped.
pub(crate) struct ListenGuard {
    live: Arc<Live>,
    id: u64,
    chunks: Arc<AtomicU64>,
}

impl ListenGuard {
    /// Chunks forwarded so far.
    pub(crate) fn chunks(&self) -> u64 {
        self.chunks.load(Ordering::Relaxed)
    }
}

impl Drop for ListenGuard {
    fn drop(&mut self) {
        lock(&self.live.state).listeners.retain(|l| l.id != self.id);
    }
}

/// Asks for a 1 MiB pipe buffer (the default is 64 KiB): fewer wake-ups per megabyte for
/// chatty commands. Refusals (a lower `pipe-max-size`) are ignored.
fn widen(pipe: &impl std::os::fd::AsFd) {
    let _ = nix::fcntl::fcntl(pipe, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE));
}

async fn timed<F: std::future::Future<Output = std::io::Result<()>>>(f: F) -> Result<(), InputError> {
    match tokio::time::timeout(WRITE_TIMEOUT, f).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(InputError::Gone),
        Ok(Err(e)) => Err(InputError::Io(e)),
        Err(_) => Err(InputError::Stalled),
    }
}

async fn pump(mut pipe: impl AsyncRead + Unpin, live: Arc<Live>, stream: OutputStream) {
    let mut decoder = Utf8Stream::default();
    let mut buf = vec![0u8; CHUNK];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => live.record(stream, &buf[..n], &mut decoder),
        }
    }
    flush(&live, stream, &mut decoder);
}

async fn write_all(pipe: &mut (impl tokio::io::AsyncWrite + Unpin), bytes: &[u8]) -> std::io::Result<()> {
    pipe.write_all(bytes).await?;
    pipe.flush().await
}

fn flush(live: &Live, stream: OutputStream, decoder: &mut Utf8Stream) {
    let rest = decoder.finish();
    if rest.is_empty() {
        return;
    }
    let state = lock(&live.state);
    for emit in state.listeners.iter().filter_map(|l| l.emit.as_ref()) {
        emit(stream, &rest);
    }
}

/// The confinement of a sandboxed process and the directory it started in.
type Sandboxed = Option<(Arc<dyn spine_process::Confine>, std::path::PathBuf)>;

async fn supervise(mut child: GroupChild, live: Arc<Live>, mut readers: Vec<JoinHandle<()>>, sandbox: Sandboxed) {
    let kill = live.kill.clone();
    let (status, terminated) = tokio::select! {
        status = child.wait() => (status.ok(), false),
        () = kill.cancelled() => (child.terminate().await, true),
    };
    // Background members of the group may still hold the output open.
    spine_process::drain(&mut child, &mut readers).await;
    let exit = Exit::from_status(status, terminated);
    if let Some((confinement, cwd)) = &sandbox {
        sandbox_notes(&live, &mut child, confinement.as_ref(), cwd, exit);
    }
    *live.input.lock().await = Input::Closed;
    live.finish(exit);
}

/// Bytes of each stream's tail read for sandbox denials.
const EXPLAIN_TAIL: usize = 64 * 1024;

/// Ends stderr with what the sandbox says: the guard's lines, and for a failed command the
/// denials its output shows that the policy explains.
fn sandbox_notes(
    live: &Live,
    child: &mut GroupChild,
    confinement: &dyn spine_process::Confine,
    cwd: &Path,
    exit: Exit,
) {
    let mut notes = child.take_sandbox_notes();
    if !exit.terminated && exit.code != Some(0) {
        let snapshot = live.snapshot(EXPLAIN_TAIL);
        notes.extend(confinement.explain(&format!("{}\n{}", snapshot.stdout.text, snapshot.stderr.text), cwd));
    }
    for note in notes {
        live.record(OutputStream::Stderr, format!("{note}\n").as_bytes(), &mut Utf8Stream::default());
    }
}
