//! Protected paths that did not exist when the command started: their creation is undone.
//!
//! Contract: [`MissingGuard::undo`] runs after the command exits and removes
//! whatever the command created at each recorded path (a file, a symlink or a whole
//! directory), returning one message per removal for the helper to print. A name that does
//! not exist yet cannot be reserved by a mount without creating a placeholder on the
//! machine (visible to the user, and racing with concurrent sandboxes), so this is a
//! detect-and-undo layer. Its limit: while the command runs, what it created is there, and
//! a process it left running in the background may create the path again after the undo;
//! and a hostile command can SIGKILL its helper (same user, same Landlock domain) to skip
//! the helper's undo. So the caller should take its own [`MissingGuard::before`] snapshot
//! before starting the helper and [`undo`](MissingGuard::undo) it again once the process
//! group is gone: outside the sandbox, that cannot be skipped.

use std::fs;
use std::io;
use std::path::PathBuf;

use crate::policy::Policy;

/// The protected paths to clean after the command.
#[derive(Debug, Default)]
pub struct MissingGuard {
    paths: Vec<PathBuf>,
}

impl MissingGuard {
    pub(crate) fn new(paths: Vec<PathBuf>) -> Self {
        Self { paths }
    }

    /// The `write_deny` paths of `policy` that do not exist now (a symlink, even dangling,
    /// exists).
    pub fn before(policy: &Policy) -> Self {
        Self::new(policy.write_deny.iter().filter(|path| path.symlink_metadata().is_err()).cloned().collect())
    }

    /// The paths being watched.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Removes what the command created at the watched paths; one line per path removed or
    /// that could not be removed.
    pub fn undo(&self) -> Vec<String> {
        self.undo_keeping(&|_| false)
    }

    /// [`MissingGuard::undo`], leaving the watched paths `keep` accepts as they are (the caller
    /// knows it, not the command, made what is there).
    pub fn undo_keeping(&self, keep: &dyn Fn(&std::path::Path) -> bool) -> Vec<String> {
        let mut messages = Vec::new();
        for path in self.paths.iter().filter(|path| !keep(path)) {
            let Ok(metadata) = path.symlink_metadata() else { continue };
            let removed = if metadata.is_dir() { fs::remove_dir_all(path) } else { fs::remove_file(path) };
            messages.push(match removed {
                Ok(()) => format!("removed {} (a protected path the command created)", path.display()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => format!("could not remove {} (a protected path the command created): {e}", path.display()),
            });
        }
        messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_removes_created_files_and_directories_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join(".mcp.json");
        let hooks = dir.path().join(".git/hooks");
        let untouched = dir.path().join(".spine");
        let policy = Policy { write_deny: vec![file.clone(), hooks.clone(), untouched.clone()], ..Policy::default() };
        let guard = MissingGuard::before(&policy);
        assert_eq!(guard.paths().len(), 3);
        fs::write(&file, "{}").expect("write");
        fs::create_dir_all(hooks.join("x")).expect("mkdir");
        fs::write(hooks.join("pre-commit"), "evil").expect("write");
        let messages = guard.undo();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].starts_with("removed "), "{messages:?}");
        assert!(!file.exists() && !hooks.exists() && !untouched.exists());
        assert!(dir.path().join(".git").is_dir(), "only the protected path goes");
    }
}
