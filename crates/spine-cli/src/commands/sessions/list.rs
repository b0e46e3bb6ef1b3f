//! `spine sessions list` and the `--resume` picker: the summaries of a project's sessions (every
//! project's with `--all`), newest first.
//!
//! Contract: the sessions are those [`Folder::session_ids`] finds (regular `<id>.jsonl` files
//! in real folders; links are skipped with a warning, never read), each opened through its
//! folder's descriptor and read once by [`summarise`]. Without `--all` a transcript whose `cwd`
//! names another directory (a folder shared by punctuation) is left out. The order is the last
//! activity, newest first, then the id. Text prints one row a session; JSON one array of
//! [`Summary::json`]. A file that cannot be read is listed with its `error`, never fatal.

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::folders::Folder;
use super::summary::{Summary, summarise};
use crate::cli::{OutputFormat, SessionsListArgs};
use crate::commands::context;
use crate::error::exit;
use crate::out;

/// Runs `spine sessions list`.
pub(super) fn list(home: &Path, args: SessionsListArgs) -> anyhow::Result<u8> {
    let mut summaries = if args.all {
        Folder::all(home)?.iter().flat_map(|f| summaries_in(f, None)).collect::<Vec<_>>()
    } else {
        let project = context::project_dir(args.cwd.as_ref())?;
        Folder::of_project(home, &project)?.map(|f| summaries_in(&f, Some(&project))).unwrap_or_default()
    };
    newest_first(&mut summaries);
    print_list(&summaries, args.output_format, args.all);
    Ok(exit::OK)
}

/// Sorts by last activity, newest first, then by id.
pub(super) fn newest_first(summaries: &mut [Summary]) {
    summaries.sort_by(|a, b| b.last_ms.cmp(&a.last_ms).then_with(|| b.id.cmp(&a.id)));
}

/// The summaries of the sessions in `folder` (those of another directory left out when
/// `project` is given and the transcript names its `cwd`).
pub(super) fn summaries_in(folder: &Folder, project: Option<&Path>) -> Vec<Summary> {
    let mut out = Vec::new();
    for id in folder.session_ids() {
        let name = format!("{id}.jsonl");
        let file = match folder.open_file(&name) {
            Ok(Some(file)) => Ok(file),
            // Gone, or swapped for a link (warned), since the folder was listed.
            Ok(None) => continue,
            Err(e) => Err(e),
        };
        let summary = summarise(&id, folder.path().join(&name), file);
        if let (Some(project), Some(cwd)) = (project, &summary.cwd)
            && Path::new(cwd) != project
        {
            continue;
        }
        out.push(summary);
    }
    out
}

fn print_list(summaries: &[Summary], format: OutputFormat, all: bool) {
    match format {
        OutputFormat::Json | OutputFormat::StreamJson => {
            let _ = out::line(Value::Array(summaries.iter().map(Summary::json).collect()));
        }
        OutputFormat::Text => {
            if summaries.is_empty() {
                let _ = out::line("no sessions");
                return;
            }
            for s in summaries {
                let cost = s.cost().map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"));
                let mut line = format!(
                    "{}  {}  {}  {} turn{}  {}  {}",
                    s.id,
                    s.started.as_deref().unwrap_or("-"),
                    s.model.as_deref().unwrap_or("-"),
                    s.turns,
                    if s.turns == 1 { "" } else { "s" },
                    cost,
                    s.ended.as_deref().unwrap_or("-"),
                );
                if all {
                    line.push_str(&format!("  {}", s.cwd.as_deref().unwrap_or("-")));
                }
                if let Some(prompt) = &s.first_prompt {
                    line.push_str(&format!("  {prompt:?}"));
                }
                if let Some(error) = &s.error {
                    line.push_str(&format!("  [error: {error}]"));
                }
                if out::line(line) == out::Stdout::Closed {
                    return;
                }
            }
        }
    }
}

/// The most sessions the `--resume` picker offers.
const PICKER_SESSIONS: usize = 20;

/// `--resume` without an id, on a terminal: lists this project's sessions, newest first (the
/// first [`PICKER_SESSIONS`]), on stderr and reads the number of the one to resume from stdin.
/// `Ok(None)` when there is none or the answer picks none.
pub fn pick(home: &Path, project: &Path) -> anyhow::Result<Option<String>> {
    pick_other(home, project, None)
}

/// [`pick`] without the session `current` (`/resume` in a chat never offers the session it is
/// in).
pub fn pick_other(home: &Path, project: &Path, current: Option<&str>) -> anyhow::Result<Option<String>> {
    use std::io::Write;
    let mut summaries = Folder::of_project(home, project)?.map(|f| summaries_in(&f, Some(project))).unwrap_or_default();
    newest_first(&mut summaries);
    summaries.retain(|s| s.error.is_none() && Some(s.id.as_str()) != current);
    summaries.truncate(PICKER_SESSIONS);
    if summaries.is_empty() {
        return Ok(None);
    }
    let mut err = std::io::stderr().lock();
    for (n, s) in summaries.iter().enumerate() {
        let prompt = s.first_prompt.as_deref().unwrap_or("-");
        let _ = writeln!(
            err,
            "{:>3}) {}  {}  {} turn{}  {prompt}",
            n + 1,
            s.last.as_deref().unwrap_or("-"),
            s.model.as_deref().unwrap_or("-"),
            s.turns,
            if s.turns == 1 { "" } else { "s" },
        );
    }
    let _ = write!(err, "Resume which session? [1-{}] ", summaries.len());
    let _ = err.flush();
    drop(err);
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| summaries.get(i))
        .map(|s| s.id.clone()))
}
