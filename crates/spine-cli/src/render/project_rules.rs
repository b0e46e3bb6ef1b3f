//! Saving "always for this project" rules to `<project>/.spine/settings.local.json` without
//! ever writing through a symbolic link.
//!
//! Contract of [`add_project_allow_rules`]:
//! - the project directory is opened as named; `.spine` is opened beneath its descriptor with
//!   `openat(O_NOFOLLOW | O_DIRECTORY)` (made with `mkdirat` when missing); the settings file
//!   is read with `openat(O_NOFOLLOW)` and checked to be a regular file by its descriptor; the
//!   new text ([`spine_settings::persist::rules_added_text`]: the rules appended to
//!   `permissions.allow`, each once, everything else kept) is written to a temporary file made
//!   with `O_CREAT | O_EXCL | O_NOFOLLOW` in the same folder and renamed over the file with
//!   `renameat` on that folder's descriptor.
//! - a `.spine` folder or settings file that is a symbolic link is refused with an error
//!   naming it and where it points, whatever it points at: a link could be swapped between a
//!   check and the write, a descriptor cannot; nothing is written anywhere then.
//! - a file that is not a JSON object (or whose `permissions` is malformed) is never
//!   overwritten: the error says why.
//!
//! [`remove_project_allow_rules`] (the chat's `/permissions forget`) takes rules out of
//! `permissions.allow` the same way, everything else kept; [`project_allow_rules`] reads that
//! list, never through a link either.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde_json::Value;
use spine_protocol::permission_update::RuleBehavior;

/// The folder, and the file in it, that "always for this project" writes.
const FOLDER: &str = ".spine";
const FILE: &str = "settings.local.json";

/// How the folder is opened: never through a symbolic link.
const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// The file "always for this project" writes in `project`.
pub fn project_rules_file(project: &Path) -> PathBuf {
    project.join(FOLDER).join(FILE)
}

/// Adds `rules` to `permissions.allow` of the project's local settings file (see the module
/// contract); the file written, or why nothing was.
pub fn add_project_allow_rules(project: &Path, rules: &[String]) -> Result<PathBuf, String> {
    rewrite(project, |old, file| spine_settings::persist::rules_added_text(old, file, RuleBehavior::Allow, rules))
}

/// Takes `rules` out of `permissions.allow` of the project's local settings file, keeping
/// everything else (see the module contract); the file written, or why nothing was.
pub fn remove_project_allow_rules(project: &Path, rules: &[String]) -> Result<PathBuf, String> {
    rewrite(project, |old, file| {
        spine_settings::persist::edit_settings_text(old, file, |permissions| {
            match permissions.get_mut(RuleBehavior::Allow.as_str()) {
                None => Ok(()),
                Some(Value::Array(allow)) => {
                    allow.retain(|v| !v.as_str().is_some_and(|s| rules.iter().any(|r| r == s)));
                    Ok(())
                }
                Some(_) => Err("`permissions.allow` is not an array".to_owned()),
            }
        })
    })
}

/// The `permissions.allow` rules of the project's local settings file (none when there is no
/// file); a link, or a file that is not settings JSON, is an error.
pub fn project_allow_rules(project: &Path) -> Result<Vec<String>, String> {
    let file = project_rules_file(project);
    let root = open_root(project)?;
    let folder = match rustix::fs::openat(&root, FOLDER, DIR_FLAGS, Mode::empty()) {
        Ok(folder) => folder,
        Err(Errno::NOENT) => return Ok(Vec::new()),
        Err(Errno::NOTDIR | Errno::LOOP) if is_link(&root, FOLDER) => return Err(link_refused(&project.join(FOLDER))),
        Err(e) => return Err(format!("cannot open {}: {e}", project.join(FOLDER).display())),
    };
    let Some(text) = read_file(&folder, project, &file)? else { return Ok(Vec::new()) };
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let settings: Value = serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", file.display()))?;
    Ok(settings
        .pointer("/permissions/allow")
        .and_then(Value::as_array)
        .map(|allow| allow.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default())
}

fn open_root(project: &Path) -> Result<OwnedFd, String> {
    rustix::fs::open(project, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| format!("cannot open {}: {e}", project.display()))
}

/// Replaces the project's local settings file by `new(old text, file)`, never through a link.
fn rewrite(project: &Path, new: impl FnOnce(Option<&str>, &Path) -> Result<String, String>) -> Result<PathBuf, String> {
    let file = project_rules_file(project);
    let root = open_root(project)?;
    let folder = open_folder(&root, project)?;
    let old = read_file(&folder, project, &file)?;
    let text = new(old.as_deref(), &file)?;
    let tmp = format!(".{FILE}.{}", std::process::id());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&folder, tmp.as_str(), flags, Mode::from_raw_mode(0o644))
        .map_err(|e| format!("cannot write {}: {e}", project.join(FOLDER).join(&tmp).display()))?;
    let written = File::from(fd)
        .write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))
        .and_then(|()| {
            rustix::fs::renameat(&folder, tmp.as_str(), &folder, FILE)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))
        });
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&folder, tmp.as_str(), AtFlags::empty());
    }
    written.map(|()| file)
}

