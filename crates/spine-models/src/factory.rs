//! Building a client from a `--model` spec ([`client_for`], or [`client_with`] and
//! [`ClientOptions`] for timeouts) and choosing a spec when none was
//! given ([`default_spec_from_env`]).
//!
//! Without `--model`, `ANTHROPIC_MODEL` names an Anthropic model ([`anthropic_model_from_env`];
//! the caller checks it before the `model` setting, as Claude Code does). Without either and
//! without a `model` setting, the provider follows the keys that are set:
//! `anthropic:`[`DEFAULT_ANTHROPIC_MODEL`] when `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`
//! is set, else `openai:`[`DEFAULT_OPENAI_MODEL`] when `OPENAI_API_KEY` is set, else none (the
//! caller then explains how to choose one).

use std::sync::Arc;

use spine_core::model::{ModelClient, ToolChoice};
use spine_protocol::message::ReasoningEffort;

use crate::anthropic::cache::PromptCaching;
use crate::anthropic::{AnthropicClient, AnthropicConfig, Thinking};
use crate::config::{ProviderConfig, Streaming};
use crate::error::ClientError;
use crate::http::Timeouts;
use crate::openai::{Mode, OpenAiClient, OpenAiConfig, OpenAiOptions};
use crate::pricing::{Price, PriceTable};
use crate::responses::{ResponsesClient, ResponsesConfig, ResponsesOptions};
use crate::scripted::ScriptedModel;
use crate::spec::ModelSpec;

/// The Anthropic model used when only `ANTHROPIC_API_KEY` selects the provider: the current
/// Sonnet alias, the model Claude Code defaults to for agentic work.
pub const DEFAULT_ANTHROPIC_MODEL: &str = crate::spec::SONNET;

/// The OpenAI model used when only `OPENAI_API_KEY` selects the provider: a general model with
/// reliable tool calling and a 1M-token window.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";

/// What a caller may set on every HTTP client it builds (settings `model_options`; the
/// scripted model ignores it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientOptions {
    /// Connect, first-byte, idle and total timeouts.
    pub timeouts: Timeouts,
    /// `tool_choice`, sent with the tools when set.
    pub tool_choice: Option<ToolChoice>,
    /// Streamed replies (the default) or whole ones (`model_options.stream: false`).
    pub streaming: Streaming,
    /// The output limit (unset: the provider's default; Anthropic requires one and sends
    /// [`crate::anthropic::DEFAULT_MAX_TOKENS`]).
    pub max_tokens: Option<u32>,
    /// `temperature`, sent when set.
    pub temperature: Option<f64>,
    /// Prices over the built-in table (`model_options.prices`): model-id prefix → price.
    pub prices: Vec<(String, Price)>,
    /// Extended thinking and reasoning effort.
    pub reasoning: ReasoningOptions,
    /// Prompt-cache breakpoints (`model_options.prompt_caching`); `DISABLE_PROMPT_CACHING`
    /// turns them off too.
    pub prompt_caching: PromptCaching,
}

impl ClientOptions {
    /// `config` with these options' timeouts, request fields and price.
    fn apply<P>(&self, config: ProviderConfig<P>) -> ProviderConfig<P> {
        let price = self.price(&config.model);
        ProviderConfig {
            timeouts: self.timeouts,
            tool_choice: self.tool_choice.clone(),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            price,
            ..config
        }
    }

    /// The price of `model`: the built-in table with these options' rows over it.
    fn price(&self, model: &str) -> Option<Price> {
        if self.prices.is_empty() {
            PriceTable::builtin().price(model)
        } else {
            PriceTable::builtin().with_overrides(&self.prices).price(model)
        }
    }
}

