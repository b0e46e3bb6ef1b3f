//! Anthropic Messages API: `POST {base_url}/v1/messages`, streamed unless configured not to.
//!
//! [`AnthropicConfig`] holds the model, the base URL (without `/v1`, like
//! `ANTHROPIC_BASE_URL` in Claude Code), the credential (`ANTHROPIC_API_KEY` sent as
//! `x-api-key`, or `ANTHROPIC_AUTH_TOKEN` sent as `Authorization: Bearer …` instead), extra
//! headers (`ANTHROPIC_CUSTOM_HEADERS`, `Name: value` lines), `max_tokens`, the optional
//! `tool_choice` and `temperature`, the extended thinking budget ([`Thinking`]), streaming (on
//! by default; `stream: false` reads one whole reply with [`stream::read_whole`]), the model's
//! price, timeouts and retry policy, and whether requests carry prompt-cache breakpoints
//! ([`cache`]). Every request carries `anthropic-version: 2023-06-01`. [`AnthropicClient`]
//! sends one request per [`ModelClient::complete`] call through the shared layers:
//! [`crate::retry`] around [`crate::http`], then [`stream::read_stream`]. Cancellation drops
//! the in-flight request at once and returns [`ModelErrorKind::Canceled`].

pub mod cache;
pub mod stream;
mod wire;

pub use wire::Thinking;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use spine_core::CancellationToken;
use spine_core::model::{ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink, ToolChoice};
use spine_protocol::run::Usage;

use self::cache::PromptCaching;
use crate::error::ClientError;
use crate::http::{Endpoint, EnvNames, MAX_REPLY_BODY, Timeouts, endpoint_from_vars};
use crate::pricing::{Price, PriceTable};
use crate::retry::{AttemptError, RetryPolicy, send_request};
use crate::secret::Secret;

