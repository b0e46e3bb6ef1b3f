//! `--fork-session`: with `--resume` or `--continue`, the conversation goes on under a new
//! session id.
//!
//! Contract:
//! - The resumed transcript is copied to `<new id>.jsonl` in the same project folder, every
//!   line's `sessionId` rewritten to the new id (other lines as they are); the run then appends
//!   to the copy. The original transcript is not touched, and its `<id>.env` and subagent
//!   transcripts are not copied. With `--no-session-persistence` nothing is written.
//! - Without `--resume` or `--continue` the flag changes nothing, as in Claude Code (a note
//!   says so with `-v`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use spine_core::session::{LoadedSession, new_session_id};

use crate::cli::RunArgs;
use crate::error::config;
use crate::session_open::ChosenSession;

/// Whether `args` fork a resumed session.
pub(crate) fn wanted(args: &RunArgs) -> bool {
    args.host.fork_session && (args.resume.is_some() || args.continue_session)
}

/// The `-v` note of a `--fork-session` that forks nothing.
pub(crate) fn note_unused(args: &RunArgs) {
    if args.host.fork_session && !wanted(args) && args.verbose {
        eprintln!("note: --fork-session does nothing without --resume or --continue");
    }
}

/// The session `old_id` (transcript `old_path`, read back as `loaded`) continued as a new
/// session (see the module documentation).
pub(crate) fn fork(
    args: &RunArgs,
    old_id: &str,
    old_path: &Path,
    loaded: LoadedSession,
) -> anyhow::Result<ChosenSession> {
    let id = new_session_id();
    let transcript = sibling(old_path, &id);
    if !args.no_session_persistence {
        copy_transcript(old_path, &transcript, old_id, &id).map_err(|e| {
            config(format!("--fork-session: cannot copy {} to {}: {e}", old_path.display(), transcript.display()))
        })?;
    }
    if args.verbose {
        eprintln!("note: session {old_id} forked as {id}");
    }
    Ok(ChosenSession { id, transcript, resumed: Some(loaded) })
}

/// `<id>.jsonl` next to `path`.
fn sibling(path: &Path, id: &str) -> PathBuf {
    path.with_file_name(format!("{id}.jsonl"))
}

/// Copies the transcript `from` to `to` (which must not exist), `sessionId` `old` becoming
/// `new` on every line that is a JSON object.
fn copy_transcript(from: &Path, to: &Path, old: &str, new: &str) -> std::io::Result<()> {
    let text = std::fs::read_to_string(from)?;
    let mut copied = String::with_capacity(text.len());
    for line in text.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(mut map)) if map.get("sessionId").and_then(Value::as_str) == Some(old) => {
                map.insert("sessionId".to_owned(), Value::String(new.to_owned()));
                copied.push_str(&Value::Object(map).to_string());
            }
            _ => copied.push_str(line),
        }
        copied.push('\n');
    }
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(to)?;
    std::io::Write::write_all(&mut file, copied.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_carries_every_line_under_the_new_session_id_and_the_original_is_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let from = dir.path().join("old.jsonl");
        let original = "{\"sessionId\":\"old\",\"type\":\"user\",\"uuid\":\"u1\"}\nnot json\n{\"type\":\"summary\"}\n";
        std::fs::write(&from, original).expect("write");
        let to = sibling(&from, "new");
        copy_transcript(&from, &to, "old", "new").expect("copies");
        assert_eq!(std::fs::read_to_string(&from).expect("read"), original);
        let lines: Vec<String> = std::fs::read_to_string(&to).expect("read").lines().map(str::to_owned).collect();
        let first: Value = serde_json::from_str(&lines[0]).expect("json");
        assert_eq!(first["sessionId"], "new");
        assert_eq!(first["uuid"], "u1");
        assert_eq!(lines[1], "not json");
        assert_eq!(lines[2], "{\"type\":\"summary\"}");
        assert!(copy_transcript(&from, &to, "old", "new").is_err(), "an existing file is never overwritten");
    }
}
