//! SDK callback hooks: functions of the Agent SDK's host program (Python, TypeScript) that
//! answer an event, called over the control protocol.
//!
//! The host declares them in its `initialize` control request ([`HookConfig::from_sdk`]); spine
//! calls one with a `hook_callback` control request through [`HookCallbacks`], which the front
//! end that speaks the protocol implements.
//!
//! Contract of [`CallbackHook`] (docs/hooks.md, "SDK callback hooks"):
//! - The callback gets the same event JSON a command hook reads on stdin ([`input`]) and the
//!   event's `tool_use_id` (`None` for events without a tool call).
//! - Its answer is read as an HTTP hook's JSON body ([`decide::from_value`]): an object is the
//!   hook's JSON answer (`{}` = no opinion; a field the event does not own is a contract error,
//!   which ignores `onFailure`); any other value is a failure.
//! - `{"async": true}` is no opinion: the host goes on by itself, and the protocol has no way to
//!   deliver a later answer, so nothing is waited for.
//! - An error answer, the handler's time limit ([`HookError::timeout`]) and a canceled run are
//!   failures: `onFailure` decides. The callback's [`CancellationToken`] is canceled on a time-out
//!   and with the run, so the front end can withdraw its request.
//! - Without [`HookCallbacks`] (hooks built with no SDK host), each firing is a launch error.
//! - Each call reports its answer (its JSON text, as [`Raw::Reply`]) to the answer sink and the
//!   engine's observers, as every external hook does.
//!
//! [`HookConfig::from_sdk`]: crate::config::HookConfig::from_sdk

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use spine_core::hooks::{Hook, HookContext, HookError};
use spine_protocol::hook::HookOutput;
use tokio_util::sync::CancellationToken;

use crate::record::{HookMeta, Raw};
use crate::wire::decide;
use crate::wire::{WireEvent, input};

/// The SDK host's hook callbacks, called by id.
#[async_trait]
pub trait HookCallbacks: Send + Sync {
    /// Calls callback `callback_id` with the event's JSON `input` and its `tool_use_id`; the
    /// host's answer (a JSON value), or why there is none (the host's error response, a closed
    /// connection). `cancel` is canceled when spine no longer waits for the answer.
    async fn call(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
        cancel: CancellationToken,
    ) -> Result<Value, String>;
}

/// A hook answered by one of the SDK host's callbacks.
pub struct CallbackHook {
    id: String,
    callbacks: Option<Arc<dyn HookCallbacks>>,
    timeout: Duration,
    meta: Arc<HookMeta>,
}

impl CallbackHook {
    /// A hook calling callback `id` of `callbacks` (`None`: each firing is a launch error),
    /// with a time limit.
    pub fn new(
        id: impl Into<String>,
        callbacks: Option<Arc<dyn HookCallbacks>>,
        timeout: Duration,
        meta: Arc<HookMeta>,
    ) -> Self {
        CallbackHook { id: id.into(), callbacks, timeout, meta }
    }

    /// The host's answer, or the failure that stands for it.
    async fn answer(&self, ctx: &HookContext, event: Value) -> Result<Value, HookError> {
        let Some(callbacks) = &self.callbacks else {
            return Err(HookError::launch(format!("no SDK host in this run: callback `{}` cannot be called", self.id)));
        };
        let tool_use_id = event.get("tool_use_id").and_then(Value::as_str).map(str::to_owned);
        let cancel = ctx.cancel.child_token();
        let call = callbacks.call(&self.id, event, tool_use_id, cancel.clone());
        // A canceled run first: the host's call, canceled with it, may answer at the same time.
        let answered = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => Err(HookError::failed("the run was canceled")),
            r = tokio::time::timeout(self.timeout, call) => match r {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(e)) => Err(HookError::failed(format!("callback `{}` failed: {e}", self.id))),
                Err(_) => Err(HookError::timeout(format!(
                    "no answer from callback `{}` within {:.1} s",
                    self.id,
                    self.timeout.as_secs_f64()
                ))),
            },
        };
        if answered.is_err() {
            // Spine no longer waits: the front end may withdraw the request.
            cancel.cancel();
        }
        answered
    }
}

#[async_trait]
impl<E: WireEvent> Hook<E> for CallbackHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        let started = Instant::now();
        let event = input::to_value::<E>(ctx, input);
        let answered = self.answer(ctx, event).await;
        let result = answered.as_ref().map_err(Clone::clone).and_then(decide::from_value::<E>);
        let raw = || match answered {
            Ok(value) => Raw::Reply { text: value.to_string() },
            Err(_) => Raw::None,
        };
        self.meta.report::<E>(raw, &result, started.elapsed());
        result
    }
}

#[cfg(test)]
#[path = "callback_tests.rs"]
mod tests;
