//! What a session watches while it runs: its shell's working directory (CwdChanged), files
//! (FileChanged) and its configuration (ConfigChange), as Claude Code 2.1 does.
//!
//! A [`SessionWatch`] belongs to one session: `spine run` makes one per run, an interactive
//! session one for all its prompts (until `/clear`), and a run given none makes its own.
//! Subagents have their own shell directory and watch nothing else. Contract:
//!
//! - **The shell's directory** ([`ShellCwd`], in `cwd`): shell tools start where the last
//!   command left the shell, inside the workspace. The runner compares it with the directory
//!   hooks last heard of after every tool call; a difference fires CwdChanged, and from then on
//!   hooks' `cwd` (and command hooks' working directory) is the new directory.
//! - **Files**: once the runner arms the watch (after SessionStart, when FileChanged hooks
//!   exist), it watches the literal names of FileChanged matchers (`.envrc|.env`, split on `|`)
//!   in the shell's current directory (an absolute name as it is), plus the dynamic list: the
//!   `watchPaths` of SessionStart, replaced by those of CwdChanged at each directory change
//!   (none answered: an empty list) and by those of FileChanged when one answers some.
//! - **Configuration**: when ConfigChange hooks exist, the settings files the session read or
//!   looked for (a file created later counts) and its skills directories ([`ConfigFile`]).
//! - Changes are debounced (`fs`) and wait in the watch until the runner takes them at a safe
//!   point — before a model request, never during a tool call's hooks — or, in an interactive
//!   session, while it waits at its prompt ([`SessionWatch::ready`]). Dropping the watch stops
//!   the OS watcher.

mod config;
mod cwd;
mod fs;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

pub use config::{ConfigFile, ConfigSource};
pub use cwd::{Settled, ShellCwd};
pub(crate) use fs::Change;

use crate::hooks::Matcher;
use fs::{Changes, Interest, OsWatcher, QUIET, Scope, Target};

/// What one session watches (see the module documentation).
#[derive(Debug)]
pub struct SessionWatch {
    shell: Arc<ShellCwd>,
    changes: Arc<Changes>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The directory hooks last heard of (CwdChanged's `old_cwd`).
    seen: PathBuf,
    config: Vec<ConfigFile>,
    /// What to watch, once armed.
    plan: Option<Plan>,
    /// What is watched now.
    targets: Vec<Target>,
    watcher: Option<OsWatcher>,
    /// Settings files spine itself wrote (a saved permission update), and when.
    written: Vec<(PathBuf, Instant)>,
}

/// How long after spine wrote a settings file a change of it is taken for spine's own.
const OWN_WRITE: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug, Clone, Default)]
struct Plan {
    /// Whether FileChanged hooks exist.
    files: bool,
    /// Whether ConfigChange hooks exist.
    config: bool,
    /// The literal names of the FileChanged matchers.
    names: Vec<String>,
    /// The paths hooks answered (`watchPaths`).
    dynamic: Vec<PathBuf>,
}

impl SessionWatch {
    /// A watch whose shell starts in `cwd`, watching nothing until a run arms it.
    pub fn new(cwd: PathBuf) -> Self {
        SessionWatch {
            shell: Arc::new(ShellCwd::new(cwd.clone())),
            changes: Arc::new(Changes::default()),
            state: Mutex::new(State {
                seen: cwd,
                config: Vec::new(),
                plan: None,
                targets: Vec::new(),
                watcher: None,
                written: Vec::new(),
            }),
        }
    }

