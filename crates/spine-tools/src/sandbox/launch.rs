//! The session's launcher as the [`Launch`] of spine-process: commands start from one helper
//! process confined once ([`spine_sandbox::launcher`]) instead of a helper each.
//!
//! Contract: offered only where nothing differs from a one-shot helper's run — spine undoes
//! protected paths itself and no proxy bridge runs (its refusals are attributed per helper
//! process) — and not when `SPINE_SANDBOX_LAUNCHER=0` is set in spine's environment. A
//! launcher that cannot start, or a request that never reached it, leaves the command to the
//! one-shot helper; a launcher that ended after the request is an error (the command is not
//! started twice).

use std::io;
use std::os::fd::BorrowedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use spine_process::{Launch, LaunchCommand, LaunchedChild};
use spine_sandbox::launcher::{LaunchError, SessionLauncher, SpawnRequest, Started};
use spine_sandbox::{Helper, Network, Policy};

/// Set to `0` in spine's environment to start every confined command through a helper of its
/// own.
pub const LAUNCHER_VARIABLE: &str = "SPINE_SANDBOX_LAUNCHER";

/// The session's launcher.
#[derive(Debug)]
pub struct SessionLaunch(SessionLauncher);

impl SessionLaunch {
    /// The launcher of `policy`'s commands, when one may be used for them.
    pub fn for_policy(helper: &Helper, policy: &Policy) -> Option<Self> {
        let off = std::env::var_os(LAUNCHER_VARIABLE).is_some_and(|v| v == "0");
        let same_as_one_shot = policy.caller_undoes && !matches!(policy.network, Network::Proxy { .. });
        (!off && same_as_one_shot).then(|| SessionLaunch(SessionLauncher::new(helper.clone(), policy.clone())))
    }
}

impl Launch for SessionLaunch {
    fn launch(&self, command: LaunchCommand, stdio: [BorrowedFd<'_>; 3]) -> Option<io::Result<LaunchedChild>> {
        let launcher = self.0.launcher()?;
        let request = SpawnRequest {
            id: 0,
            cwd: command.cwd.into(),
            program: command.program,
            args: command.args,
            env: command.env,
        };
        let (tx, exit) = tokio::sync::oneshot::channel();
        let on_exit = Box::new(move |raw: i32| {
            let _ = tx.send(ExitStatus::from_raw(raw));
        });
        match launcher.spawn(request, stdio, on_exit) {
            Ok(Started::Pid(pid)) => Some(Ok(LaunchedChild { pid: Some(pid), exit })),
            Ok(Started::Failed(code)) => {
                let (tx, exit) = tokio::sync::oneshot::channel();
                let _ = tx.send(ExitStatus::from_raw((code & 0xff) << 8));
                Some(Ok(LaunchedChild { pid: None, exit }))
            }
            Err(LaunchError::NotSent(_)) => None,
            Err(error @ LaunchError::Lost) => Some(Err(io::Error::other(error.to_string()))),
        }
    }
}
