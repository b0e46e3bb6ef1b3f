//! How `Bash` learns the directory a command left its shell in, so the next command starts
//! there ([`spine_core::watch::ShellCwd`]).
//!
//! The command runs after `trap 'pwd -P >| FILE' EXIT; ` on the same line: the shell writes its
//! physical directory to a private temporary file (created `0600` by `mkstemp`, removed after
//! the command; in the sandbox's private `TMPDIR` when the command is confined, since the
//! shared temporary directory is read-only there) whenever it exits — at the end, on `exit N`, under `set -e` — whatever the
//! command prints on stdout and stderr. The command keeps its own line numbers, `$0` and
//! arguments. The directory is not learnt (the shell stays where it started) when the command
//! replaces its own `EXIT` trap, `exec`s another program, is killed, or does not parse.
//!
//! A directory outside the workspace (or gone) sends the shell back to the project directory,
//! and the response's `stderr` ends with Claude Code's line `Shell cwd was reset to DIR`.

use std::path::{Path, PathBuf};

use spine_core::tool::ToolContext;
use spine_core::watch::Settled;

/// The temporary file a command's shell writes its directory to; removed when dropped.
pub(crate) struct CwdReport {
    path: PathBuf,
}

impl CwdReport {
    /// A new private file in `dir` (default: the temporary directory); `None` when none can be
    /// created (the command then runs without reporting, and the shell stays where it started).
    pub(crate) fn create(dir: Option<&Path>) -> Option<Self> {
        let template = dir.map_or_else(std::env::temp_dir, Path::to_path_buf).join("spine-cwd-XXXXXX");
        let (fd, path) = nix::unistd::mkstemp(&template).ok()?;
        drop(fd);
        Some(CwdReport { path })
    }

    /// `command`, preceded on its first line by the trap that reports the shell's directory.
    pub(crate) fn wrap(&self, command: &str) -> String {
        let report = format!("pwd -P 2>/dev/null >| {}", quote(&self.path.to_string_lossy()));
        format!("trap {} EXIT; {command}", quote(&report))
    }

    /// The directory the shell reported, if it did.
    pub(crate) fn read(&self) -> Option<PathBuf> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let line = text.trim_end_matches(['\n', '\r']);
        (!line.is_empty()).then(|| PathBuf::from(line))
    }
}

impl Drop for CwdReport {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Where a command starts: the shell's directory, or — when it is gone since the last command —
/// the project directory, with the note saying so.
pub(crate) fn start(ctx: &ToolContext) -> (PathBuf, Option<String>) {
    match &ctx.shell_cwd {
        Some(shell) if !ctx.cwd.is_dir() => {
            let root = ctx.workspace.root().to_path_buf();
            shell.set(root.clone());
            let note = reset_note(&root);
            (root, Some(note))
        }
        _ => (ctx.cwd.clone(), None),
    }
}

/// Records where a command that started in `started` left the shell; the note to append to
/// `stderr` when the shell was sent back to the project directory.
pub(crate) fn settle(ctx: &ToolContext, started: &Path, reported: Option<&Path>) -> Option<String> {
    let shell = ctx.shell_cwd.as_ref()?;
    match shell.settle(&ctx.workspace, started, reported) {
        Settled::Same | Settled::Moved(_) => None,
        Settled::Reset(dir) => Some(reset_note(&dir)),
    }
}

fn reset_note(dir: &Path) -> String {
    format!("Shell cwd was reset to {}", dir.display())
}

/// `stderr` with the reset note as its last line (Claude Code trims it first).
pub(crate) fn with_note(stderr: &str, note: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() { note.to_owned() } else { format!("{trimmed}\n{note}") }
}

/// `text` as one single-quoted shell word.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_the_shell_and_the_note_ends_stderr() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(with_note("", "Shell cwd was reset to /p"), "Shell cwd was reset to /p");
        assert_eq!(with_note("oops\n", "Shell cwd was reset to /p"), "oops\nShell cwd was reset to /p");
    }

    #[test]
    fn the_report_file_is_private_and_removed_and_the_trap_keeps_the_first_line() {
        let report = CwdReport::create(None).expect("temporary file");
        let path = report.path.clone();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(report.read(), None, "nothing reported yet");
        let wrapped = report.wrap("cd sub");
        assert!(wrapped.starts_with("trap ") && wrapped.ends_with(" EXIT; cd sub"), "{wrapped}");
        assert!(!wrapped.contains('\n'), "the command keeps its line numbers");
        std::fs::write(&path, "/work/sub\n").expect("write");
        assert_eq!(report.read(), Some(PathBuf::from("/work/sub")));
        drop(report);
        assert!(!path.exists());
    }
}