/// The public endpoint, used when `ANTHROPIC_BASE_URL` is unset.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version header value.
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` sent when the caller sets none (the Messages API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The context window of Claude models (200k tokens), reported for `claude-*` model ids.
pub const CLAUDE_CONTEXT_WINDOW: u64 = 200_000;

/// The context window of the Claude models with a 1M-token window (platform.claude.com's model
/// pages, checked 2026-12-01).
pub const CLAUDE_LONG_CONTEXT_WINDOW: u64 = 1_000_000;

/// Model-id prefixes of the Claude models whose window is [`CLAUDE_LONG_CONTEXT_WINDOW`]; other
/// `claude-*` models have [`CLAUDE_CONTEXT_WINDOW`].
const LONG_CONTEXT_MODELS: &[&str] = &[
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-sonnet-4-6",
    "claude-sonnet-5",
    "claude-fable-",
    "claude-haiku-5",
];

/// The context window of a Claude model id, `None` for other ids.
pub fn claude_context_window(model: &str) -> Option<u64> {
    if LONG_CONTEXT_MODELS.iter().any(|p| model.starts_with(p)) {
        Some(CLAUDE_LONG_CONTEXT_WINDOW)
    } else {
        model.starts_with("claude-").then_some(CLAUDE_CONTEXT_WINDOW)
    }
}

/// The configuration of an [`AnthropicClient`].
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// The model id sent as `model`.
    pub model: String,
    /// The base URL, without `/v1`; `/v1/messages` is appended.
    pub base_url: String,
    /// The key, sent as `x-api-key` when present and no bearer token is set.
    pub api_key: Option<Secret>,
    /// A bearer token (`ANTHROPIC_AUTH_TOKEN`), sent as `Authorization: Bearer …` instead of
    /// the key.
    pub auth_token: Option<Secret>,
    /// Extra request headers (`ANTHROPIC_CUSTOM_HEADERS`), in order.
    pub custom_headers: Vec<(String, String)>,
    /// The output limit sent as `max_tokens` (default 8192).
    pub max_tokens: u32,
    /// Extended thinking (`model_options.thinking_budget_tokens`); off when `None`.
    pub thinking: Option<Thinking>,
    /// Connect, first-byte, idle and total timeouts.
    pub timeouts: Timeouts,
    /// Retries on 429, 5xx, 529, overloaded streams and connection failures.
    pub retry: RetryPolicy,
    /// The context window reported by [`ModelClient::context_window`] ([`claude_context_window`]).
    pub context_window: Option<u64>,
    /// Whether requests carry `cache_control` breakpoints (default on).
    pub prompt_caching: PromptCaching,
    /// `tool_choice`, sent with the tools when set.
    pub tool_choice: Option<ToolChoice>,
    /// `temperature`, sent when set.
    pub temperature: Option<f64>,
    /// Streamed replies (the default) or one whole reply.
    pub streaming: Streaming,
    /// The model's price (from the built-in table by default), for [`ModelClient::cost_usd`].
    pub price: Option<Price>,
}

/// Whether replies are streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Streaming {
    /// `stream: true`; text reaches the sink as it arrives.
    #[default]
    On,
    /// `stream: false`; the text reaches the sink in one piece.
    Off,
}

impl AnthropicConfig {
    /// A configuration for `model` at `base_url`, without a key, with default settings.
    pub fn new(model: impl Into<String>, base_url: impl Into<String>) -> Self {
        let model = model.into();
        let context_window = claude_context_window(&model);
        let price = PriceTable::builtin().price(&model);
        AnthropicConfig {
            model,
            base_url: base_url.into(),
            api_key: None,
            auth_token: None,
            custom_headers: Vec::new(),
            max_tokens: DEFAULT_MAX_TOKENS,
            thinking: None,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            context_window,
            tool_choice: None,
            temperature: None,
            streaming: Streaming::On,
            price,
            prompt_caching: PromptCaching::On,
        }
    }

    /// Sets the key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(Secret::new(key));
        self
    }

    /// From `ANTHROPIC_BASE_URL` (default [`DEFAULT_BASE_URL`]), `ANTHROPIC_API_KEY`,
    /// `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_CUSTOM_HEADERS` and `DISABLE_PROMPT_CACHING` (set and
    /// not `0`: no cache breakpoints).
    pub fn from_env(model: &str) -> Result<Self, ClientError> {
        Self::from_vars(model, |name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading variables through `var`. An empty variable
    /// counts as unset. A credential (key or bearer token) is required only for the public
    /// endpoint.
    pub fn from_vars(model: &str, var: impl Fn(&str) -> Option<String>) -> Result<Self, ClientError> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let names = EnvNames {
            base_url: "ANTHROPIC_BASE_URL",
            api_key: "ANTHROPIC_API_KEY",
            default_base_url: DEFAULT_BASE_URL,
        };
        let auth_token = set("ANTHROPIC_AUTH_TOKEN").map(|t| Secret::new(t.trim()));
        let (base_url, api_key) = match &auth_token {
            Some(_) => (
                set(names.base_url).unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
                set(names.api_key).map(|k| Secret::new(k.trim())),
            ),
            None => endpoint_from_vars(names, &var)?,
        };
        let mut config = AnthropicConfig::new(model, base_url);
        config.api_key = api_key;
        config.auth_token = auth_token;
        if let Some(text) = set("ANTHROPIC_CUSTOM_HEADERS") {
            config.custom_headers = parse_custom_headers(&text)?;
        }
        if set("DISABLE_PROMPT_CACHING").is_some_and(|v| v.trim() != "0") {
            config.prompt_caching = PromptCaching::Off;
        }
        Ok(config)
    }
}

/// `ANTHROPIC_CUSTOM_HEADERS`: one `Name: value` header per line (blank lines skipped), as in
/// Claude Code. A line without a colon or with an empty name is an error naming the line.
pub fn parse_custom_headers(text: &str) -> Result<Vec<(String, String)>, ClientError> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_owned(), value.trim().to_owned())),
            Some(_) | None => Err(ClientError::InvalidCustomHeaders { line: line.to_owned() }),
        })
        .collect()
}

/// An Anthropic Messages API client.
pub struct AnthropicClient {
    config: AnthropicConfig,
    endpoint: Endpoint,
}

impl std::fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicClient")
            .field("model", &self.config.model)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl AnthropicClient {
    /// Builds the client (checks the URL and the key's header form; sends nothing).
    pub fn new(config: AnthropicConfig) -> Result<Self, ClientError> {
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("anthropic-version"), HeaderValue::from_static(API_VERSION));
        for (name, value) in &config.custom_headers {
            let bad = || ClientError::InvalidHeader { name: name.clone() };
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            let value = HeaderValue::from_str(value).map_err(|_| bad())?;
            headers.append(name, value);
        }
        let secret = match (&config.auth_token, &config.api_key) {
            (Some(token), _) => {
                let value = Endpoint::sensitive_header(format!("Bearer {}", token.expose()), &config.base_url)?;
                headers.insert(reqwest::header::AUTHORIZATION, value);
                Some(token.clone())
            }
            (None, Some(key)) => {
                let value = Endpoint::sensitive_header(key.expose().to_owned(), &config.base_url)?;
                headers.insert(HeaderName::from_static("x-api-key"), value);
                Some(key.clone())
            }
            (None, None) => None,
        };
        let endpoint = Endpoint::new(&config.base_url, "/v1/messages", headers, config.timeouts, secret)?;
        Ok(AnthropicClient { config, endpoint })
    }

    /// Builds the client behind an `Arc<dyn ModelClient>`.
    pub fn shared(config: AnthropicConfig) -> Result<Arc<dyn ModelClient>, ClientError> {
        Ok(Arc::new(Self::new(config)?))
    }

    /// One request; every error text it produces, streamed or not, is scrubbed of the key.
    async fn attempt(&self, body: Bytes, sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
        self.attempt_unscrubbed(body, sink).await.map_err(|e| self.endpoint.scrub_error(e))
    }

    async fn attempt_unscrubbed(&self, body: Bytes, sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
        let response = self.endpoint.post(body).await?;
        let shown = self.endpoint.shown();
        match self.config.streaming {
            Streaming::On => {
                stream::read_stream(self.endpoint.body_stream(response), sink).await.map_err(|e| e.context(shown))
            }
            Streaming::Off => {
                let body = self.endpoint.read_body(response, MAX_REPLY_BODY).await?;
                stream::read_whole(&body, sink).map_err(|e| e.context(shown))
            }
        }
    }
}

#[async_trait]
impl ModelClient for AnthropicClient {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn context_window(&self) -> Option<u64> {
        self.config.context_window
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        stream: &dyn StreamSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        tracing::debug!(
            endpoint = self.endpoint.shown(),
            model = %self.config.model,
            messages = request.messages.len(),
            tools = request.tools.len(),
            "messages request"
        );
        let stable_prefix = request.stable_prefix;
        let options = wire::Options {
            max_tokens: self.config.max_tokens,
            tool_choice: self.config.tool_choice.as_ref(),
            temperature: self.config.temperature,
            thinking: self.config.thinking,
            stream: self.config.streaming == Streaming::On,
        };
        let wire = wire::request(&self.config.model, options, request);
        let send = |body| self.attempt(body, stream);
        match self.config.prompt_caching {
            PromptCaching::Off => {
                send_request(&self.config.retry, self.config.timeouts.total, stream, &wire, cancel, send).await
            }
            PromptCaching::On => {
                let mut body = serde_json::to_value(&wire)
                    .map_err(|e| ModelError::new(ModelErrorKind::Config, format!("cannot encode the request: {e}")))?;
                cache::mark(&mut body, stable_prefix);
                send_request(&self.config.retry, self.config.timeouts.total, stream, &body, cancel, send).await
            }
        }
    }

    fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        self.config.price.map(|p| p.cost(usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_claude_models_have_a_1m_window_older_ones_200k_and_others_none() {
        for (model, window) in [
            ("claude-opus-4-8", Some(1_000_000)),
            ("claude-opus-5-5", Some(1_000_000)),
            ("claude-sonnet-5", Some(1_000_000)),
            ("claude-fable-5-1", Some(1_000_000)),
            ("claude-opus-4-5-20251101", Some(200_000)),
            ("claude-sonnet-4-5", Some(200_000)),
            ("claude-haiku-4-5", Some(200_000)),
            ("my-proxy-model", None),
        ] {
            assert_eq!(claude_context_window(model), window, "{model}");
            assert_eq!(AnthropicConfig::new(model, "http://127.0.0.1:1").context_window, window, "{model}");
        }
    }
}
