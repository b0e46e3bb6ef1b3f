//! Resolution shared by commands: `SPINE_HOME`, the project directory, its trust, the merged
//! settings.

use std::path::PathBuf;

use spine_settings::{ProjectTrust, Settings, TrustStore};

use crate::error::config;

/// `SPINE_HOME`, default `~/.spine`.
pub fn spine_home() -> anyhow::Result<PathBuf> {
    if let Some(home) = std::env::var_os("SPINE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    match std::env::var_os("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".spine")),
        None => Err(config("neither SPINE_HOME nor HOME is set")),
    }
}

/// The project directory: `--cwd`, else the current directory, canonicalised.
pub fn project_dir(cwd: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| config(format!("cannot read the current directory: {e}")))?,
    };
    dir.canonicalize().map_err(|e| config(format!("--cwd {}: {e}", dir.display())))
}

/// The trust of a project: `--trust` (`flag`), else `$SPINE_HOME/trusted-projects.json`.
pub fn trust(home: &std::path::Path, project: &std::path::Path, flag: bool) -> anyhow::Result<ProjectTrust> {
    TrustStore::new(home).trust_of(project, flag).map_err(|e| config(e.to_string()))
}

/// The merged settings of a project, with its trust applied (`trust_flag` is `--trust`).
pub fn settings(
    home: &std::path::Path,
    project: &std::path::Path,
    cli: &[String],
    trust_flag: bool,
) -> anyhow::Result<Settings> {
    let trust = trust(home, project, trust_flag)?;
    Settings::discover(home, project, cli, trust).map_err(|e| config(e.to_string()))
}
