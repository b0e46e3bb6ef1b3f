//! Elicitation and ElicitationResult: the first hook that answers (accept, decline, cancel)
//! decides and short-circuits. A hook failing closed declines (an MCP server never gets an
//! answer nobody gave).

use spine_protocol::hook::{
    Elicitation, ElicitationAction, ElicitationInput, ElicitationResult, ElicitationResultInput, HookEvent,
};

use super::{HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// What the hooks of an elicitation event decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElicitationOutcome {
    /// No hook answered: ask the user (Elicitation), keep the answer (ElicitationResult).
    Proceed,
    /// A hook answered.
    Respond {
        /// `accept`, `decline` or `cancel`.
        action: String,
        /// The fields, with `accept`.
        content: Option<serde_json::Value>,
        /// The answering hook.
        hook_id: String,
    },
    /// A hook failed closed or broke the contract: decline.
    Failed(HookFailure),
}

struct ElicitationFold(ElicitationOutcome);

impl<E: HookEvent<Action = ElicitationAction>> Fold<E> for ElicitationFold {
    fn answer(
        &mut self,
        hook: &HookSpec<E>,
        action: ElicitationAction,
        _input: &mut E::Input,
    ) -> Result<Flow, HookError> {
        match action {
            ElicitationAction::Proceed => Ok(Flow::Continue),
            ElicitationAction::Respond { action, content } => {
                self.0 = ElicitationOutcome::Respond { action, content, hook_id: hook.id.clone() };
                Ok(Flow::ShortCircuit)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<E>, error: &HookError) -> Flow {
        self.0 = ElicitationOutcome::Failed(HookFailure::new(E::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires Elicitation when an MCP server asks for input, before anyone is asked.
    pub async fn elicitation(&self, ctx: &HookContext, input: ElicitationInput) -> Merged<ElicitationOutcome> {
        self.elicitation_event::<Elicitation>(ctx, input).await
    }

    /// Fires ElicitationResult with the answer, before it is sent to the server.
    pub async fn elicitation_result(
        &self,
        ctx: &HookContext,
        input: ElicitationResultInput,
    ) -> Merged<ElicitationOutcome> {
        self.elicitation_event::<ElicitationResult>(ctx, input).await
    }

    async fn elicitation_event<E: HookEvent<Action = ElicitationAction>>(
        &self,
        ctx: &HookContext,
        mut input: E::Input,
    ) -> Merged<ElicitationOutcome> {
        if !self.registry().has::<E>() {
            return Merged::alone(ElicitationOutcome::Proceed);
        }
        self.observer().on_event(&RunEvent::HookFired { event: E::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: E::NAME, ..ctx.clone() };
        let mut fold = ElicitationFold(ElicitationOutcome::Proceed);
        let d = self.dispatch::<E, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.0, Vec::new(), d)
    }
}
