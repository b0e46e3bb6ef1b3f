//! `"type": "prompt"` hooks: one model request decides.
//!
//! Contract of [`PromptHook`] (docs/hooks.md, "Prompt hooks"):
//! - The request is a system prompt asking for one JSON object `{"ok": true}` or
//!   `{"ok": false, "reason": "…"}`, then the hook's `prompt` as the user message, with
//!   `$ARGUMENTS` replaced by the event's JSON input (what a command hook reads on stdin); a
//!   prompt without `$ARGUMENTS` gets the input appended after a blank line. No tools.
//! - It goes to the hook's `model` (a spine model spec, built when the hooks are registered)
//!   or, without one, the session's model ([`HookModels`]), under the hook's time limit and
//!   the run's cancellation.
//! - `ok: true` is no opinion. `ok: false` means what exit status 2 with `reason` on stderr
//!   means for the event ([`crate::wire::decide::from_exit`]): PreToolUse and UserPromptSubmit
//!   block, Stop forces one more round, PostToolUse puts the reason beside the result; on an
//!   event that cannot block it is a failure. `continueOnBlock: false` also ends the run
//!   (`continue: false`).
//! - A model error, a time-out, or a reply with no such JSON object is a hook failure, decided
//!   by `onFailure` like any other.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use spine_core::hooks::{Hook, HookContext, HookError};
use spine_core::model::{ModelClient, ModelRequest, StreamSink};
use spine_protocol::hook::HookOutput;
use spine_protocol::message::Message;

use crate::record::HookMeta;
use crate::wire::decide::{self, Exit};
use crate::wire::{WireEvent, input};

/// The system prompt of every prompt hook.
pub const SYSTEM_PROMPT: &str = "You are a hook evaluating one event of a coding agent's session. \
Judge the event against the instructions you are given. Answer with one JSON object and nothing \
else: {\"ok\": true} when the event may proceed, or {\"ok\": false, \"reason\": \"why\"} when it \
must not; the reason is shown to the agent.";

/// The placeholder replaced by the event's JSON input.
pub const ARGUMENTS: &str = "$ARGUMENTS";

/// The models prompt hooks may use.
pub trait HookModels: Send + Sync {
    /// The model of `spec` (a `--model` spec), or the session's model for `None`.
    fn model(&self, spec: Option<&str>) -> Result<Arc<dyn ModelClient>, String>;
}

/// A prompt hook.
pub struct PromptHook {
    prompt: String,
    model: Arc<dyn ModelClient>,
    continue_on_block: bool,
    timeout: Duration,
    meta: Arc<HookMeta>,
}

impl PromptHook {
    /// A hook asking `model` with `prompt`.
    pub fn new(
        prompt: String,
        model: Arc<dyn ModelClient>,
        continue_on_block: bool,
        timeout: Duration,
        meta: Arc<HookMeta>,
    ) -> Self {
        PromptHook { prompt, model, continue_on_block, timeout, meta }
    }

    /// The user message for an event's JSON input.
    pub fn user_message(prompt: &str, event_json: &str) -> String {
        if prompt.contains(ARGUMENTS) {
            prompt.replace(ARGUMENTS, event_json)
        } else {
            format!("{prompt}\n\n{event_json}")
        }
    }

    async fn ask(&self, ctx: &HookContext, user: String) -> Result<String, HookError> {
        let messages = [Message::system(SYSTEM_PROMPT), Message::user(user)];
        let request = ModelRequest { messages: &messages, tools: &[], stable_prefix: None };
        let reply = tokio::time::timeout(self.timeout, self.model.complete(request, &Quiet, &ctx.cancel)).await;
        match reply {
            Err(_) => Err(HookError::timeout(format!("no model answer within {:.1} s", self.timeout.as_secs_f64()))),
            Ok(Err(e)) => Err(HookError::failed(format!("model request failed: {e}"))),
            Ok(Ok(reply)) => Ok(reply.message.content.unwrap_or_default()),
        }
    }
}

/// Ignores the streamed text.
struct Quiet;

impl StreamSink for Quiet {
    fn text_delta(&self, _text: &str) {}
}

/// The verdict in a reply: `Ok(None)` for ok, `Ok(Some(reason))` for not ok.
pub fn verdict(reply: &str) -> Result<Option<String>, String> {
    let text = reply.trim();
    let object = match (text.find('{'), text.rfind('}')) {
        (Some(start), Some(end)) if start < end => &text[start..=end],
        _ => return Err(format!("the model's answer holds no JSON object: {}", excerpt(text))),
    };
    let value: Value = serde_json::from_str(object)
        .map_err(|e| format!("the model's answer is not valid JSON ({e}): {}", excerpt(text)))?;
    match value.get("ok") {
        Some(Value::Bool(true)) => Ok(None),
        Some(Value::Bool(false)) => {
            let reason = value.get("reason").and_then(Value::as_str).filter(|r| !r.trim().is_empty());
            Ok(Some(reason.unwrap_or("a prompt hook judged the event not ok").to_owned()))
        }
        _ => Err(format!("the model's answer has no boolean `ok`: {}", excerpt(text))),
    }
}

fn excerpt(text: &str) -> String {
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() { format!("{cut}…") } else { cut }
}

#[async_trait]
impl<E: WireEvent> Hook<E> for PromptHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        let started = Instant::now();
        let payload = input::encode::<E>(ctx, input);
        let event_json = String::from_utf8_lossy(&payload).trim_end().to_owned();
        let answer = self.ask(ctx, Self::user_message(&self.prompt, &event_json)).await;
        self.meta.settle_reply::<E>(answer, started, |reply| match verdict(reply) {
            Err(why) => Err(HookError::failed(why)),
            Ok(None) => Ok(HookOutput::new(E::Action::default())),
            Ok(Some(reason)) => {
                let exit = Exit { code: Some(2), stdout: "", stdout_overflow: false, stderr: &reason };
                decide::from_exit::<E>(&exit)
                    .map(|out| if self.continue_on_block { out } else { out.halt(Some(reason)) })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_replaced_by_the_event_json_or_appended() {
        assert_eq!(PromptHook::user_message("Is $ARGUMENTS safe?", "{\"a\":1}"), "Is {\"a\":1} safe?");
        assert_eq!(PromptHook::user_message("Check this.", "{\"a\":1}"), "Check this.\n\n{\"a\":1}");
    }

    #[test]
    fn the_verdict_is_the_json_object_of_the_reply() {
        assert_eq!(verdict("{\"ok\": true}"), Ok(None));
        assert_eq!(
            verdict("Sure. {\"ok\": false, \"reason\": \"deletes files\"} Done."),
            Ok(Some("deletes files".into()))
        );
        assert!(verdict("{\"ok\": false}").is_ok_and(|r| r.is_some()), "a missing reason gets one");
        assert!(verdict("looks fine to me").is_err());
        assert!(verdict("{\"ok\": \"yes\"}").is_err());
        assert!(verdict("{\"ok\": tru}").is_err());
    }
}
