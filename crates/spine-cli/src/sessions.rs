//! Finding sessions for `--continue`: the most recently written transcript under
//! `$SPINE_HOME/sessions/` whose working directory is this project. Only files named
//! `<session id>.jsonl` (ids as spine generates them) are considered; a transcript's
//! directory is the `cwd` of its first record that has one, so the lookup reads a few lines of
//! each file, never a whole transcript.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::SystemTime;

use spine_core::session::check_session_id;

/// How many leading lines of a transcript are searched for its `cwd`.
const CWD_LINES: usize = 8;

/// The id of the most recently modified session whose `cwd` is `project`, if any.
pub fn latest_for_project(sessions_dir: &Path, project: &Path) -> std::io::Result<Option<String>> {
    let entries = match std::fs::read_dir(sessions_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut candidates: Vec<(SystemTime, String, std::path::PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry?;
        let path = entry.path();
        let Some(id) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        if check_session_id(id).is_err() {
            continue;
        }
        let modified = entry.metadata().and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
        candidates.push((modified, id.to_owned(), path));
    }
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    for (_, id, path) in candidates {
        if transcript_cwd(&path).is_some_and(|cwd| Path::new(&cwd) == project) {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// The `cwd` of the first of the leading records that has one.
fn transcript_cwd(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    BufReader::new(file).lines().take(CWD_LINES).map_while(Result::ok).find_map(|line| {
        let record: serde_json::Value = serde_json::from_str(&line).ok()?;
        record.get("cwd")?.as_str().map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_session_of_the_project_is_found_and_others_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sessions = dir.path().join("sessions");
        std::fs::create_dir_all(&sessions).expect("dir");
        let a = "123e4567-e89b-42d3-a456-426614174000";
        let b = "123e4567-e89b-42d3-a456-426614174001";
        let write = |id: &str, cwd: &str, age_s: u64| {
            let line = serde_json::json!({"type": "session", "session_id": id, "cwd": cwd, "model": "m"});
            let path = sessions.join(format!("{id}.jsonl"));
            std::fs::write(&path, format!("{line}\n")).expect("write");
            let when = SystemTime::now() - std::time::Duration::from_secs(age_s);
            std::fs::File::options().write(true).open(&path).and_then(|f| f.set_modified(when)).expect("mtime");
        };
        let c = "123e4567-e89b-42d3-a456-426614174002";
        write(c, "/work/p", 100);
        write(a, "/work/p", 10);
        write(b, "/work/other", 1);
        std::fs::write(sessions.join("not-an-id.jsonl"), "{\"cwd\": \"/work/p\"}\n").expect("write");
        assert_eq!(latest_for_project(&sessions, Path::new("/work/p")).expect("read"), Some(a.to_owned()));
        assert_eq!(latest_for_project(&sessions, Path::new("/work/none")).expect("read"), None);
        assert_eq!(latest_for_project(&dir.path().join("missing"), Path::new("/work/p")).expect("read"), None);
    }
}
