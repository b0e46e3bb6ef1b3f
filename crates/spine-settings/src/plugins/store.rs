//! Where installed plugins and known marketplaces are recorded: [`Store`], a `plugins`
//! directory in Claude Code 2.1's layout (`installed_plugins.json` version 2,
//! `known_marketplaces.json`, `cache/<marketplace>/<plugin>/<version>/`, `data/<id>/`,
//! `marketplaces/<name>/`).
//!
//! Contract:
//! - spine's own store is `$SPINE_HOME/plugins` ([`Store::spine`]); Claude Code's
//!   (`~/.claude/plugins`, [`Store::claude`]) is read, never written, so plugins a user
//!   installed with Claude Code load in spine unchanged.
//! - A missing file is an empty record; a file that is not the expected JSON is a
//!   [`PluginError`] naming it and the field. Fields spine does not know are kept on a write.
//! - Writes go to a temporary file beside the record, then a rename: a crash never leaves a
//!   half-written record.
//! - [`plugin_data_id`] makes the data directory's name as Claude Code does: the id with every
//!   character outside `a-z A-Z 0-9 _ -` replaced by `-`. [`path_component`] makes names and
//!   versions safe as one directory name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::PluginError;

/// `installed_plugins.json`.
pub const INSTALLED: &str = "installed_plugins.json";
/// `known_marketplaces.json`.
pub const MARKETPLACES: &str = "known_marketplaces.json";

/// A `plugins` directory (see the module contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    /// The directory.
    pub dir: PathBuf,
}

/// One installation of a plugin (`installed_plugins.json`, `plugins["id"][i]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Install {
    /// `user`, `project` or `local`.
    pub scope: String,
    /// The copy in the cache.
    pub install_path: PathBuf,
    /// The version installed.
    pub version: String,
    /// For a project or local install: the project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_path: Option<PathBuf>,
    /// When it was installed (RFC 3339).
    #[serde(default)]
    pub installed_at: String,
    /// When it was last updated (RFC 3339).
    #[serde(default)]
    pub last_updated: String,
    /// The commit installed, for a git source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit_sha: Option<String>,
    /// Fields spine does not know, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `installed_plugins.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Installed {
    /// The format's version (2).
    pub version: u32,
    /// The installations of each plugin id (`name@marketplace`).
    #[serde(default)]
    pub plugins: BTreeMap<String, Vec<Install>>,
    /// Fields spine does not know, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for Installed {
    fn default() -> Self {
        Installed { version: 2, plugins: BTreeMap::new(), extra: Map::new() }
    }
}

