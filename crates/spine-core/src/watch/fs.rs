//! The operating system's file watcher behind FileChanged and ConfigChange (the `notify`
//! crate: inotify on Linux, FSEvents on macOS), and the debounce of what it reports.
//!
//! Contract:
//! - A [`Target`] is a path watched for one [`Interest`]. A file is watched through its parent
//!   directory, so a file that does not exist yet, or that an editor replaces by renaming a new
//!   file over it, is still seen (a parent that does not exist is not watched); an existing
//!   directory given to FileChanged reports its direct entries; a skills directory
//!   (ConfigChange) reports everything below it.
//! - Raw events are kept per interest and path until none arrived for [`QUIET`]: a burst of
//!   writes is one change. Then it settles. A FileChanged path compares whether the file
//!   existed before the burst (known from the watch's start for a named file, else from the
//!   burst's first event) with whether it exists now: `add`, `change` or `unlink`; created and
//!   removed within one burst is nothing, and a directory is never a file change. A settings
//!   file, or a skills directory (all its files together), settles as one ConfigChange.
//! - [`OsWatcher::start`] watches a new list; dropping the watcher stops it. Changes already
//!   recorded stay in [`Changes`] until taken.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use notify::event::{ModifyKind, RenameMode};
use notify::{Event, EventKind, RecursiveMode, Watcher};

use super::config::ConfigSource;

/// How long a path must stay quiet before its change settles.
pub(crate) const QUIET: Duration = Duration::from_millis(400);

/// What a path is watched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Interest {
    /// FileChanged.
    File,
    /// ConfigChange, with the settings' source.
    Config(ConfigSource),
}

/// How much of a path is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The path itself (a file, existing or not).
    Path,
    /// The direct entries of a directory.
    Entries,
    /// Everything below a directory.
    Tree,
}

/// One path to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub path: PathBuf,
    pub interest: Interest,
    pub scope: Scope,
}

/// A settled change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// FileChanged: the file and `change`, `add` or `unlink`.
    File { path: PathBuf, event: &'static str },
    /// ConfigChange: the settings' source and the file that changed.
    Config { source: ConfigSource, path: PathBuf },
}

/// A raw event, reduced to what the debounce needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Raw {
    Created,
    Modified,
    Removed,
}

/// Which watched paths an event path concerns.
#[derive(Debug, Default)]
struct Table {
    exact: HashMap<PathBuf, Vec<Interest>>,
    dirs: Vec<(PathBuf, Scope, Interest)>,
}

impl Table {
    fn new(targets: &[Target]) -> Self {
        let mut table = Table::default();
        for t in targets {
            match t.scope {
                Scope::Path => table.exact.entry(t.path.clone()).or_default().push(t.interest),
                Scope::Entries | Scope::Tree => table.dirs.push((t.path.clone(), t.scope, t.interest)),
            }
        }
        table
    }

    /// `(interest, debounce key)` for each watched path `path` concerns: the path itself,
    /// except for a configuration tree, whose changes settle together under its root.
    fn interests(&self, path: &Path) -> Vec<(Interest, PathBuf)> {
        let mut found: Vec<(Interest, PathBuf)> =
            self.exact.get(path).into_iter().flatten().map(|i| (*i, path.to_path_buf())).collect();
        for (dir, scope, interest) in &self.dirs {
            let concerned = match scope {
                Scope::Entries => path.parent() == Some(dir.as_path()),
                Scope::Tree => path != dir && path.starts_with(dir),
                Scope::Path => false,
            };
            if concerned {
                let key = match interest {
                    Interest::Config(_) => dir.clone(),
                    Interest::File => path.to_path_buf(),
                };
                found.push((*interest, key));
            }
        }
        found
    }
}

/// A path's burst so far.
#[derive(Debug)]
struct Pending {
    /// The last path the burst touched (for a configuration tree, the file that changed).
    path: PathBuf,
    first: Raw,
    last: Instant,
}

#[derive(Debug, Default)]
struct State {
    pending: HashMap<(Interest, PathBuf), Pending>,
    /// Whether each named FileChanged file exists, as last seen.
    known: HashMap<PathBuf, bool>,
}

/// Changes recorded and not yet taken, shared with the watcher's thread.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    state: Mutex<State>,
    arrived: tokio::sync::Notify,
}

