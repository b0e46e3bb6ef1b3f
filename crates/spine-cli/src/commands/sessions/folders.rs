//! The folder walk every `spine sessions` command shares: finding, reading and removing the
//! sessions under `$SPINE_HOME/projects/` without ever following a symbolic link.
//!
//! Contract:
//! - `$SPINE_HOME` is opened as the user named it; from `projects/` down, every folder is
//!   opened with `openat(O_NOFOLLOW | O_DIRECTORY)` relative to its parent's descriptor, every
//!   file with `openat(O_NOFOLLOW)` and checked to be a regular file by its descriptor. A
//!   [`Folder`] is therefore a real directory reached without a link at any level.
//! - A symbolic link where a folder or a session's file is expected (`projects/` itself, a
//!   project's folder, `<id>.jsonl`, `<id>.env`, `<id>/`, `<id>/subagents/` or anything in it)
//!   is skipped with a warning on stderr naming it ([`warn_link`]), never followed: nothing
//!   behind it is listed, read or removed, and the link itself stays.
//! - Removals are `unlinkat` relative to the descriptor of the folder that holds the entry,
//!   after checking the entry's kind without following it; `unlinkat` never follows the last
//!   component, so even an entry swapped for a link between the check and the removal only
//!   removes the link. Nothing outside `projects/` can be removed.
//! - Only names of the form `<session id>.jsonl` (checked with `check_session_id`) are sessions.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use spine_core::session::check_session_id;

use crate::error::config;

/// How a folder is opened: for reading its entries, never through a symbolic link.
const FOLDER: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// How deep `<id>/subagents/` is removed; anything deeper stays, with a warning.
const MAX_DEPTH: usize = 16;

/// Says on stderr that `path`, a symbolic link, was skipped.
pub(super) fn warn_link(path: &Path) {
    eprintln!("warning: {} is a symbolic link; skipped, not followed", path.display());
}

/// What an entry of a folder is, the entry itself (a link is not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Missing,
    Folder,
    File,
    Link,
    /// A FIFO, socket or device, or an entry that could not be examined.
    Other,
}

impl Kind {
    fn of(file_type: FileType) -> Kind {
        match file_type {
            FileType::Directory => Kind::Folder,
            FileType::RegularFile => Kind::File,
            FileType::Symlink => Kind::Link,
            FileType::Fifo
            | FileType::Socket
            | FileType::CharacterDevice
            | FileType::BlockDevice
            | FileType::Unknown => Kind::Other,
        }
    }
}

/// A real directory under `projects/` (or `projects/` itself), held open: its path, for
/// messages only, and its descriptor, which every access goes through.
#[derive(Debug)]
pub(super) struct Folder {
    path: PathBuf,
    fd: OwnedFd,
}

impl Folder {
    /// `$SPINE_HOME/projects`; `None` when there is none, or when it is a symbolic link
    /// (warned). Another error (no permission) is a usage error naming the folder.
    pub(super) fn projects(home: &Path) -> anyhow::Result<Option<Folder>> {
        let cannot = |e: Errno| config(format!("cannot read {}: {e}", home.join("projects").display()));
        let fd = match rustix::fs::open(home, FOLDER.difference(OFlags::NOFOLLOW), Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(cannot(e)),
        };
        Folder { path: home.to_path_buf(), fd }.folder("projects").map_err(cannot)
    }

    /// The folder of `project`'s sessions (see [`crate::sessions::project_folder`]), when there
    /// is a real one.
    pub(super) fn of_project(home: &Path, project: &Path) -> anyhow::Result<Option<Folder>> {
        let Some(projects) = Folder::projects(home)? else { return Ok(None) };
        let path = crate::sessions::project_folder(home, project);
        let Some(name) = path.file_name() else { return Ok(None) };
        Ok(projects.folder_or_warn(name))
    }

    /// Every real folder directly under `projects/`, by name; a link among them is warned
    /// about and skipped.
    pub(super) fn all(home: &Path) -> anyhow::Result<Vec<Folder>> {
        let Some(projects) = Folder::projects(home)? else { return Ok(Vec::new()) };
        let entries =
            projects.entries().map_err(|e| config(format!("cannot read {}: {e}", projects.path.display())))?;
        let mut folders = Vec::new();
        for (name, kind) in entries {
            match kind {
                Kind::Folder => folders.extend(projects.folder_or_warn(&name)),
                Kind::Link => warn_link(&projects.path.join(&name)),
                Kind::Missing | Kind::File | Kind::Other => {}
            }
        }
        Ok(folders)
    }

