//! Where sessions live: one folder per project, `$SPINE_HOME/projects/<project>/<id>.jsonl`,
//! as Claude Code keeps `~/.claude/projects/`. The folder name is the project's absolute path
//! with every character that is not an ASCII letter or digit replaced by `-` (Claude Code's
//! rule); a name over 200 characters is cut and ends with a hash of the whole path, so two long
//! paths never share a folder by truncation. Two paths that differ only in punctuation can
//! share a folder; `--continue` therefore also checks the transcript's own `cwd`.
//!
//! Only files named `<session id>.jsonl` (ids as spine generates them) are ever considered, so
//! no id given on the command line can name a file outside these folders.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use spine_core::session::check_session_id;
use spine_protocol::home::project_folder_name as folder_name;

/// How many leading lines of a transcript are searched for its `cwd`.
const CWD_LINES: usize = 8;

/// The folder of `project`'s sessions.
pub fn project_folder(home: &Path, project: &Path) -> PathBuf {
    home.join("projects").join(folder_name(project))
}

/// The transcript of session `id` of `project`.
pub fn transcript_path(home: &Path, project: &Path, id: &str) -> PathBuf {
    project_folder(home, project).join(format!("{id}.jsonl"))
}

/// The transcript of session `id`, in whichever project's folder it is.
pub fn find(home: &Path, id: &str) -> std::io::Result<Option<PathBuf>> {
    if check_session_id(id).is_err() {
        return Ok(None);
    }
    let entries = match std::fs::read_dir(home.join("projects")) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let path = entry?.path().join(format!("{id}.jsonl"));
        if path.is_file() {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// The id of the most recently modified session of `project`, if any.
pub fn latest_for_project(home: &Path, project: &Path) -> std::io::Result<Option<String>> {
    let folder = project_folder(home, project);
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut candidates: Vec<(SystemTime, String, PathBuf)> = Vec::new();
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
    fn a_project_folder_is_its_path_with_punctuation_as_dashes_like_claude_code() {
        let home = Path::new("/h");
        assert_eq!(project_folder(home, Path::new("/tmp/ccrec/proj")), Path::new("/h/projects/-tmp-ccrec-proj"));
        assert_eq!(project_folder(home, Path::new("/a/b.c_d")), Path::new("/h/projects/-a-b-c-d"));
        let long_a = PathBuf::from(format!("/{}/a", "x".repeat(300)));
        let long_b = PathBuf::from(format!("/{}/b", "x".repeat(300)));
        let (a, b) = (folder_name(&long_a), folder_name(&long_b));
        assert_ne!(a, b, "long paths that share a prefix get different folders");
        assert_eq!(a.len(), 200 + 17);
        assert_eq!(a, folder_name(&long_a), "stable");
    }

    #[test]
    fn the_latest_session_of_the_project_is_found_and_others_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path();
        let a = "123e4567-e89b-42d3-a456-426614174000";
        let b = "123e4567-e89b-42d3-a456-426614174001";
        let c = "123e4567-e89b-42d3-a456-426614174002";
        let write = |id: &str, cwd: &str, folder: &str, age_s: u64| {
            let line = serde_json::json!({"type": "system", "sessionId": id, "cwd": cwd});
            let path = transcript_path(home, Path::new(folder), id);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            std::fs::write(&path, format!("{line}\n")).expect("write");
            let when = SystemTime::now() - std::time::Duration::from_secs(age_s);
            std::fs::File::options().write(true).open(&path).and_then(|f| f.set_modified(when)).expect("mtime");
        };
        write(c, "/work/p", "/work/p", 100);
        write(a, "/work/p", "/work/p", 10);
        write(b, "/work/other", "/work/other", 1);
        // Same folder by punctuation, other directory: not this project's.
        let d = "123e4567-e89b-42d3-a456-426614174003";
        write(d, "/work-p", "/work-p", 0);
        let folder = project_folder(home, Path::new("/work/p"));
        std::fs::write(folder.join("not-an-id.jsonl"), "{\"cwd\": \"/work/p\"}\n").expect("write");
        assert_eq!(latest_for_project(home, Path::new("/work/p")).expect("read"), Some(a.to_owned()));
        assert_eq!(latest_for_project(home, Path::new("/work/none")).expect("read"), None);
        assert_eq!(find(home, b).expect("find"), Some(transcript_path(home, Path::new("/work/other"), b)));
        assert_eq!(find(home, "../x").expect("find"), None);
        assert_eq!(find(&home.join("missing"), a).expect("find"), None);
    }
}