impl Changes {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, table: &Table, path: &Path, raw: Raw, now: Instant) {
        let interests = table.interests(path);
        if interests.is_empty() {
            return;
        }
        let mut state = self.lock();
        for key in interests {
            state
                .pending
                .entry(key)
                .and_modify(|p| {
                    p.path = path.to_path_buf();
                    p.last = now;
                })
                .or_insert_with(|| Pending { path: path.to_path_buf(), first: raw, last: now });
        }
        drop(state);
        self.arrived.notify_one();
    }

    /// Notes whether each named file exists when its watch starts.
    fn know(&self, targets: &[Target]) {
        let mut state = self.lock();
        state.known.clear();
        for t in targets.iter().filter(|t| t.interest == Interest::File && t.scope == Scope::Path) {
            state.known.insert(t.path.clone(), exists(&t.path));
        }
    }

    /// When the last burst recorded so far settles, if any is pending.
    pub(crate) fn settles_at(&self) -> Option<Instant> {
        self.lock().pending.values().map(|p| p.last + QUIET).max()
    }

    /// Whether a change is recorded and not taken.
    pub(crate) fn has_pending(&self) -> bool {
        !self.lock().pending.is_empty()
    }

    /// Resolves after a change is recorded (at once when one arrived since the last wait).
    pub(crate) async fn arrived(&self) {
        self.arrived.notified().await;
    }

    /// Takes the changes that settled by `now`, in path order.
    pub(crate) fn take_settled(&self, now: Instant) -> Vec<Change> {
        let mut state = self.lock();
        let mut ready: Vec<(Interest, PathBuf)> =
            state.pending.iter().filter(|(_, p)| now >= p.last + QUIET).map(|(k, _)| k.clone()).collect();
        ready.sort_by(|a, b| a.1.cmp(&b.1));
        let mut changes = Vec::new();
        for key in ready {
            let Some(p) = state.pending.remove(&key) else { continue };
            match key.0 {
                Interest::Config(source) => changes.push(Change::Config { source, path: p.path }),
                Interest::File => {
                    let now_exists = exists(&p.path);
                    let before = state.known.get(&p.path).copied().unwrap_or(p.first != Raw::Created);
                    if let Some(known) = state.known.get_mut(&p.path) {
                        *known = now_exists;
                    }
                    if now_exists && p.path.is_dir() {
                        continue;
                    }
                    if let Some(event) = file_event(before, now_exists) {
                        changes.push(Change::File { path: p.path, event });
                    }
                }
            }
        }
        changes
    }
}

/// FileChanged's `event` for a file that existed before a burst (`before`) and exists after it
/// (`after`); `None` when it came and went.
fn file_event(before: bool, after: bool) -> Option<&'static str> {
    match (before, after) {
        (false, true) => Some("add"),
        (true, true) => Some("change"),
        (true, false) => Some("unlink"),
        (false, false) => None,
    }
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The raw events of one notification.
fn raws(event: &Event) -> Vec<(PathBuf, Raw)> {
    let each = |raw: Raw| event.paths.iter().map(|p| (p.clone(), raw)).collect();
    match event.kind {
        EventKind::Access(_) => Vec::new(),
        EventKind::Create(_) => each(Raw::Created),
        EventKind::Remove(_) => each(Raw::Removed),
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => each(Raw::Removed),
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => each(Raw::Created),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if event.paths.len() == 2 => {
            vec![(event.paths[0].clone(), Raw::Removed), (event.paths[1].clone(), Raw::Created)]
        }
        EventKind::Modify(ModifyKind::Name(_)) => {
            event.paths.iter().map(|p| (p.clone(), if exists(p) { Raw::Created } else { Raw::Removed })).collect()
        }
        EventKind::Modify(_) | EventKind::Any | EventKind::Other => each(Raw::Modified),
    }
}

/// A running OS watcher; dropping it stops watching.
pub(crate) struct OsWatcher {
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for OsWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OsWatcher")
    }
}

