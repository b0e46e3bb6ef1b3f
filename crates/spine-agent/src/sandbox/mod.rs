//! A session's command sandbox: [`SessionSandbox::start`] turns the settings' `sandbox` key,
//! the `--sandbox` flag and the workspace into a spine-sandbox [`Policy`], probes what the
//! kernel offers, and gives the confinement the agent's tools get
//! ([`SessionSandbox::confine`]) and the rules its permission step reads
//! ([`SessionSandbox::rules`]).
//!
//! Contract:
//! - The mode is the flag's, else the settings' (`sandbox.mode`, else `sandbox.enabled`), else
//!   the caller's default (`spine run`: off; the worker: `workspace-write`). Off: nothing is
//!   confined and nothing is probed.
//! - The policy: every path readable except [`paths::DEFAULT_DENIED_READS`] under the home,
//!   `SPINE_HOME/settings.json`, the `Read(…)` deny rules and `sandbox.filesystem.denyRead`
//!   (minus what `sandbox.filesystem.allowRead` lifts: an entry equal to or beneath it);
//!   writable: a private temporary directory made for the session (the commands' `TMPDIR`,
//!   removed when the session ends) and, in `workspace-write`, the workspace roots and
//!   `sandbox.filesystem.allowWrite`; write-protected: [`paths::PROTECTED_IN_ROOTS`] in each
//!   root, the home's startup and configuration files when the home is inside a root, the
//!   `Edit(…)` deny rules and `sandbox.filesystem.denyWrite`.
//! - The network: off, the whole network (`allowedDomains: ["*"]`), or only spine's
//!   filtering proxy when domains are allowed or a person can be asked ([`network`]).
//!   `allowLocalBinding`, `allowUnixSockets` and `allowAllUnixSockets` apply.
//! - The kernel is probed once ([`probe_with`]). When a layer is missing, one line names it;
//!   with `failIfUnavailable` (or a caller that requires the sandbox: the worker) every
//!   command is refused with that reason (and `dangerouslyDisableSandbox` cannot take a
//!   command out), otherwise the policy is best effort and commands run with the layers
//!   that are there.
//! - Hooks are the user's own code and stay outside: only the agent's tool context (and MCP
//!   servers configured with `"sandbox": true`) get the confinement.

pub mod network;
pub mod paths;
mod tmpdir;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use spine_core::permission::PermissionRule;
use spine_core::sandbox_rules::SandboxRules;
use spine_process::ChildEnv;
use spine_sandbox::{Capabilities, Helper, Network, Policy, Support, probe_with};
use spine_settings::{SandboxMode, Settings};
use spine_tools::sandbox::SandboxLauncher;
use thiserror::Error;

use crate::CommandLine;
use tmpdir::private_tmpdir;

/// What the caller decides about the sandbox beyond the settings.
#[derive(Clone)]
pub struct SandboxOptions {
    /// `--sandbox`: wins over the settings.
    pub flag: Option<SandboxMode>,
    /// The mode when neither the flag nor the settings choose one.
    pub default_mode: SandboxMode,
    /// Refuse commands when a layer is missing, whatever `failIfUnavailable` says (the worker).
    pub require: bool,
    /// The project directory.
    pub project: PathBuf,
    /// `SPINE_HOME`.
    pub spine_home: PathBuf,
    /// The command line (its `--add-dir` roots and `--disallowedTools` rules).
    pub command_line: CommandLine,
    /// How to start the helper (spine: its own binary's `__sandbox`).
    pub helper: Helper,
    /// The person's approver in an interactive session: the proxy asks about destinations no
    /// allowed domain covers. `None`: such destinations are refused.
    pub network_approver: Option<Arc<dyn spine_core::permission::Approver>>,
}

impl std::fmt::Debug for SandboxOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxOptions")
            .field("flag", &self.flag)
            .field("default_mode", &self.default_mode)
            .field("require", &self.require)
            .field("project", &self.project)
            .field("spine_home", &self.spine_home)
            .field("helper", &self.helper)
            .field("network_approver", &self.network_approver.is_some())
            .finish_non_exhaustive()
    }
}

