//! The model client: `--model`, else `ANTHROPIC_MODEL`, else settings `model`, else the
//! provider whose API key is set (Claude Code's order); with the timeouts of settings
//! `model_options.timeouts` and the reasoning options `model_options.thinking_budget_tokens`
//! and `model_options.reasoning_effort`.

use std::sync::Arc;

use spine_core::model::ModelClient;
use spine_models::http::Timeouts;
use spine_models::spec::ModelSpec;
use spine_settings::Settings;

use crate::AssemblyError;

/// The model: `--model`, else `ANTHROPIC_MODEL` (always Anthropic, aliases resolved), else
/// settings `model`, else the provider whose API key is set, with
/// the timeouts of settings `model_options.timeouts`. An error names where the spec came from:
/// `--model`, or the settings file and its `model` key.
pub fn build_model(flag: Option<&str>, settings: &Settings) -> Result<Arc<dyn ModelClient>, AssemblyError> {
    let (spec, from) = match (flag, spine_models::anthropic_model_from_env(), settings.model.as_deref()) {
        (Some(text), _, _) => (parse_spec(text, "--model")?, "--model".to_owned()),
        (None, Some(spec), _) => (spec, "ANTHROPIC_MODEL".to_owned()),
        (None, None, Some(text)) => {
            let from = match settings.last("model") {
                Some((origin, _)) => format!("{origin}: model"),
                None => "settings: model".to_owned(),
            };
            (parse_spec(text, &from)?, from)
        }
        (None, None, None) => (spine_models::default_spec_from_env().ok_or(AssemblyError::NoModel)?, String::new()),
    };
    let reasoning = spine_models::ReasoningOptions {
        thinking_budget_tokens: settings.model_reasoning.thinking_budget_tokens,
        reasoning_effort: settings.model_reasoning.reasoning_effort,
    };
    let options = spine_models::ClientOptions { timeouts: model_timeouts(settings), reasoning };
    spine_models::client_with(&spec, &options).map_err(|e| match from.as_str() {
        "" => AssemblyError::Model(e.to_string()),
        from => AssemblyError::Model(format!("{from}: {e}")),
    })
}

fn parse_spec(text: &str, from: &str) -> Result<ModelSpec, AssemblyError> {
    text.parse().map_err(|e| AssemblyError::Model(format!("{from}: {e}")))
}

/// The client timeouts: settings `model_options.timeouts` over the defaults.
pub fn model_timeouts(settings: &Settings) -> Timeouts {
    let set = settings.model_timeouts;
    let default = Timeouts::default();
    Timeouts {
        connect: set.connect.unwrap_or(default.connect),
        first_byte: set.first_byte.unwrap_or(default.first_byte),
        idle: set.idle.unwrap_or(default.idle),
        total: set.total.unwrap_or(default.total),
    }
}
