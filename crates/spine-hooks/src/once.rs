//! `"once": true`: a hook that runs at its first firing only.
//!
//! Contract of [`OnceHook`] (Claude Code: "runs once and is removed after execution"): the
//! first call — a firing whose matcher and `if` rule selected the hook — runs the wrapped hook
//! and returns its answer; every later call returns no opinion without running anything. The
//! state lives in the hook, so "once" means once per registry: once per `spine run`, once per
//! interactive session. The first call may go to the background as the wrapped hook does
//! ([`Hook::start`] is forwarded).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use spine_core::hooks::{Hook, HookContext, HookError, Started};
use spine_protocol::hook::{HookEvent, HookOutput};

/// A hook that runs once.
pub struct OnceHook<E: HookEvent> {
    inner: Arc<dyn Hook<E>>,
    ran: AtomicBool,
}

impl<E: HookEvent> OnceHook<E> {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Hook<E>>) -> Self {
        OnceHook { inner, ran: AtomicBool::new(false) }
    }
}

#[async_trait]
impl<E: HookEvent> Hook<E> for OnceHook<E> {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        if self.ran.swap(true, Ordering::SeqCst) {
            return Ok(HookOutput::new(E::Action::default()));
        }
        self.inner.call(ctx, input).await
    }

    async fn start(&self, ctx: &HookContext, input: &E::Input) -> Started<E::Action> {
        if self.ran.swap(true, Ordering::SeqCst) {
            return Started::Answered(Ok(HookOutput::new(E::Action::default())));
        }
        self.inner.start(ctx, input).await
    }
}
