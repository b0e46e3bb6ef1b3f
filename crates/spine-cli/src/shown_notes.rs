//! `-v` notes that are not news, printed once per project.
//!
//! Contract: the settings' notes (a key spine ignores, `enableAllProjectMcpServers` in a
//! project file, a plugin field spine does not apply) say the same on every run of a project
//! until its files change. [`fresh`] returns the notes not shown for this project before and
//! records the project's current notes in `$SPINE_HOME/shown-notes.json` (by project path and
//! kind): a note is printed on the first `-v` run, and again only after it went away and came
//! back (the setting changed). A store that cannot be read or written shows every note (nothing
//! is lost, only repeated). `spine hooks check` lists every note, shown or not.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The store's file name under `SPINE_HOME`.
pub(crate) const FILE: &str = "shown-notes.json";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    /// Project path → kind (`settings`, `sandbox`) → the notes shown last.
    #[serde(default)]
    projects: BTreeMap<PathBuf, BTreeMap<String, Vec<String>>>,
}

/// The notes of `kind` among `notes` not shown for `project` before; records `notes` as shown.
pub(crate) fn fresh(home: &Path, project: &Path, kind: &str, notes: &[String]) -> Vec<String> {
    let path = home.join(FILE);
    let mut store: Store = match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(store) => store,
            Err(_) => return notes.to_vec(),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Store::default(),
        Err(_) => return notes.to_vec(),
    };
    let kinds = store.projects.entry(project.to_path_buf()).or_default();
    let shown = kinds.get(kind).cloned().unwrap_or_default();
    let fresh: Vec<String> = notes.iter().filter(|n| !shown.contains(n)).cloned().collect();
    if shown.as_slice() == notes {
        return fresh;
    }
    if notes.is_empty() {
        kinds.remove(kind);
    } else {
        kinds.insert(kind.to_owned(), notes.to_vec());
    }
    if kinds.is_empty() {
        store.projects.remove(project);
    }
    if write(&path, &store).is_err() {
        return notes.to_vec();
    }
    fresh
}

/// Writes the store beside itself, then renames it over: a reader never sees half a file.
fn write(path: &Path, store: &Store) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(store).map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_fresh_once_and_again_only_after_it_went_away() {
        let home = tempfile::tempdir().expect("home");
        let (p, other) = (Path::new("/p"), Path::new("/q"));
        let notes = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(fresh(home.path(), p, "settings", &notes), notes);
        assert!(fresh(home.path(), p, "settings", &notes).is_empty());
        assert_eq!(fresh(home.path(), other, "settings", &notes), notes, "per project");
        assert_eq!(fresh(home.path(), p, "sandbox", &notes), notes, "per kind");
        assert!(fresh(home.path(), p, "settings", &notes[..1]).is_empty());
        assert_eq!(fresh(home.path(), p, "settings", &notes), ["b"], "b went away and came back");
    }

    #[test]
    fn an_unreadable_store_shows_every_note() {
        let home = tempfile::tempdir().expect("home");
        std::fs::write(home.path().join(FILE), "not json").expect("write");
        let notes = vec!["a".to_owned()];
        assert_eq!(fresh(home.path(), Path::new("/p"), "settings", &notes), notes);
        assert_eq!(fresh(home.path(), Path::new("/p"), "settings", &notes), notes);
    }
}
