//! Saving permission changes to settings files: the terminal approver's "always for this
//! project" and the `updatedPermissions` of PermissionRequest hooks whose destination is a
//! settings file.
//!
//! Contract:
//! - [`edit_permissions`] changes the `permissions` object of one settings file and keeps
//!   everything else in it; a missing file (and its folder) is created; a file that is not a
//!   JSON object, or whose `permissions` or list is of the wrong type, is never overwritten
//!   (an error says why). The file is written to a temporary file beside it and renamed.
//!   [`edit_settings_text`] is the same change on a text, for callers that open the file
//!   themselves (the approver's "always for this project", which never follows a link).
//! - A project destination whose `.spine` folder or file is a symbolic link is refused.
//! - [`SettingsStore`] maps a destination to spine's file of that scope: `localSettings` →
//!   `<project>/.spine/settings.local.json` (where the approver saves), `projectSettings` →
//!   `<project>/.spine/settings.json`, `userSettings` → `$SPINE_HOME/settings.json`. It saves
//!   `addRules` (appended, each once), `replaceRules` (the list replaced), `removeRules`,
//!   `setMode` (`defaultMode`), `addDirectories` and `removeDirectories`
//!   (`additionalDirectories`). With `allowManagedPermissionRulesOnly` it saves no rule: such a
//!   rule would not apply.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use spine_protocol::permission_store::PermissionStore;
use spine_protocol::permission_update::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};

/// Changes the `permissions` object of the settings file at `path` (see the module contract).
pub fn edit_permissions(
    path: &Path,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<(), String>,
) -> Result<(), String> {
    let old = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let text = edit_settings_text(old.as_deref(), path, edit)?;
    let dir = path.parent().ok_or_else(|| format!("{} has no folder", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The settings text `old` (`None`: no file yet) with its `permissions` object changed by
/// `edit`, as [`edit_permissions`] writes it; `path` names the file in errors. For callers
/// that read and write the file themselves (the approver opens it without following links).
pub fn edit_settings_text(
    old: Option<&str>,
    path: &Path,
    edit: impl FnOnce(&mut Map<String, Value>) -> Result<(), String>,
) -> Result<String, String> {
    let mut settings = match old {
        None => json!({}),
        Some(text) if text.trim().is_empty() => json!({}),
        Some(text) => {
            serde_json::from_str::<Value>(text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?
        }
    };
    let Some(root) = settings.as_object_mut() else {
        return Err(format!("{} is not a JSON object", path.display()));
    };
    let permissions = root.entry("permissions").or_insert_with(|| json!({}));
    let Some(permissions) = permissions.as_object_mut() else {
        return Err(format!("{}: `permissions` is not an object", path.display()));
    };
    edit(permissions).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_json::to_string_pretty(&settings).map_err(|e| e.to_string())? + "\n")
}

/// [`edit_settings_text`] adding `rules` to `permissions.<behavior>`, each once.
pub fn rules_added_text(
    old: Option<&str>,
    path: &Path,
    behavior: RuleBehavior,
    rules: &[String],
) -> Result<String, String> {
    edit_settings_text(old, path, |permissions| {
        append(list(permissions, behavior.as_str())?, rules);
        Ok(())
    })
}

/// Refuses a project settings file (`<project>/.spine/…`) whose folder or the file itself is
/// a symbolic link: spine never writes project settings through a link.
fn refuse_links(project: &Path, path: &Path) -> Result<(), String> {
    let Ok(rel) = path.strip_prefix(project) else {
        return Ok(());
    };
    let mut at = project.to_path_buf();
    for part in rel.components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            let target = std::fs::read_link(&at).map(|t| t.display().to_string()).unwrap_or_default();
            return Err(format!(
                "{} is a symbolic link (to {target}); spine does not write project settings through a link",
                at.display()
            ));
        }
    }
    Ok(())
}

/// The list `permissions.<key>` as strings to change.
fn list<'a>(permissions: &'a mut Map<String, Value>, key: &str) -> Result<&'a mut Vec<Value>, String> {
    permissions
        .entry(key)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| format!("`permissions.{key}` is not an array"))
}

fn append(items: &mut Vec<Value>, values: &[String]) {
    for value in values {
        if !items.iter().any(|v| v.as_str() == Some(value)) {
            items.push(Value::String(value.clone()));
        }
    }
}