    /// The folder holding the transcript of `id` (a regular `<id>.jsonl`), or a usage error
    /// (exit 2) naming why there is none: an id that is not one spine generates names no file.
    pub(super) fn holding(home: &Path, id: &str) -> anyhow::Result<Folder> {
        check_session_id(id).map_err(|e| config(e.to_string()))?;
        let name = format!("{id}.jsonl");
        for folder in Folder::all(home)? {
            match folder.kind(&name) {
                Kind::File => return Ok(folder),
                Kind::Link => warn_link(&folder.path.join(&name)),
                Kind::Missing | Kind::Folder | Kind::Other => {}
            }
        }
        Err(config(format!("no session {id} in {}", home.join("projects").display())))
    }

    /// The folder's path (for messages).
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// The folder `name` in this one: `Ok(None)` when there is none, or a link (warned) or
    /// something else stands there.
    fn folder(&self, name: impl AsRef<OsStr>) -> Result<Option<Folder>, Errno> {
        let name = name.as_ref();
        match rustix::fs::openat(&self.fd, name, FOLDER, Mode::empty()) {
            Ok(fd) => Ok(Some(Folder { path: self.path.join(name), fd })),
            Err(Errno::NOENT) => Ok(None),
            // `O_DIRECTORY | O_NOFOLLOW` on a link: ENOTDIR (or ELOOP).
            Err(Errno::NOTDIR | Errno::LOOP) => {
                if self.kind(name) == Kind::Link {
                    warn_link(&self.path.join(name));
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// [`Folder::folder`], with an error other than a missing folder said as a warning.
    fn folder_or_warn(&self, name: &OsStr) -> Option<Folder> {
        self.folder(name).unwrap_or_else(|e| {
            eprintln!("warning: cannot read {}: {e}; skipped", self.path.join(name).display());
            None
        })
    }

    /// What `name` is in this folder, not following a link.
    pub(super) fn kind(&self, name: impl AsRef<OsStr>) -> Kind {
        match rustix::fs::statat(&self.fd, name.as_ref(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Kind::of(FileType::from_raw_mode(stat.st_mode)),
            Err(Errno::NOENT) => Kind::Missing,
            Err(_) => Kind::Other,
        }
    }

    /// The entries of the folder (`.` and `..` left out) with their kinds, sorted by name.
    fn entries(&self) -> Result<Vec<(OsString, Kind)>, Errno> {
        let mut entries = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let entry = entry?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => self.kind(name),
                known => Kind::of(known),
            };
            entries.push((name.to_os_string(), kind));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }

    /// The ids of the sessions in the folder: regular files `<id>.jsonl`, by name; a link with
    /// such a name is warned about and skipped. A folder that cannot be read has none (warned).
    pub(super) fn session_ids(&self) -> Vec<String> {
        let entries = self.entries().unwrap_or_else(|e| {
            eprintln!("warning: cannot read {}: {e}; skipped", self.path.display());
            Vec::new()
        });
        let mut ids = Vec::new();
        for (name, kind) in entries {
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) else { continue };
            if check_session_id(id).is_err() {
                continue;
            }
            match kind {
                Kind::File => ids.push(id.to_owned()),
                Kind::Link => warn_link(&self.path.join(&name)),
                Kind::Missing | Kind::Folder | Kind::Other => {}
            }
        }
        ids
    }

    /// Opens the regular file `name` of the folder for reading: `Ok(None)` when there is none,
    /// or it is a link (warned), a folder, a FIFO, a socket or a device.
    pub(super) fn open_file(&self, name: &str) -> std::io::Result<Option<File>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => {
                warn_link(&self.path.join(name));
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        };
        match FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) {
            FileType::RegularFile => Ok(Some(File::from(fd))),
            _ => Ok(None),
        }
    }

    /// Removes the session `id` of this folder: `<id>.jsonl`, `<id>.env`, the subagent
    /// transcripts `<id>/subagents/` (docs/subagents.md), then `<id>/` when nothing else is
    /// left in it. Returns the paths removed; a link among them is warned about and stays.
    pub(super) fn remove_session(&self, id: &str) -> anyhow::Result<Vec<PathBuf>> {
        let mut removed = Vec::new();
        for name in [format!("{id}.jsonl"), format!("{id}.env")] {
            if self.remove_file(&name)? {
                removed.push(self.path.join(name));
            }
        }
        let Some(session) = self.folder(id).map_err(|e| self.cannot_remove(id, e))? else { return Ok(removed) };
        if session.remove_tree(OsStr::new("subagents"), 0)? {
            removed.push(session.path.join("subagents"));
        }
        // Not empty: something else lives there, and it stays.
        let _ = rustix::fs::unlinkat(&self.fd, id, AtFlags::REMOVEDIR);
        Ok(removed)
    }

    /// Removes the regular file `name`; `false` when there is none or something else (a link:
    /// warned) stands there.
    fn remove_file(&self, name: &str) -> anyhow::Result<bool> {
        match self.kind(name) {
            Kind::File => match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
                Ok(()) => Ok(true),
                Err(Errno::NOENT) => Ok(false),
                Err(e) => Err(self.cannot_remove(name, e)),
            },
            Kind::Link => {
                warn_link(&self.path.join(name));
                Ok(false)
            }
            Kind::Missing | Kind::Folder | Kind::Other => Ok(false),
        }
    }

