//! PreModelSwitch: the strongest answer wins (deny > ask > allow > no opinion); a deny
//! short-circuits. A hook failing closed refuses the switch (its reason is
//! [`HookFailure::reason`]).

use spine_protocol::hook::{HookEvent, ModelSwitchAction, ModelSwitchInput, PreModelSwitch};

use super::{HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// What the PreModelSwitch hooks decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreModelSwitchOutcome {
    /// Switch (as the session would without hooks).
    Proceed,
    /// Switch without asking.
    Allow,
    /// Ask the user first (refused where nobody can answer).
    Ask {
        /// Shown with the question.
        reason: Option<String>,
        /// The hook that asked.
        hook_id: String,
    },
    /// Keep the current model.
    Denied {
        /// Why, for the user.
        reason: String,
        /// The denying hook.
        hook_id: String,
    },
    /// A hook failed closed or broke the contract: keep the current model.
    Failed(HookFailure),
}

impl PreModelSwitchOutcome {
    fn rank(&self) -> u8 {
        match self {
            PreModelSwitchOutcome::Proceed => 0,
            PreModelSwitchOutcome::Allow => 1,
            PreModelSwitchOutcome::Ask { .. } => 2,
            PreModelSwitchOutcome::Denied { .. } | PreModelSwitchOutcome::Failed(_) => 3,
        }
    }
}

struct ModelSwitchFold(PreModelSwitchOutcome);

impl Fold<PreModelSwitch> for ModelSwitchFold {
    fn answer(
        &mut self,
        hook: &HookSpec<PreModelSwitch>,
        action: ModelSwitchAction,
        _input: &mut ModelSwitchInput,
    ) -> Result<Flow, HookError> {
        let next = match action {
            ModelSwitchAction::Proceed => PreModelSwitchOutcome::Proceed,
            ModelSwitchAction::Allow { .. } => PreModelSwitchOutcome::Allow,
            ModelSwitchAction::Ask { reason } => PreModelSwitchOutcome::Ask { reason, hook_id: hook.id.clone() },
            ModelSwitchAction::Deny { reason } => PreModelSwitchOutcome::Denied { reason, hook_id: hook.id.clone() },
        };
        if next.rank() > self.0.rank() {
            self.0 = next;
        }
        Ok(if self.0.rank() == 3 { Flow::ShortCircuit } else { Flow::Continue })
    }

    fn failure(&mut self, hook: &HookSpec<PreModelSwitch>, error: &HookError) -> Flow {
        self.0 = PreModelSwitchOutcome::Failed(HookFailure::new(PreModelSwitch::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires PreModelSwitch before the session's model changes.
    pub async fn pre_model_switch(
        &self,
        ctx: &HookContext,
        mut input: ModelSwitchInput,
    ) -> Merged<PreModelSwitchOutcome> {
        if !self.registry().has::<PreModelSwitch>() {
            return Merged::alone(PreModelSwitchOutcome::Proceed);
        }
        self.observer().on_event(&RunEvent::HookFired { event: PreModelSwitch::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: PreModelSwitch::NAME, ..ctx.clone() };
        let mut fold = ModelSwitchFold(PreModelSwitchOutcome::Proceed);
        let d = self.dispatch::<PreModelSwitch, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.0, Vec::new(), d)
    }
}
