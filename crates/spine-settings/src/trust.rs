//! Project trust: what a project's own files may make spine do.
//!
//! A cloned repository must not run code on the first `spine run`. So the settings a project
//! brings — every file found inside the project directory: `.spine/settings.json`,
//! `.spine/settings.local.json`, `.claude/settings.json` and `.claude/settings.local.json`;
//! see [`Scope::Project`] —
//! are split in two when the project is not trusted:
//!
//! | key in a project file | untrusted project |
//! |---|---|
//! | `hooks`, `disableAllHooks` | skipped (hooks run code; disabling would switch off the user's own hooks) |
//! | `env` | skipped (it reaches every child: `PATH`, `BASH_ENV`, `LD_PRELOAD` would run the project's code) |
//! | `permissions.allow` | skipped |
//! | `permissions.additionalDirectories` | skipped (more workspace roots would widen the boundary) |
//! | `permissions.deny`, `permissions.ask` | applied (they only restrict) |
//! | `permissions.defaultMode` | `default`, `plan` and `dontAsk` applied; `acceptEdits` and `bypassPermissions` skipped |
//! | `mcpServers` (and `.mcp.json`, read by the agent) | skipped, unless the user's settings enable them |
//! | `skills.roots` | skipped (could point anywhere on disk); the default roots still apply |
//! | `web.search_url` | skipped (would send the agent's searches to a host the project chose) |
//! | `subagents.directories` | skipped (could point anywhere on disk); the project's `.claude/agents/` and `.spine/agents/` still apply (a definition only narrows what the agent may do) |
//! | `sandbox` | what tightens it applied; what loosens it skipped (`enabled: false`, a `mode` other than `read-only`, `failIfUnavailable: false`, `autoAllowBashIfSandboxed: true`, `allowUnsandboxedCommands: true`, `excludedCommands`, `filesystem.allowWrite`, `filesystem.allowRead`, the `network` keys that open something) |
//! | `model`, `maxTurns`, `stop`, `context` | applied (they run nothing and reach no new host) |
//! | `enableAllProjectMcpServers`, `enabledMcpjsonServers` | ignored (only the user's settings or `--settings` may set them) |
//!
//! Settings from the user's own file (`$SPINE_HOME/settings.json`), from the command line
//! (`--settings`) and managed settings ([`crate::managed`]) are always trusted.
//!
//! A project is trusted by `spine trust DIR` (recorded in `$SPINE_HOME/trusted-projects.json`,
//! keyed by canonical path, see [`TrustStore`]) or for one run by `--trust`. The user's settings
//! keys `enableAllProjectMcpServers: true` and `enabledMcpjsonServers: ["name", …]` (Claude
//! Code's) enable project MCP servers without trusting anything else.
//!
//! What was skipped is kept ([`Skipped`]) so that the CLI prints exactly one line about it
//! ([`untrusted_notice`]) and `spine hooks list` / `spine mcp list` can show it.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use spine_protocol::permission::PermissionMode;
use thiserror::Error;

/// Who stands behind a settings source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's own settings file.
    User,
    /// A file inside the project directory (`.spine/…` and `.claude/…`): trusted
    /// only when the project is.
    Project,
    /// `--settings` on the command line.
    CommandLine,
    /// A managed settings file (the administrator's): never withheld.
    Managed,
}

/// Why a project is trusted, or that it is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectTrust {
    /// Recorded by `spine trust`.
    Recorded,
    /// `--trust` for this run.
    Flag,
    /// Not trusted: what the project brings that could run code is skipped.
    #[default]
    Untrusted,
}

impl ProjectTrust {
    /// Whether the project's own settings apply in full.
    pub fn is_trusted(self) -> bool {
        match self {
            ProjectTrust::Recorded | ProjectTrust::Flag => true,
            ProjectTrust::Untrusted => false,
        }
    }
}

/// Whether a configured MCP server may start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpApproval {
    /// From the user's own settings or `--settings`.
    UserConfigured,
    /// From managed settings.
    Managed,
    /// From the project, which is trusted.
    Trusted,
    /// From the untrusted project, enabled by the user's settings.
    Enabled {
        /// What enables it (`enabledMcpjsonServers in FILE`).
        by: String,
    },
    /// From the untrusted project: skipped.
    Untrusted,
}

impl McpApproval {
    /// Whether the server is started.
    pub fn starts(&self) -> bool {
        match self {
            McpApproval::UserConfigured | McpApproval::Managed | McpApproval::Trusted | McpApproval::Enabled { .. } => {
                true
            }
            McpApproval::Untrusted => false,
        }
    }
}

impl fmt::Display for McpApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpApproval::UserConfigured => f.write_str("approved (your settings)"),
            McpApproval::Managed => f.write_str("approved (managed settings)"),
            McpApproval::Trusted => f.write_str("approved (trusted project)"),
            McpApproval::Enabled { by } => write!(f, "approved (enabled by {by})"),
            McpApproval::Untrusted => f.write_str("skipped (untrusted project)"),
        }
    }
}

