//! `"type": "agent"` hooks: a read-only subagent verifies, then answers like a prompt hook.
//!
//! Contract of [`AgentHook`] (docs/hooks.md, "Agent hooks"):
//! - A verifier agent ([`HookAgents`], built by the caller: the run's model or the hook's
//!   `model`, only the read-only tools `Read`, `Glob` and `Grep`, no hooks, at most
//!   [`VERIFIER_MAX_TURNS`] model requests, nothing it can change) gets the hook's `prompt` with
//!   `$ARGUMENTS` replaced by the event's JSON input, after instructions to investigate and
//!   end with one JSON object `{"ok": true}` or `{"ok": false, "reason": "…"}`.
//! - Its final answer is read as a prompt hook's reply ([`crate::prompt::verdict`]): `ok: false`
//!   means what exit status 2 with `reason` means for the event.
//! - A verifier that fails, runs out of turns, or ends without a verdict, and the hook's time
//!   limit, are hook failures decided by `onFailure`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use spine_core::CancellationToken;
use spine_core::hooks::{Hook, HookContext, HookError, SessionInfo};
use spine_protocol::hook::HookOutput;

use crate::prompt::{PromptHook, verdict};
use crate::record::HookMeta;
use crate::wire::decide::{self, Exit};
use crate::wire::{WireEvent, input};

/// Model requests a verifier may make.
pub const VERIFIER_MAX_TURNS: u32 = 10;

/// The instructions a verifier starts with.
pub const VERIFIER_PROMPT: &str = "You verify one event of a coding agent's session for a hook. \
Investigate with the read-only tools you have (Read, Glob, Grep) as far as the instructions need, \
then end with one JSON object and nothing else: {\"ok\": true} when the event may proceed, or \
{\"ok\": false, \"reason\": \"why\"} when it must not; the reason is shown to the agent.";

/// One verification.
pub struct VerifyRequest<'a> {
    /// The user message: the hook's prompt with the event's JSON.
    pub prompt: String,
    /// The hook's `model`, when it names one.
    pub model: Option<&'a str>,
    /// The session the event belongs to.
    pub session: &'a SessionInfo,
    /// Canceled with the run.
    pub cancel: CancellationToken,
}

/// Runs verifier agents for agent hooks.
#[async_trait]
pub trait HookAgents: Send + Sync {
    /// Runs a verifier to its end; its final text, or why it did not finish.
    async fn verify(&self, request: VerifyRequest<'_>) -> Result<String, String>;
}

/// An agent hook.
pub struct AgentHook {
    prompt: String,
    model: Option<String>,
    agents: Option<Arc<dyn HookAgents>>,
    timeout: Duration,
    meta: Arc<HookMeta>,
}

impl AgentHook {
    /// A hook verifying with `agents`.
    pub fn new(
        prompt: String,
        model: Option<String>,
        agents: Option<Arc<dyn HookAgents>>,
        timeout: Duration,
        meta: Arc<HookMeta>,
    ) -> Self {
        AgentHook { prompt, model, agents, timeout, meta }
    }

    async fn run_verifier(&self, ctx: &HookContext, user: String) -> Result<String, HookError> {
        let Some(agents) = &self.agents else {
            return Err(HookError::launch("agent hooks cannot run here (no verifier agents)"));
        };
        let cancel = ctx.cancel.child_token();
        let request =
            VerifyRequest { prompt: user, model: self.model.as_deref(), session: &ctx.session, cancel: cancel.clone() };
        match tokio::time::timeout(self.timeout, agents.verify(request)).await {
            Err(_) => {
                cancel.cancel();
                Err(HookError::timeout(format!("no verdict within {:.1} s", self.timeout.as_secs_f64())))
            }
            Ok(Err(why)) => Err(HookError::failed(format!("the verifier did not finish: {why}"))),
            Ok(Ok(text)) => Ok(text),
        }
    }
}

#[async_trait]
impl<E: WireEvent> Hook<E> for AgentHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        let started = Instant::now();
        let payload = input::encode::<E>(ctx, input);
        let event_json = String::from_utf8_lossy(&payload).trim_end().to_owned();
        let answer = self.run_verifier(ctx, PromptHook::user_message(&self.prompt, &event_json)).await;
        self.meta.settle_reply::<E>(answer, started, |reply| match verdict(reply) {
            Err(why) => Err(HookError::failed(why)),
            Ok(None) => Ok(HookOutput::new(E::Action::default())),
            Ok(Some(reason)) => {
                decide::from_exit::<E>(&Exit { code: Some(2), stdout: "", stdout_overflow: false, stderr: &reason })
            }
        })
    }
}
