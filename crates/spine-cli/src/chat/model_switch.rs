//! A model switch in a session — `/model SPEC` in a chat, `set_model` from a program driving
//! spine: PreModelSwitch hooks decide (allow, ask, deny — a deny or a hook failing closed keeps
//! the current model, with the reason), the model changes for the next prompt, then
//! PostModelSwitch hooks run and their context goes after the next prompt.
//!
//! The input carries Claude Code's fields: the conversation's estimated tokens, whether the
//! old model's prompt cache is likely warm (a request finished in the last five minutes), the
//! cache lifetime (`5m`, spine's only one), and what writing the conversation to the new
//! model's cache would cost at its cache-write price — `configured` (settings'
//! `model_options.prices`), `catalog` (spine's table) or `default` (unknown: the cost is 0).

use std::time::{Duration, Instant};

use spine_core::hooks::events::{ContextOutcome, PreModelSwitchOutcome};
use spine_core::runner::{Agent, SessionRef};
use spine_protocol::hook::{HookEventName, ModelSwitchInput};
use spine_protocol::message::Message;
use spine_settings::Settings;

use super::Chat;

/// How long a provider keeps a prompt cache warm.
const CACHE_TTL: Duration = Duration::from_secs(5 * 60);

/// What a switch needs besides the agent.
pub(crate) struct SwitchRequest<'a> {
    /// The model spec asked for.
    pub spec: String,
    /// Who asks (`source` of the hooks' input: `command`, `sdk`).
    pub source: &'a str,
    /// The settings the model is built with.
    pub settings: &'a Settings,
    /// The conversation so far.
    pub history: &'a [Message],
    /// When the last model request ended.
    pub last_request_end: Option<Instant>,
    /// The session the hooks fire in.
    pub session: SessionRef,
}

/// A switch that happened: the PostModelSwitch contexts for the next prompt, and a warning
/// when a PostModelSwitch hook failed.
pub(crate) struct Switched {
    pub contexts: Vec<(HookEventName, String)>,
    pub warning: Option<String>,
}

/// Switches `agent`'s model through the hooks; `confirm` answers a hook's `ask`. `Err` says
/// why the model stays (a spec that does not build, a hook's refusal).
pub(crate) async fn switch(
    agent: &mut Agent,
    request: SwitchRequest<'_>,
    confirm: impl FnOnce(&str) -> bool,
) -> Result<Switched, String> {
    let model = spine_agent::build_model(Some(&request.spec), request.settings).map_err(|e| e.to_string())?;
    let input = switch_input(agent, &request, model.model());
    let hooks = agent.session_hooks(request.session);
    let pre = hooks.runtime.pre_model_switch(&hooks.ctx, input.clone()).await;
    let refused = match (&pre.halt, pre.outcome) {
        (Some(halt), _) => Some(format!(
            "stopped by PreModelSwitch hook `{}`{}",
            halt.hook_id,
            halt.stop_reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default()
        )),
        (None, PreModelSwitchOutcome::Proceed | PreModelSwitchOutcome::Allow) => None,
        (None, PreModelSwitchOutcome::Ask { reason, hook_id }) => {
            let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
            let question = format!("Switch to {}? PreModelSwitch hook `{hook_id}` asks{why} [y/N] ", input.to_model);
            (!confirm(&question)).then(|| "not confirmed".to_owned())
        }
        (None, PreModelSwitchOutcome::Denied { reason, hook_id }) => {
            Some(format!("denied by PreModelSwitch hook `{hook_id}`: {reason}"))
        }
        (None, PreModelSwitchOutcome::Failed(failure)) => Some(failure.reason()),
    };
    if let Some(why) = refused {
        hooks.runtime.shutdown();
        return Err(format!("the model stays {} ({why})", agent.model.model()));
    }
    agent.model = model;
    let post = hooks.runtime.post_model_switch(&hooks.ctx, input).await;
    hooks.runtime.shutdown();
    let warning = match &post.outcome {
        ContextOutcome::Failed(failure) => Some(failure.to_string()),
        _ => None,
    };
    let contexts = post.contexts.into_iter().map(|c| (HookEventName::PostModelSwitch, c)).collect();
    Ok(Switched { contexts, warning })
}

impl Chat {
    /// Switches the session's model to `spec`, through the model-switch hooks.
    pub(super) async fn switch_model(&mut self, spec: String) {
        let request = SwitchRequest {
            spec: spec.clone(),
            source: "command",
            settings: &self.settings,
            history: &self.session.history,
            last_request_end: self.last_request_end,
            session: SessionRef {
                session_id: self.session.id.clone(),
                transcript_path: self.session.transcript.clone(),
                env_file: Some(self.session.transcript.with_extension("env")),
                trace: self.trace.clone(),
                observer: std::sync::Arc::clone(&self.view) as std::sync::Arc<dyn spine_core::observer::RunObserver>,
            },
        };
        let confirm =
            |question: &str| crate::render::approver::confirm(question, &spine_core::CancellationToken::new());
        match switch(&mut self.agent, request, confirm).await {
            Ok(switched) => {
                println!("model: {} (from the next prompt on)", self.agent.model.model());
                if let Some(warning) = switched.warning {
                    eprintln!("warning: {warning}");
                }
                self.carried.extend(switched.contexts);
            }
            Err(why) => println!("/model {spec}: {why}"),
        }
    }
}

/// The hooks' input for a switch to `to_model`, asked for as `request.spec`.
fn switch_input(agent: &Agent, request: &SwitchRequest<'_>, to_model: &str) -> ModelSwitchInput {
    let estimator = spine_core::tokens::estimator_for(Some(to_model));
    let context_tokens: u64 = request.history.iter().map(|m| estimator.count_message(m)).sum();
    let configured = request
        .settings
        .model_options
        .prices
        .iter()
        .filter(|(prefix, _)| to_model.starts_with(prefix.as_str()))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, p)| p.cache_write);
    let (pricing, per_million) = match (configured, spine_agent::models::pricing::price(to_model)) {
        (Some(cache_write), _) => ("configured", cache_write),
        (None, Some(price)) => ("catalog", price.cache_write),
        (None, None) => ("default", 0.0),
    };
    ModelSwitchInput {
        from_model: agent.model.model().to_owned(),
        to_model: to_model.to_owned(),
        requested_model: request.spec.clone(),
        source: request.source.to_owned(),
        context_tokens,
        prompt_cache_warm: request.last_request_end.is_some_and(|at| at.elapsed() < CACHE_TTL),
        cache_ttl: "5m".to_owned(),
        estimated_cache_write_usd: context_tokens as f64 * per_million / 1_000_000.0,
        pricing: pricing.to_owned(),
    }
}