/// The sandbox could not be set up (a configuration problem, or the temporary directory).
#[derive(Debug, Error)]
pub enum SandboxSetupError {
    /// An `excludedCommands` entry is not a valid Bash rule pattern.
    #[error("{at}: {source}")]
    ExcludedCommand {
        /// The settings file and JSON path.
        at: String,
        /// Why it does not parse.
        source: spine_core::permission::RuleError,
    },
    /// A `sandbox.network` domain pattern is not a host.
    #[error("{at}: {source}")]
    Domain {
        /// The settings key and index.
        at: String,
        /// Why it is not a pattern.
        source: spine_tools::proxy::PatternError,
    },
    /// A workspace root is unusable.
    #[error(transparent)]
    Roots(#[from] crate::AssemblyError),
    /// The private temporary directory could not be made.
    #[error("cannot create the sandbox's temporary directory in {dir}: {source}")]
    TempDir {
        /// Where it was to be made.
        dir: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
}

/// The sandbox of one session (see the module contract). Dropping it removes the private
/// temporary directory.
#[derive(Debug)]
pub struct SessionSandbox {
    mode: SandboxMode,
    launcher: Option<Arc<SandboxLauncher>>,
    rules: Option<SandboxRules>,
    capabilities: Option<Capabilities>,
    profile: String,
    lines: Vec<String>,
    notes: Vec<String>,
}

impl SessionSandbox {
    /// No sandbox: commands run unconfined.
    pub fn off() -> Self {
        SessionSandbox {
            mode: SandboxMode::Off,
            launcher: None,
            rules: None,
            capabilities: None,
            profile: "off".to_owned(),
            lines: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The sandbox of a session (see the module contract).
    pub fn start(settings: &Settings, options: SandboxOptions) -> Result<Self, SandboxSetupError> {
        let config = &settings.sandbox;
        let from_enabled = match config.enabled {
            Some((true, _)) => SandboxMode::WorkspaceWrite,
            Some((false, _)) => SandboxMode::Off,
            None => options.default_mode,
        };
        let mode = options.flag.or(config.mode.as_ref().map(|(m, _)| *m)).unwrap_or(from_enabled);
        if mode == SandboxMode::Off {
            return Ok(SessionSandbox::off());
        }
        let excluded = excluded_rules(settings)?;
        let roots: Vec<PathBuf> = crate::workspace_roots(settings, &options.command_line, &options.project)?
            .into_iter()
            .map(|r| r.path)
            .collect();
        let (plan, network_lines) = network::plan(settings, &options.command_line, options.network_approver.clone())?;
        let tmpdir = private_tmpdir()?;
        let (network, proxy, proxy_line) = start_network(plan)?;
        let built = build_policy(settings, &options, mode, &roots, &tmpdir, network);
        let mut policy = built.policy;
        let mut lines = network_lines;
        lines.extend(proxy_line);
        lines.extend(built.lines);
        let capabilities = probe_with(&options.helper);
        let missing = missing_layers(&capabilities);
        let require = options.require || config.fail_if_unavailable == Some(true);
        let refusal = match (missing.is_empty(), require) {
            (true, _) => None,
            (false, true) => {
                let why = format!(
                    "the sandbox cannot run here ({}); {} refuses to run commands unconfined",
                    missing.join("; "),
                    if options.require { "this worker" } else { "sandbox.failIfUnavailable" }
                );
                lines.push(format!("spine: sandbox: {}; every command is refused", missing.join("; ")));
                Some(why)
            }
            (false, false) => {
                policy.best_effort = true;
                lines.push(format!(
                    "spine: sandbox: {}; commands run with the layers that are in force (best effort; \
                     set sandbox.failIfUnavailable to refuse them instead)",
                    missing.join("; ")
                ));
                None
            }
        };
        let profile = profile(mode, &policy, &capabilities);
        // The launcher owns the directory: it goes when the last environment holding it does.
        let mut launcher = SandboxLauncher::new(&options.helper, policy, profile.clone())
            .with_private_tmpdir(tmpdir)
            .read_only(mode == SandboxMode::ReadOnly);
        if let Some(reason) = &refusal {
            launcher = launcher.refusing(reason.clone());
        }
        if let Some(proxy) = proxy {
            launcher = launcher.with_proxy(proxy);
        }
        let rules = SandboxRules {
            auto_allow: config.auto_allow_bash_if_sandboxed == Some(true),
            // Claude Code's default is true; a sandbox that must not be left cannot be left.
            allow_unsandboxed: config.allow_unsandboxed_commands != Some(false) && refusal.is_none(),
            excluded,
        };
        Ok(SessionSandbox {
            mode,
            launcher: Some(Arc::new(launcher)),
            rules: Some(rules),
            capabilities: Some(capabilities),
            profile,
            lines,
            notes: built.notes,
        })
    }

    /// The mode in force.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// The profile commands run under (`workspace-write,net=off,landlock-v7,seccomp,userns`),
    /// `off` without a sandbox.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// What the kernel offers, when it was probed.
    pub fn capabilities(&self) -> Option<&Capabilities> {
        self.capabilities.as_ref()
    }

    /// The policy commands run under, when there is a sandbox.
    pub fn policy(&self) -> Option<&Policy> {
        self.launcher.as_deref().map(SandboxLauncher::policy)
    }

    /// Lines for stderr whatever the verbosity: a missing layer, a setting not applied yet.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Lines for stderr with `-v`: rules that could not be made paths, globs expanded in part.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Where spine records the files it writes at protected paths during the session (the
    /// approver's saved rules), when there is a sandbox.
    pub fn own_writes(&self) -> Option<Arc<spine_process::OwnWrites>> {
        self.launcher.as_deref().map(|l| Arc::clone(l.own_writes()))
    }

    /// spine's filtering proxy, when commands reach the network through it.
    pub fn proxy(&self) -> Option<&spine_tools::sandbox::SessionProxy> {
        self.launcher.as_deref().and_then(SandboxLauncher::proxy)
    }

    /// The permission step's rules, when there is a sandbox.
    pub fn rules(&self) -> Option<&SandboxRules> {
        self.rules.as_ref()
    }

    /// `env` with this session's confinement (itself without a sandbox).
    pub fn confine(&self, env: ChildEnv) -> ChildEnv {
        match &self.launcher {
            Some(launcher) => env.confined(Arc::clone(launcher) as Arc<dyn spine_process::Confine>),
            None => env,
        }
    }

    /// The environment of MCP servers configured with `"sandbox": true`: this session's
    /// confinement, `None` without a sandbox (such a server does not start then).
    pub fn mcp_env(&self, env: &ChildEnv) -> Option<ChildEnv> {
        self.launcher.as_ref().map(|_| self.confine(env.clone()))
    }
}

/// The network of `plan`, spine's proxy started when it is in the plan (in a private
/// directory of its own), and the line saying why it is off when the proxy could not start.
fn start_network(
    plan: network::Plan,
) -> Result<(Network, Option<spine_tools::sandbox::SessionProxy>, Option<String>), SandboxSetupError> {
    let gate = match plan {
        network::Plan::Off => return Ok((Network::Off, None, None)),
        network::Plan::Full => return Ok((Network::Full, None, None)),
        network::Plan::UserProxy(port) => return Ok((network::user_proxy(port), None, None)),
        network::Plan::Filtered(gate, private) => (gate, private),
    };
    let dir = private_tmpdir()?;
    match network::start_proxy(gate.0, gate.1, dir) {
        Ok((proxy, network)) => Ok((network, Some(proxy), None)),
        Err(why) => {
            let line = format!("spine: sandbox: the network proxy cannot start ({why}); commands have no network");
            Ok((Network::Off, None, Some(line)))
        }
    }
}

/// A policy and what building it had to say.
struct Built {
    policy: Policy,
    lines: Vec<String>,
    notes: Vec<String>,
}

fn build_policy(
    settings: &Settings,
    options: &SandboxOptions,
    mode: SandboxMode,
    roots: &[PathBuf],
    tmp: &Path,
    network: Network,
) -> Built {
    let config = &settings.sandbox;
    let home = spine_protocol::home::user_home();
    let project = roots.first().map_or(options.project.as_path(), PathBuf::as_path);
    let (mut lines, mut notes) = (Vec::new(), Vec::new());
    let deny_rules = deny_rules(settings, &options.command_line);
    let rule_refs = || deny_rules.iter().map(|(rule, at)| (rule, at.clone()));

    let mut read_deny: Vec<PathBuf> = Vec::new();
    if let Some(home) = &home {
        read_deny.extend(paths::DEFAULT_DENIED_READS.iter().map(|p| home.join(p)));
    }
    read_deny.extend(paths::SPINE_HOME_DENIED_READS.iter().map(|p| options.spine_home.join(p)));
    let from_rules = paths::rule_paths(rule_refs(), false, project, roots);
    let from_entries = paths::entry_paths(&config.deny_read, project, home.as_deref(), roots);
    for resolved in [from_rules, from_entries] {
        read_deny.extend(resolved.paths);
        notes.extend(resolved.notes);
    }
    let lifted = paths::entry_paths(&config.allow_read, project, home.as_deref(), roots).paths;
    read_deny.retain(|denied| !lifted.iter().any(|allowed| denied.starts_with(allowed)));
    for allowed in &lifted {
        if read_deny.iter().any(|denied| allowed.starts_with(denied) && allowed != denied) {
            lines.push(format!(
                "spine: sandbox: filesystem.allowRead {} is inside a hidden directory; the sandbox cannot re-open \
                 part of one (lift the whole directory instead)",
                allowed.display()
            ));
        }
    }

    let mut write_allow = vec![tmp.to_path_buf()];
    let mut write_deny: Vec<PathBuf> = Vec::new();
    if mode == SandboxMode::WorkspaceWrite {
        write_allow.extend(roots.iter().cloned());
        let extra = paths::entry_paths(&config.allow_write, project, home.as_deref(), roots);
        write_allow.extend(extra.paths);
        notes.extend(extra.notes);
        for root in roots {
            write_deny.extend(paths::PROTECTED_IN_ROOTS.iter().map(|p| root.join(p)));
        }
        if let Some(home) = home.as_ref().filter(|h| write_allow.iter().any(|root| h.starts_with(root))) {
            write_deny.extend(paths::PROTECTED_IN_HOME.iter().map(|p| home.join(p)));
            write_deny.push(options.spine_home.clone());
        }
        for resolved in [
            paths::rule_paths(rule_refs(), true, project, roots),
            paths::entry_paths(&config.deny_write, project, home.as_deref(), roots),
        ] {
            write_deny.extend(resolved.paths);
            notes.extend(resolved.notes);
        }
    }

    let unix_sockets = paths::entry_paths(&config.allow_unix_sockets, project, home.as_deref(), roots);
    notes.extend(unix_sockets.notes);
    dedup(&mut read_deny);
    dedup(&mut write_allow);
    dedup(&mut write_deny);
    let policy = Policy {
        read_deny,
        write_allow,
        write_deny,
        network,
        allow_unix_sockets: unix_sockets.paths,
        allow_all_unix_sockets: config.allow_all_unix_sockets == Some(true),
        allow_local_binding: config.allow_local_binding == Some(true),
        best_effort: false,
        // The launcher's guard undoes them outside, keeping what spine itself wrote there.
        caller_undoes: true,
    };
    Built { policy, lines, notes }
}

/// The `Read` and `Edit` deny rules of the settings and the command line, each with where it
/// was written.
fn deny_rules(settings: &Settings, command_line: &CommandLine) -> Vec<(PermissionRule, String)> {
    let from_settings = settings
        .permissions
        .deny
        .iter()
        .filter_map(|e| PermissionRule::parse(&e.rule).ok().map(|r| (r, format!("{}: {}", e.origin, e.path))));
    let from_flags = command_line
        .deny
        .iter()
        .filter_map(|text| PermissionRule::parse(text).ok().map(|r| (r, "--disallowedTools".to_owned())));
    from_settings.chain(from_flags).collect()
}

fn excluded_rules(settings: &Settings) -> Result<Vec<PermissionRule>, SandboxSetupError> {
    settings
        .sandbox
        .excluded_commands
        .iter()
        .map(|entry| {
            SandboxRules::excluded_rules(std::slice::from_ref(&entry.written))
                .map_err(|source| SandboxSetupError::ExcludedCommand {
                    at: format!("{}: {}", entry.origin, entry.path),
                    source,
                })
                .map(|mut rules| rules.remove(0))
        })
        .collect()
}

/// The layers the kernel lacks, each with why.
fn missing_layers(capabilities: &Capabilities) -> Vec<String> {
    [
        ("landlock", &capabilities.landlock),
        ("seccomp", &capabilities.seccomp),
        ("user namespaces", &capabilities.user_namespaces),
    ]
    .into_iter()
    .filter_map(|(name, support)| match support {
        Support::Available(_) => None,
        Support::Unavailable(why) | Support::Unknown(why) => Some(format!("{name} unavailable ({why})")),
    })
    .collect()
}

/// The profile of `policy` under `mode` on this kernel, in `Applied::profile`'s words:
/// `workspace-write,net=off,landlock-v7,seccomp,userns[,missing=…]` (`read-only` for a
/// read-only session, whose only writable place is its temporary directory).
pub fn profile(mode: SandboxMode, policy: &Policy, capabilities: &Capabilities) -> String {
    let mut parts = vec![mode.as_str().to_owned(), format!("net={}", policy.network.label())];
    let mut missing = Vec::new();
    match capabilities.landlock.is_available() {
        true => parts.push(format!("landlock-v{}", capabilities.landlock_abi)),
        false => missing.push("landlock"),
    }
    match capabilities.seccomp.is_available() {
        true => parts.push("seccomp".to_owned()),
        false => missing.push("seccomp"),
    }
    match capabilities.user_namespaces.is_available() {
        true => parts.push("userns".to_owned()),
        false => missing.push("userns"),
    }
    if !missing.is_empty() {
        parts.push(format!("missing={}", missing.join("+")));
    }
    parts.join(",")
}

fn dedup(paths: &mut Vec<PathBuf>) {
    let mut seen = std::collections::BTreeSet::new();
    paths.retain(|p| seen.insert(p.clone()));
}
