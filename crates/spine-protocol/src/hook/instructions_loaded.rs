//! InstructionsLoaded: a memory file (`CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md`,
//! `AGENTS.md`, the user's `~/.claude/CLAUDE.md`, or a file one of them imports with `@path`)
//! was loaded into the session's instructions. Observe only, once per file when the session
//! starts. The matcher filters on `load_reason`.

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
    /// Why: `session_start`, or `include` for a file imported with `@path`.
    pub load_reason: String,
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
