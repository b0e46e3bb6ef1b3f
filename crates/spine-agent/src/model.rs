//! The model client: `--model`, else `ANTHROPIC_MODEL`, else settings `model`, else the
//! provider whose API key is set (Claude Code's order); with the options of settings
//! `model_options` ([`client_options`]: timeouts, `tool_choice`, `stream`, `max_tokens`,
//! `temperature`, `prices`, `thinking_budget_tokens`, `reasoning_effort`).
//!
//! The output limit: settings `model_options.max_tokens`, else `CLAUDE_CODE_MAX_OUTPUT_TOKENS`
//! (the process environment, else the settings `env` key, as Claude Code reads it), else the
//! client's default. The spine setting wins because it is the more specific of the two: Claude
//! Code has no settings key for the limit, only the variable, and a project that sets
//! `model_options.max_tokens` means it for spine. A variable that is not a positive integer is
//! ignored.
//!
//! The session's flags then shape the model the run talks to ([`session_model`]): the reasoning
//! flags (`--effort`, `--thinking`, `--max-thinking-tokens`) and the fallback models
//! (`--fallback-model`).

use std::sync::Arc;

use spine_core::model::ModelClient;
use spine_core::model_fallback::FallbackModel;
use spine_core::model_reasoning::ReasoningFlags;
use spine_models::http::Timeouts;
use spine_models::spec::ModelSpec;
use spine_settings::Settings;

use crate::AssemblyError;

/// The model: `--model`, else `ANTHROPIC_MODEL` (always Anthropic, aliases resolved), else
/// settings `model`, else the provider whose API key is set, with
/// the timeouts of settings `model_options.timeouts`. An error names where the spec came from:
/// `--model`, or the settings file and its `model` key.
pub fn build_model(flag: Option<&str>, settings: &Settings) -> Result<Arc<dyn ModelClient>, AssemblyError> {
    let (spec, from) = model_choice(flag, settings)?;
    SpecModels::new(settings).client(&spec, from)
}

/// Builds the models a spec names as `--model` would, with client options made once from the
/// settings (what a prompt hook's or a skill's `model` asks, built when first needed).
#[derive(Debug, Clone)]
pub struct SpecModels {
    options: spine_models::ClientOptions,
}

impl SpecModels {
    /// Models with `settings`' client options (`model_options`, the process environment).
    pub fn new(settings: &Settings) -> Self {
        SpecModels { options: client_options(settings, |name| std::env::var(name).ok()) }
    }

    /// The model `spec` names: what `build_model(Some(spec), settings)` builds.
    pub fn build(&self, spec: &str) -> Result<Arc<dyn ModelClient>, AssemblyError> {
        let flag = "--model";
        self.client(&parse_spec(spec, flag)?, flag.to_owned())
    }

    /// The client of `spec`; an error names `from`, where the spec came from.
    fn client(&self, spec: &ModelSpec, from: String) -> Result<Arc<dyn ModelClient>, AssemblyError> {
        spine_models::client_with(spec, &self.options).map_err(|source| AssemblyError::ModelClient { from, source })
    }
}

/// Which model [`build_model`] would build, and where the choice came from (`--model`,
/// `ANTHROPIC_MODEL`, `<settings file>: model`, or empty: the provider whose key is set).
pub fn model_choice(flag: Option<&str>, settings: &Settings) -> Result<(ModelSpec, String), AssemblyError> {
    Ok(match (flag, spine_models::anthropic_model_from_env(), settings.model.as_deref()) {
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
    })
}

/// The flag of the fallback models, as errors name it.
const FALLBACK_FLAG: &str = "--fallback-model";

/// Why the session's model flags cannot be applied.
#[derive(Debug, thiserror::Error)]
pub enum SessionModelError {
    /// A fallback model cannot be built (its spec does not parse, or its client cannot be
    /// made); the error names `--fallback-model`.
    #[error(transparent)]
    Fallback(#[from] AssemblyError),
    /// A fallback model is the main model (Claude Code refuses that too).
    #[error("--fallback-model: `{0}` is the main model; name a different model")]
    SameAsMain(String),
}

/// The session's model with what its flags ask: the reasoning flags applied as its wire takes
/// them ([`ModelClient::with_reasoning_flags`]; a model whose wire takes none, like the
/// scripted one, stays as it is), then `fallbacks` (`--fallback-model`, comma-separated
/// specs in order, each built as `--model` builds it and given the same reasoning flags)
/// behind a [`FallbackModel`]. A fallback naming the main model (after aliases are resolved)
/// is [`SessionModelError::SameAsMain`].
pub fn session_model(
    model: Arc<dyn ModelClient>,
    flags: &ReasoningFlags,
    fallbacks: &[String],
    settings: &Settings,
) -> Result<Arc<dyn ModelClient>, SessionModelError> {
    let with_flags =
        |m: Arc<dyn ModelClient>| if flags.is_empty() { m.clone() } else { m.with_reasoning_flags(flags).unwrap_or(m) };
    let main = with_flags(model);
    if fallbacks.is_empty() {
        return Ok(main);
    }
    let options = client_options(settings, |name| std::env::var(name).ok());
    let mut built = Vec::with_capacity(fallbacks.len());
    for text in fallbacks {
        let spec = parse_spec(text, FALLBACK_FLAG)?;
        let client = spine_models::client_with(&spec, &options)
            .map_err(|source| AssemblyError::ModelClient { from: FALLBACK_FLAG.to_owned(), source })?;
        if client.model() == main.model() {
            return Err(SessionModelError::SameAsMain(text.clone()));
        }
        built.push(with_flags(client));
    }
    Ok(Arc::new(FallbackModel::new(main, built)))
}

fn parse_spec(text: &str, from: &str) -> Result<ModelSpec, AssemblyError> {
    text.parse().map_err(|source| AssemblyError::ModelSpec { from: from.to_owned(), source })
}

/// The client options of settings `model_options` (see the module documentation), reading
/// the process environment through `var`.
pub fn client_options(settings: &Settings, var: impl Fn(&str) -> Option<String>) -> spine_models::ClientOptions {
    let o = &settings.model_options;
    let from_env = || {
        var(MAX_OUTPUT_TOKENS_VAR)
            .or_else(|| settings.env.get(MAX_OUTPUT_TOKENS_VAR).cloned())
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|n| *n > 0)
    };
    spine_models::ClientOptions {
        timeouts: model_timeouts(settings),
        tool_choice: o.tool_choice.clone(),
        streaming: match o.stream {
            Some(false) => spine_models::Streaming::Off,
            Some(true) | None => spine_models::Streaming::On,
        },
        max_tokens: o.max_tokens.or_else(from_env),
        temperature: o.temperature,
        prices: o
            .prices
            .iter()
            .map(|(prefix, p)| {
                let price = spine_models::pricing::Price {
                    input: p.input,
                    output: p.output,
                    cache_write: p.cache_write,
                    cache_read: p.cache_read,
                };
                (prefix.clone(), price)
            })
            .collect(),
        prompt_caching: match o.prompt_caching {
            Some(false) => spine_models::anthropic::cache::PromptCaching::Off,
            Some(true) | None => spine_models::anthropic::cache::PromptCaching::On,
        },
        reasoning: spine_models::ReasoningOptions {
            thinking_budget_tokens: o.thinking_budget_tokens,
            reasoning_effort: o.reasoning_effort,
        },
    }
}

/// Claude Code's variable for the output limit.
pub const MAX_OUTPUT_TOKENS_VAR: &str = "CLAUDE_CODE_MAX_OUTPUT_TOKENS";

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
