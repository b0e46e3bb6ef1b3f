//! A per-session launcher: one helper process, confined once, that starts each command of the
//! session as its child, so a command pays a spawn from an already-confined process instead of
//! the exec and the confinement of a helper of its own.
//!
//! Contract:
//! - [`Launcher::start`] runs `HELPER ENCODED-POLICY --serve` with one end of a
//!   `SOCK_SEQPACKET` socket pair as its stdin, in a process group of its own (a terminal's
//!   Ctrl-C does not reach it); it returns once the launcher says it is confined, or the error
//!   (it could not confine itself, or said nothing within 10 s: the caller runs its commands
//!   through the one-shot helper, which reports why).
//! - [`Launcher::spawn`] sends the command line, the whole environment, the working directory
//!   and three descriptors (stdin, stdout, stderr); it returns the command's process id (it
//!   leads a new process group, as a one-shot helper's command does) or, when it could not
//!   start, its exit code (the launcher wrote the helper's line on the command's stderr). The
//!   command's wait status reaches `on_exit` once it ends, from the launcher's reader thread.
//! - When the launcher process ends (killed, crashed), every command it started and whose end
//!   was not reported is killed (SIGKILL to its group) and reported as killed by SIGKILL; no
//!   caller waits forever. Dropping the [`Launcher`] closes its socket, which ends the launcher
//!   process, and reaps it.
//! - [`SessionLauncher`] keeps the launcher of a session's policy: it is started at the first
//!   command, and started anew when a path the confinement was built on (denied reads,
//!   protected and writable paths, allowed unix sockets) has changed since (created, removed,
//!   replaced: the mounts and the Landlock rules of a running launcher are those of its
//!   start), or when the launcher process is gone (killed with a run's orphans). A launcher
//!   that cannot start is not tried again in the session.

mod serve;
pub(crate) mod wire;

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::net::{AddressFamily, SocketFlags, SocketType};

pub(crate) use serve::serve;
pub use wire::SpawnRequest;

use crate::helper::Helper;
use crate::policy::Policy;

/// The argument after the encoded policy that makes the helper a launcher.
pub const SERVE_ARGUMENT: &str = "--serve";

/// How long a starting launcher has to say it is confined.
const READY_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Called with the command's wait status when it ends.
pub type OnExit = Box<dyn FnOnce(i32) + Send>;

/// What became of a spawn request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Started {
    /// The command runs as this process (the leader of its own process group).
    Pid(u32),
    /// The command did not start; it ends with this exit code.
    Failed(i32),
}

/// Why a command was not started through the launcher.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The request never reached the launcher: nothing started (the caller may start the
    /// command another way).
    #[error("the command was not sent to the sandbox launcher: {0}")]
    NotSent(io::Error),
    /// The launcher ended before it answered: whether the command started is unknown (if it
    /// did, its group was killed).
    #[error("the sandbox launcher ended before it answered")]
    Lost,
}

/// Requests in flight: the answer to the spawn, then the command's end.
#[derive(Default)]
struct Pending {
    starts: HashMap<u64, std::sync::mpsc::Sender<Started>>,
    exits: HashMap<u64, (Option<u32>, OnExit)>,
}

/// One launcher process.
pub struct Launcher {
    control: OwnedFd,
    process: Mutex<Child>,
    pending: Arc<Mutex<Pending>>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launcher").field("control", &self.control).finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Launcher {
    /// Starts a launcher confined by `policy` through `helper`, and waits until it is ready.
    pub fn start(helper: &Helper, policy: &Policy) -> io::Result<Launcher> {
        let (ours, theirs) =
            rustix::net::socketpair(AddressFamily::UNIX, SocketType::SEQPACKET, SocketFlags::CLOEXEC, None)?;
        let (program, mut args) = helper.wrap(policy, "", std::iter::empty::<&str>());
        // `… ENCODED-POLICY -- ""` becomes `… ENCODED-POLICY --serve`.
        args.truncate(args.len().saturating_sub(2));
        args.push(SERVE_ARGUMENT.into());
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::from(theirs)).stdout(Stdio::null()).stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let process = command.spawn()?;
        // The command holds this process's copy of the launcher's end: without closing it, a
        // launcher that exits would never be seen to.
        drop(command);
        // A launcher that neither confines itself nor fails (it should take milliseconds) is
        // given up on rather than waited for.
        rustix::net::sockopt::set_socket_timeout(&ours, rustix::net::sockopt::Timeout::Recv, Some(READY_WITHIN))?;
        let mut buffer = vec![0u8; 64];
        let ready = match wire::recv(ours.as_fd(), &mut buffer) {
            Ok(Some((len, _))) => wire::Answer::decode(&buffer[..len]).ok() == Some(wire::Answer::Ready),
            _ => false,
        };
        rustix::net::sockopt::set_socket_timeout(&ours, rustix::net::sockopt::Timeout::Recv, None)?;
        let launcher = Launcher {
            control: ours,
            process: Mutex::new(process),
            pending: Arc::default(),
            next_id: AtomicU64::new(1),
        };
        if !ready {
            return Err(io::Error::other("the sandbox launcher did not start (it could not confine itself)"));
        }
        let reader = launcher.control.try_clone()?;
        let pending = Arc::clone(&launcher.pending);
        std::thread::Builder::new()
            .name("spine-launcher-read".into())
            .spawn(move || read_answers(&reader, &pending))?;
        Ok(launcher)
    }

    /// Starts a command (see the module documentation); `request.id` is set here.
    pub fn spawn(
        &self,
        mut request: SpawnRequest,
        stdio: [BorrowedFd<'_>; 3],
        on_exit: OnExit,
    ) -> Result<Started, LaunchError> {
        request.id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let bytes = request.encode().filter(|bytes| bytes.len() <= wire::MAX_MESSAGE).ok_or_else(|| {
            LaunchError::NotSent(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the command line is too long or holds NUL",
            ))
        })?;
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let mut pending = lock(&self.pending);
            pending.starts.insert(request.id, tx);
            pending.exits.insert(request.id, (None, on_exit));
        }
        let forget = || {
            let mut pending = lock(&self.pending);
            pending.starts.remove(&request.id);
            pending.exits.remove(&request.id);
        };
        if let Err(error) = wire::send(self.control.as_fd(), &bytes, &stdio) {
            forget();
            return Err(LaunchError::NotSent(error));
        }
        let started = rx.recv().map_err(|_| {
            forget();
            LaunchError::Lost
        })?;
        let mut pending = lock(&self.pending);
        match started {
            Started::Pid(pid) => {
                if let Some(entry) = pending.exits.get_mut(&request.id) {
                    entry.0 = Some(pid);
                }
            }
            Started::Failed(_) => {
                pending.exits.remove(&request.id);
            }
        }
        Ok(started)
    }
}

