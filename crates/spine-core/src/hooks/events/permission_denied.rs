//! PermissionDenied: hooks observe a refusal of the permission step and may answer `retry`;
//! any hook answering `retry: true` tells the model it may try again. A failing hook changes
//! nothing: the call is refused either way.

use spine_protocol::hook::{HookEvent, PermissionDenied, PermissionDeniedInput, RetryAction};

use super::Merged;
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

struct RetryFold {
    retry: bool,
}

impl Fold<PermissionDenied> for RetryFold {
    fn answer(
        &mut self,
        _hook: &HookSpec<PermissionDenied>,
        action: RetryAction,
        _input: &mut PermissionDeniedInput,
    ) -> Result<Flow, HookError> {
        self.retry |= action.retry;
        Ok(Flow::Continue)
    }

    fn failure(&mut self, _hook: &HookSpec<PermissionDenied>, _error: &HookError) -> Flow {
        Flow::Continue
    }
}

impl HookRuntime {
    /// Fires PermissionDenied; the outcome says whether a hook asked for `retry`.
    pub async fn permission_denied(&self, ctx: &HookContext, mut input: PermissionDeniedInput) -> Merged<bool> {
        if !self.registry().has::<PermissionDenied>() {
            return Merged::alone(false);
        }
        self.observer().on_event(&RunEvent::HookFired {
            event: PermissionDenied::NAME,
            tool_name: Some(&input.tool_name),
            status: Some("denied"),
        });
        let ctx = HookContext { event: PermissionDenied::NAME, ..ctx.clone() };
        let id = input.tool_use_id.clone();
        let mut fold = RetryFold { retry: false };
        let d = self.dispatch::<PermissionDenied, _>(&ctx, &mut input, &mut fold, Some(&id)).await;
        Merged::new(fold.retry, Vec::new(), d)
    }
}
