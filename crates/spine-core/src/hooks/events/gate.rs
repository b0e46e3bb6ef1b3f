//! ConfigChange: the first block short-circuits; a hook failing closed blocks too (the change
//! is not applied, its reason is [`HookFailure::reason`]).

use spine_protocol::hook::{ConfigChange, ConfigChangeInput, GateAction, HookEvent};

use super::{HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// What the hooks of a gate event (ConfigChange) decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateOutcome {
    /// Let it happen.
    Proceed,
    /// Refused.
    Blocked {
        /// Why, for the user.
        reason: String,
        /// The blocking hook.
        hook_id: String,
    },
    /// A hook failed closed or broke the contract: refused.
    Failed(HookFailure),
}

struct GateFold(GateOutcome);

impl<E: HookEvent<Action = GateAction>> Fold<E> for GateFold {
    fn answer(&mut self, hook: &HookSpec<E>, action: GateAction, _input: &mut E::Input) -> Result<Flow, HookError> {
        match action {
            GateAction::Proceed => Ok(Flow::Continue),
            GateAction::Block { reason } => {
                self.0 = GateOutcome::Blocked { reason, hook_id: hook.id.clone() };
                Ok(Flow::ShortCircuit)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<E>, error: &HookError) -> Flow {
        self.0 = GateOutcome::Failed(HookFailure::new(E::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires ConfigChange when a settings file changed during the session.
    pub async fn config_change(&self, ctx: &HookContext, mut input: ConfigChangeInput) -> Merged<GateOutcome> {
        if !self.registry().has::<ConfigChange>() {
            return Merged::alone(GateOutcome::Proceed);
        }
        self.observer().on_event(&RunEvent::HookFired { event: ConfigChange::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: ConfigChange::NAME, ..ctx.clone() };
        let mut fold = GateFold(GateOutcome::Proceed);
        let d = self.dispatch::<ConfigChange, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.0, Vec::new(), d)
    }
}