/// Adds `rules` to `permissions.<behavior>` of the settings file at `path`, each once.
pub fn add_rules(path: &Path, behavior: RuleBehavior, rules: &[String]) -> Result<(), String> {
    edit_permissions(path, |permissions| {
        append(list(permissions, behavior.as_str())?, rules);
        Ok(())
    })
}

/// Saves permission updates to spine's settings files (see the module contract).
#[derive(Debug, Clone)]
pub struct SettingsStore {
    project: PathBuf,
    spine_home: PathBuf,
    managed_rules_only: Option<String>,
}

impl SettingsStore {
    /// A store for a run in `project` with `SPINE_HOME` at `spine_home`; `managed_rules_only`
    /// names the managed file that sets `allowManagedPermissionRulesOnly`, if one does.
    pub fn new(project: PathBuf, spine_home: PathBuf, managed_rules_only: Option<String>) -> Self {
        SettingsStore { project, spine_home, managed_rules_only }
    }

    /// The file a destination names, if it names one.
    pub fn file(&self, destination: UpdateDestination) -> Option<PathBuf> {
        match destination {
            UpdateDestination::LocalSettings => Some(self.project.join(".spine").join("settings.local.json")),
            UpdateDestination::ProjectSettings => Some(self.project.join(".spine").join("settings.json")),
            UpdateDestination::UserSettings => Some(self.spine_home.join("settings.json")),
            UpdateDestination::Session | UpdateDestination::CliArg => None,
        }
    }
}

impl PermissionStore for SettingsStore {
    fn save(&self, update: &PermissionUpdate) -> Result<PathBuf, String> {
        let destination = update.destination();
        let path = self.file(destination).ok_or_else(|| format!("{destination} is not a settings file"))?;
        if matches!(destination, UpdateDestination::LocalSettings | UpdateDestination::ProjectSettings) {
            refuse_links(&self.project, &path)?;
        }
        let texts = |rules: &[RuleValue]| rules.iter().map(RuleValue::rule).collect::<Vec<_>>();
        let rules_refused = |_: &[RuleValue]| match &self.managed_rules_only {
            Some(by) => Err(format!(
                "`allowManagedPermissionRulesOnly` in {by} lets only managed settings add permission rules"
            )),
            None => Ok(()),
        };
        match update {
            PermissionUpdate::AddRules { rules, behavior, .. } => {
                rules_refused(rules)?;
                add_rules(&path, *behavior, &texts(rules))?;
            }
            PermissionUpdate::ReplaceRules { rules, behavior, .. } => {
                rules_refused(rules)?;
                let values = texts(rules);
                edit_permissions(&path, |p| {
                    p.insert(behavior.as_str().to_owned(), json!(values));
                    Ok(())
                })?;
            }
            PermissionUpdate::RemoveRules { rules, behavior, .. } => {
                let values = texts(rules);
                edit_permissions(&path, |p| {
                    list(p, behavior.as_str())?.retain(|v| !v.as_str().is_some_and(|s| values.iter().any(|r| r == s)));
                    Ok(())
                })?;
            }
            PermissionUpdate::SetMode { mode, .. } => edit_permissions(&path, |p| {
                p.insert("defaultMode".to_owned(), json!(mode.as_str()));
                Ok(())
            })?,
            PermissionUpdate::AddDirectories { directories, .. } => edit_permissions(&path, |p| {
                append(list(p, "additionalDirectories")?, directories);
                Ok(())
            })?,
            PermissionUpdate::RemoveDirectories { directories, .. } => edit_permissions(&path, |p| {
                list(p, "additionalDirectories")?
                    .retain(|v| !v.as_str().is_some_and(|s| directories.iter().any(|d| d == s)));
                Ok(())
            })?,
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spine_protocol::permission::PermissionMode;

    fn read(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
    }

    fn rules(texts: &[&str]) -> Vec<RuleValue> {
        texts.iter().map(|t| RuleValue::from_rule(t)).collect()
    }

    #[test]
    fn each_settings_destination_is_saved_to_spines_file_of_that_scope_keeping_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (project, home) = (dir.path().join("p"), dir.path().join("home"));
        let store = SettingsStore::new(project.clone(), home.clone(), None);
        std::fs::create_dir_all(project.join(".spine")).expect("mkdir");
        std::fs::write(
            project.join(".spine/settings.json"),
            r#"{"env": {"A": "1"}, "permissions": {"deny": ["Read"]}}"#,
        )
        .expect("write");
        let local = PermissionUpdate::AddRules {
            rules: rules(&["Bash(npm test:*)"]),
            behavior: RuleBehavior::Allow,
            destination: UpdateDestination::LocalSettings,
        };
        assert_eq!(store.save(&local), Ok(project.join(".spine/settings.local.json")));
        store.save(&local).expect("twice");
        assert_eq!(
            read(&project.join(".spine/settings.local.json"))["permissions"]["allow"],
            json!(["Bash(npm test:*)"])
        );
        let deny = PermissionUpdate::AddRules {
            rules: rules(&["Bash(rm:*)"]),
            behavior: RuleBehavior::Deny,
            destination: UpdateDestination::ProjectSettings,
        };
        store.save(&deny).expect("project");
        let shared = read(&project.join(".spine/settings.json"));
        assert_eq!(
            (shared["permissions"]["deny"].clone(), shared["env"]["A"].clone()),
            (json!(["Read", "Bash(rm:*)"]), json!("1"))
        );
        let mode = PermissionUpdate::SetMode {
            mode: PermissionMode::AcceptEdits,
            destination: UpdateDestination::UserSettings,
        };
        assert_eq!(store.save(&mode), Ok(home.join("settings.json")));
        assert_eq!(read(&home.join("settings.json"))["permissions"]["defaultMode"], "acceptEdits");
        let session = PermissionUpdate::SetMode { mode: PermissionMode::Plan, destination: UpdateDestination::Session };
        assert!(store.save(&session).is_err());
    }

    #[test]
    fn replace_remove_and_directories_edit_their_lists() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SettingsStore::new(dir.path().to_path_buf(), dir.path().join("home"), None);
        let file = dir.path().join(".spine/settings.local.json");
        let local = UpdateDestination::LocalSettings;
        let updates = [
            PermissionUpdate::AddRules {
                rules: rules(&["A", "B", "C"]),
                behavior: RuleBehavior::Ask,
                destination: local,
            },
            PermissionUpdate::RemoveRules { rules: rules(&["B"]), behavior: RuleBehavior::Ask, destination: local },
            PermissionUpdate::ReplaceRules { rules: rules(&["D"]), behavior: RuleBehavior::Allow, destination: local },
            PermissionUpdate::AddDirectories { directories: vec!["/x".into(), "/y".into()], destination: local },
            PermissionUpdate::RemoveDirectories { directories: vec!["/x".into()], destination: local },
        ];
        for update in &updates {
            store.save(update).expect("saved");
        }
        let p = &read(&file)["permissions"];
        assert_eq!((p["ask"].clone(), p["allow"].clone()), (json!(["A", "C"]), json!(["D"])));
        assert_eq!(p["additionalDirectories"], json!(["/y"]));
    }

