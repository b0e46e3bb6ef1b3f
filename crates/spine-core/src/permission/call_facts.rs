//! The facts of one call the policy decides on ([`CallFacts`]), and what the runner computes
//! for them: the shell analysis of a call ([`shell_analysis`]) and the write paths with their
//! symlinks followed ([`resolve_write_paths`]). Re-exported by [`super::policy`].

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::tool::Effect;

use super::shell::{self, ShellAnalysis};
use crate::workspace::{BoundaryError, Workspace};

/// The facts of one call the policy decides on.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The tool.
    pub tool_name: &'a str,
    /// Its effect class.
    pub effect: Effect,
    /// The frozen arguments.
    pub args: &'a Map<String, Value>,
    /// The first workspace-boundary violation among the call's paths (including
    /// [`write_paths`](CallFacts::write_paths)).
    pub boundary: Option<&'a BoundaryError>,
    /// Normalized absolute paths the call writes: for shell tools the redirection and `tee`
    /// targets (against the run's cwd), for file-editing tools the file path; each followed by
    /// its symlink-resolved form when that differs (see [`resolve_write_paths`]).
    pub write_paths: &'a [PathBuf],
    /// The analysis of a shell tool's `command`, when the caller computed it (the policy
    /// computes it itself otherwise).
    pub shell: Option<&'a ShellAnalysis>,
    /// The directory a shell command starts in (the project directory when `None`): its
    /// relative file operands resolve against it. When `None`, `git` is never a harmless
    /// command (row 10c: spine cannot tell which repository it would use).
    pub cwd: Option<&'a Path>,
    /// The workspace, for harmless shell commands (row 10c): none are without it.
    pub workspace: Option<&'a Workspace>,
}

impl<'a> CallFacts<'a> {
    /// Facts with no boundary violation, no write paths, no precomputed shell analysis, the
    /// project directory as the shell's working directory and no workspace.
    pub fn new(tool_name: &'a str, effect: Effect, args: &'a Map<String, Value>) -> Self {
        CallFacts { tool_name, effect, args, boundary: None, write_paths: &[], shell: None, cwd: None, workspace: None }
    }
}

/// The shell analysis of a call, when its tool runs a shell command.
pub fn shell_analysis(tool_name: &str, args: &Map<String, Value>) -> Option<ShellAnalysis> {
    if !shell::is_shell_tool(tool_name) {
        return None;
    }
    args.get("command").and_then(Value::as_str).map(shell::analyze)
}

/// The write paths of a call as the policy sees them, and the first boundary violation among
/// them. `targets` are absolute and lexically normal (against the run's cwd); each is resolved
/// through existing symlinks, and the resolved form is added when it differs, so a rule about
/// `secrets/**` also sees a write through a link into `secrets/`.
pub fn resolve_write_paths(
    workspace: &Workspace,
    cwd: &Path,
    targets: Vec<PathBuf>,
) -> (Vec<PathBuf>, Option<BoundaryError>) {
    let mut paths = Vec::with_capacity(targets.len());
    let mut violation = None;
    for target in targets {
        match workspace.resolve(&target.to_string_lossy(), cwd) {
            Ok(resolved) if resolved != target => {
                paths.push(target);
                paths.push(resolved);
            }
            Ok(_) => paths.push(target),
            Err(e) => {
                violation.get_or_insert(e);
                paths.push(target);
            }
        }
    }
    (paths, violation)
}