/// One thing a project file set that was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file it came from.
    pub file: PathBuf,
    /// What it was.
    pub item: SkippedItem,
}

/// Kinds of [`Skipped`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkippedItem {
    /// This many hook handlers.
    Hooks(usize),
    /// This many `env` variables (they reach every child: `PATH`, `BASH_ENV` or
    /// `LD_PRELOAD` would run the project's code).
    Env(usize),
    /// `disableAllHooks`.
    DisableAllHooks,
    /// This many allow rules.
    AllowRules(usize),
    /// This many `permissions.additionalDirectories` entries (more workspace roots).
    AdditionalDirectories(usize),
    /// A `defaultMode` that loosens permissions.
    DefaultMode(PermissionMode),
    /// An MCP server, by name.
    McpServer(String),
    /// `skills.roots`.
    SkillRoots,
    /// `web.search_url`.
    WebSearchUrl,
    /// `subagents.directories`.
    SubagentDirectories,
    /// `web.allow_private_networks: true`.
    WebPrivateNetworks,
    /// `telemetry` (where traces are exported).
    Telemetry,
    /// `sandbox` keys that would loosen the sandbox, by JSON path.
    Sandbox(Vec<String>),
}

impl fmt::Display for SkippedItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkippedItem::Hooks(n) => write!(f, "{n} hook{}", plural(*n)),
            SkippedItem::Env(n) => write!(f, "{n} env variable{}", plural(*n)),
            SkippedItem::DisableAllHooks => f.write_str("disableAllHooks"),
            SkippedItem::AllowRules(n) => write!(f, "{n} allow rule{}", plural(*n)),
            SkippedItem::AdditionalDirectories(n) => {
                write!(f, "{n} additional director{}", if *n == 1 { "y" } else { "ies" })
            }
            SkippedItem::DefaultMode(mode) => write!(f, "defaultMode {mode}"),
            SkippedItem::McpServer(name) => write!(f, "MCP server {name}"),
            SkippedItem::SkillRoots => f.write_str("skills.roots"),
            SkippedItem::WebSearchUrl => f.write_str("web.search_url"),
            SkippedItem::SubagentDirectories => f.write_str("subagents.directories"),
            SkippedItem::WebPrivateNetworks => f.write_str("web.allow_private_networks"),
            SkippedItem::Telemetry => f.write_str("telemetry"),
            SkippedItem::Sandbox(names) => f.write_str(&names.join(", ")),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The one stderr line about an untrusted project, or `None` when nothing was skipped:
/// `spine: untrusted project /x: skipped 2 hooks, 1 allow rule, 1 MCP server from
/// .spine/settings.json, .mcp.json; run `spine trust /x` to trust it (or --trust for one run)`.
pub fn untrusted_notice(project: &Path, skipped: &[Skipped]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let (mut hooks, mut allow, mut servers) = (0usize, 0usize, 0usize);
    let mut others: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    for s in skipped {
        match &s.item {
            SkippedItem::Hooks(n) => hooks += n,
            SkippedItem::AllowRules(n) => allow += n,
            SkippedItem::McpServer(_) => servers += 1,
            other @ (SkippedItem::DisableAllHooks
            | SkippedItem::AdditionalDirectories(_)
            | SkippedItem::Env(_)
            | SkippedItem::DefaultMode(_)
            | SkippedItem::SkillRoots
            | SkippedItem::WebSearchUrl
            | SkippedItem::SubagentDirectories
            | SkippedItem::WebPrivateNetworks
            | SkippedItem::Telemetry
            | SkippedItem::Sandbox(_)) => {
                let text = other.to_string();
                if !others.contains(&text) {
                    others.push(text);
                }
            }
        }
        let file = s.file.strip_prefix(project).unwrap_or(&s.file).display().to_string();
        if !files.contains(&file) {
            files.push(file);
        }
    }
    let mut parts = Vec::new();
    if hooks > 0 {
        parts.push(SkippedItem::Hooks(hooks).to_string());
    }
    if allow > 0 {
        parts.push(SkippedItem::AllowRules(allow).to_string());
    }
    if servers > 0 {
        parts.push(format!("{servers} MCP server{}", plural(servers)));
    }
    parts.extend(others);
    let dir = project.display();
    Some(format!(
        "spine: untrusted project {dir}: skipped {} from {}; run `spine trust {dir}` to trust it (or pass --trust for one run)",
        parts.join(", "),
        files.join(", ")
    ))
}