impl OsWatcher {
    /// Watches `targets`, recording into `changes`; `None` when there is nothing to watch.
    /// The error lists what could not be watched (the rest is).
    pub(crate) fn start(targets: &[Target], changes: &Arc<Changes>) -> (Option<OsWatcher>, Option<String>) {
        let mut dirs: Vec<(PathBuf, RecursiveMode)> = Vec::new();
        for t in targets {
            let (dir, mode) = match t.scope {
                Scope::Path => match t.path.parent() {
                    Some(parent) => (parent.to_path_buf(), RecursiveMode::NonRecursive),
                    None => continue,
                },
                Scope::Entries => (t.path.clone(), RecursiveMode::NonRecursive),
                Scope::Tree => (t.path.clone(), RecursiveMode::Recursive),
            };
            match dirs.iter_mut().find(|(d, _)| *d == dir) {
                Some(entry) if mode == RecursiveMode::Recursive => entry.1 = mode,
                Some(_) => {}
                None => dirs.push((dir, mode)),
            }
        }
        dirs.retain(|(dir, _)| dir.is_dir());
        if dirs.is_empty() {
            return (None, None);
        }
        changes.know(targets);
        let table = Table::new(targets);
        let sink = Arc::clone(changes);
        let handler = move |result: notify::Result<Event>| {
            let Ok(event) = result else { return };
            let now = Instant::now();
            for (path, raw) in raws(&event) {
                sink.record(&table, &path, raw, now);
            }
        };
        let mut watcher = match notify::recommended_watcher(handler) {
            Ok(w) => w,
            Err(e) => return (None, Some(format!("cannot start the file watcher: {e}"))),
        };
        let failed: Vec<String> = dirs
            .iter()
            .filter_map(|(dir, mode)| watcher.watch(dir, *mode).err().map(|e| format!("{}: {e}", dir.display())))
            .collect();
        let error = (!failed.is_empty()).then(|| format!("cannot watch {}", failed.join(", ")));
        (Some(OsWatcher { _watcher: watcher }), error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(path: &str, interest: Interest, scope: Scope) -> Target {
        Target { path: PathBuf::from(path), interest, scope }
    }

    #[test]
    fn a_burst_settles_by_what_existed_before_and_after() {
        assert_eq!(file_event(false, true), Some("add"));
        assert_eq!(file_event(true, true), Some("change"));
        assert_eq!(file_event(true, false), Some("unlink"));
        assert_eq!(file_event(false, false), None);
    }

    #[test]
    fn paths_concern_their_targets_and_a_config_tree_settles_under_its_root() {
        let skills = Interest::Config(ConfigSource::Skills);
        let table = Table::new(&[
            target("/p/.envrc", Interest::File, Scope::Path),
            target("/p/watched", Interest::File, Scope::Entries),
            target("/s", skills, Scope::Tree),
        ]);
        assert_eq!(table.interests(Path::new("/p/.envrc")), [(Interest::File, PathBuf::from("/p/.envrc"))]);
        assert!(table.interests(Path::new("/p/.env")).is_empty(), "a sibling of a named file is not watched");
        assert_eq!(table.interests(Path::new("/p/watched/a")), [(Interest::File, PathBuf::from("/p/watched/a"))]);
        assert!(table.interests(Path::new("/p/watched/a/b")).is_empty(), "entries only, not below them");
        assert_eq!(table.interests(Path::new("/s/x/SKILL.md")), [(skills, PathBuf::from("/s"))]);
    }

    #[test]
    fn writes_within_the_quiet_period_are_one_change_and_settle_after_it() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join(".envrc");
        let targets = [Target { path: file.clone(), interest: Interest::File, scope: Scope::Path }];
        let table = Table::new(&targets);
        let changes = Changes::default();
        changes.know(&targets);
        let t0 = Instant::now();
        std::fs::write(&file, "a").expect("write");
        changes.record(&table, &file, Raw::Created, t0);
        changes.record(&table, &file, Raw::Modified, t0 + QUIET / 2);
        assert!(changes.take_settled(t0 + QUIET).is_empty(), "the burst is still going on");
        assert_eq!(changes.settles_at(), Some(t0 + QUIET / 2 + QUIET));
        let settled = changes.take_settled(t0 + QUIET * 2);
        assert_eq!(settled, [Change::File { path: file.clone(), event: "add" }]);
        assert!(!changes.has_pending());
        // The file is now known to exist: a rename over it is a change, its removal an unlink.
        changes.record(&table, &file, Raw::Created, t0);
        assert_eq!(changes.take_settled(t0 + QUIET), [Change::File { path: file.clone(), event: "change" }]);
        std::fs::remove_file(&file).expect("remove");
        changes.record(&table, &file, Raw::Removed, t0);
        assert_eq!(changes.take_settled(t0 + QUIET), [Change::File { path: file, event: "unlink" }]);
    }

    #[test]
    fn renames_read_as_the_removal_of_one_name_and_the_creation_of_the_other() {
        let mut event = Event::new(EventKind::Modify(ModifyKind::Name(RenameMode::Both)));
        event.paths = vec![PathBuf::from("/a/tmp"), PathBuf::from("/a/.env")];
        assert_eq!(raws(&event), [(PathBuf::from("/a/tmp"), Raw::Removed), (PathBuf::from("/a/.env"), Raw::Created)]);
        let access = Event::new(EventKind::Access(notify::event::AccessKind::Any)).add_path(PathBuf::from("/a/.env"));
        assert!(raws(&access).is_empty(), "reading a file is no change");
    }
}
