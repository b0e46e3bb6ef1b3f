//! SessionStart: hooks add context for the model, and may name the files FileChanged hooks
//! watch (`watchPaths`: the answers of one firing joined in configuration order, duplicates
//! left out, in [`Merged::watch_paths`]). A hook that fails closed or breaks the contract
//! short-circuits, as on every context-only event ([`ContextOutcome`]).

use std::path::PathBuf;

use spine_protocol::hook::{HookEvent, SessionStart, SessionStartAction, SessionStartInput};

use super::{ContextOutcome, HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

struct SessionStartFold {
    contexts: Vec<String>,
    watch_paths: Option<Vec<PathBuf>>,
    outcome: ContextOutcome,
}

impl Fold<SessionStart> for SessionStartFold {
    fn answer(
        &mut self,
        _hook: &HookSpec<SessionStart>,
        action: SessionStartAction,
        _input: &mut SessionStartInput,
    ) -> Result<Flow, HookError> {
        self.contexts.extend(action.additional_context);
        if let Some(paths) = action.watch_paths {
            join_paths(&mut self.watch_paths, paths);
        }
        Ok(Flow::Continue)
    }

    fn failure(&mut self, hook: &HookSpec<SessionStart>, error: &HookError) -> Flow {
        self.outcome = ContextOutcome::Failed(HookFailure::new(SessionStart::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

/// Adds `paths` to the list answered so far, leaving duplicates out.
pub(super) fn join_paths(list: &mut Option<Vec<PathBuf>>, paths: Vec<PathBuf>) {
    let list = list.get_or_insert_with(Vec::new);
    for path in paths {
        if !list.contains(&path) {
            list.push(path);
        }
    }
}

impl HookRuntime {
    /// Fires SessionStart.
    pub async fn session_start(&self, ctx: &HookContext, mut input: SessionStartInput) -> Merged<ContextOutcome> {
        self.observer().on_event(&RunEvent::HookFired { event: SessionStart::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: SessionStart::NAME, ..ctx.clone() };
        let mut fold = SessionStartFold { contexts: Vec::new(), watch_paths: None, outcome: ContextOutcome::Proceed };
        let d = self.dispatch::<SessionStart, _>(&ctx, &mut input, &mut fold, None).await;
        Merged { watch_paths: fold.watch_paths, ..Merged::new(fold.outcome, fold.contexts, d) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answered_paths_join_in_order_without_duplicates() {
        let mut list = None;
        join_paths(&mut list, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        join_paths(&mut list, vec![PathBuf::from("/b"), PathBuf::from("/c")]);
        assert_eq!(list, Some(vec![PathBuf::from("/a"), PathBuf::from("/b"), PathBuf::from("/c")]));
        let mut empty = None;
        join_paths(&mut empty, Vec::new());
        assert_eq!(empty, Some(Vec::new()), "an empty answer is an answer");
    }
}
