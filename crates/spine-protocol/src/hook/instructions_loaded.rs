//! InstructionsLoaded: a memory file (`CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md`,
//! `AGENTS.md`, the user's `~/.claude/CLAUDE.md`, a rule file under `.claude/rules/`, or a file
//! one of them imports with `@path`) was loaded into the session's instructions. Observe only:
//! once per file when the session starts, and once per conditional rule file (front matter
//! `paths:`) when a tool first touches a file its globs match, with `globs` and
//! `trigger_file_path`. The matcher filters on `load_reason`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName, Observe};

/// Marker for the InstructionsLoaded event.
#[derive(Debug, Clone, Copy)]
pub struct InstructionsLoaded;

/// InstructionsLoaded input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionsLoadedInput {
    /// The file loaded.
    pub file_path: PathBuf,
    /// Whose it is: `User`, `Project` or `Local` (an import has its importer's).
    pub memory_type: String,
    /// Why: `session_start`, `include` for a file imported with `@path`, or `path_glob_match`
    /// for a conditional rule file loaded because a tool touched a matching file.
    pub load_reason: String,
    /// A conditional rule's `paths:` globs (for `path_glob_match`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub globs: Option<Vec<String>>,
    /// The file the tool touched that loaded the rule (for `path_glob_match`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger_file_path: Option<PathBuf>,
    /// The file whose `@path` imported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_file_path: Option<PathBuf>,
}

impl HookEvent for InstructionsLoaded {
    const NAME: HookEventName = HookEventName::InstructionsLoaded;
    type Input = InstructionsLoadedInput;
    type Action = Observe;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.load_reason)
    }
}