    /// The same watch, also watching these settings files and skills directories for
    /// ConfigChange (when ConfigChange hooks exist).
    pub fn with_config(self, files: Vec<ConfigFile>) -> Self {
        self.lock().config = files;
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The shell's working directory, for tool contexts.
    pub fn shell_cwd(&self) -> Arc<ShellCwd> {
        Arc::clone(&self.shell)
    }

    /// Where the next shell command starts.
    pub fn cwd(&self) -> PathBuf {
        self.shell.get()
    }

    /// The directory hooks have heard of (the session's, until CwdChanged fired).
    pub fn hooks_cwd(&self) -> PathBuf {
        self.lock().seen.clone()
    }

    /// `(old, new)` when the shell moved since hooks last heard of its directory; from then
    /// on they have heard of the new one.
    pub(crate) fn cwd_moved(&self) -> Option<(PathBuf, PathBuf)> {
        let now = self.shell.get();
        let mut state = self.lock();
        if same_dir(&state.seen, &now) {
            return None;
        }
        let old = std::mem::replace(&mut state.seen, now.clone());
        Some((old, now))
    }

    /// Starts watching for the hooks that exist: FileChanged (`files`, with its matchers'
    /// literal `names`) and ConfigChange (`config`). `dynamic`, when given, replaces the paths
    /// hooks answered (SessionStart's). Arming again (a later prompt) keeps the dynamic list
    /// unless given one. Returns a warning when something could not be watched.
    pub(crate) fn arm(
        &self,
        files: bool,
        config: bool,
        names: Vec<String>,
        dynamic: Option<Vec<PathBuf>>,
    ) -> Option<String> {
        let mut state = self.lock();
        let kept = state.plan.take().map(|p| p.dynamic).unwrap_or_default();
        state.plan = Some(Plan { files, config, names, dynamic: dynamic.unwrap_or(kept) });
        self.rewatch(&mut state)
    }

    /// Replaces the paths hooks answered (`watchPaths`); nothing before the watch is armed.
    pub(crate) fn replace_dynamic(&self, paths: Vec<PathBuf>) -> Option<String> {
        let mut state = self.lock();
        let plan = state.plan.as_mut()?;
        plan.dynamic = paths;
        self.rewatch(&mut state)
    }

    /// Whether the runner armed the watch.
    pub fn is_armed(&self) -> bool {
        self.lock().plan.is_some()
    }

    /// Watches what the plan names now (the matchers' names in the shell's current directory);
    /// nothing when that did not change.
    fn rewatch(&self, state: &mut State) -> Option<String> {
        let targets = match &state.plan {
            Some(plan) => targets(plan, &self.shell.get(), &state.config),
            None => Vec::new(),
        };
        if targets == state.targets && (state.watcher.is_some() || targets.is_empty()) {
            return None;
        }
        state.watcher = None;
        let (watcher, error) = OsWatcher::start(&targets, &self.changes);
        state.watcher = watcher;
        state.targets = targets;
        error
    }

    /// Waits until the changes recorded so far settled (bounded: a file written without pause
    /// does not hold the caller more than twice the quiet period).
    pub(crate) async fn settled(&self) {
        let deadline = Instant::now() + QUIET * 2;
        while let Some(at) = self.changes.settles_at() {
            let now = Instant::now();
            if at <= now {
                return;
            }
            tokio::time::sleep_until(at.min(deadline).into()).await;
            if at >= deadline {
                return;
            }
        }
    }

    /// Notes that spine itself wrote a settings file (a saved permission update): its change
    /// in the next few seconds fires no ConfigChange, as Claude Code ignores its own writes.
    pub fn written_by_spine(&self, path: &Path) {
        let now = Instant::now();
        let mut state = self.lock();
        state.written.retain(|(_, at)| now.duration_since(*at) < OWN_WRITE);
        state.written.push((path.to_path_buf(), now));
    }

    /// Takes the changes that settled, in path order (spine's own settings writes left out).
    pub(crate) fn take(&self) -> Vec<Change> {
        let now = Instant::now();
        let mut changes = self.changes.take_settled(now);
        let mut state = self.lock();
        state.written.retain(|(_, at)| now.duration_since(*at) < OWN_WRITE);
        changes.retain(|change| match change {
            Change::Config { path, .. } => match state.written.iter().position(|(w, _)| same_dir(w, path)) {
                Some(i) => {
                    state.written.remove(i);
                    false
                }
                None => true,
            },
            Change::File { .. } => true,
        });
        changes
    }

    /// Whether a change is recorded and not taken yet.
    pub fn has_pending(&self) -> bool {
        self.changes.has_pending()
    }

    /// Resolves when a recorded change has settled and waits to be fired (for a session waiting
    /// at its prompt; [`crate::runner::Agent::fire_watched`] fires it).
    pub async fn ready(&self) {
        loop {
            match self.changes.settles_at() {
                Some(at) if at <= Instant::now() => return,
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => self.changes.arrived().await,
            }
        }
    }
}

/// The literal file names a FileChanged matcher names, as Claude Code reads them: the matcher
/// split on `|` (`.envrc|.env`); a match-everything matcher names none.
pub fn matcher_names(matcher: &Matcher) -> Vec<String> {
    match matcher {
        Matcher::All => Vec::new(),
        Matcher::Names(names) => names.clone(),
        Matcher::Regex(re) => {
            re.as_str().split('|').map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).collect()
        }
    }
}

/// What a plan watches with the shell in `cwd`.
fn targets(plan: &Plan, cwd: &Path, config: &[ConfigFile]) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    let mut add = |t: Target| {
        if !out.contains(&t) {
            out.push(t);
        }
    };
    if plan.files {
        for name in &plan.names {
            let path = if Path::new(name).is_absolute() { PathBuf::from(name) } else { cwd.join(name) };
            add(Target { path, interest: Interest::File, scope: Scope::Path });
        }
        for path in plan.dynamic.iter().filter(|p| p.is_absolute()) {
            let scope = if path.is_dir() { Scope::Entries } else { Scope::Path };
            add(Target { path: path.clone(), interest: Interest::File, scope });
        }
    }
    if plan.config {
        for file in config {
            let scope = if file.source == ConfigSource::Skills { Scope::Tree } else { Scope::Path };
            add(Target { path: file.path.clone(), interest: Interest::Config(file.source), scope });
        }
    }
    out
}

/// Whether two spellings name one directory (or file).
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
}

#[cfg(test)]
mod tests;