impl Launcher {
    /// Whether the launcher process still runs (one that was killed, or reaped by someone
    /// else, does not).
    pub fn is_running(&self) -> bool {
        matches!(lock(&self.process).try_wait(), Ok(None))
    }
}

impl Drop for Launcher {
    fn drop(&mut self) {
        let _ = rustix::net::shutdown(&self.control, rustix::net::Shutdown::Both);
        let mut process = lock(&self.process);
        let _ = process.kill();
        let _ = process.wait();
    }
}

/// The reader thread: hands each answer to its waiter; when the launcher is gone, ends and
/// reports every command still pending.
fn read_answers(control: &OwnedFd, pending: &Mutex<Pending>) {
    let mut buffer = vec![0u8; 256];
    while let Ok(Some((len, _))) = wire::recv(control.as_fd(), &mut buffer) {
        let Ok(answer) = wire::Answer::decode(&buffer[..len]) else { continue };
        let mut pending = lock(pending);
        match answer {
            wire::Answer::Started { id, pid } => {
                if let Some(tx) = pending.starts.remove(&id) {
                    let _ = tx.send(Started::Pid(pid));
                }
            }
            wire::Answer::Failed { id, code } => {
                if let Some(tx) = pending.starts.remove(&id) {
                    let _ = tx.send(Started::Failed(code));
                }
            }
            wire::Answer::Exited { id, raw } => {
                if let Some((_, on_exit)) = pending.exits.remove(&id) {
                    drop(pending);
                    on_exit(raw);
                }
            }
            wire::Answer::Ready => {}
        }
    }
    let mut pending = lock(pending);
    pending.starts.clear();
    for (_, (pid, on_exit)) in pending.exits.drain() {
        if let Some(pid) = pid.and_then(|pid| i32::try_from(pid).ok()) {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        on_exit(9);
    }
}

/// The state of the paths a confinement is built on: `(path, device, inode, mode)`, or only
/// the path for a missing one.
type Fingerprint = Vec<(PathBuf, Option<(u64, u64, u32)>)>;

fn fingerprint(policy: &Policy) -> Fingerprint {
    let paths =
        policy.read_deny.iter().chain(&policy.write_deny).chain(&policy.write_allow).chain(&policy.allow_unix_sockets);
    paths
        .map(|path| {
            let state = path.symlink_metadata().ok().map(|m| (m.dev(), m.ino(), m.mode()));
            (path.clone(), state)
        })
        .collect()
}

/// The launcher of a session's policy (see the module documentation).
pub struct SessionLauncher {
    helper: Helper,
    policy: Policy,
    current: Mutex<Option<(Fingerprint, Arc<Launcher>)>>,
    unavailable: AtomicBool,
}

impl std::fmt::Debug for SessionLauncher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLauncher").field("unavailable", &self.unavailable).finish_non_exhaustive()
    }
}

impl SessionLauncher {
    /// Commands under `policy`, through `helper`'s program.
    pub fn new(helper: Helper, policy: Policy) -> Self {
        SessionLauncher { helper, policy, current: Mutex::new(None), unavailable: AtomicBool::new(false) }
    }

    /// The launcher for the next command: the running one while the paths it was built on are
    /// as they were, else a new one; `None` when none can start.
    pub fn launcher(&self) -> Option<Arc<Launcher>> {
        if self.unavailable.load(Ordering::Relaxed) {
            return None;
        }
        let now = fingerprint(&self.policy);
        let mut current = lock(&self.current);
        if let Some((built_on, launcher)) = current.as_ref()
            && *built_on == now
            && launcher.is_running()
        {
            return Some(Arc::clone(launcher));
        }
        match Launcher::start(&self.helper, &self.policy) {
            Ok(launcher) => {
                let launcher = Arc::new(launcher);
                *current = Some((now, Arc::clone(&launcher)));
                Some(launcher)
            }
            Err(_) => {
                self.unavailable.store(true, Ordering::Relaxed);
                *current = None;
                None
            }
        }
    }
}
