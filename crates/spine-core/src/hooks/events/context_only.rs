//! SessionStart and PostToolUseFailure: hooks may only add context.

use spine_protocol::hook::{
    ContextAction, HookEvent, PostToolUseFailure, PostToolUseFailureInput, SessionStart, SessionStartInput,
};

use super::HookFailure;
use crate::hooks::engine::{Flow, Fold, HaltBy, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// The merged outcome of a context-only event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextResult {
    /// Additional context, in order.
    pub contexts: Vec<String>,
    /// A hook that failed closed.
    pub failure: Option<HookFailure>,
    /// `continue: false`.
    pub halt: Option<HaltBy>,
}

#[derive(Default)]
struct ContextFold {
    contexts: Vec<String>,
    failure: Option<HookFailure>,
}

impl<E: HookEvent<Action = ContextAction>> Fold<E> for ContextFold {
    fn answer(&mut self, _hook: &HookSpec<E>, action: ContextAction, _input: &mut E::Input) -> Result<Flow, HookError> {
        self.contexts.extend(action.additional_context);
        Ok(Flow::Continue)
    }

    fn failure(&mut self, hook: &HookSpec<E>, error: &HookError) -> Flow {
        self.failure = Some(HookFailure::new(E::NAME, &hook.id, error));
        Flow::Stop
    }
}

impl HookRuntime {
    /// Fires SessionStart.
    pub async fn session_start(&self, ctx: &HookContext, mut input: SessionStartInput) -> ContextResult {
        self.observer().on_event(&RunEvent::HookFired { event: SessionStart::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: SessionStart::NAME, ..ctx.clone() };
        let mut fold = ContextFold::default();
        let d = self.dispatch::<SessionStart, _>(&ctx, &mut input, &mut fold, None).await;
        ContextResult { contexts: fold.contexts, failure: fold.failure, halt: d.halt }
    }

    /// Fires PostToolUseFailure.
    pub async fn post_tool_use_failure(&self, ctx: &HookContext, mut input: PostToolUseFailureInput) -> ContextResult {
        self.observer().on_event(&RunEvent::HookFired {
            event: PostToolUseFailure::NAME,
            tool_name: Some(&input.tool_name),
            status: Some("error"),
        });
        let ctx = HookContext { event: PostToolUseFailure::NAME, ..ctx.clone() };
        let id = input.tool_use_id.clone();
        let mut fold = ContextFold::default();
        let d = self.dispatch::<PostToolUseFailure, _>(&ctx, &mut input, &mut fold, Some(&id)).await;
        ContextResult { contexts: fold.contexts, failure: fold.failure, halt: d.halt }
    }
}
