//! PreCompact: the first block short-circuits; a hook failing closed blocks the compaction too
//! (its reason is [`HookFailure::reason`]).

use spine_protocol::hook::{HookEvent, PreCompact, PreCompactAction, PreCompactInput};

use super::{HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// What the PreCompact hooks decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreCompactOutcome {
    /// Compact.
    Proceed,
    /// Do not compact.
    Blocked {
        /// Why, for the trace.
        reason: String,
        /// The blocking hook.
        hook_id: String,
    },
    /// A hook failed closed or broke the contract: do not compact.
    Failed(HookFailure),
}

struct PreCompactFold(PreCompactOutcome);

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
                self.0 = PreCompactOutcome::Blocked { reason, hook_id: hook.id.clone() };
                Ok(Flow::ShortCircuit)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<PreCompact>, error: &HookError) -> Flow {
        self.0 = PreCompactOutcome::Failed(HookFailure::new(PreCompact::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires PreCompact.
    pub async fn pre_compact(&self, ctx: &HookContext, mut input: PreCompactInput) -> Merged<PreCompactOutcome> {
        self.observer().on_event(&RunEvent::HookFired { event: PreCompact::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: PreCompact::NAME, ..ctx.clone() };
        let mut fold = PreCompactFold(PreCompactOutcome::Proceed);
        let d = self.dispatch::<PreCompact, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.0, Vec::new(), d)
    }
}
