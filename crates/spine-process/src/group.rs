//! A child that leads its own process group, and the ways to end that group.
//!
//! Contract:
//! - [`GroupChild::spawn`] starts the command in a **new process group** (`process_group(0)`)
//!   with `kill_on_drop`; the caller chooses stdin, stdout and stderr beforehand, and gives the
//!   [`ChildEnv`] of the agent it starts the child for (required: there is no spawn without
//!   one). Its settings variables are set and inherited provider keys and telemetry
//!   credentials removed first ([`ChildEnv::apply`]). A confined environment
//!   ([`crate::confine`]) also takes the confinement's guard for the spawn: a command not built
//!   with [`ChildEnv::command`], or a spawn the confinement refuses, fails with
//!   [`ProcessError::Confinement`] and nothing starts. The guard is finished once the group is
//!   gone ([`GroupChild::terminate`], [`GroupChild::reap_leftovers`], or the drop); its lines
//!   are kept for [`GroupChild::take_sandbox_notes`].
//! - [`GroupChild::spawn_io`] is the same with the standard streams given as ends
//!   ([`ChildIo`]): when the environment's confinement offers a
//!   [`Launch`](crate::launch::Launch), the command starts through it (from a process confined
//!   once, which reports the leader's end); the group, its guard and its ending are the same.
//! - [`GroupChild::terminate`] sends SIGTERM to the **whole group**, then SIGKILL once
//!   [`TERM_GRACE`] has passed with members left, so grandchildren (`sleep 100 &`) die too. The
//!   leader is reaped along the way.
//! - [`GroupChild::reap_leftovers`] does the same after the leader exited on its own: nothing the
//!   command started outlives it.
//! - Dropping a `GroupChild` that was not terminated SIGKILLs the group (the guard), so an
//!   abandoned future or a dropped long-lived process leaves nothing behind.
//!
//! A process that leaves the group (`setsid`) escapes; that is the limit of process groups.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use thiserror::Error;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use crate::confine::{ConfineError, SpawnGuard, is_wrapped};
use crate::launch::ChildIo;
use crate::secrets::ChildEnv;

/// How long a group has between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(1000);
/// How often a terminating group is checked for members.
const POLL: Duration = Duration::from_millis(10);

/// A process that could not be started.
#[derive(Debug, Error)]
pub enum ProcessError {
    /// The program could not be started (missing, not executable, bad working directory).
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program as given to the command.
        program: String,
        /// The operating system's refusal (`ENOENT`, `EACCES`, …).
        source: io::Error,
    },
    /// The environment's confinement refused the spawn.
    #[error("cannot start {program}: {source}")]
    Confinement {
        /// The program as given to the command (the sandbox launcher).
        program: String,
        /// Why.
        source: ConfineError,
    },
}

impl ProcessError {
    /// The underlying I/O error kind (`PermissionDenied` for a refused confinement).
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            ProcessError::Spawn { source, .. } => source.kind(),
            ProcessError::Confinement { .. } => io::ErrorKind::PermissionDenied,
        }
    }
}

/// A running child leading its own process group; the group is SIGKILLed on drop unless it
/// was already terminated.
#[derive(Debug)]
pub struct GroupChild {
    leader: Leader,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    pgid: Option<Pid>,
    /// The confinement's guard of this spawn, until the group is gone.
    guard: Option<Box<dyn SpawnGuard>>,
    /// What the guard said when it was finished.
    notes: Vec<String>,
}

/// The group's leader: spawned by this process, or by a confinement's launcher.
#[derive(Debug)]
enum Leader {
    Local(Child),
    Launched { pid: Option<u32>, exit: tokio::sync::oneshot::Receiver<ExitStatus>, status: Option<ExitStatus> },
}

impl Leader {
    fn id(&self) -> Option<u32> {
        match self {
            Leader::Local(child) => child.id(),
            Leader::Launched { pid, status, .. } => pid.filter(|_| status.is_none()),
        }
    }

    async fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Leader::Local(child) => child.wait().await,
            Leader::Launched { status: Some(status), .. } => Ok(*status),
            Leader::Launched { exit, status, .. } => {
                let ended = exit
                    .await
                    .map_err(|_| io::Error::other("the sandbox launcher did not report the command's end"))?;
                *status = Some(ended);
                Ok(ended)
            }
        }
    }

    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match self {
            Leader::Local(child) => child.try_wait(),
            Leader::Launched { status: Some(status), .. } => Ok(Some(*status)),
            Leader::Launched { exit, status, .. } => match exit.try_recv() {
                Ok(ended) => {
                    *status = Some(ended);
                    Ok(Some(ended))
                }
                Err(tokio::sync::oneshot::error::TryRecvError::Empty) => Ok(None),
                Err(tokio::sync::oneshot::error::TryRecvError::Closed) => {
                    Err(io::Error::other("the sandbox launcher did not report the command's end"))
                }
            },
        }
    }
}

impl GroupChild {
    /// Spawns `command` (program, arguments, cwd, explicit environment and stdio already set)
    /// as the leader of a new process group, its environment prepared by `env`.
    pub fn spawn(command: &mut Command, env: &ChildEnv) -> Result<GroupChild, ProcessError> {
        let program = command.as_std().get_program().to_string_lossy().into_owned();
        let guard = Self::guard(command, env, &program)?;
        env.apply(command);
        Self::spawn_local(command, program, guard)
    }

