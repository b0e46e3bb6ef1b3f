//! UserPromptSubmit and UserPromptExpansion: contexts concatenate; the first block
//! short-circuits.

use spine_protocol::hook::{
    HookEvent, PromptAction, UserPromptExpansion, UserPromptExpansionInput, UserPromptSubmit, UserPromptSubmitInput,
};

use super::{HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// What happens to the prompt (or to the expansion of a custom command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserPromptSubmitOutcome {
    /// The model is asked.
    Proceed,
    /// The prompt is refused.
    Blocked {
        /// Why (for the user).
        reason: String,
        /// The blocking hook.
        hook_id: String,
    },
    /// A hook failed closed or broke the contract: the run fails.
    Failed(HookFailure),
}

struct PromptFold {
    outcome: UserPromptSubmitOutcome,
    contexts: Vec<String>,
}

impl<E: HookEvent<Action = PromptAction>> Fold<E> for PromptFold {
    fn answer(&mut self, hook: &HookSpec<E>, action: PromptAction, _input: &mut E::Input) -> Result<Flow, HookError> {
        match action {
            PromptAction::Proceed { additional_context } => {
                self.contexts.extend(additional_context);
                Ok(Flow::Continue)
            }
            PromptAction::Block { reason } => {
                self.outcome = UserPromptSubmitOutcome::Blocked { reason, hook_id: hook.id.clone() };
                Ok(Flow::ShortCircuit)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<E>, error: &HookError) -> Flow {
        self.outcome = UserPromptSubmitOutcome::Failed(HookFailure::new(E::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires UserPromptSubmit. Its contexts go after the prompt.
    pub async fn user_prompt_submit(&self, ctx: &HookContext, prompt: &str) -> Merged<UserPromptSubmitOutcome> {
        self.observer().on_event(&RunEvent::HookFired { event: UserPromptSubmit::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: UserPromptSubmit::NAME, ..ctx.clone() };
        let mut input = UserPromptSubmitInput { prompt: prompt.to_owned() };
        let mut fold = PromptFold { outcome: UserPromptSubmitOutcome::Proceed, contexts: Vec::new() };
        let d = self.dispatch::<UserPromptSubmit, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.outcome, fold.contexts, d)
    }

    /// Fires UserPromptExpansion when a custom command expanded. Its contexts go after the
    /// expanded prompt; a block means the expansion is not sent.
    pub async fn user_prompt_expansion(
        &self,
        ctx: &HookContext,
        mut input: UserPromptExpansionInput,
    ) -> Merged<UserPromptSubmitOutcome> {
        if !self.registry().has::<UserPromptExpansion>() {
            return Merged::alone(UserPromptSubmitOutcome::Proceed);
        }
        self.observer().on_event(&RunEvent::HookFired {
            event: UserPromptExpansion::NAME,
            tool_name: None,
            status: None,
        });
        let ctx = HookContext { event: UserPromptExpansion::NAME, ..ctx.clone() };
        let mut fold = PromptFold { outcome: UserPromptSubmitOutcome::Proceed, contexts: Vec::new() };
        let d = self.dispatch::<UserPromptExpansion, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.outcome, fold.contexts, d)
    }
}
