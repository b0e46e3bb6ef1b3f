//! The command sandbox of a session, as the command line sets it up: `--sandbox MODE`
//! ([`SandboxFlag`]) and [`start`], shared by `spine run`, the interactive session, the worker
//! and `spine doctor`.
//!
//! Contract:
//! - `--sandbox read-only|workspace-write|off` wins over the settings (`sandbox.mode`,
//!   `sandbox.enabled`); `danger-full-access` is Codex's name for `off` and means it.
//! - [`start`] builds the session's sandbox with spine's own binary as the helper (`spine
//!   __sandbox`) and prints its lines on stderr: what is missing or not applied yet always
//!   (unless `-q`), the profile and the notes with `-v` (each note once per project,
//!   [`crate::shown_notes`]). Its problems are configuration errors.

use std::path::Path;
use std::sync::Arc;

use clap::ValueEnum;
use spine_agent::CommandLine;
use spine_agent::sandbox::{SandboxOptions, SessionSandbox};
use spine_sandbox::Helper;
use spine_settings::{SandboxMode, Settings};

use crate::error::config;

/// `--sandbox`: what the agent's commands may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxFlag {
    /// Commands write only a private temporary directory ($TMPDIR).
    ReadOnly,
    /// Commands write the workspace (minus protected paths) and $TMPDIR.
    WorkspaceWrite,
    /// No sandbox.
    Off,
    /// Codex's name for `off`.
    DangerFullAccess,
}

impl SandboxFlag {
    /// The mode it selects.
    pub fn mode(self) -> SandboxMode {
        match self {
            SandboxFlag::ReadOnly => SandboxMode::ReadOnly,
            SandboxFlag::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxFlag::Off | SandboxFlag::DangerFullAccess => SandboxMode::Off,
        }
    }
}

/// How loud [`start`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// Nothing on stderr (`-q`).
    Quiet,
    /// What is missing or not applied.
    Normal,
    /// Also the profile and the notes (`-v`).
    Verbose,
}

/// What a command asks of the session's sandbox.
pub struct Request<'a> {
    /// `--sandbox`.
    pub flag: Option<SandboxFlag>,
    /// The mode when neither the flag nor the settings choose one.
    pub default_mode: SandboxMode,
    /// Refuse commands when a layer is missing (the worker).
    pub require: bool,
    /// The project directory.
    pub project: &'a Path,
    /// `SPINE_HOME`.
    pub home: &'a Path,
    /// The command line's roots and rules.
    pub command_line: &'a CommandLine,
    /// How loud.
    pub verbosity: Verbosity,
    /// The person's approver in an interactive session (the proxy asks about domains no rule
    /// allows); `None` refuses them.
    pub network_approver: Option<Arc<dyn spine_core::permission::Approver>>,
}

/// The session's sandbox (see the module contract).
pub fn start(settings: &Settings, request: Request<'_>) -> anyhow::Result<Arc<SessionSandbox>> {
    let requested = request.flag.map(SandboxFlag::mode);
    let asked = requested.or(settings.sandbox.mode.as_ref().map(|(m, _)| *m)).unwrap_or(request.default_mode);
    let enabled = settings.sandbox.enabled.as_ref().is_some_and(|(on, _)| *on);
    let helper = match Helper::spine_current_exe() {
        Ok(helper) => helper,
        // Only a sandbox that is asked for needs the helper.
        Err(e) if asked != SandboxMode::Off || enabled => {
            return Err(config(format!("sandbox: cannot find spine's own executable to start the helper: {e}")));
        }
        Err(_) => return Ok(Arc::new(SessionSandbox::off())),
    };
    let options = SandboxOptions {
        flag: requested,
        default_mode: request.default_mode,
        require: request.require,
        project: request.project.to_path_buf(),
        spine_home: request.home.to_path_buf(),
        command_line: request.command_line.clone(),
        helper,
        network_approver: request.network_approver,
    };
    let sandbox = SessionSandbox::start(settings, options).map_err(|e| config(e.to_string()))?;
    if request.verbosity != Verbosity::Quiet {
        for line in sandbox.lines() {
            eprintln!("{line}");
        }
    }
    if request.verbosity == Verbosity::Verbose && sandbox.mode() != SandboxMode::Off {
        eprintln!("spine: sandbox {} (the agent's commands; hooks run outside it)", sandbox.profile());
        // Like the settings' notes, they say the same on every run: once per project.
        let notes: Vec<String> = sandbox.notes().iter().map(ToString::to_string).collect();
        for note in crate::shown_notes::fresh(request.home, request.project, "sandbox", &notes) {
            eprintln!("note: sandbox: {note}");
        }
    }
    Ok(Arc::new(sandbox))
}