    /// Removes the folder `name` and everything in it but links (warned about, they stay, and
    /// so do the folders holding them); `true` when the folder is gone.
    fn remove_tree(&self, name: &OsStr, depth: usize) -> anyhow::Result<bool> {
        let Some(folder) = self.folder(name).map_err(|e| self.cannot_remove(name, e))? else { return Ok(false) };
        if depth >= MAX_DEPTH {
            eprintln!("warning: {} is nested too deep; left in place", folder.path.display());
            return Ok(false);
        }
        let entries = folder.entries().map_err(|e| self.cannot_remove(name, e))?;
        for (entry, kind) in entries {
            let entry = entry.as_os_str();
            match kind {
                Kind::Folder => {
                    folder.remove_tree(entry, depth + 1)?;
                }
                Kind::Link => warn_link(&folder.path.join(entry)),
                Kind::File | Kind::Other => match rustix::fs::unlinkat(&folder.fd, entry, AtFlags::empty()) {
                    Ok(()) | Err(Errno::NOENT) => {}
                    Err(e) => return Err(folder.cannot_remove(entry, e)),
                },
                Kind::Missing => {}
            }
        }
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(true),
            Err(Errno::NOTEMPTY | Errno::EXIST) => Ok(false),
            Err(e) => Err(self.cannot_remove(name, e)),
        }
    }

    fn cannot_remove(&self, name: impl AsRef<OsStr>, e: Errno) -> anyhow::Error {
        anyhow::anyhow!("cannot remove {}: {e}", self.path.join(name.as_ref()).display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "123e4567-e89b-42d3-a456-426614174000";

    #[test]
    fn a_session_is_removed_by_descriptor_and_the_links_in_it_stay_with_what_they_point_to() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let folder = home.join("projects").join("-p");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(folder.join(ID).join("subagents").join("nested")).expect("folders");
        std::fs::create_dir_all(outside.join("inner")).expect("outside");
        std::fs::write(outside.join("inner").join("x.jsonl"), "").expect("outside file");
        std::fs::write(outside.join("e.env"), "").expect("outside env");
        std::fs::write(folder.join(format!("{ID}.jsonl")), "").expect("transcript");
        std::os::unix::fs::symlink(outside.join("e.env"), folder.join(format!("{ID}.env"))).expect("env link");
        let subagents = folder.join(ID).join("subagents");
        std::fs::write(subagents.join("agent-a.jsonl"), "").expect("subagent");
        std::fs::write(subagents.join("nested").join("agent-b.jsonl"), "").expect("nested subagent");
        std::os::unix::fs::symlink(outside.join("inner"), subagents.join("linked")).expect("dir link");

        let folders = Folder::all(&home).expect("folders");
        assert_eq!(folders.len(), 1);
        assert_eq!(folders[0].session_ids(), [ID]);
        let removed = folders[0].remove_session(ID).expect("removed");
        assert_eq!(removed, [folder.join(format!("{ID}.jsonl"))], "subagents/ keeps the link, so it stays");
        assert!(!subagents.join("agent-a.jsonl").exists() && !subagents.join("nested").exists());
        assert!(std::fs::symlink_metadata(subagents.join("linked")).is_ok_and(|m| m.file_type().is_symlink()));
        assert!(std::fs::symlink_metadata(folder.join(format!("{ID}.env"))).is_ok_and(|m| m.file_type().is_symlink()));
        assert!(outside.join("inner").join("x.jsonl").exists() && outside.join("e.env").exists());
    }

    #[test]
    fn a_symbolic_link_for_projects_or_a_project_folder_is_no_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(outside.join("-p")).expect("outside");
        let linked_home = dir.path().join("linked");
        std::fs::create_dir_all(&linked_home).expect("home");
        std::os::unix::fs::symlink(&outside, linked_home.join("projects")).expect("projects link");
        assert!(Folder::projects(&linked_home).expect("no error").is_none());
        assert!(Folder::all(&linked_home).expect("no error").is_empty());

        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("projects")).expect("projects");
        std::os::unix::fs::symlink(outside.join("-p"), home.join("projects").join("-p")).expect("folder link");
        assert!(Folder::of_project(&home, Path::new("/p")).expect("no error").is_none());
        assert!(Folder::all(&home).expect("no error").is_empty());
        assert!(Folder::projects(&dir.path().join("none")).expect("no error").is_none());
    }
}
