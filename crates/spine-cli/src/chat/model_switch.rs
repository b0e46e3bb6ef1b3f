//! `/model SPEC` in a session: PreModelSwitch hooks decide (allow, ask the user, deny — a deny
//! or a hook failing closed keeps the current model, with the reason), the model changes for the
//! next prompt, then PostModelSwitch hooks run and their context goes after the next prompt.
//!
//! The input carries Claude Code's fields: the conversation's estimated tokens, whether the
//! old model's prompt cache is likely warm (a request finished in the last five minutes), the
//! cache lifetime (`5m`, spine's only one), and what writing the conversation to the new
//! model's cache would cost at its cache-write price — `configured` (settings'
//! `model_options.prices`), `catalog` (spine's table) or `default` (unknown: the cost is 0).

use std::sync::Arc;
use std::time::Duration;

use spine_core::hooks::events::{ContextOutcome, PreModelSwitchOutcome};
use spine_core::observer::RunObserver;
use spine_core::runner::SessionRef;
use spine_protocol::hook::{HookEventName, ModelSwitchInput};

use super::Chat;

/// How long a provider keeps a prompt cache warm.
const CACHE_TTL: Duration = Duration::from_secs(5 * 60);

impl Chat {
    /// Switches the session's model to `spec`, through the model-switch hooks.
    pub(super) async fn switch_model(&mut self, spec: String) {
        let model = match spine_agent::build_model(Some(&spec), &self.settings) {
            Ok(model) => model,
            Err(e) => {
                println!("/model {spec}: {e}");
                return;
            }
        };
        let input = self.switch_input(&spec, model.model());
        let hooks = self.agent.session_hooks(SessionRef {
            session_id: self.session.id.clone(),
            transcript_path: self.session.transcript.clone(),
            env_file: Some(self.session.transcript.with_extension("env")),
            trace: self.trace.clone(),
            observer: Arc::clone(&self.view) as Arc<dyn RunObserver>,
        });
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
                let question =
                    format!("Switch to {}? PreModelSwitch hook `{hook_id}` asks{why} [y/N] ", input.to_model);
                (!crate::render::approver::confirm(&question, &spine_core::CancellationToken::new()))
                    .then(|| "not confirmed".to_owned())
            }
            (None, PreModelSwitchOutcome::Denied { reason, hook_id }) => {
                Some(format!("denied by PreModelSwitch hook `{hook_id}`: {reason}"))
            }
            (None, PreModelSwitchOutcome::Failed(failure)) => Some(failure.reason()),
        };
        if let Some(why) = refused {
            println!("/model {spec}: the model stays {} ({why})", self.agent.model.model());
            hooks.runtime.shutdown();
            return;
        }
        self.agent.model = model;
        println!("model: {} (from the next prompt on)", self.agent.model.model());
        let post = hooks.runtime.post_model_switch(&hooks.ctx, input).await;
        hooks.runtime.shutdown();
        if let ContextOutcome::Failed(failure) = &post.outcome {
            eprintln!("warning: {failure}");
        }
        self.carried.extend(post.contexts.into_iter().map(|c| (HookEventName::PostModelSwitch, c)));
    }

    /// The hooks' input for a switch to `to_model`, asked for as `requested`.
    fn switch_input(&self, requested: &str, to_model: &str) -> ModelSwitchInput {
        let estimator = spine_core::tokens::estimator_for(Some(to_model));
        let context_tokens: u64 = self.session.history.iter().map(|m| estimator.count_message(m)).sum();
        let configured = self
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
            from_model: self.agent.model.model().to_owned(),
            to_model: to_model.to_owned(),
            requested_model: requested.to_owned(),
            source: "command".to_owned(),
            context_tokens,
            prompt_cache_warm: self.last_request_end.is_some_and(|at| at.elapsed() < CACHE_TTL),
            cache_ttl: "5m".to_owned(),
            estimated_cache_write_usd: context_tokens as f64 * per_million / 1_000_000.0,
            pricing: pricing.to_owned(),
        }
    }
}
