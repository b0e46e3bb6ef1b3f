//! The parent directories one Write is about to create, and their removal when it fails.
//!
//! Contract:
//! - [`NewDirs::find`] walks the file's parent path down from the workspace root that holds
//!   it, one component at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`: the first missing
//!   component and every one after it are the directories the write will create. Nothing is
//!   noted when all exist, when the path lies under no root, or when a component on the way is
//!   a symlink or not a directory (the path was resolved with its links followed, so only a
//!   concurrent change puts one there; what the write then makes is not undone).
//! - [`NewDirs::undo`] walks down the same way to the deepest of them that exists, then climbs
//!   back through `..`, checking by device and inode that each parent is the directory it
//!   passed on the way down and that the entry is still the directory it opened, and removes
//!   each with `unlinkat(AT_REMOVEDIR)` relative to its parent's descriptor: the kernel refuses
//!   a directory that is not empty and never follows a symlink there. It stops at the first it
//!   cannot remove (the ones above hold it, so they are not empty either). A few descriptors are
//!   open at a time whatever the depth, and no path longer than one component is resolved, so
//!   a tree deeper than `PATH_MAX` is undone too.
//! - A directory that another call created in the meantime and left empty is removed as if
//!   this call had made it: the note is taken before the write and cannot tell them apart.

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{AtFlags, Mode, OFlags, Stat};
use rustix::io::Errno;
use spine_core::workspace::Workspace;

/// How each directory is opened: a starting point only (`O_PATH`), never through a symlink.
const DIR: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// The parent directories of a file that did not exist before its write.
#[derive(Debug)]
pub(super) struct NewDirs {
    /// The workspace root the file lies beneath.
    root: OwnedFd,
    /// The names from the root to the deepest parent that existed.
    existing: Vec<OsString>,
    /// The names of the missing parents below it, outermost first (never empty).
    missing: Vec<OsString>,
}

impl NewDirs {
    /// The missing parents of `path` (absolute, resolved, inside the workspace), as the module
    /// contract says; `None` when there is nothing to undo.
    pub(super) fn find(workspace: &Workspace, path: &Path) -> Option<NewDirs> {
        let root_path = workspace.root_of(path)?;
        let mut names = Vec::new();
        for component in path.strip_prefix(root_path).ok()?.parent()?.components() {
            match component {
                Component::Normal(name) => names.push(name.to_os_string()),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
            }
        }
        let root = if root_path == workspace.root() {
            workspace.root_fd().try_clone_to_owned().ok()?
        } else {
            rustix::fs::open(root_path, DIR, Mode::empty()).ok()?
        };
        let first_missing = {
            let mut current: Option<OwnedFd> = None;
            let mut first_missing = None;
            for (i, name) in names.iter().enumerate() {
                let at = current.as_ref().map_or(root.as_fd(), AsFd::as_fd);
                match rustix::fs::openat(at, name, DIR, Mode::empty()) {
                    Ok(fd) => current = Some(fd),
                    Err(Errno::NOENT) => {
                        first_missing = Some(i);
                        break;
                    }
                    Err(_) => return None,
                }
            }
            first_missing?
        };
        let missing = names.split_off(first_missing);
        Some(NewDirs { root, existing: names, missing })
    }

    /// Removes the noted directories that exist and are empty, deepest first, as the module
    /// contract says. Best effort: what cannot be removed stays, silently (the call already
    /// reports why the write failed).
    pub(super) fn undo(self) {
        let _ = self.remove();
    }

    fn remove(self) -> Option<()> {
        let mut dir = self.root;
        for name in &self.existing {
            dir = rustix::fs::openat(&dir, name, DIR, Mode::empty()).ok()?;
        }
        // stats[0] is the deepest parent that existed, stats[k] the k-th directory made.
        let mut stats = vec![rustix::fs::fstat(&dir).ok()?];
        for name in &self.missing {
            let Ok(child) = rustix::fs::openat(&dir, name, DIR, Mode::empty()) else { break };
            stats.push(rustix::fs::fstat(&child).ok()?);
            dir = child;
        }
        for depth in (1..stats.len()).rev() {
            let parent = rustix::fs::openat(&dir, "..", DIR, Mode::empty()).ok()?;
            if !same(&rustix::fs::fstat(&parent).ok()?, &stats[depth - 1]) {
                return None;
            }
            let name = &self.missing[depth - 1];
            if !same(&rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW).ok()?, &stats[depth]) {
                return None;
            }
            rustix::fs::unlinkat(&parent, name, AtFlags::REMOVEDIR).ok()?;
            dir = parent;
        }
        Some(())
    }
}

/// Whether two stats are of the same file (device and inode).
fn same(a: &Stat, b: &Stat) -> bool {
    a.st_dev == b.st_dev && a.st_ino == b.st_ino
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_removes_only_empty_directories_the_walk_made_and_never_follows_a_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("old")).expect("root");
        std::fs::create_dir_all(outside.join("b")).expect("outside");
        let workspace = Workspace::new(&root).expect("workspace");
        let root = workspace.root().to_path_buf();

        // Made, then swapped for a link to a folder outside that has an empty `b`: kept.
        let linked = NewDirs::find(&workspace, &root.join("a/b/file")).expect("a and b are missing");
        assert_eq!((linked.existing.len(), linked.missing.len()), (0, 2));
        std::os::unix::fs::symlink(&outside, root.join("a")).expect("symlink");
        linked.undo();
        assert!(outside.join("b").is_dir(), "nothing is removed through a symlink");
        std::fs::remove_file(root.join("a")).expect("unlink");

        // Made, one holding a file since: the deeper empty one goes, the rest stays.
        let made = NewDirs::find(&workspace, &root.join("old/c/d/e/file")).expect("c, d and e are missing");
        assert_eq!((made.existing.len(), made.missing.len()), (1, 3));
        std::fs::create_dir_all(root.join("old/c/d/e")).expect("made");
        std::fs::write(root.join("old/c/kept.txt"), "").expect("a file in c");
        made.undo();
        assert!(!root.join("old/c/d").exists() && root.join("old/c/kept.txt").exists());

        assert!(NewDirs::find(&workspace, &root.join("old/file")).is_none(), "every parent exists");
        assert!(NewDirs::find(&workspace, &dir.path().join("elsewhere/x/file")).is_none(), "under no root");
    }
}