/// The error for a symbolic link where a folder or file is expected.
fn link_refused(path: &Path) -> String {
    let target = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_else(|_| "?".to_owned());
    format!("{} is a symbolic link (to {target}); spine does not write project settings through a link", path.display())
}

fn is_link(at: &OwnedFd, name: &str) -> bool {
    rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink)
}

/// Opens (or makes) `.spine` beneath the project's descriptor, refusing a link.
fn open_folder(root: &OwnedFd, project: &Path) -> Result<OwnedFd, String> {
    let path = project.join(FOLDER);
    let open = || rustix::fs::openat(root, FOLDER, DIR_FLAGS, Mode::empty());
    let result = match open() {
        Err(Errno::NOENT) => match rustix::fs::mkdirat(root, FOLDER, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => open(),
            Err(e) => Err(e),
        },
        other => other,
    };
    result.map_err(|e| match e {
        Errno::NOTDIR | Errno::LOOP if is_link(root, FOLDER) => link_refused(&path),
        e => format!("cannot open {}: {e}", path.display()),
    })
}

/// The settings file's text, `None` when there is none; a link or a non-regular file is refused.
fn read_file(folder: &OwnedFd, project: &Path, file: &Path) -> Result<Option<String>, String> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(folder, FILE, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(Errno::LOOP) => return Err(link_refused(&project.join(FOLDER).join(FILE))),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(format!("{} is not a regular file", file.display()));
    }
    let mut text = String::new();
    File::from(fd).read_to_string(&mut text).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
    }

    #[test]
    fn project_rules_are_added_to_settings_local_json_keeping_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(project_allow_rules(dir.path()), Ok(Vec::new()), "no file yet");
        let path = add_project_allow_rules(dir.path(), &["Bash(npm test:*)".into()]).expect("created");
        assert_eq!(path, dir.path().join(".spine/settings.local.json"));
        std::fs::write(&path, r#"{"env": {"A": "1"}, "permissions": {"allow": ["Read"], "deny": ["Bash(rm:*)"]}}"#)
            .expect("write");
        add_project_allow_rules(dir.path(), &["Bash(npm test:*)".into(), "Read".into()]).expect("merged");
        let v = read(&path);
        assert_eq!(v["permissions"]["allow"], json!(["Read", "Bash(npm test:*)"]));
        assert_eq!(v["permissions"]["deny"], json!(["Bash(rm:*)"]));
        assert_eq!(v["env"]["A"], "1");
        remove_project_allow_rules(dir.path(), &["Bash(npm test:*)".into()]).expect("removed");
        assert_eq!(project_allow_rules(dir.path()), Ok(vec!["Read".to_owned()]));
        let v = read(&path);
        assert_eq!((&v["permissions"]["deny"], &v["env"]["A"]), (&json!(["Bash(rm:*)"]), &json!("1")), "the rest kept");
        std::fs::write(&path, "[1, 2]").expect("write");
        assert!(add_project_allow_rules(dir.path(), &["Read".into()]).is_err(), "never overwrites what it cannot read");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "[1, 2]");
    }

    #[test]
    fn a_spine_folder_that_is_a_symbolic_link_leaving_the_project_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (project, outside) = (dir.path().join("p"), dir.path().join("outside"));
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::os::unix::fs::symlink(&outside, project.join(".spine")).expect("symlink");
        let err = add_project_allow_rules(&project, &["Bash(ls:*)".into()]).expect_err("refused");
        assert!(err.contains(".spine is a symbolic link (to ") && err.contains("outside"), "{err}");
        assert!(project_allow_rules(&project).is_err_and(|e| e.contains("symbolic link")), "not read through it");
        assert!(remove_project_allow_rules(&project, &["Bash(ls:*)".into()]).is_err());
        assert_eq!(std::fs::read_dir(&outside).expect("list").count(), 0, "nothing written through the link");
    }

    #[test]
    fn a_settings_file_that_is_a_symbolic_link_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (project, outside) = (dir.path().join("p"), dir.path().join("outside.json"));
        std::fs::create_dir_all(project.join(".spine")).expect("mkdir");
        std::fs::write(&outside, "{}").expect("write");
        std::os::unix::fs::symlink(&outside, project.join(".spine/settings.local.json")).expect("symlink");
        let err = add_project_allow_rules(&project, &["Bash(ls:*)".into()]).expect_err("refused");
        assert!(err.contains("settings.local.json is a symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&outside).expect("read"), "{}");
    }
}
