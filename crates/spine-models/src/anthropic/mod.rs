//! Anthropic Messages API: `POST {base_url}/v1/messages`, always streamed.
//!
//! [`AnthropicConfig`] holds the model, the base URL (without `/v1`, like
//! `ANTHROPIC_BASE_URL` in Claude Code), the credential (`ANTHROPIC_API_KEY` sent as
//! `x-api-key`, or `ANTHROPIC_AUTH_TOKEN` sent as `Authorization: Bearer …` instead), extra
//! headers (`ANTHROPIC_CUSTOM_HEADERS`, `Name: value` lines), `max_tokens`, the extended
//! thinking budget ([`Thinking`]), timeouts and retry policy. Every request carries
//! `anthropic-version: 2023-06-01`. [`AnthropicClient`] sends one request per
//! [`ModelClient::complete`] call through the shared layers: [`crate::retry`] around
//! [`crate::http`], then [`stream::read_stream`]. Cancellation drops the in-flight request at
//! once and returns [`ModelErrorKind::Canceled`](spine_core::model::ModelErrorKind::Canceled).

pub mod stream;
mod wire;

pub use wire::Thinking;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use spine_core::CancellationToken;
use spine_core::model::{ModelClient, ModelError, ModelReply, ModelRequest, StreamSink};

use crate::error::ClientError;
use crate::http::{Endpoint, EnvNames, Timeouts, endpoint_from_vars};
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
    /// The context window reported by [`ModelClient::context_window`] (200k for `claude-*`).
    pub context_window: Option<u64>,
}

impl AnthropicConfig {
    /// A configuration for `model` at `base_url`, without a key, with default settings.
    pub fn new(model: impl Into<String>, base_url: impl Into<String>) -> Self {
        let model = model.into();
        let context_window = model.starts_with("claude-").then_some(CLAUDE_CONTEXT_WINDOW);
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
        }
    }

    /// Sets the key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(Secret::new(key));
        self
    }

    /// From `ANTHROPIC_BASE_URL` (default [`DEFAULT_BASE_URL`]), `ANTHROPIC_API_KEY`,
    /// `ANTHROPIC_AUTH_TOKEN` and `ANTHROPIC_CUSTOM_HEADERS`.
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
        stream::read_stream(self.endpoint.body_stream(response), sink)
            .await
            .map_err(|e| e.context(self.endpoint.shown()))
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
        let wire = wire::request(&self.config.model, self.config.max_tokens, self.config.thinking, request);
        send_request(&self.config.retry, self.config.timeouts.total, stream, &wire, cancel, |body| {
            self.attempt(body, stream)
        })
        .await
    }
}
