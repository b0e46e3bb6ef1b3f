//! Confinement as part of the child environment: the [`Confine`] seam a sandbox engine
//! implements, and the [`SpawnGuard`] it hands back for each spawn.
//!
//! Contract:
//! - This crate knows no sandbox engine: a [`Confine`] (spine's lives in spine-tools, over
//!   spine-sandbox) says how a command is started confined — a launcher program and the
//!   arguments before the command's own program (`spine __sandbox POLICY -- PROGRAM ARGS…`) —
//!   and what each spawn must do before and after.
//! - A confined [`ChildEnv`](crate::ChildEnv) builds commands with
//!   [`ChildEnv::command`](crate::ChildEnv::command); [`GroupChild::spawn`](crate::GroupChild::spawn)
//!   refuses (fails closed) a command of a confined environment that was not built that way,
//!   so no spawn path can run a command bare by mistake.
//! - [`Confine::before_spawn`] runs just before each spawn: it may refuse the spawn (the sandbox
//!   cannot run and the configuration forbids running bare: the [`ConfineError`] names why),
//!   else it returns a [`SpawnGuard`], told the launcher's process id once it is spawned
//!   ([`SpawnGuard::spawned`]) and finished once the process group is gone (reaped,
//!   terminated or dropped); the lines it returns say what it did (for the tool's output or the
//!   trace).

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::Path;

use thiserror::Error;

/// How commands of an environment are started confined.
pub trait Confine: Send + Sync + fmt::Debug {
    /// The launcher program.
    fn program(&self) -> &Path;

    /// The launcher's arguments before the command's own program.
    fn prefix(&self) -> &[OsString];

    /// Variables every confined command gets (set explicitly: they win over the settings'
    /// `env`), e.g. `TMPDIR` pointing at the session's private temporary directory.
    fn env(&self) -> Vec<(OsString, OsString)>;

    /// Called just before each spawn. `Err` refuses the spawn; `Ok` is the guard finished once
    /// the process group is gone.
    fn before_spawn(&self) -> Result<Box<dyn SpawnGuard>, ConfineError>;

    /// The one-line profile of the confinement, for the trace
    /// (`workspace-write,net=off,landlock-v7,seccomp,userns`).
    fn profile(&self) -> String;

    /// A way to start commands without the launcher program per command (a process confined
    /// once that starts them: [`crate::launch`]); `None` by default.
    fn launcher(&self) -> Option<&dyn crate::launch::Launch> {
        None
    }

    /// A sentence per sandbox denial the output of a failed command shows (`Operation not
    /// permitted (sandbox: write outside the workspace)`), for the model; relative paths in it
    /// are taken against `cwd`, where the command ran. Empty when nothing in the output is
    /// explained by the confinement.
    fn explain(&self, output: &str, cwd: &Path) -> Vec<String>;
}

/// What one confined spawn must do once its process group is gone.
pub trait SpawnGuard: Send + fmt::Debug {
    /// Told the process id of the launcher once it is spawned (before anything else is done
    /// with the child); nothing by default.
    fn spawned(&mut self, pid: u32) {
        let _ = pid;
    }

    /// Finishes the spawn; one line per thing it did or could not do.
    fn finish(self: Box<Self>) -> Vec<String>;
}

/// Files spine itself wrote during a session where its confined commands may not write (the
/// approver's "always for this project" rules in `.spine/settings.local.json`): a confinement
/// that undoes what a command created at such paths keeps or restores these, byte for byte,
/// instead of blaming the command. Shared by the session's approver and its confinement.
#[derive(Debug, Default)]
pub struct OwnWrites {
    files: std::sync::Mutex<Vec<(std::path::PathBuf, Vec<u8>)>>,
}

impl OwnWrites {
    /// Records that spine wrote `bytes` to `path` (a later write of the same path replaces it).
    pub fn record(&self, path: &Path, bytes: Vec<u8>) {
        let mut files = self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        files.retain(|(p, _)| p != path);
        files.push((path.to_path_buf(), bytes));
    }

    /// The files recorded so far, with what spine wrote to each.
    pub fn files(&self) -> Vec<(std::path::PathBuf, Vec<u8>)> {
        self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// A guard with nothing to do.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoGuard;

impl SpawnGuard for NoGuard {
    fn finish(self: Box<Self>) -> Vec<String> {
        Vec::new()
    }
}

/// Why a confined spawn was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfineError {
    /// The sandbox cannot run here and the configuration refuses to run commands bare.
    #[error("{0}")]
    Unavailable(String),
    /// The command of a confined environment was not built with `ChildEnv::command`.
    #[error(
        "the command was not built through the sandbox launcher (ChildEnv::command); refusing to run it unconfined"
    )]
    NotWrapped,
}

/// Whether `command` starts with the launcher of `confine` and names a program after it.
pub(crate) fn is_wrapped(confine: &dyn Confine, command: &std::process::Command) -> bool {
    if command.get_program() != confine.program().as_os_str() {
        return false;
    }
    let prefix = confine.prefix();
    let mut args = command.get_args();
    prefix.iter().all(|expected| args.next() == Some(expected.as_os_str())) && args.next().is_some()
}

/// The launcher line of `program` under `confine`: its program, then its prefix and `program`.
pub(crate) fn launcher_line(confine: &dyn Confine, program: &OsStr) -> (std::path::PathBuf, Vec<OsString>) {
    let mut args = confine.prefix().to_vec();
    args.push(program.to_owned());
    (confine.program().to_path_buf(), args)
}
