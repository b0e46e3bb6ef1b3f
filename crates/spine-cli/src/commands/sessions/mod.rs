//! `spine sessions list|show|rm|prune`: the sessions kept in `$SPINE_HOME/projects/` (see
//! [`crate::sessions`] for where they live), one module per command:
//!
//! - [`list`]: `list` and the `--resume` picker ([`pick`]), from the summaries of [`summary`];
//! - [`show`]: `show ID`, the conversation readable (or as JSON);
//! - [`prune`]: `rm ID` and `prune --older-than DURATION`;
//! - [`folders`]: the folder walk they share.
//!
//! Contract: only regular files named `<session id>.jsonl` / `<session id>.env` (and the
//! subagent transcripts under `<id>/subagents/`) in real folders directly under `projects/`
//! are read or removed. A symbolic link anywhere on the way (`projects/`, a project's folder,
//! a session's file or folder) is skipped with a warning naming it and never followed, so
//! nothing outside `projects/` is listed, read or removed; the link itself stays. An id is
//! checked with `check_session_id` before it names a file (a bad or unknown id exits 2).

mod folders;
mod list;
mod prune;
mod show;
mod summary;

pub use list::{pick, pick_other};

use crate::cli::SessionsCommand;
use crate::commands::context;

/// Runs `spine sessions`.
pub fn sessions(command: SessionsCommand) -> anyhow::Result<u8> {
    let home = context::spine_home()?;
    match command {
        SessionsCommand::List(args) => list::list(&home, args),
        SessionsCommand::Show(args) => show::show(&home, args),
        SessionsCommand::Rm(args) => prune::rm(&home, args),
        SessionsCommand::Prune(args) => prune::prune(&home, args),
    }
}