/// How much the model reasons (settings `model_options.thinking_budget_tokens` and
/// `model_options.reasoning_effort`). Each provider takes the option it understands:
/// Anthropic the thinking budget, OpenAI (chat completions and Responses) the effort.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReasoningOptions {
    /// Anthropic extended thinking's `budget_tokens` (at least 1024); off when `None`.
    pub thinking_budget_tokens: Option<u32>,
    /// OpenAI reasoning effort; the server's default when `None`.
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// Builds the client a spec names with default options: the scripted model from its file, or
/// an OpenAI chat-completions, OpenAI Responses or Anthropic client configured from the
/// environment ([`OpenAiConfig::from_env`], [`ResponsesConfig::from_env`],
/// [`AnthropicConfig::from_env`]).
pub fn client_for(spec: &ModelSpec) -> Result<Arc<dyn ModelClient>, ClientError> {
    client_with(spec, &ClientOptions::default())
}

/// As [`client_for`], with `options`.
pub fn client_with(spec: &ModelSpec, options: &ClientOptions) -> Result<Arc<dyn ModelClient>, ClientError> {
    client_with_vars(spec, options, |name| std::env::var(name).ok())
}

/// As [`client_for`], reading variables through `var`.
pub fn client_for_vars(
    spec: &ModelSpec,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ModelClient>, ClientError> {
    client_with_vars(spec, &ClientOptions::default(), var)
}

/// As [`client_with`], reading variables through `var`.
pub fn client_with_vars(
    spec: &ModelSpec,
    options: &ClientOptions,
    var: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ModelClient>, ClientError> {
    match spec {
        ModelSpec::Scripted(path) => Ok(Arc::new(ScriptedModel::from_file(path)?)),
        ModelSpec::OpenAi(model) => {
            let config = options.apply(OpenAiConfig::from_vars(model, var)?);
            let mode = match options.streaming {
                Streaming::On => Mode::default(),
                Streaming::Off => Mode::NonStreaming,
            };
            let provider = OpenAiOptions { mode, reasoning_effort: options.reasoning.reasoning_effort };
            OpenAiClient::shared(ProviderConfig { provider, ..config })
        }
        ModelSpec::OpenAiResponses(model) => {
            let config = options.apply(ResponsesConfig::from_vars(model, var)?);
            let provider = ResponsesOptions { reasoning_effort: options.reasoning.reasoning_effort };
            ResponsesClient::shared(ProviderConfig { provider, ..config })
        }
        ModelSpec::Anthropic(model) => {
            let mut config = options.apply(AnthropicConfig::from_vars(model, var)?);
            let provider = &mut config.provider;
            provider.streaming = options.streaming;
            provider.thinking =
                options.reasoning.thinking_budget_tokens.map(|budget_tokens| Thinking::Enabled { budget_tokens });
            if options.prompt_caching == PromptCaching::Off {
                provider.prompt_caching = PromptCaching::Off;
            }
            AnthropicClient::shared(config)
        }
    }
}

/// The spec to use when none was given, from `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`.
pub fn default_spec_from_env() -> Option<ModelSpec> {
    default_spec_from_vars(|name| std::env::var(name).ok())
}

/// The Anthropic model `ANTHROPIC_MODEL` names, if it is set (aliases resolved).
pub fn anthropic_model_from_env() -> Option<ModelSpec> {
    anthropic_model_from_vars(|name| std::env::var(name).ok())
}

/// As [`anthropic_model_from_env`], reading variables through `var`.
pub fn anthropic_model_from_vars(var: impl Fn(&str) -> Option<String>) -> Option<ModelSpec> {
    var("ANTHROPIC_MODEL").and_then(|name| ModelSpec::anthropic_named(&name))
}

/// As [`default_spec_from_env`], reading variables through `var`. Empty variables count as
/// unset.
pub fn default_spec_from_vars(var: impl Fn(&str) -> Option<String>) -> Option<ModelSpec> {
    let set = |name: &str| var(name).is_some_and(|v| !v.trim().is_empty());
    if set("ANTHROPIC_API_KEY") || set("ANTHROPIC_AUTH_TOKEN") {
        Some(ModelSpec::Anthropic(DEFAULT_ANTHROPIC_MODEL.to_owned()))
    } else if set("OPENAI_API_KEY") {
        Some(ModelSpec::OpenAi(DEFAULT_OPENAI_MODEL.to_owned()))
    } else {
        None
    }
}
