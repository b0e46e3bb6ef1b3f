//! The workspace roots of a run: the project directory (the primary root), then the settings'
//! `permissions.additionalDirectories` (lowest precedence first), then each `--add-dir`.
//!
//! Contract:
//! - Each added directory must exist and be a directory; otherwise assembly fails with an
//!   [`AssemblyError::AddedDirectory`] naming its source: the settings file and JSON path
//!   (`/p/.claude/settings.json: permissions.additionalDirectories[0]`) or `--add-dir`.
//! - Roots are canonical; a directory named twice (or the project itself) counts once, with
//!   its first source.
//! - The settings given are the ones that apply: an untrusted project's directories were
//!   already withheld by discovery.

use std::path::{Path, PathBuf};

use spine_core::workspace::Workspace;
use spine_settings::{AddedDirectory, DirectorySource, Settings};

use crate::{AssemblyError, CommandLine};

/// One root of the workspace and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceRoot {
    /// The canonical directory.
    pub path: PathBuf,
    /// Where it was set; `None` for the project directory (the primary root).
    pub source: Option<DirectorySource>,
}

/// The roots of a run, the project directory first, each checked (see the module doc).
pub fn workspace_roots(
    settings: &Settings,
    command_line: &CommandLine,
    project: &Path,
) -> Result<Vec<WorkspaceRoot>, AssemblyError> {
    let primary = project
        .canonicalize()
        .map_err(|e| AssemblyError::Workspace { path: project.to_path_buf(), reason: e.to_string() })?;
    let mut roots = vec![WorkspaceRoot { path: primary, source: None }];
    let added = settings.permissions.additional_directories.iter().chain(&command_line.add_dirs);
    for dir in added {
        let path = checked(dir, project)?;
        if !roots.iter().any(|r| r.path == path) {
            roots.push(WorkspaceRoot { path, source: Some(dir.source.clone()) });
        }
    }
    Ok(roots)
}

/// The workspace of a run: its roots (see [`workspace_roots`]), each held open.
pub fn workspace(settings: &Settings, command_line: &CommandLine, project: &Path) -> Result<Workspace, AssemblyError> {
    let roots = workspace_roots(settings, command_line, project)?;
    Workspace::with_roots(project, roots.iter().skip(1).map(|r| &r.path))
        .map_err(|e| AssemblyError::Workspace { path: project.to_path_buf(), reason: e.to_string() })
}

/// The canonical directory of an added root, or the error naming its source.
fn checked(dir: &AddedDirectory, project: &Path) -> Result<PathBuf, AssemblyError> {
    let resolved = dir.resolve(project);
    let fail = |reason: String| AssemblyError::AddedDirectory {
        origin: dir.source.clone(),
        written: dir.written.clone(),
        reason,
    };
    let canonical = resolved.canonicalize().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => fail(format!("{} does not exist", resolved.display())),
        _ => fail(format!("{}: {e}", resolved.display())),
    })?;
    if !canonical.is_dir() {
        return Err(fail(format!("{} is not a directory", resolved.display())));
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(json: serde_json::Value, origin: spine_settings::Origin) -> Settings {
        let layer = spine_settings::SettingsLayer { origin, value: json.as_object().cloned().unwrap_or_default() };
        Settings::from_layers(vec![layer]).expect("settings")
    }

    #[test]
    fn roots_are_the_project_then_settings_then_flag_directories_each_once() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (project, a, b) = (tmp.path().join("p"), tmp.path().join("a"), tmp.path().join("b"));
        for d in [&project, &a, &b] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let origin = spine_settings::Origin::Project(project.join(".claude/settings.json"));
        let s = settings(serde_json::json!({"permissions": {"additionalDirectories": ["../a", "."]}}), origin);
        let flags = CommandLine {
            add_dirs: vec![
                AddedDirectory::from_flag(&b.to_string_lossy(), tmp.path()),
                AddedDirectory::from_flag("a", tmp.path()),
            ],
            ..CommandLine::default()
        };
        let roots = workspace_roots(&s, &flags, &project).expect("roots");
        let paths: Vec<PathBuf> = roots.iter().map(|r| r.path.clone()).collect();
        let canon = |p: &Path| p.canonicalize().expect("canon");
        assert_eq!(paths, [canon(&project), canon(&a), canon(&b)]);
        assert_eq!(roots[2].source, Some(DirectorySource::Flag));
        let ws = workspace(&s, &flags, &project).expect("workspace");
        assert_eq!(ws.roots().count(), 3);
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file_and_field_or_the_flag() {
        let tmp = tempfile::tempdir().expect("tmp");
        let origin = spine_settings::Origin::User(tmp.path().join(".claude/settings.json"));
        let s = settings(serde_json::json!({"permissions": {"additionalDirectories": ["nope"]}}), origin);
        let err = workspace_roots(&s, &CommandLine::default(), tmp.path()).expect_err("missing").to_string();
        let file = tmp.path().join(".claude/settings.json");
        assert!(err.starts_with(&format!("{}: permissions.additionalDirectories[0]", file.display())), "{err}");
        assert!(err.contains(&format!("{} does not exist", tmp.path().join("nope").display())), "{err}");
        let flags =
            CommandLine { add_dirs: vec![AddedDirectory::from_flag("gone", tmp.path())], ..CommandLine::default() };
        let err = workspace_roots(&Settings::default(), &flags, tmp.path()).expect_err("missing").to_string();
        assert!(err.starts_with("--add-dir gone:"), "{err}");
        std::fs::write(tmp.path().join("file"), "x").expect("write");
        let flags =
            CommandLine { add_dirs: vec![AddedDirectory::from_flag("file", tmp.path())], ..CommandLine::default() };
        let err = workspace_roots(&Settings::default(), &flags, tmp.path()).expect_err("file").to_string();
        assert!(err.contains("is not a directory"), "{err}");
    }
}
