//! PreCompact: the first block short-circuits; a hook failing closed blocks the compaction.

use spine_protocol::hook::{HookEvent, PreCompact, PreCompactAction, PreCompactInput};

use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// The merged outcome of PreCompact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreCompactResult {
    /// Compact.
    Proceed,
    /// Do not compact.
    Blocked {
        /// Why.
        reason: String,
        /// The hook.
        hook_id: String,
    },
}

struct PreCompactFold(PreCompactResult);

impl Fold<PreCompact> for PreCompactFold {
    fn answer(
        &mut self,
        hook: &HookSpec<PreCompact>,
        action: PreCompactAction,
        _input: &mut PreCompactInput,
    ) -> Result<Flow, HookError> {
        match action {
            PreCompactAction::Proceed => Ok(Flow::Continue),
            PreCompactAction::Block { reason } => {
                self.0 = PreCompactResult::Blocked { reason, hook_id: hook.id.clone() };
                Ok(Flow::Stop)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<PreCompact>, error: &HookError) -> Flow {
        self.0 = PreCompactResult::Blocked {
            reason: format!("PreCompact hook failed ({})", error.kind),
            hook_id: hook.id.clone(),
        };
        Flow::Stop
    }
}

impl HookRuntime {
    /// Fires PreCompact.
    pub async fn pre_compact(&self, ctx: &HookContext, mut input: PreCompactInput) -> PreCompactResult {
        self.observer().on_event(&RunEvent::HookFired { event: PreCompact::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: PreCompact::NAME, ..ctx.clone() };
        let mut fold = PreCompactFold(PreCompactResult::Proceed);
        self.dispatch::<PreCompact, _>(&ctx, &mut input, &mut fold, None).await;
        fold.0
    }
}
