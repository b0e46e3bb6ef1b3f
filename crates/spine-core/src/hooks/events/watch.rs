//! CwdChanged and FileChanged: observe; the `watchPaths` the hooks of one firing answer are
//! joined in configuration order (duplicates left out), as Claude Code joins them, and that
//! list replaces the one FileChanged watched (the runner decides when: `crate::watch`).
//! Failures are recorded and never stop anything: the change already happened.

use std::path::PathBuf;

use spine_protocol::hook::{CwdChanged, CwdChangedInput, FileChanged, FileChangedInput, HookEvent, WatchAction};

use super::Merged;
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// The paths the hooks asked FileChanged to watch, joined; `None` when no hook answered
/// `watchPaths`.
pub type WatchOutcome = Option<Vec<PathBuf>>;

struct WatchFold(WatchOutcome);

impl<E: HookEvent<Action = WatchAction>> Fold<E> for WatchFold {
    fn answer(&mut self, _hook: &HookSpec<E>, action: WatchAction, _input: &mut E::Input) -> Result<Flow, HookError> {
        if let Some(paths) = action.watch_paths {
            super::session_start::join_paths(&mut self.0, paths);
        }
        Ok(Flow::Continue)
    }

    fn failure(&mut self, _hook: &HookSpec<E>, _error: &HookError) -> Flow {
        Flow::Continue
    }
}

impl HookRuntime {
    /// Fires CwdChanged when the shell tool's working directory changed.
    pub async fn cwd_changed(&self, ctx: &HookContext, input: CwdChangedInput) -> Merged<WatchOutcome> {
        self.watch_event::<CwdChanged>(ctx, input).await
    }

    /// Fires FileChanged when a watched file changed on disk.
    pub async fn file_changed(&self, ctx: &HookContext, input: FileChangedInput) -> Merged<WatchOutcome> {
        self.watch_event::<FileChanged>(ctx, input).await
    }

    async fn watch_event<E: HookEvent<Action = WatchAction>>(
        &self,
        ctx: &HookContext,
        mut input: E::Input,
    ) -> Merged<WatchOutcome> {
        if !self.registry().has::<E>() {
            return Merged::alone(None);
        }
        self.observer().on_event(&RunEvent::HookFired { event: E::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: E::NAME, ..ctx.clone() };
        let mut fold = WatchFold(None);
        let d = self.dispatch::<E, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.0, Vec::new(), d)
    }
}
