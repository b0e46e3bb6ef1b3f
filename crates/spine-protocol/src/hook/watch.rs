//! CwdChanged and FileChanged: the session's working directory changed (a `cd` in the shell
//! tool), or a watched file changed on disk. Hooks observe, and may answer `watchPaths` (the
//! absolute paths FileChanged then watches, replacing the list hooks gave before). FileChanged's
//! matcher filters on the file's name (`.envrc|.env`); CwdChanged has no matcher.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Action, HookEvent, HookEventName};

/// Marker for the CwdChanged event.
#[derive(Debug, Clone, Copy)]
pub struct CwdChanged;

/// Marker for the FileChanged event.
#[derive(Debug, Clone, Copy)]
pub struct FileChanged;

/// CwdChanged input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CwdChangedInput {
    /// The working directory before.
    pub old_cwd: PathBuf,
    /// The working directory now.
    pub new_cwd: PathBuf,
}

/// FileChanged input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChangedInput {
    /// The absolute path of the file.
    pub file_path: PathBuf,
    /// `change`, `add` or `unlink`.
    pub event: String,
}

/// A CwdChanged or FileChanged answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WatchAction {
    /// Absolute paths FileChanged hooks watch from now on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_paths: Option<Vec<PathBuf>>,
}

impl Action for WatchAction {
    fn decision(&self) -> &'static str {
        if self.watch_paths.is_some() { "watch" } else { "observe" }
    }
    fn additional_context(&self) -> Option<&str> {
        None
    }
}

impl HookEvent for CwdChanged {
    const NAME: HookEventName = HookEventName::CwdChanged;
    type Input = CwdChangedInput;
    type Action = WatchAction;
    fn matcher_subject(_input: &Self::Input) -> Option<&str> {
        None
    }
}

impl HookEvent for FileChanged {
    const NAME: HookEventName = HookEventName::FileChanged;
    type Input = FileChangedInput;
    type Action = WatchAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        input.file_path.file_name().and_then(|n| n.to_str())
    }
}
