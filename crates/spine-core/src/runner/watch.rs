//! CwdChanged, FileChanged and ConfigChange in a run ([`crate::watch`] holds what is watched).
//!
//! - [`Run::use_watch`]: a run given its session's watch starts where the session's shell is,
//!   and its hooks' `cwd` is the directory they last heard of.
//! - [`Run::arm_watch`]: after SessionStart (or at a later prompt of the session), the main
//!   run starts watching for the hooks that exist, with SessionStart's `watchPaths` (the
//!   SessionStart after a compaction replaces them when it answers some).
//! - [`Run::cwd_point`], after each tool call (or group of concurrent `Agent` calls): when the
//!   shell moved, hooks' `cwd` becomes the new directory and CwdChanged fires; in the main run
//!   its `watchPaths` (none: an empty list) replace FileChanged's dynamic list and the
//!   matchers' names are looked for in the new directory. A subagent's own shell fires it
//!   too; it watches no files.
//! - [`Run::watch_point`], before each model request: the changes that settled (waiting for a
//!   burst in progress to end, bounded) fire FileChanged, one per file in path order (an
//!   answer with `watchPaths` replaces the dynamic list), then ConfigChange. Nothing here
//!   interleaves with a call's hooks.
//! - [`Agent::fire_watched`]: the same firing while an interactive session waits at its prompt.
//!
//! ConfigChange does not reload settings: spine reads them when a session starts. Each change
//! is one line for the user saying so — or, when a hook blocked it, that the session keeps its
//! settings; a change of managed settings cannot be blocked (Claude Code's rule), and skills are
//! read again when each prompt starts whatever a hook answers.

use std::path::PathBuf;
use std::sync::Arc;

use spine_protocol::hook::{ConfigChange, ConfigChangeInput, CwdChangedInput, FileChanged, FileChangedInput};

use super::{Agent, Run, SessionRef};
use crate::hooks::events::GateOutcome;
use crate::hooks::{HookContext, HookRuntime, SessionInfo};
use crate::observer::{RunEvent, RunObserver};
use crate::trace::Trace;
use crate::watch::{Change, ConfigSource, SessionWatch, matcher_names};

impl Run<'_> {
    /// Uses the session's watch: the shell starts where the session's is, and hooks' `cwd` is
    /// the directory they last heard of.
    pub(super) fn use_watch(&mut self, watch: Arc<SessionWatch>) {
        let heard = watch.hooks_cwd();
        if heard != self.hook_ctx.session.cwd {
            self.hook_ctx.session = with_cwd(&self.hook_ctx.session, heard);
        }
        self.watch = watch;
    }

    /// The directory tools start in and relative paths are read from: the shell's.
    pub(super) fn cwd(&self) -> PathBuf {
        self.watch.cwd()
    }

    /// Starts watching for the hooks that exist (the main run only); `watch_paths` are
    /// SessionStart's (`None`: keep the list of an earlier prompt).
    pub(super) fn arm_watch(&self, watch_paths: Option<Vec<PathBuf>>) {
        if self.subagent.is_some() {
            return;
        }
        let hooks = &self.agent.hooks;
        let names = hooks.groups::<FileChanged>().iter().flat_map(|g| matcher_names(&g.matcher)).collect();
        let warning = self.watch.arm(hooks.has::<FileChanged>(), hooks.has::<ConfigChange>(), names, watch_paths);
        warn(&self.trace, self.observer.as_ref(), warning);
    }

    /// Replaces the paths FileChanged watches with hooks' answer (the main run only).
    pub(super) fn replace_watched(&self, paths: Vec<PathBuf>) {
        if self.subagent.is_none() {
            warn(&self.trace, self.observer.as_ref(), self.watch.replace_dynamic(paths));
        }
    }

    /// After a tool call: CwdChanged when the shell moved (see the module documentation).
    pub(super) async fn cwd_point(&mut self) {
        let Some((old_cwd, new_cwd)) = self.watch.cwd_moved() else { return };
        self.hook_ctx.session = with_cwd(&self.hook_ctx.session, new_cwd.clone());
        let merged = self.hooks.cwd_changed(&self.hook_ctx, CwdChangedInput { old_cwd, new_cwd }).await;
        self.replace_watched(merged.outcome.unwrap_or_default());
    }

    /// Before a model request: CwdChanged if the shell moved, then what the watch saw.
    pub(super) async fn watch_point(&mut self) {
        self.cwd_point().await;
        if self.subagent.is_none() {
            fire_changes(&self.hooks, &self.hook_ctx, &self.watch, &self.trace, self.observer.as_ref()).await;
        }
    }
}