/// A known marketplace (`known_marketplaces.json`, one entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnownMarketplace {
    /// Where it comes from, as Claude Code records it (`{"source": "directory", "path": …}`,
    /// `{"source": "git", "url": …}`, `{"source": "github", "repo": "owner/repo"}`).
    pub source: Value,
    /// Where its files are on this machine.
    pub install_location: PathBuf,
    /// When it was last fetched (RFC 3339).
    #[serde(default)]
    pub last_updated: String,
    /// Fields spine does not know, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Store {
    /// spine's store, `$SPINE_HOME/plugins`.
    pub fn spine(spine_home: &Path) -> Store {
        Store { dir: spine_home.join("plugins") }
    }

    /// Claude Code's store, `~/.claude/plugins` (read only).
    pub fn claude(home: &Path) -> Store {
        Store { dir: home.join(".claude").join("plugins") }
    }

    /// The installations recorded here.
    pub fn installed(&self) -> Result<Installed, PluginError> {
        self.read(INSTALLED).map(Option::unwrap_or_default)
    }

    /// Records `installed`.
    pub fn write_installed(&self, installed: &Installed) -> Result<(), PluginError> {
        self.write(INSTALLED, installed)
    }

    /// The marketplaces recorded here, by name.
    pub fn marketplaces(&self) -> Result<BTreeMap<String, KnownMarketplace>, PluginError> {
        self.read(MARKETPLACES).map(Option::unwrap_or_default)
    }

    /// Records `marketplaces`.
    pub fn write_marketplaces(&self, marketplaces: &BTreeMap<String, KnownMarketplace>) -> Result<(), PluginError> {
        self.write(MARKETPLACES, marketplaces)
    }

    /// Where a version of a plugin of a marketplace is copied.
    pub fn cache_dir(&self, marketplace: &str, plugin: &str, version: &str) -> PathBuf {
        self.dir
            .join("cache")
            .join(path_component(marketplace))
            .join(path_component(plugin))
            .join(path_component(version))
    }

    /// Where a marketplace fetched from git is cloned.
    pub fn marketplace_dir(&self, name: &str) -> PathBuf {
        self.dir.join("marketplaces").join(path_component(name))
    }

    /// The persistent data directory of plugin `id`.
    pub fn data_dir(&self, id: &str) -> PathBuf {
        self.dir.join("data").join(plugin_data_id(id))
    }

    fn read<T: for<'de> Deserialize<'de>>(&self, name: &str) -> Result<Option<T>, PluginError> {
        let path = self.dir.join(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(PluginError::new(&path, "(file)", e.to_string())),
        };
        serde_json::from_str(&text).map(Some).map_err(|e| PluginError::new(&path, "(file)", e.to_string()))
    }

    fn write<T: Serialize>(&self, name: &str, value: &T) -> Result<(), PluginError> {
        let path = self.dir.join(name);
        let fail = |e: std::io::Error| PluginError::new(&path, "(file)", format!("cannot write: {e}"));
        std::fs::create_dir_all(&self.dir).map_err(fail)?;
        let text = serde_json::to_string_pretty(value)
            .map_err(|e| PluginError::new(&path, "(file)", format!("cannot encode: {e}")))?;
        let temporary = self.dir.join(format!(".{name}.{}.tmp", std::process::id()));
        std::fs::write(&temporary, text + "\n").map_err(fail)?;
        std::fs::rename(&temporary, &path).map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            fail(e)
        })
    }
}

/// The data directory's name of plugin `id` (see the module contract).
pub fn plugin_data_id(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' }).collect()
}

/// `text` as one safe directory name: characters outside `a-z A-Z 0-9 . _ -` become `-`, and a
/// name of dots only (or none) becomes `_`.
pub fn path_component(text: &str) -> String {
    let cleaned: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect();
    if cleaned.chars().all(|c| c == '.') { "_".to_owned() } else { cleaned }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_installed_plugins_record_is_read_and_written_back_with_its_unknown_fields() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store { dir: dir.path().to_path_buf() };
        assert_eq!(store.installed().expect("missing is empty"), Installed::default());
        let recorded = r#"{"version": 2, "plugins": {"guard@demo-market": [{"scope": "user",
            "installPath": "/h/.claude/plugins/cache/demo-market/guard/1.0.0", "version": "1.0.0",
            "installedAt": "2026-12-05T10:57:24.329Z", "lastUpdated": "2026-12-05T10:57:24.329Z", "future": 1}]}}"#;
        std::fs::write(dir.path().join(INSTALLED), recorded).expect("write");
        let installed = store.installed().expect("reads");
        let install = &installed.plugins["guard@demo-market"][0];
        assert_eq!((install.scope.as_str(), install.version.as_str()), ("user", "1.0.0"));
        store.write_installed(&installed).expect("writes");
        let again: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(INSTALLED)).expect("read")).expect("json");
        assert_eq!(again["plugins"]["guard@demo-market"][0]["future"], 1, "unknown fields are kept");
    }

    #[test]
    fn a_record_that_is_not_the_expected_json_names_the_file() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join(MARKETPLACES), "[1]").expect("write");
        let error = Store { dir: dir.path().to_path_buf() }.marketplaces().expect_err("bad");
        assert!(error.to_string().contains(MARKETPLACES), "{error}");
    }

    #[test]
    fn data_ids_and_directory_names_are_made_safe() {
        assert_eq!(plugin_data_id("formatter@my-marketplace"), "formatter-my-marketplace");
        assert_eq!(path_component("1.0.0"), "1.0.0");
        assert_eq!(path_component("1.0$(rm -rf ~)"), "1.0--rm--rf---");
        assert_eq!(path_component(".."), "_");
    }
}