    #[test]
    fn no_rule_is_saved_when_managed_settings_allow_only_their_own() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = SettingsStore::new(
            dir.path().to_path_buf(),
            dir.path().join("h"),
            Some("/etc/spine/managed-settings.json".into()),
        );
        let deny = PermissionUpdate::AddRules {
            rules: rules(&["Bash(rm:*)"]),
            behavior: RuleBehavior::Deny,
            destination: UpdateDestination::LocalSettings,
        };
        let err = store.save(&deny).expect_err("refused");
        assert!(err.contains("allowManagedPermissionRulesOnly"), "{err}");
        assert!(!dir.path().join(".spine/settings.local.json").exists());
    }

    #[test]
    fn a_project_settings_folder_that_is_a_symbolic_link_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (project, outside) = (dir.path().join("p"), dir.path().join("outside"));
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::os::unix::fs::symlink(&outside, project.join(".spine")).expect("symlink");
        let store = SettingsStore::new(project.clone(), dir.path().join("home"), None);
        let local = PermissionUpdate::AddRules {
            rules: rules(&["Bash(npm test:*)"]),
            behavior: RuleBehavior::Allow,
            destination: UpdateDestination::LocalSettings,
        };
        let err = store.save(&local).expect_err("refused");
        assert!(err.contains("is a symbolic link"), "{err}");
        assert!(!outside.join("settings.local.json").exists(), "nothing written through the link");
    }

    #[test]
    fn a_file_that_is_not_an_object_is_never_overwritten() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "[1, 2]").expect("write");
        assert!(add_rules(&path, RuleBehavior::Allow, &["Read".into()]).is_err());
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "[1, 2]");
    }
}
