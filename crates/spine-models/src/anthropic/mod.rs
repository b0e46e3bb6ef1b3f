//! Anthropic Messages API: `POST {base_url}/v1/messages`, always streamed.
//!
//! [`AnthropicConfig`] holds the model, the base URL (without `/v1`, like
//! `ANTHROPIC_BASE_URL` in Claude Code), the key (sent as `x-api-key`), `max_tokens`, timeouts
//! and retry policy. Every request carries `anthropic-version: 2023-06-01`. [`AnthropicClient`]
//! sends one request per [`ModelClient::complete`] call through the shared layers:
//! [`crate::retry`] around [`crate::http`], then [`stream::read_stream`]. Cancellation drops
//! the in-flight request at once and returns [`ModelErrorKind::Canceled`](spine_core::model::ModelErrorKind::Canceled).

pub mod stream;
mod wire;

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
    /// The key, sent as `x-api-key` when present.
    pub api_key: Option<Secret>,
    /// The output limit sent as `max_tokens` (default 8192).
    pub max_tokens: u32,
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
            max_tokens: DEFAULT_MAX_TOKENS,
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

    /// From `ANTHROPIC_BASE_URL` (default [`DEFAULT_BASE_URL`]) and `ANTHROPIC_API_KEY`.
    pub fn from_env(model: &str) -> Result<Self, ClientError> {
        Self::from_vars(model, |name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading variables through `var`. An empty variable
    /// counts as unset. The key is required only for the public endpoint.
    pub fn from_vars(model: &str, var: impl Fn(&str) -> Option<String>) -> Result<Self, ClientError> {
        let names = EnvNames {
            base_url: "ANTHROPIC_BASE_URL",
            api_key: "ANTHROPIC_API_KEY",
            default_base_url: DEFAULT_BASE_URL,
        };
        let (base_url, api_key) = endpoint_from_vars(names, var)?;
        let mut config = AnthropicConfig::new(model, base_url);
        config.api_key = api_key;
        Ok(config)
    }
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
        if let Some(key) = &config.api_key {
            let value = Endpoint::sensitive_header(key.expose().to_owned(), &config.base_url)?;
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        let endpoint =
            Endpoint::new(&config.base_url, "/v1/messages", headers, config.timeouts, config.api_key.clone())?;
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
        let wire = wire::request(&self.config.model, self.config.max_tokens, request);
        send_request(&self.config.retry, self.config.timeouts.total, stream, &wire, cancel, |body| {
            self.attempt(body, stream)
        })
        .await
    }
}