    /// [`GroupChild::spawn`] with the standard streams given as ends: a confinement that offers
    /// a [`Launch`](crate::launch::Launch) starts the command through it (one process
    /// confined once), else the command is spawned as by [`GroupChild::spawn`].
    pub fn spawn_io(command: &mut Command, env: &ChildEnv, io: ChildIo) -> Result<GroupChild, ProcessError> {
        let program = command.as_std().get_program().to_string_lossy().into_owned();
        let guard = Self::guard(command, env, &program)?;
        env.apply(command);
        if let Some(confinement) = env.confinement()
            && let Some(launcher) = confinement.launcher()
        {
            match crate::launch_io::launch(launcher, confinement.as_ref(), command, io) {
                crate::launch_io::Outcome::Started(started) => {
                    return Ok(Self::launched(started, guard));
                }
                crate::launch_io::Outcome::Failed(source) => {
                    if let Some(guard) = guard {
                        let _ = guard.finish();
                    }
                    return Err(ProcessError::Spawn { program, source });
                }
                crate::launch_io::Outcome::NotThisWay(io) => {
                    Self::set_io(command, io);
                    return Self::spawn_local(command, program, guard);
                }
            }
        }
        Self::set_io(command, io);
        Self::spawn_local(command, program, guard)
    }

    fn set_io(command: &mut Command, io: ChildIo) {
        command.stdin(io.stdin.into_stdio()).stdout(io.stdout.into_stdio()).stderr(io.stderr.into_stdio());
    }

    /// The confinement's guard for this spawn, or the refusal.
    fn guard(command: &Command, env: &ChildEnv, program: &str) -> Result<Option<Box<dyn SpawnGuard>>, ProcessError> {
        let Some(confinement) = env.confinement() else { return Ok(None) };
        let refused = |source| ProcessError::Confinement { program: program.to_owned(), source };
        if !is_wrapped(confinement.as_ref(), command.as_std()) {
            return Err(refused(ConfineError::NotWrapped));
        }
        Ok(Some(confinement.before_spawn().map_err(refused)?))
    }

    fn spawn_local(
        command: &mut Command,
        program: String,
        guard: Option<Box<dyn SpawnGuard>>,
    ) -> Result<GroupChild, ProcessError> {
        command.process_group(0).kill_on_drop(true);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(source) => {
                if let Some(guard) = guard {
                    let _ = guard.finish();
                }
                return Err(ProcessError::Spawn { program, source });
            }
        };
        let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        // A freshly spawned child has not been reaped, so its id is known; it leads its group.
        let pid = child.id();
        Ok(Self::led(Leader::Local(child), pid, (stdin, stdout, stderr), guard))
    }

    fn launched(started: crate::launch_io::Started, guard: Option<Box<dyn SpawnGuard>>) -> GroupChild {
        let crate::launch_io::Started { child, stdin, stdout, stderr } = started;
        let pid = child.pid;
        let leader = Leader::Launched { pid: child.pid, exit: child.exit, status: None };
        Self::led(leader, pid, (stdin, stdout, stderr), guard)
    }

    fn led(
        leader: Leader,
        pid: Option<u32>,
        (stdin, stdout, stderr): (Option<ChildStdin>, Option<ChildStdout>, Option<ChildStderr>),
        mut guard: Option<Box<dyn SpawnGuard>>,
    ) -> GroupChild {
        if let (Some(guard), Some(pid)) = (guard.as_mut(), pid) {
            guard.spawned(pid);
        }
        let pgid = pid.and_then(|id| i32::try_from(id).ok()).filter(|id| *id > 0).map(Pid::from_raw);
        if let Some(pgid) = pgid {
            crate::guard::register(pgid);
        }
        GroupChild { leader, stdin, stdout, stderr, pgid, guard, notes: Vec::new() }
    }

    /// What the confinement's guard said once the group was gone (a protected path the
    /// command created and that was removed…); empty before, and for an unconfined child.
    pub fn take_sandbox_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Finishes the confinement's guard: the group is gone.
    fn finish_guard(&mut self) {
        if let Some(guard) = self.guard.take() {
            self.notes.extend(guard.finish());
        }
    }

    /// The leader's process id (absent once reaped).
    pub fn id(&self) -> Option<u32> {
        self.leader.id()
    }

    /// Takes the child's stdin pipe, if it was piped.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Takes the child's stdout pipe, if it was piped.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// Takes the child's stderr pipe, if it was piped.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.stderr.take()
    }

    /// Waits for the leader to exit.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.leader.wait().await
    }

    /// The leader's status if it has exited, without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.leader.try_wait()
    }

    /// Ends the whole group (SIGTERM, then SIGKILL after [`TERM_GRACE`]) and reaps the leader.
    /// Returns the leader's status when it was collected.
    pub async fn terminate(&mut self) -> Option<ExitStatus> {
        if let Some(pgid) = self.pgid {
            terminate_group(pgid, Some(&mut self.leader)).await;
        } else if let Leader::Local(child) = &mut self.leader {
            let _ = child.start_kill();
        }
        let status = self.leader.wait().await.ok();
        if let Some(pgid) = self.pgid.take() {
            crate::guard::unregister(pgid);
        }
        self.finish_guard();
        status
    }

    /// After the leader exited on its own: ends whatever it left running in its group.
    pub async fn reap_leftovers(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            terminate_group(pgid, None).await;
            crate::guard::unregister(pgid);
        }
        self.finish_guard();
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(pgid, Signal::SIGKILL);
            crate::guard::unregister(pgid);
        }
        // Nobody reads the notes of an abandoned child; the guard's work is still done.
        self.finish_guard();
    }
}

/// SIGTERM to the group, then SIGKILL once [`TERM_GRACE`] has passed with members left. The
/// leader, when given, is reaped along the way (an unreaped leader keeps the group alive).
async fn terminate_group(pgid: Pid, mut leader: Option<&mut Leader>) {
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
