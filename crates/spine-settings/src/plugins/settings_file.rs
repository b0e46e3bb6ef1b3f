//! The settings files `spine plugin` writes: `enabledPlugins` and `extraKnownMarketplaces` of
//! one scope's file ([`InstallScope::file`], [`edit`]).
//!
//! Contract:
//! - The files are spine's: user `$SPINE_HOME/settings.json`, project
//!   `<project>/.spine/settings.json`, local `<project>/.spine/settings.local.json` (Claude
//!   Code's `~/.claude` and `.claude/` files are never written).
//! - An edit keeps everything else in the file (and the order of its keys); a missing file (and
//!   its folder) is created; a file that is not a JSON object, or whose `enabledPlugins` /
//!   `extraKnownMarketplaces` is not an object, is never overwritten (the error names the file
//!   and the field). The text goes to a temporary file beside it, then a rename.
//! - A project or local file whose `.spine` folder, or the file itself, is a symbolic link is
//!   refused: spine never writes project settings through a link.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::PluginError;

/// Where an install is recorded and enabled (`--scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum InstallScope {
    /// For the user, in every project.
    User,
    /// For everyone working on the project (`.spine/settings.json`, shared).
    Project,
    /// For the user in this project only (`.spine/settings.local.json`).
    Local,
}

impl InstallScope {
    /// The name recorded in `installed_plugins.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            InstallScope::User => "user",
            InstallScope::Project => "project",
            InstallScope::Local => "local",
        }
    }

    /// The scope named `text` (`user`, `project`, `local`).
    pub fn parse(text: &str) -> Option<InstallScope> {
        match text {
            "user" => Some(InstallScope::User),
            "project" => Some(InstallScope::Project),
            "local" => Some(InstallScope::Local),
            _ => None,
        }
    }

    /// spine's settings file of this scope.
    pub fn file(self, spine_home: &Path, project: &Path) -> PathBuf {
        match self {
            InstallScope::User => spine_home.join("settings.json"),
            InstallScope::Project => project.join(".spine").join("settings.json"),
            InstallScope::Local => project.join(".spine").join("settings.local.json"),
        }
    }
}

impl fmt::Display for InstallScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Changes the settings file of `scope` with `change`, which returns whether it changed
/// anything (nothing is written when it did not). See the module contract.
pub fn edit(
    scope: InstallScope,
    spine_home: &Path,
    project: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<bool, PluginError>,
) -> Result<bool, PluginError> {
    let path = scope.file(spine_home, project);
    if scope != InstallScope::User {
        refuse_links(project, &path)?;
    }
    let fail = |field: &str, reason: String| PluginError::new(&path, field, reason);
    let mut settings = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(fail("(file)", "is not a JSON object; not changed".to_owned())),
            Err(e) => return Err(fail("(file)", format!("is not JSON ({e}); not changed"))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => return Err(fail("(file)", format!("cannot read: {e}"))),
    };
    if !change(&mut settings)? {
        return Ok(false);
    }
    let dir = path.parent().ok_or_else(|| fail("(file)", "has no folder".to_owned()))?;
    std::fs::create_dir_all(dir).map_err(|e| fail("(file)", format!("cannot create its folder: {e}")))?;
    let text = serde_json::to_string_pretty(&Value::Object(settings))
        .map_err(|e| fail("(file)", format!("cannot encode: {e}")))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temporary, text + "\n").map_err(|e| fail("(file)", format!("cannot write: {e}")))?;
    std::fs::rename(&temporary, &path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        fail("(file)", format!("cannot write: {e}"))
    })?;
    Ok(true)
}

/// The object `settings[key]`, made when missing; an error naming `file` when it is not one.
pub fn object<'a>(
    settings: &'a mut Map<String, Value>,
    key: &str,
    file: &Path,
) -> Result<&'a mut Map<String, Value>, PluginError> {
    settings
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| PluginError::new(file, key, "is not an object; not changed"))
}

