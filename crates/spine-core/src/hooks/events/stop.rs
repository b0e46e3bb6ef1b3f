//! Stop and SubagentStop (Stop inside a subagent): the first force-continue wins and
//! short-circuits later hooks; it must carry a non-empty reason (else a contract error, and the
//! run fails). The cap on forced continuations is applied by the runner.

use spine_protocol::hook::{HookEvent, Stop, StopAction, StopInput, SubagentStop, SubagentStopInput};

use super::{HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// What the Stop hooks decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopOutcome {
    /// The run ends with the candidate answer.
    Allow,
    /// Ask the model again with `reason` as the next user message.
    ForceContinue {
        /// The next user message.
        reason: String,
        /// The forcing hook.
        hook_id: String,
    },
    /// A hook failed closed or broke the contract: the run fails.
    Failed(HookFailure),
}

struct StopFold {
    outcome: StopOutcome,
    contexts: Vec<String>,
}

impl<E: HookEvent<Action = StopAction>> Fold<E> for StopFold {
    fn answer(&mut self, hook: &HookSpec<E>, action: StopAction, _input: &mut E::Input) -> Result<Flow, HookError> {
        match action {
            StopAction::Allow { additional_context } => {
                self.contexts.extend(additional_context);
                Ok(Flow::Continue)
            }
            StopAction::ForceContinue { reason, additional_context } => {
                if reason.trim().is_empty() {
                    return Err(HookError::contract(format!(
                        "{} hook forced a continuation without a reason",
                        E::NAME
                    )));
                }
                self.contexts.extend(additional_context);
                self.outcome = StopOutcome::ForceContinue { reason, hook_id: hook.id.clone() };
                Ok(Flow::ShortCircuit)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<E>, error: &HookError) -> Flow {
        self.outcome = StopOutcome::Failed(HookFailure::new(E::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires Stop for a candidate final answer. Its contexts go before the forced user message.
    pub async fn stop(
        &self,
        ctx: &HookContext,
        stop_hook_active: bool,
        last_assistant_message: &str,
    ) -> Merged<StopOutcome> {
        self.observer().on_event(&RunEvent::HookFired { event: Stop::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: Stop::NAME, ..ctx.clone() };
        let mut input = StopInput { stop_hook_active, last_assistant_message: last_assistant_message.to_owned() };
        let mut fold = StopFold { outcome: StopOutcome::Allow, contexts: Vec::new() };
        let d = self.dispatch::<Stop, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.outcome, fold.contexts, d)
    }

    /// Fires SubagentStop for a subagent's candidate final answer (in place of Stop); the
    /// outcome reads as Stop's.
    pub async fn subagent_stop(&self, ctx: &HookContext, mut input: SubagentStopInput) -> Merged<StopOutcome> {
        self.observer().on_event(&RunEvent::HookFired { event: SubagentStop::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: SubagentStop::NAME, ..ctx.clone() };
        let mut fold = StopFold { outcome: StopOutcome::Allow, contexts: Vec::new() };
        let d = self.dispatch::<SubagentStop, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.outcome, fold.contexts, d)
    }
}
