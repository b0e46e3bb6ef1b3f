//! Starting a confined command without a launcher program per command: the [`Launch`] seam a
//! confinement may offer (a process confined once that starts each command as its child), and
//! the standard streams of a command given as ends ([`ChildIo`]), which both ways of starting
//! it can honour.
//!
//! Contract:
//! - [`Launch::launch`] starts the command with exactly the environment, working directory and
//!   descriptors it is given, as the leader of a new process group, and hands back its process
//!   id and a receiver of its wait status; `None` means "not this way" and the caller starts the
//!   launcher program as usual. An error means the command may or may not have started (the
//!   caller does not start it again).
//! - [`command_environment`] is the whole environment `std::process::Command` would give the
//!   child: this process's, with the command's own changes.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::process::ExitStatus;

/// A command for [`Launch::launch`]: the program as the user's command names it (found on the
/// `PATH` of `env`), its arguments, its whole environment and its working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchCommand {
    /// The program.
    pub program: OsString,
    /// The arguments after it.
    pub args: Vec<OsString>,
    /// The whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// The working directory.
    pub cwd: PathBuf,
}

/// A command started by a [`Launch`].
#[derive(Debug)]
pub struct LaunchedChild {
    /// Its process id (it leads its own process group); `None` when it did not start, and
    /// `exit` then holds the status it ends with.
    pub pid: Option<u32>,
    /// Its wait status, once it has ended.
    pub exit: tokio::sync::oneshot::Receiver<ExitStatus>,
}

/// Starts commands from an already-confined process (see the module documentation).
pub trait Launch: Send + Sync + fmt::Debug {
    /// Starts `command` with `stdio` (stdin, stdout, stderr) as its standard streams.
    fn launch(&self, command: LaunchCommand, stdio: [BorrowedFd<'_>; 3]) -> Option<io::Result<LaunchedChild>>;
}

/// One standard stream of a child.
#[derive(Debug)]
pub enum IoEnd {
    /// `/dev/null`.
    Null,
    /// A pipe to this process (taken with `take_stdin`, `take_stdout`, `take_stderr`).
    Piped,
    /// This descriptor (a pty's side, a file).
    Fd(OwnedFd),
}

impl IoEnd {
    /// The end as `std::process::Stdio`, for a command this process spawns itself.
    pub(crate) fn into_stdio(self) -> std::process::Stdio {
        match self {
            IoEnd::Null => std::process::Stdio::null(),
            IoEnd::Piped => std::process::Stdio::piped(),
            IoEnd::Fd(fd) => std::process::Stdio::from(fd),
        }
    }
}

/// The three standard streams of a child.
#[derive(Debug)]
pub struct ChildIo {
    /// Its standard input.
    pub stdin: IoEnd,
    /// Its standard output.
    pub stdout: IoEnd,
    /// Its standard error.
    pub stderr: IoEnd,
}

/// The whole environment a `std::process::Command` would give its child: this process's,
/// with the command's own changes.
pub fn command_environment(command: &std::process::Command) -> Vec<(OsString, OsString)> {
    let mut env: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => env.insert(name.to_owned(), value.to_owned()),
            None => env.remove(name),
        };
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_environment_is_this_process_with_the_commands_changes() {
        let mut command = std::process::Command::new("true");
        command.env("SPINE_LAUNCH_TEST_SET", "1").env_remove("PATH");
        let env = command_environment(&command);
        assert!(env.contains(&("SPINE_LAUNCH_TEST_SET".into(), "1".into())));
        assert!(!env.iter().any(|(name, _)| name == "PATH"), "a removed variable is gone");
        if let Some(home) = std::env::var_os("HOME") {
            assert!(env.contains(&("HOME".into(), home)), "an untouched variable is inherited");
        }
    }
}