impl Agent {
    /// Fires what `watch` saw (FileChanged, ConfigChange) outside a run: an interactive session
    /// waiting at its prompt ([`SessionWatch::ready`]). Nothing when no run armed the watch.
    pub async fn fire_watched(&self, watch: &SessionWatch, session: SessionRef) {
        if !watch.is_armed() {
            return;
        }
        let (trace, observer) = (session.trace.clone(), Arc::clone(&session.observer));
        let mut hooks = self.session_hooks(session);
        hooks.ctx.session = with_cwd(&hooks.ctx.session, watch.hooks_cwd());
        fire_changes(&hooks.runtime, &hooks.ctx, watch, &trace, observer.as_ref()).await;
        hooks.runtime.shutdown();
    }
}

/// The session's facts with hooks' `cwd` (and command hooks' working directory) at `cwd`.
fn with_cwd(session: &Arc<SessionInfo>, cwd: PathBuf) -> Arc<SessionInfo> {
    Arc::new(SessionInfo { cwd, ..(**session).clone() })
}

/// Fires the changes that settled: FileChanged per file, then ConfigChange per settings file.
async fn fire_changes(
    hooks: &HookRuntime,
    ctx: &HookContext,
    watch: &SessionWatch,
    trace: &Trace,
    observer: &dyn RunObserver,
) {
    if !watch.has_pending() {
        return;
    }
    watch.settled().await;
    for change in watch.take() {
        match change {
            Change::File { path, event } => {
                let input = FileChangedInput { file_path: path, event: event.to_owned() };
                let merged = hooks.file_changed(ctx, input).await;
                if let Some(paths) = merged.outcome.filter(|p| !p.is_empty()) {
                    warn(trace, observer, watch.replace_dynamic(paths));
                }
            }
            Change::Config { source, path } => {
                let input = ConfigChangeInput { source: source.as_str().to_owned(), file_path: Some(path.clone()) };
                let merged = hooks.config_change(ctx, input).await;
                let note = config_note(source, &path.display().to_string(), &merged.outcome);
                trace.warn(note.clone(), None);
                observer.on_event(&RunEvent::Warning { text: &note });
            }
        }
    }
}

/// The one line the user reads about a changed settings file.
fn config_note(source: ConfigSource, path: &str, outcome: &GateOutcome) -> String {
    let blocked = match outcome {
        GateOutcome::Proceed => None,
        GateOutcome::Blocked { reason, hook_id } => {
            Some(format!("ConfigChange hook `{hook_id}` blocked it ({reason})"))
        }
        GateOutcome::Failed(failure) => Some(format!("{failure}")),
    };
    match (source, blocked) {
        (ConfigSource::Skills, None) => {
            format!(
                "skills changed ({path}): skills are read when a prompt starts, so the change applies from the next one"
            )
        }
        (ConfigSource::Skills, Some(blocked)) => format!(
            "skills changed ({path}); {blocked}, but skills are read again when the next prompt starts, which sees the change"
        ),
        (_, None) => format!(
            "{source} changed ({path}): spine reads settings when a session starts, so the change applies from the next session"
        ),
        (ConfigSource::Policy, Some(blocked)) => format!(
            "{source} changed ({path}); {blocked}, but a change of managed settings cannot be blocked: it applies from the next session"
        ),
        (_, Some(blocked)) => format!("{source} changed ({path}); {blocked}: the session keeps its settings"),
    }
}

fn warn(trace: &Trace, observer: &dyn RunObserver, warning: Option<String>) {
    if let Some(text) = warning {
        trace.warn(text.clone(), None);
        observer.on_event(&RunEvent::Warning { text: &text });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_change_is_noted_once_and_only_managed_settings_ignore_a_block() {
        let blocked = GateOutcome::Blocked { reason: "frozen".into(), hook_id: "guard".into() };
        let applied = config_note(ConfigSource::Project, "/p/.claude/settings.json", &GateOutcome::Proceed);
        assert!(applied.contains("project_settings changed") && applied.contains("applies from the next session"));
        let kept = config_note(ConfigSource::Local, "/p/.claude/settings.local.json", &blocked);
        assert!(kept.contains("`guard` blocked it (frozen)") && kept.contains("the session keeps its settings"));
        let managed = config_note(ConfigSource::Policy, "/etc/claude-code/managed-settings.json", &blocked);
        assert!(managed.contains("cannot be blocked"), "{managed}");
        let skills = config_note(ConfigSource::Skills, "/p/.spine/skills", &blocked);
        assert!(skills.contains("next prompt"), "{skills}");
    }
}