/// The trust store could not be read or written.
#[derive(Debug, Error)]
pub enum TrustStoreError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The trusted-projects file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not the store's JSON.
    #[error("{path}: not a trusted-projects file: {source}")]
    Parse {
        /// The trusted-projects file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The directory to trust does not exist.
    #[error("{path}: {source}")]
    Directory {
        /// The directory as given.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// One trusted project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustedProject {
    /// Seconds since the Unix epoch when it was trusted.
    pub trusted_at_unix: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    /// Canonical project path → record.
    #[serde(default)]
    projects: BTreeMap<PathBuf, TrustedProject>,
}

/// `$SPINE_HOME/trusted-projects.json`: the projects the user trusts, keyed by canonical path.
/// Trust is per directory: a subdirectory of a trusted project is not trusted by it.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

/// The store's file name under `SPINE_HOME`.
pub const TRUST_FILE: &str = "trusted-projects.json";

impl TrustStore {
    /// The store of a `SPINE_HOME`.
    pub fn new(spine_home: &Path) -> Self {
        TrustStore { path: spine_home.join(TRUST_FILE) }
    }

    /// The trusted-projects file (`$SPINE_HOME/trusted-projects.json`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<StoreFile, TrustStoreError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(StoreFile::default()),
            Err(source) => return Err(TrustStoreError::Io { path: self.path.clone(), source }),
        };
        serde_json::from_str(&text).map_err(|source| TrustStoreError::Parse { path: self.path.clone(), source })
    }

    fn write(&self, store: &StoreFile) -> Result<(), TrustStoreError> {
        let io_err = |source| TrustStoreError::Io { path: self.path.clone(), source };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io_err)?;
        }
        let text = serde_json::to_string_pretty(store).map_err(|e| io_err(io::Error::other(e)))?;
        // Written beside the store, then renamed over it: a reader never sees half a file.
        let tmp = self.path.with_extension(format!("json.tmp-{}", std::process::id()));
        std::fs::write(&tmp, text + "\n").map_err(io_err)?;
        std::fs::rename(&tmp, &self.path).map_err(io_err)
    }

    /// Whether a project (its canonical path) is trusted.
    pub fn is_trusted(&self, project: &Path) -> Result<bool, TrustStoreError> {
        Ok(self.read()?.projects.contains_key(project))
    }

    /// The trust of a project: `--trust` (`flag`), else the store.
    pub fn trust_of(&self, project: &Path, flag: bool) -> Result<ProjectTrust, TrustStoreError> {
        if flag {
            return Ok(ProjectTrust::Flag);
        }
        Ok(if self.is_trusted(project)? { ProjectTrust::Recorded } else { ProjectTrust::Untrusted })
    }

    /// Trusts a directory; returns its canonical path.
    pub fn trust(&self, dir: &Path) -> Result<PathBuf, TrustStoreError> {
        let canonical =
            dir.canonicalize().map_err(|source| TrustStoreError::Directory { path: dir.to_path_buf(), source })?;
        let mut store = self.read()?;
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        store.projects.insert(canonical.clone(), TrustedProject { trusted_at_unix: now });
        self.write(&store)?;
        Ok(canonical)
    }

    /// Revokes a directory's trust (by its canonical path, or as given when it no longer
    /// exists); returns whether it was trusted.
    pub fn revoke(&self, dir: &Path) -> Result<bool, TrustStoreError> {
        let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let mut store = self.read()?;
        let was = store.projects.remove(&key).is_some();
        if was {
            self.write(&store)?;
        }
        Ok(was)
    }

    /// Every trusted project, by path.
    pub fn list(&self) -> Result<Vec<(PathBuf, TrustedProject)>, TrustStoreError> {
        Ok(self.read()?.projects.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_recorded_by_canonical_path_and_revocable() {
        let home = tempfile::tempdir().expect("home");
        let project = tempfile::tempdir().expect("project");
        let store = TrustStore::new(home.path());
        let canonical = project.path().canonicalize().expect("canon");
        assert_eq!(store.trust_of(&canonical, false).expect("read"), ProjectTrust::Untrusted);
        assert_eq!(store.trust_of(&canonical, true).expect("read"), ProjectTrust::Flag);
        let dotted = project.path().join(".");
        assert_eq!(store.trust(&dotted).expect("trust"), canonical);
        assert_eq!(store.trust_of(&canonical, false).expect("read"), ProjectTrust::Recorded);
        assert!(!store.is_trusted(&canonical.join("sub")).expect("read"), "trust is per directory");
        assert_eq!(store.list().expect("list").len(), 1);
        assert!(store.revoke(project.path()).expect("revoke"));
        assert!(!store.revoke(project.path()).expect("revoke"));
        assert_eq!(store.trust_of(&canonical, false).expect("read"), ProjectTrust::Untrusted);
    }

    #[test]
    fn the_notice_is_one_line_naming_counts_and_files_and_absent_when_nothing_was_skipped() {
        let p = Path::new("/x");
        assert_eq!(untrusted_notice(p, &[]), None);
        let skipped = [
            Skipped { file: "/x/.spine/settings.json".into(), item: SkippedItem::Hooks(2) },
            Skipped { file: "/x/.spine/settings.json".into(), item: SkippedItem::AllowRules(1) },
            Skipped { file: "/x/.mcp.json".into(), item: SkippedItem::McpServer("fs".into()) },
        ];
        let line = untrusted_notice(p, &skipped).expect("line");
        assert_eq!(
            line,
            "spine: untrusted project /x: skipped 2 hooks, 1 allow rule, 1 MCP server from .spine/settings.json, \
             .mcp.json; run `spine trust /x` to trust it (or pass --trust for one run)"
        );
        assert!(!line.contains('\n'));
    }
}
