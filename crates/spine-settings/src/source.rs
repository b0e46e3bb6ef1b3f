//! Where a settings value came from ([`Origin`]), one source's parsed object
//! ([`SettingsLayer`]), the error that names a source, a JSON path and a reason
//! ([`SettingsError`]), and the checks of a value's JSON type used by every key's merge.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use thiserror::Error;

use crate::project::SettingSource;
use crate::trust::Scope;

/// Where a settings value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `~/.claude/settings.json` or `$SPINE_HOME/settings.json`.
    User(PathBuf),
    /// `.claude/settings.json` or `.spine/settings.json`.
    Project(PathBuf),
    /// `.claude/settings.local.json` or `.spine/settings.local.json`.
    Local(PathBuf),
    /// The n-th `--settings` (1-based), a file or inline JSON.
    Cli {
        /// Position on the command line.
        index: usize,
        /// The file, when it was one.
        path: Option<PathBuf>,
    },
    /// A managed settings file (`/etc/claude-code/managed-settings.json`, a file of
    /// `/etc/claude-code/managed-settings.d/`, `/etc/spine/managed-settings.json`; see
    /// [`crate::managed`]): the highest precedence, never withheld, never filtered.
    Managed(PathBuf),
    /// A file of an enabled plugin (its hooks file, its MCP servers): see
    /// [`crate::plugins`]. Shared: every hook group and handler of the file names it.
    Plugin(std::sync::Arc<PluginOrigin>),
    /// The `initialize` control request of the Agent SDK's host program (its hook callbacks).
    /// No settings file: nothing is saved to it, and it is trusted, as the command line is
    /// (the host program is the user's own code that started spine).
    Sdk,
}

/// Which plugin a [`Origin::Plugin`] value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginOrigin {
    /// The plugin's id (`name@marketplace`, or `name@plugin-dir` for `--plugin-dir`).
    pub id: String,
    /// The plugin's file the value was read from.
    pub file: PathBuf,
    /// The plugin's root directory (`CLAUDE_PLUGIN_ROOT`).
    pub root: PathBuf,
    /// Its persistent data directory (`CLAUDE_PLUGIN_DATA`).
    pub data: PathBuf,
    /// Who enabled it: the scope of the settings file (or the command line).
    pub enabled_by: Scope,
}

impl Origin {
    /// The file of this source, if it is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Origin::User(p) | Origin::Project(p) | Origin::Local(p) | Origin::Managed(p) => Some(p),
            Origin::Cli { path, .. } => path.as_deref(),
            Origin::Plugin(plugin) => Some(&plugin.file),
            Origin::Sdk => None,
        }
    }

    /// The plugin this value comes from, if it does.
    pub fn plugin(&self) -> Option<&PluginOrigin> {
        match self {
            Origin::Plugin(plugin) => Some(plugin),
            _ => None,
        }
    }

    /// Whether this is a managed settings file (the tier nothing below can loosen), or a file of
    /// a plugin managed settings enable (its hooks are the administrator's choice too).
    pub fn is_managed(&self) -> bool {
        match self {
            Origin::Managed(_) => true,
            Origin::Plugin(plugin) => plugin.enabled_by == Scope::Managed,
            _ => false,
        }
    }

    /// Who stands behind this source: the user, the project, the command line (and the SDK host
    /// that started spine), or the administrator (managed settings). Every file found inside
    /// the project directory is [`Scope::Project`].
    pub fn scope(&self) -> Scope {
        match self {
            Origin::User(_) => Scope::User,
            Origin::Project(_) | Origin::Local(_) => Scope::Project,
            Origin::Cli { .. } | Origin::Sdk => Scope::CommandLine,
            Origin::Managed(_) => Scope::Managed,
            Origin::Plugin(plugin) => plugin.enabled_by,
        }
    }

    /// The `--setting-sources` kind of a discovered file (`--settings` and managed files
    /// count as [`SettingSource::User`] here but are never filtered).
    pub fn source(&self) -> SettingSource {
        match self {
            Origin::User(_) | Origin::Cli { .. } | Origin::Managed(_) | Origin::Plugin(_) | Origin::Sdk => {
                SettingSource::User
            }
            Origin::Project(_) => SettingSource::Project,
            Origin::Local(_) => SettingSource::Local,
        }
    }

    /// The directory relative paths of this source resolve against (its file's directory, or
    /// the current directory for inline JSON).
    pub fn base_dir(&self) -> Option<&Path> {
        self.path().and_then(Path::parent)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::User(p) | Origin::Project(p) | Origin::Local(p) => write!(f, "{}", p.display()),
            Origin::Cli { index, path: Some(p) } => write!(f, "{} (--settings #{index})", p.display()),
            Origin::Cli { index, path: None } => write!(f, "--settings #{index} (inline JSON)"),
            Origin::Managed(p) => write!(f, "{} (managed)", p.display()),
            Origin::Plugin(plugin) => write!(f, "{} (plugin {})", plugin.file.display(), plugin.id),
            Origin::Sdk => f.write_str("the SDK host"),
        }
    }
}

/// A settings error: which source, which JSON path, why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{origin}: {path}: {reason}")]
pub struct SettingsError {
    /// The source (file name or `--settings #n`).
    pub origin: String,
    /// The JSON path of the offending value (`permissions.allow[2]`), or `(file)`.
    pub path: String,
    /// Why.
    pub reason: String,
}

impl SettingsError {
    /// An error at a JSON path of a source.
    pub fn at(origin: &Origin, path: impl Into<String>, reason: impl Into<String>) -> Self {
        SettingsError { origin: origin.to_string(), path: path.into(), reason: reason.into() }
    }
}

/// One source's parsed object.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsLayer {
    /// Where it came from.
    pub origin: Origin,
    /// Its top-level object.
    pub value: Map<String, Value>,
}

pub(crate) fn expect_str_list(origin: &Origin, path: &str, v: &Value) -> Result<Vec<String>, SettingsError> {
    let Value::Array(items) = v else {
        return Err(SettingsError::at(origin, path, format!("expected an array of strings, found {}", type_name(v))));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| expect_str(origin, &format!("{path}[{i}]"), item).map(str::to_owned))
        .collect()
}

pub(crate) fn expect_object<'a>(
    origin: &Origin,
    path: &str,
    v: &'a Value,
) -> Result<&'a Map<String, Value>, SettingsError> {
    v.as_object().ok_or_else(|| SettingsError::at(origin, path, format!("expected an object, found {}", type_name(v))))
}

pub(crate) fn expect_str<'a>(origin: &Origin, path: &str, v: &'a Value) -> Result<&'a str, SettingsError> {
    v.as_str().ok_or_else(|| SettingsError::at(origin, path, format!("expected a string, found {}", type_name(v))))
}

pub(crate) fn expect_u32(origin: &Origin, path: &str, v: &Value) -> Result<u32, SettingsError> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| SettingsError::at(origin, path, format!("expected a non-negative integer, found {v}")))
}

/// The JSON type of a value, for messages (one definition, in spine-protocol).
pub use spine_protocol::config_file::type_name;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_host_is_a_trusted_source_without_a_file() {
        let sdk = Origin::Sdk;
        assert_eq!(sdk.to_string(), "the SDK host");
        assert_eq!((sdk.path(), sdk.base_dir()), (None, None));
        assert_eq!(sdk.scope(), Scope::CommandLine, "trusted as the command line is");
        assert!(!sdk.is_managed() && sdk.plugin().is_none());
        assert_eq!(sdk.source(), SettingSource::User, "never filtered by --setting-sources");
    }
}