/// Sets `enabledPlugins[id]` to `on`, or removes it (`None`); whether that changed the file.
pub fn set_enabled(
    settings: &mut Map<String, Value>,
    file: &Path,
    id: &str,
    on: Option<bool>,
) -> Result<bool, PluginError> {
    if on.is_none() && !settings.contains_key("enabledPlugins") {
        return Ok(false);
    }
    let plugins = object(settings, "enabledPlugins", file)?;
    Ok(match on {
        Some(on) => plugins.insert(id.to_owned(), Value::Bool(on)) != Some(Value::Bool(on)),
        None => plugins.shift_remove(id).is_some(),
    })
}

/// Refuses a project settings file whose folder or the file itself is a symbolic link.
fn refuse_links(project: &Path, path: &Path) -> Result<(), PluginError> {
    let Ok(rel) = path.strip_prefix(project) else { return Ok(()) };
    let mut at = project.to_path_buf();
    for part in rel.components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(PluginError::new(
                &at,
                "(file)",
                "is a symbolic link; spine does not write project settings through a link",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
    }

    #[test]
    fn enabling_keeps_the_rest_of_the_file_and_its_order() {
        let dir = tempfile::tempdir().expect("dir");
        let (home, project) = (dir.path().join("home"), dir.path().join("p"));
        std::fs::create_dir_all(project.join(".spine")).expect("mkdir");
        let file = InstallScope::Project.file(&home, &project);
        std::fs::write(&file, r#"{"z": 1, "env": {"A": "1"}, "a": [1]}"#).expect("write");
        let on = |s: &mut Map<String, Value>| set_enabled(s, &file, "g@m", Some(true));
        assert!(edit(InstallScope::Project, &home, &project, on).expect("edits"));
        assert!(!edit(InstallScope::Project, &home, &project, on).expect("edits"), "already so");
        let text = std::fs::read_to_string(&file).expect("read");
        assert!(text.find("\"z\"") < text.find("\"env\""), "order kept: {text}");
        assert_eq!(read(&file), json!({"z": 1, "env": {"A": "1"}, "a": [1], "enabledPlugins": {"g@m": true}}));
        let user = InstallScope::User.file(&home, &project);
        let off = |s: &mut Map<String, Value>| set_enabled(s, &user, "g@m", Some(false));
        edit(InstallScope::User, &home, &project, off).expect("creates the user file");
        assert_eq!(read(&home.join("settings.json")), json!({"enabledPlugins": {"g@m": false}}));
    }

    #[test]
    fn a_file_that_is_not_an_object_and_a_linked_spine_folder_are_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let (home, project, outside) = (dir.path().join("home"), dir.path().join("p"), dir.path().join("o"));
        std::fs::create_dir_all(&home).expect("mkdir");
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::fs::write(home.join("settings.json"), "[1]").expect("write");
        let file = home.join("settings.json");
        let error = edit(InstallScope::User, &home, &project, |s| set_enabled(s, &file, "g@m", Some(true)))
            .expect_err("not an object");
        assert!(error.to_string().contains("is not a JSON object"), "{error}");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "[1]");
        std::os::unix::fs::symlink(&outside, project.join(".spine")).expect("link");
        let local = InstallScope::Local.file(&home, &project);
        let error = edit(InstallScope::Local, &home, &project, |s| set_enabled(s, &local, "g@m", Some(true)))
            .expect_err("link");
        assert!(error.to_string().contains("symbolic link"), "{error}");
        assert!(!outside.join("settings.local.json").exists());
        std::fs::write(home.join("settings.json"), r#"{"enabledPlugins": []}"#).expect("write");
        let error = edit(InstallScope::User, &home, &project, |s| set_enabled(s, &file, "g@m", Some(true)))
            .expect_err("wrong type");
        assert_eq!(error.field, "enabledPlugins");
    }
}
