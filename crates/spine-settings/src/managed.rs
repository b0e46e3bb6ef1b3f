//! Where managed settings are read: the tier above user settings that nothing below can
//! loosen (docs/cli.md, "Managed settings"; what it enforces is [`crate::policy`]).
//!
//! Contract of [`ManagedLocation::files`]:
//! - [`ManagedLocation::System`]: `/etc/claude-code/managed-settings.json`, then every
//!   `*.json` of `/etc/claude-code/managed-settings.d/` in sorted (byte) order — files or
//!   links, names not starting with `.` — as Claude Code 2.1 reads them, then spine's own
//!   `/etc/spine/managed-settings.json`. A later file wins a single value.
//! - [`ManagedLocation::Dir`] (`SPINE_MANAGED_SETTINGS_DIR`): `DIR/managed-settings.json`,
//!   then `DIR/managed-settings.d/*.json` the same way; no `/etc` path is read.
//! - A drop-in directory that does not exist (or is not a directory) holds nothing; one that
//!   cannot be listed is an error naming it.
//!
//! Discovery ([`crate::Settings::discover_with`]) reads each file like any settings file (a
//! regular file of at most 4 MiB; absent: skipped; bad JSON: an error naming the file), puts
//! the managed layers after every other source — the highest precedence, `--settings`
//! included — and neither `--setting-sources` nor project trust removes anything from them.
//!
//! `SPINE_MANAGED_SETTINGS_DIR` exists for tests and unusual installs. Whoever controls
//! spine's environment controls it, so an administrator who needs the tier enforced must
//! control the environment spine starts in (a login shell profile or a wrapper the user
//! cannot change), as with any variable spine reads.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use crate::source::{Origin, SettingsError};

/// The variable that moves the managed tier to one directory.
pub const MANAGED_DIR_VAR: &str = "SPINE_MANAGED_SETTINGS_DIR";

/// The managed settings file's name, in each managed directory.
pub const MANAGED_FILE: &str = "managed-settings.json";

/// The drop-in directory's name, beside [`MANAGED_FILE`].
pub const DROP_IN_DIR: &str = "managed-settings.d";

/// Claude Code's managed directory on Linux.
pub const CLAUDE_CODE_DIR: &str = "/etc/claude-code";

/// spine's own managed directory.
pub const SPINE_DIR: &str = "/etc/spine";

/// Where the managed tier of a run is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ManagedLocation {
    /// Nowhere (what [`crate::Settings::discover`] uses; tests).
    #[default]
    None,
    /// Claude Code's and spine's `/etc` paths.
    System,
    /// One directory (`SPINE_MANAGED_SETTINGS_DIR`).
    Dir(PathBuf),
}

impl ManagedLocation {
    /// The location for a value of [`MANAGED_DIR_VAR`]: the directory it names, else (unset or
    /// empty) [`ManagedLocation::System`].
    pub fn from_env_value(value: Option<OsString>) -> Self {
        match value.filter(|v| !v.is_empty()) {
            Some(dir) => ManagedLocation::Dir(PathBuf::from(dir)),
            None => ManagedLocation::System,
        }
    }

    /// The managed files to read, lowest precedence first (see the module contract); the
    /// `managed-settings.json` files are listed whether they exist or not.
    pub fn files(&self) -> Result<Vec<PathBuf>, SettingsError> {
        let mut out = Vec::new();
        match self {
            ManagedLocation::None => {}
            ManagedLocation::System => {
                let claude = Path::new(CLAUDE_CODE_DIR);
                out.push(claude.join(MANAGED_FILE));
                out.extend(drop_ins(&claude.join(DROP_IN_DIR))?);
                out.push(Path::new(SPINE_DIR).join(MANAGED_FILE));
            }
            ManagedLocation::Dir(dir) => {
                out.push(dir.join(MANAGED_FILE));
                out.extend(drop_ins(&dir.join(DROP_IN_DIR))?);
            }
        }
        Ok(out)
    }
}

/// The `*.json` files or links of a drop-in directory whose names do not start with `.`, in
/// sorted order; none when the directory does not exist or is not one.
fn drop_ins(dir: &Path) -> Result<Vec<PathBuf>, SettingsError> {
    let listing_error = |e: io::Error| {
        SettingsError::at(&Origin::Managed(dir.to_path_buf()), "(directory)", format!("cannot be listed: {e}"))
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => return Ok(Vec::new()),
        Err(e) => return Err(listing_error(e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(listing_error)?;
        let kind = entry.file_type().map_err(listing_error)?;
        let name = entry.file_name();
        let Some(text) = name.to_str() else { continue };
        if (kind.is_file() || kind.is_symlink()) && text.ends_with(".json") && !text.starts_with('.') {
            names.push(name);
        }
    }
    names.sort();
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_directory_is_read_alone_with_its_drop_ins_in_sorted_order() {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path().join(DROP_IN_DIR);
        std::fs::create_dir_all(d.join("sub.json")).expect("a directory named like a file");
        for name in ["20-b.json", "10-a.json", ".hidden.json", "notes.txt", "30-c.json.bak"] {
            std::fs::write(d.join(name), "{}").expect("write");
        }
        let files = ManagedLocation::from_env_value(Some(tmp.path().into())).files().expect("listed");
        let names: Vec<String> =
            files.iter().map(|p| p.strip_prefix(tmp.path()).expect("inside").display().to_string()).collect();
        assert_eq!(names, ["managed-settings.json", "managed-settings.d/10-a.json", "managed-settings.d/20-b.json"]);
    }

    #[test]
    fn an_unset_or_empty_override_means_the_system_paths_claude_codes_before_spines() {
        assert_eq!(ManagedLocation::from_env_value(None), ManagedLocation::System);
        assert_eq!(ManagedLocation::from_env_value(Some(OsString::new())), ManagedLocation::System);
        let files = ManagedLocation::System.files().expect("listed");
        assert_eq!(files.first().map(PathBuf::as_path), Some(Path::new("/etc/claude-code/managed-settings.json")));
        assert_eq!(files.last().map(PathBuf::as_path), Some(Path::new("/etc/spine/managed-settings.json")));
        assert!(ManagedLocation::None.files().expect("nothing").is_empty());
    }

    #[test]
    fn a_missing_drop_in_directory_holds_nothing() {
        let tmp = tempfile::tempdir().expect("tmp");
        let files = ManagedLocation::Dir(tmp.path().to_path_buf()).files().expect("listed");
        assert_eq!(files, [tmp.path().join(MANAGED_FILE)]);
        std::fs::write(tmp.path().join(DROP_IN_DIR), "not a directory").expect("write");
        assert_eq!(ManagedLocation::Dir(tmp.path().to_path_buf()).files().expect("listed").len(), 1);
    }
}
