//! Commands confined by spine-sandbox: [`SandboxLauncher`], the [`Confine`] of an agent's
//! child environment.
//!
//! Contract:
//! - Every command of a confined [`ChildEnv`](spine_process::ChildEnv) starts as `spine
//!   __sandbox ENCODED-POLICY -- PROGRAM ARGS…` ([`Helper::wrap`]'s line), so Bash,
//!   `exec_command`, `process_exec` and MCP servers that opt in are confined through the one
//!   spawn path of spine-process. `TMPDIR` is set to the session's private temporary directory
//!   when there is one (the shared `/tmp` is not writable); a directory given with
//!   [`SandboxLauncher::with_private_tmpdir`] is removed when the launcher is dropped (the
//!   last command environment holding it is gone).
//! - Where nothing differs from a one-shot helper's run (no proxy bridge), the commands that
//!   spine-process starts with their streams given as ends start through the session's
//!   launcher instead ([`SessionLaunch`]: one helper process, confined once, starts them), unless
//!   `SPINE_SANDBOX_LAUNCHER=0`.
//! - Each spawn first takes a [`MissingGuard`] of the policy's protected paths that do not
//!   exist yet; once the process group is gone, whatever the command created there is removed
//!   (outside the sandbox, so a command that kills its helper cannot skip it) and each removal
//!   is one `spine sandbox: …` line for the tool's output.
//! - A launcher made with [`SandboxLauncher::refusing`] starts nothing: every spawn fails with
//!   the reason (the sandbox cannot run here and the configuration forbids running bare).
//! - Files spine itself writes at such a path during the session ([`OwnWrites`], recorded by
//!   the approver that saves "always for this project" rules while a command runs) are not the
//!   command's: a protected path holding only those, unchanged, is left alone; otherwise it is
//!   undone and spine's files are written back as spine wrote them (one line says so).
//! - [`Confine::explain`] reads a failed command's output for denials the policy explains
//!   ([`denials`]).
//! - With a [`SessionProxy`] ([`SandboxLauncher::with_proxy`]: the session runs spine's
//!   filtering proxy, which the launcher keeps alive), each spawn's guard also hands back what
//!   the proxy refused that command ([`network`]).

pub mod denials;
mod launch;
pub mod network;
mod own_writes;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spine_process::{Confine, ConfineError, OwnWrites, SpawnGuard};
use spine_sandbox::{Helper, MissingGuard, Policy};

pub use launch::{LAUNCHER_VARIABLE, SessionLaunch};
pub use network::{NetworkLog, SessionProxy};

/// The confinement of an agent's commands under one [`Policy`].
#[derive(Debug)]
pub struct SandboxLauncher {
    program: PathBuf,
    prefix: Vec<OsString>,
    policy: Policy,
    profile: String,
    tmpdir: Option<PathBuf>,
    owns_tmpdir: bool,
    read_only: bool,
    refusal: Option<String>,
    network: Option<Arc<NetworkLog>>,
    proxy: Option<SessionProxy>,
    own_writes: Arc<OwnWrites>,
    launch: Option<SessionLaunch>,
}

impl SandboxLauncher {
    /// Commands start through `helper` under `policy`; `profile` is what the trace records
    /// (computed by the caller from the probe and the policy).
    pub fn new(helper: &Helper, policy: Policy, profile: impl Into<String>) -> Self {
        // The helper's line for a placeholder command, without the command: the prefix.
        let (program, mut prefix) = helper.wrap(&policy, "", std::iter::empty::<&str>());
        prefix.pop();
        let policy_for_launch = policy.clone();
        SandboxLauncher {
            program,
            prefix,
            policy,
            profile: profile.into(),
            tmpdir: None,
            owns_tmpdir: false,
            read_only: false,
            refusal: None,
            network: None,
            proxy: None,
            own_writes: Arc::default(),
            launch: SessionLaunch::for_policy(helper, &policy_for_launch),
        }
    }

