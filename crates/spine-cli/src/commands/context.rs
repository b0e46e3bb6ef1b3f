//! Resolution shared by commands: `SPINE_HOME`, the project directory, its trust, the merged
//! settings.
//!
//! The project directory is found from the working directory up to the repository root
//! (`spine_settings::project` defines the walk); the settings files are Claude Code's and
//! spine's (`~/.claude/settings.json` with the home directory of `spine_protocol::home`: `HOME`
//! when absolute), and the managed files (`/etc/claude-code/managed-settings.json`,
//! `/etc/claude-code/managed-settings.d/*.json`, `/etc/spine/managed-settings.json`;
//! `SPINE_MANAGED_SETTINGS_DIR` names one directory read in their place, see
//! `spine_settings::managed`). `SPINE_HOME` and its default are `spine_protocol::home`'s too.

use std::path::PathBuf;

use spine_settings::managed::MANAGED_DIR_VAR;
use spine_settings::{Discovery, ManagedLocation, ProjectTrust, SettingSources, Settings, TrustStore};

use crate::error::config;

/// `SPINE_HOME`, default `~/.spine` (`spine_protocol::home`); an error when neither is usable.
pub fn spine_home() -> anyhow::Result<PathBuf> {
    spine_protocol::home::require_spine_home().map_err(|e| config(e.to_string()))
}

/// The project directory: from `--cwd`, else the current directory, canonicalised, the
/// nearest directory up to the repository root that holds `.claude/` or `.spine/`, else that
/// directory itself ([`spine_settings::find_project_dir`]).
pub fn project_dir(cwd: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| config(format!("cannot read the current directory: {e}")))?,
    };
    let dir = dir.canonicalize().map_err(|e| config(format!("--cwd {}: {e}", dir.display())))?;
    let home = spine_protocol::home::user_home().and_then(|h| h.canonicalize().ok());
    Ok(spine_settings::find_project_dir(&dir, home.as_deref()))
}

/// The trust of a project: `--trust` (`flag`), else `$SPINE_HOME/trusted-projects.json`.
pub fn trust(home: &std::path::Path, project: &std::path::Path, flag: bool) -> anyhow::Result<ProjectTrust> {
    TrustStore::new(home).trust_of(project, flag).map_err(|e| config(e.to_string()))
}

/// The merged settings of a project, with its trust applied (`trust_flag` is `--trust`),
/// `--setting-sources` (`None`: all) and `--plugin-dir`.
pub fn settings_with(
    home: &std::path::Path,
    project: &std::path::Path,
    cli: &[String],
    trust_flag: bool,
    sources: Option<&SettingSources>,
    plugin_dirs: &[std::path::PathBuf],
) -> anyhow::Result<Settings> {
    let trust = trust(home, project, trust_flag)?;
    let user_home = spine_protocol::home::user_home();
    Settings::discover_with(&Discovery {
        spine_home: home,
        home: user_home.as_deref(),
        project_dir: project,
        cli,
        trust,
        sources: sources.cloned().unwrap_or_default(),
        managed: ManagedLocation::from_env_value(std::env::var_os(MANAGED_DIR_VAR)),
        plugin_dirs,
    })
    .map_err(|e| config(e.to_string()))
}
