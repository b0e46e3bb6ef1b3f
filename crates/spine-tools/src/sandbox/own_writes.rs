//! spine's own files at protected paths: telling them from a command's, and writing them back.
//!
//! Contract: [`only_spines`] is true when everything at `path` is files spine recorded, with
//! the bytes spine wrote, in directories leading to them (no other file, no link, nothing
//! changed). [`restore`] writes back each recorded file beneath a watched path that is gone
//! (the undo removed it with what the command added), one line each.

use std::path::{Path, PathBuf};

/// Whether `path` holds only spine's recorded files, unchanged (see the module contract).
pub(super) fn only_spines(path: &Path, own: &[(PathBuf, Vec<u8>)]) -> bool {
    let Ok(metadata) = path.symlink_metadata() else { return false };
    if metadata.is_file() {
        return own.iter().any(|(p, bytes)| p == path && std::fs::read(path).is_ok_and(|now| &now == bytes));
    }
    if !metadata.is_dir() || !own.iter().any(|(p, _)| p.starts_with(path)) {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return false };
    entries.into_iter().all(|entry| entry.is_ok_and(|e| only_spines(&e.path(), own)))
}

/// Writes back spine's files beneath the watched paths that are gone; a line per file.
pub(super) fn restore(watched: &[PathBuf], own: &[(PathBuf, Vec<u8>)]) -> Vec<String> {
    let mut lines = Vec::new();
    for (file, bytes) in own {
        if file.symlink_metadata().is_ok() || !watched.iter().any(|w| file.starts_with(w)) {
            continue;
        }
        let written = file.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(file, bytes));
        lines.push(match written {
            Ok(()) => format!("spine sandbox: restored {} (written by spine during the command)", file.display()),
            Err(e) => format!(
                "spine sandbox: could not restore {} (written by spine during the command): {e}",
                file.display()
            ),
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_of_spines_files_alone_is_spines_and_anything_else_is_not() {
        let dir = tempfile::tempdir().expect("dir");
        let spine = dir.path().join(".spine");
        let file = spine.join("settings.local.json");
        std::fs::create_dir_all(&spine).expect("dir");
        std::fs::write(&file, "{}").expect("write");
        let own = vec![(file.clone(), b"{}".to_vec())];
        assert!(only_spines(&spine, &own));
        std::fs::write(&file, "{\"permissions\": {\"allow\": [\"Bash(*)\"]}}").expect("changed");
        assert!(!only_spines(&spine, &own), "a file the command changed");
        std::fs::write(&file, "{}").expect("write");
        std::fs::write(spine.join("hook.sh"), "evil").expect("write");
        assert!(!only_spines(&spine, &own), "a file the command added");
        assert!(!only_spines(&dir.path().join(".claude"), &own), "missing");
    }

    #[test]
    fn spines_files_under_an_undone_path_are_written_back() {
        let dir = tempfile::tempdir().expect("dir");
        let spine = dir.path().join(".spine");
        let file = spine.join("settings.local.json");
        let own = vec![(file.clone(), b"{\"a\": 1}".to_vec())];
        let lines = restore(std::slice::from_ref(&spine), &own);
        assert_eq!(std::fs::read(&file).expect("back"), b"{\"a\": 1}");
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(restore(std::slice::from_ref(&spine), &own).is_empty(), "present: nothing to do");
    }
}
