//! The working directory of an agent's shell: where its next `Bash` command starts.
//!
//! Contract:
//! - One [`ShellCwd`] per session's main agent (kept across the prompts of an interactive
//!   session) and one per subagent run; never a static. The runner puts it in each call's
//!   [`ToolContext`](crate::tool::ToolContext), whose `cwd` is then its current value.
//! - A shell tool that learns the directory a command ended in calls [`ShellCwd::settle`]: an
//!   existing directory inside one of the workspace's roots (the project and the added
//!   directories) is kept for the next command; anything else — outside every root, deleted,
//!   unreadable — sends the shell back to the project directory (the primary root), and the
//!   tool tells the model (`Shell cwd was reset to …`, as Claude Code does).
//! - Directories are compared by their canonical form, so `/tmp/x` and the physical path
//!   `pwd -P` prints for it are the same directory.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::workspace::Workspace;

/// Where an agent's next shell command starts (see the module documentation).
#[derive(Debug)]
pub struct ShellCwd {
    current: Mutex<PathBuf>,
}

/// What [`ShellCwd::settle`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The shell is where it started.
    Same,
    /// The shell moved to this directory (inside the workspace).
    Moved(PathBuf),
    /// The command left the shell outside the workspace (or in a directory that is gone): it
    /// is back in this directory, the project's.
    Reset(PathBuf),
}

impl ShellCwd {
    /// A shell starting in `start`.
    pub fn new(start: PathBuf) -> Self {
        ShellCwd { current: Mutex::new(start) }
    }

    /// The directory the next command starts in.
    pub fn get(&self) -> PathBuf {
        self.current.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Sets the directory the next command starts in.
    pub fn set(&self, dir: PathBuf) {
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = dir;
    }

    /// Records where a command that started in `started` left the shell: `reported` is the
    /// directory the shell printed at its exit (`None` when it did not get to print one: it
    /// was killed, or replaced itself with `exec`).
    pub fn settle(&self, workspace: &Workspace, started: &Path, reported: Option<&Path>) -> Settled {
        let decided = decide(workspace, started, reported);
        match &decided {
            Settled::Same => {}
            Settled::Moved(dir) | Settled::Reset(dir) => self.set(dir.clone()),
        }
        decided
    }
}

/// The rule of [`ShellCwd::settle`], without the cell.
fn decide(workspace: &Workspace, started: &Path, reported: Option<&Path>) -> Settled {
    let inside = |dir: &Path| -> Option<PathBuf> {
        let canonical = std::fs::canonicalize(dir).ok()?;
        (canonical.is_dir() && workspace.contains(&canonical)).then_some(canonical)
    };
    let start = inside(started);
    let end = match reported {
        Some(dir) => inside(dir),
        None => start.clone(),
    };
    match (start, end) {
        (Some(a), Some(b)) if a == b => Settled::Same,
        (_, Some(b)) => Settled::Moved(b),
        (_, None) => Settled::Reset(workspace.root().to_path_buf()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
        let root = tempfile::tempdir().expect("root");
        let outside = tempfile::tempdir().expect("outside");
        std::fs::create_dir(root.path().join("sub")).expect("sub");
        let workspace = Workspace::new(root.path()).expect("workspace");
        (root, outside, workspace)
    }

    #[test]
    fn a_directory_inside_the_workspace_is_kept_and_the_same_one_is_no_move() {
        let (_root, _outside, ws) = fixture();
        let start = ws.root().to_path_buf();
        let cwd = ShellCwd::new(start.clone());
        let sub = start.join("sub");
        assert_eq!(cwd.settle(&ws, &start, Some(&sub)), Settled::Moved(sub.clone()));
        assert_eq!(cwd.get(), sub);
        // The same directory under another spelling is no move.
        let spelled = start.join("sub/../sub");
        assert_eq!(cwd.settle(&ws, &sub, Some(&spelled)), Settled::Same);
        assert_eq!(cwd.get(), sub);
        // A command that did not report leaves the shell where it started.
        assert_eq!(cwd.settle(&ws, &sub, None), Settled::Same);
    }

    #[test]
    fn outside_every_root_or_gone_resets_to_the_project_directory() {
        let (_root, outside, ws) = fixture();
        let start = ws.root().join("sub");
        let cwd = ShellCwd::new(start.clone());
        let reset = Settled::Reset(ws.root().to_path_buf());
        assert_eq!(cwd.settle(&ws, &start, Some(outside.path())), reset);
        assert_eq!(cwd.get(), ws.root());
        assert_eq!(cwd.settle(&ws, ws.root(), Some(&ws.root().join("missing"))), reset);
        // The directory the shell was in was deleted by the command.
        std::fs::remove_dir(&start).expect("remove");
        assert_eq!(cwd.settle(&ws, &start, None), reset);
    }

    #[test]
    fn an_added_directory_is_inside_the_workspace() {
        let root = tempfile::tempdir().expect("root");
        let added = tempfile::tempdir().expect("added");
        let ws = Workspace::with_roots(root.path(), [added.path()]).expect("workspace");
        let cwd = ShellCwd::new(ws.root().to_path_buf());
        let canonical = std::fs::canonicalize(added.path()).expect("canonical");
        assert_eq!(cwd.settle(&ws, ws.root(), Some(added.path())), Settled::Moved(canonical));
    }
}
