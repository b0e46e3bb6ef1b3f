//! PostCompact, SessionEnd, Notification: observe only. Failures are recorded, nothing else.

use spine_protocol::hook::{HookEvent, Observe};

use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

struct ObserveFold;

impl<E: HookEvent<Action = Observe>> Fold<E> for ObserveFold {
    fn answer(&mut self, _hook: &HookSpec<E>, _action: Observe, _input: &mut E::Input) -> Result<Flow, HookError> {
        Ok(Flow::Continue)
    }

    fn failure(&mut self, _hook: &HookSpec<E>, _error: &HookError) -> Flow {
        Flow::Continue
    }
}

impl HookRuntime {
    /// Fires an observe-only event (PostCompact, SessionEnd, Notification).
    pub async fn observe<E: HookEvent<Action = Observe>>(&self, ctx: &HookContext, mut input: E::Input) {
        self.observer().on_event(&RunEvent::HookFired { event: E::NAME, tool_name: None, status: None });
        let ctx = HookContext { event: E::NAME, ..ctx.clone() };
        self.dispatch::<E, _>(&ctx, &mut input, &mut ObserveFold, None).await;
    }
}
