//! `permissions.additionalDirectories`: more workspace roots for the file tools and path
//! rules, as in Claude Code.
//!
//! Contract:
//! - The value is an array of paths. `~` and `~/x` expand to the user's home directory
//!   (`spine_protocol::home`; without one they stay as written); a relative path is relative
//!   to the settings file's project root — the directory that holds the file's `.claude/` or
//!   `.spine/` folder (`<project>/.claude/settings.json` → `<project>`,
//!   `~/.claude/settings.json` → `~`), else the file's own directory (`--settings FILE`);
//!   inline `--settings` JSON resolves against the project directory. Resolution is lexical
//!   (`spine_protocol::lexical_path`): symlinks are the workspace's business.
//! - Entries are merged as a union over every source, lowest precedence first; a directory
//!   named twice keeps its first source.
//! - Nothing here touches the file system: whether each directory exists is checked when the
//!   workspace is built (`spine-agent`), and the error names the source and the JSON path
//!   ([`AddedDirectory::source`]).
//! - An untrusted project's own files may not add directories (that would widen the
//!   boundary): discovery withholds the key (see [`crate::trust`]).

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use spine_protocol::lexical_path::normalize;

use crate::source::{Origin, SettingsError, expect_str, type_name};

/// One added workspace root, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedDirectory {
    /// The path as written.
    pub written: String,
    /// The directory relative paths resolve against (`None`: the project directory).
    pub base: Option<PathBuf>,
    /// Where it was set.
    pub source: DirectorySource,
}

/// Where an added directory was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectorySource {
    /// A settings source, at a JSON path (`permissions.additionalDirectories[0]`).
    Settings {
        /// The settings source.
        origin: Origin,
        /// The JSON path.
        path: String,
    },
    /// `--add-dir` on the command line.
    Flag,
}

impl fmt::Display for DirectorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DirectorySource::Settings { origin, path } => write!(f, "{origin}: {path}"),
            DirectorySource::Flag => f.write_str("--add-dir"),
        }
    }
}

impl AddedDirectory {
    /// A directory given with `--add-dir` (relative to `cwd`, the directory spine runs in).
    pub fn from_flag(written: &str, cwd: &Path) -> Self {
        AddedDirectory { written: written.to_owned(), base: Some(cwd.to_path_buf()), source: DirectorySource::Flag }
    }

    /// The directory: absolute and lexically normal (`~` expanded, relative paths against
    /// [`AddedDirectory::base`], else `project`); not canonicalised, not checked.
    pub fn resolve(&self, project: &Path) -> PathBuf {
        normalize(&self.written, self.base.as_deref().unwrap_or(project))
    }
}

/// The project root of a settings file: the parent of its `.claude/` or `.spine/` folder, else
/// its directory; `None` for inline JSON.
fn project_root_of(origin: &Origin) -> Option<PathBuf> {
    let dir = origin.base_dir()?;
    let in_config_folder = dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n == ".claude" || n == ".spine");
    match (in_config_folder, dir.parent()) {
        (true, Some(parent)) => Some(parent.to_path_buf()),
        (true, None) | (false, _) => Some(dir.to_path_buf()),
    }
}

/// Merges one source's `permissions.additionalDirectories` into `dirs` (a union).
pub(crate) fn merge(dirs: &mut Vec<AddedDirectory>, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    const KEY: &str = "permissions.additionalDirectories";
    let Value::Array(items) = value else {
        return Err(SettingsError::at(origin, KEY, format!("expected an array of paths, found {}", type_name(value))));
    };
    let base = project_root_of(origin);
    for (i, item) in items.iter().enumerate() {
        let path = format!("{KEY}[{i}]");
        let written = expect_str(origin, &path, item)?;
        if written.is_empty() {
            return Err(SettingsError::at(origin, path, "expected a directory, found an empty string"));
        }
        let entry = AddedDirectory {
            written: written.to_owned(),
            base: base.clone(),
            source: DirectorySource::Settings { origin: origin.clone(), path },
        };
        // Inline JSON resolves against the project, unknown here; compare what is known.
        let same = |d: &AddedDirectory| match (&d.base, &entry.base) {
            (Some(a), Some(b)) => normalize(&d.written, a) == normalize(&entry.written, b),
            (None, None) => d.written == entry.written,
            (Some(_), None) | (None, Some(_)) => false,
        };
        if !dirs.iter().any(same) {
            dirs.push(entry);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use spine_protocol::lexical_path::lexical_normal;

    #[test]
    fn relative_directories_resolve_against_the_settings_files_project_root() {
        let mut dirs = Vec::new();
        let project = Origin::Project("/p/.claude/settings.json".into());
        merge(&mut dirs, &project, &json!(["../shared", "/abs/dir"])).expect("valid");
        let cli = Origin::Cli { index: 1, path: Some("/etc/spine/extra.json".into()) };
        merge(&mut dirs, &cli, &json!(["lib"])).expect("valid");
        merge(&mut dirs, &Origin::Cli { index: 2, path: None }, &json!(["inline"])).expect("valid");
        let resolved: Vec<PathBuf> = dirs.iter().map(|d| d.resolve(Path::new("/proj"))).collect();
        assert_eq!(
            resolved,
            [PathBuf::from("/shared"), "/abs/dir".into(), "/etc/spine/lib".into(), "/proj/inline".into()]
        );
        assert_eq!(dirs[0].source.to_string(), "/p/.claude/settings.json: permissions.additionalDirectories[0]");
    }

    #[test]
    fn a_home_relative_directory_expands_the_home_directory() {
        let mut dirs = Vec::new();
        merge(&mut dirs, &Origin::User("/h/.claude/settings.json".into()), &json!(["~/notes"])).expect("valid");
        let resolved = dirs[0].resolve(Path::new("/proj"));
        match spine_protocol::home::user_home() {
            Some(home) => assert_eq!(resolved, lexical_normal(&home.join("notes"))),
            // No home: `~` stays as written, under the file's project root.
            None => assert_eq!(resolved, PathBuf::from("/h/~/notes")),
        }
    }

    #[test]
    fn directories_are_a_union_keeping_the_first_source() {
        let mut dirs = Vec::new();
        merge(&mut dirs, &Origin::User("/h/.claude/settings.json".into()), &json!(["/d", "/e"])).expect("valid");
        merge(&mut dirs, &Origin::Project("/p/.spine/settings.json".into()), &json!(["/d/", "/f"])).expect("valid");
        let written: Vec<&str> = dirs.iter().map(|d| d.written.as_str()).collect();
        assert_eq!(written, ["/d", "/e", "/f"]);
        assert!(matches!(&dirs[0].source, DirectorySource::Settings { origin: Origin::User(_), .. }));
    }

    #[test]
    fn malformed_directories_name_the_source_and_the_json_path() {
        let origin = Origin::Project("/p/.spine/settings.json".into());
        let err = merge(&mut Vec::new(), &origin, &json!("/d")).expect_err("not an array");
        assert_eq!(err.path, "permissions.additionalDirectories");
        let err = merge(&mut Vec::new(), &origin, &json!(["/d", 3])).expect_err("not a string");
        assert_eq!(err.path, "permissions.additionalDirectories[1]");
        let err = merge(&mut Vec::new(), &origin, &json!([""])).expect_err("empty");
        assert_eq!(err.path, "permissions.additionalDirectories[0]");
    }
}
