//! SubagentStart, PostToolUseFailure, PostToolBatch, PostModelSwitch and Setup: hooks may only
//! add context (and, like every event, stop the run with `continue: false`). SessionStart
//! shares the outcome ([`super::session_start`]).

use spine_protocol::hook::{
    ContextAction, HookEvent, ModelSwitchInput, PostModelSwitch, PostToolBatch, PostToolBatchInput, PostToolUseFailure,
    PostToolUseFailureInput, Setup, SetupInput, SubagentStart, SubagentStartInput,
};

use super::{HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// What the hooks of a context-only event decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextOutcome {
    /// Go on (with the contexts, if any).
    Proceed,
    /// A hook failed closed or broke the contract.
    Failed(HookFailure),
}

struct ContextFold {
    contexts: Vec<String>,
    outcome: ContextOutcome,
}

impl ContextFold {
    fn new() -> Self {
        ContextFold { contexts: Vec::new(), outcome: ContextOutcome::Proceed }
    }
}

impl<E: HookEvent<Action = ContextAction>> Fold<E> for ContextFold {
    fn answer(&mut self, _hook: &HookSpec<E>, action: ContextAction, _input: &mut E::Input) -> Result<Flow, HookError> {
        self.contexts.extend(action.additional_context);
        Ok(Flow::Continue)
    }

    fn failure(&mut self, hook: &HookSpec<E>, error: &HookError) -> Flow {
        self.outcome = ContextOutcome::Failed(HookFailure::new(E::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires SubagentStart in a subagent, before its first model request (its contexts are
    /// the subagent's).
    pub async fn subagent_start(&self, ctx: &HookContext, mut input: SubagentStartInput) -> Merged<ContextOutcome> {
        self.observer().on_event(&RunEvent::HookFired { event: SubagentStart::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: SubagentStart::NAME, ..ctx.clone() };
        let mut fold = ContextFold::new();
        let d = self.dispatch::<SubagentStart, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.outcome, fold.contexts, d)
    }

    /// Fires PostToolUseFailure.
    pub async fn post_tool_use_failure(
        &self,
        ctx: &HookContext,
        mut input: PostToolUseFailureInput,
    ) -> Merged<ContextOutcome> {
        self.observer().on_event(&RunEvent::HookFired {
            event: PostToolUseFailure::NAME,
            tool_name: Some(&input.tool_name),
            status: Some("error"),
        });
        let ctx = HookContext { event: PostToolUseFailure::NAME, ..ctx.clone() };
        let id = input.tool_use_id.clone();
        let mut fold = ContextFold::new();
        let d = self.dispatch::<PostToolUseFailure, _>(&ctx, &mut input, &mut fold, Some(&id)).await;
        Merged::new(fold.outcome, fold.contexts, d)
    }

    /// Fires PostToolBatch after every call of a reply has its result.
    pub async fn post_tool_batch(&self, ctx: &HookContext, mut input: PostToolBatchInput) -> Merged<ContextOutcome> {
        if !self.registry().has::<PostToolBatch>() {
            return Merged::alone(ContextOutcome::Proceed);
        }
        self.observer().on_event(&RunEvent::HookFired { event: PostToolBatch::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: PostToolBatch::NAME, ..ctx.clone() };
        let mut fold = ContextFold::new();
        let d = self.dispatch::<PostToolBatch, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.outcome, fold.contexts, d)
    }

    /// Fires PostModelSwitch after the session's model changed; contexts go to the next request.
    pub async fn post_model_switch(&self, ctx: &HookContext, input: ModelSwitchInput) -> Merged<ContextOutcome> {
        self.context_event::<PostModelSwitch>(ctx, input).await
    }

    /// Fires Setup (`--init`, `--init-only`, `--maintenance`) before the session starts.
    pub async fn setup(&self, ctx: &HookContext, input: SetupInput) -> Merged<ContextOutcome> {
        self.context_event::<Setup>(ctx, input).await
    }

    async fn context_event<E: HookEvent<Action = ContextAction>>(
        &self,
        ctx: &HookContext,
        mut input: E::Input,
    ) -> Merged<ContextOutcome> {
        if !self.registry().has::<E>() {
            return Merged::alone(ContextOutcome::Proceed);
        }
        self.observer().on_event(&RunEvent::HookFired { event: E::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: E::NAME, ..ctx.clone() };
        let mut fold = ContextFold::new();
        let d = self.dispatch::<E, _>(&ctx, &mut input, &mut fold, None).await;
        Merged::new(fold.outcome, fold.contexts, d)
    }
}