    /// Confined commands get `TMPDIR=dir` (a writable root of the policy).
    pub fn with_tmpdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tmpdir = Some(dir.into());
        self
    }

    /// Confined commands get `TMPDIR=dir`, a directory made for this launcher alone: it is
    /// removed, with what is in it, when the launcher is dropped.
    pub fn with_private_tmpdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tmpdir = Some(dir.into());
        self.owns_tmpdir = true;
        self
    }

    /// The session is read-only: its denials of writes say so (the policy alone would call
    /// every one a write outside the workspace).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Keeps `proxy` (the one the policy's network names) alive with the launcher; each
    /// spawn's guard reports what it refused the command.
    pub fn with_proxy(mut self, proxy: SessionProxy) -> Self {
        self.network = Some(Arc::clone(proxy.log()));
        self.proxy = Some(proxy);
        self
    }

    /// Where spine records the files it writes at protected paths during the session.
    pub fn own_writes(&self) -> &Arc<OwnWrites> {
        &self.own_writes
    }

    /// spine's proxy, when commands reach the network through it.
    pub fn proxy(&self) -> Option<&SessionProxy> {
        self.proxy.as_ref()
    }

    /// Every spawn is refused with `reason`.
    pub fn refusing(mut self, reason: impl Into<String>) -> Self {
        self.refusal = Some(reason.into());
        self
    }

    /// The policy commands run under.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

impl Confine for SandboxLauncher {
    fn program(&self) -> &Path {
        &self.program
    }

    fn prefix(&self) -> &[OsString] {
        &self.prefix
    }

    fn env(&self) -> Vec<(OsString, OsString)> {
        self.tmpdir.iter().map(|dir| (OsString::from("TMPDIR"), dir.as_os_str().to_owned())).collect()
    }

    fn before_spawn(&self) -> Result<Box<dyn SpawnGuard>, ConfineError> {
        if let Some(reason) = &self.refusal {
            return Err(ConfineError::Unavailable(reason.clone()));
        }
        Ok(Box::new(Spawned {
            protected: MissingGuard::before(&self.policy),
            network: self.network.clone(),
            own_writes: Arc::clone(&self.own_writes),
            pid: None,
        }))
    }

    fn profile(&self) -> String {
        self.profile.clone()
    }

    fn launcher(&self) -> Option<&dyn spine_process::Launch> {
        match &self.refusal {
            Some(_) => None,
            None => self.launch.as_ref().map(|l| l as &dyn spine_process::Launch),
        }
    }

    fn explain(&self, output: &str, cwd: &Path) -> Vec<String> {
        let explained = denials::explain_output(&self.policy, output, cwd);
        if !self.read_only {
            return explained;
        }
        let read_only = "the sandbox is read-only; only $TMPDIR is writable";
        explained
            .into_iter()
            .map(|line| {
                line.replace(
                    "write outside the workspace; the shared temp directory is read-only, use $TMPDIR",
                    read_only,
                )
            })
            .map(|line| line.replace("write outside the workspace", read_only))
            .collect()
    }
}

impl Drop for SandboxLauncher {
    fn drop(&mut self) {
        if let (true, Some(dir)) = (self.owns_tmpdir, &self.tmpdir) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// One confined spawn: undoes what the command created at protected paths that did not exist
/// before it, and collects what the proxy refused its launcher.
#[derive(Debug)]
struct Spawned {
    protected: MissingGuard,
    network: Option<Arc<NetworkLog>>,
    own_writes: Arc<OwnWrites>,
    pid: Option<u32>,
}

impl SpawnGuard for Spawned {
    fn spawned(&mut self, pid: u32) {
        self.pid = Some(pid);
    }

    fn finish(self: Box<Self>) -> Vec<String> {
        let own = self.own_writes.files();
        let keep = |path: &Path| own_writes::only_spines(path, &own);
        let mut lines: Vec<String> =
            self.protected.undo_keeping(&keep).into_iter().map(|line| format!("spine sandbox: {line}")).collect();
        lines.extend(own_writes::restore(self.protected.paths(), &own));
        if let (Some(log), Some(pid)) = (&self.network, self.pid) {
            lines.extend(log.take(pid));
        }
        lines
    }
}
