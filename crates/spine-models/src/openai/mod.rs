//! OpenAI-compatible chat completions: `POST {base_url}/chat/completions`.
//!
//! [`OpenAiConfig`] holds the model, the base URL (which includes `/v1`, like `OPENAI_BASE_URL`
//! and the official SDKs), the optional key (sent as `Authorization: Bearer`; local servers
//! need none), the [`Mode`], the optional request fields (`tool_choice`, `max_tokens`,
//! `temperature`, `reasoning_effort`), the model's price, timeouts and retry policy. [`OpenAiClient`] sends one
//! request per [`ModelClient::complete`] call through the shared layers: [`crate::retry`] around
//! [`crate::http`], then [`stream::read_stream`] (or [`stream::read_whole`]) for the reply.
//!
//! A streamed attempt that ends empty ([`crate::retry::StreamEnd::Empty`]: servers such as
//! llama-cpp-python's cannot stream a tool call) is retried at once, one time, without
//! streaming; every later attempt of the request stays non-streaming. The switch is an attempt
//! report like any retry, so it shows in the trace and with `-v`.
//! Cancellation drops the in-flight request at once and returns
//! [`ModelErrorKind::Canceled`].

pub mod stream;
mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap};
use spine_core::CancellationToken;
use spine_core::model::{ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink, ToolChoice};
use spine_protocol::message::ReasoningEffort;
use spine_protocol::run::Usage;

use crate::error::ClientError;
use crate::http::{Endpoint, EnvNames, MAX_REPLY_BODY, Timeouts, endpoint_from_vars};
use crate::pricing::{Price, PriceTable};
use crate::retry::{AttemptError, RetryPolicy, StreamEnd, send_request};
use crate::secret::Secret;

/// The public endpoint, used when `OPENAI_BASE_URL` is unset.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How the reply is requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `stream: true`; text reaches the sink as it arrives.
    Streaming {
        /// Send `stream_options: {"include_usage": true}` (some servers reject the field).
        include_usage: bool,
    },
    /// `stream: false`; the text reaches the sink in one piece.
    NonStreaming,
}

impl Default for Mode {
    fn default() -> Self {
        Mode::Streaming { include_usage: true }
    }
}

/// The configuration of an [`OpenAiClient`].
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// The model id sent as `model`.
    pub model: String,
    /// The base URL, including `/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// The key, sent as a bearer token when present.
    pub api_key: Option<Secret>,
    /// Streaming or not.
    pub mode: Mode,
    /// `reasoning_effort` (`model_options.reasoning_effort`); not sent when `None`.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Connect, first-byte, idle and total timeouts.
    pub timeouts: Timeouts,
    /// Retries on 429, 5xx and connection failures.
    pub retry: RetryPolicy,
    /// The context window reported by [`ModelClient::context_window`] (unknown by default:
    /// compatible servers serve any model).
    pub context_window: Option<u64>,
    /// `tool_choice`, sent with the tools when set.
    pub tool_choice: Option<ToolChoice>,
    /// The output limit, sent when set (`max_tokens`, or `max_completion_tokens` for o-series
    /// and GPT-5 models).
    pub max_tokens: Option<u32>,
    /// `temperature`, sent when set.
    pub temperature: Option<f64>,
    /// The model's price (from the built-in table by default), for [`ModelClient::cost_usd`].
    pub price: Option<Price>,
}

impl OpenAiConfig {
    /// A configuration for `model` at `base_url`, without a key, with default settings.
    pub fn new(model: impl Into<String>, base_url: impl Into<String>) -> Self {
        let model = model.into();
        OpenAiConfig {
            model: model.clone(),
            base_url: base_url.into(),
            api_key: None,
            mode: Mode::default(),
            reasoning_effort: None,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            context_window: None,
            tool_choice: None,
            max_tokens: None,
            temperature: None,
            price: PriceTable::builtin().price(&model),
        }
    }

    /// Sets the key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(Secret::new(key));
        self
    }

    /// From `OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]) and `OPENAI_API_KEY`.
    pub fn from_env(model: &str) -> Result<Self, ClientError> {
        Self::from_vars(model, |name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading variables through `var`. An empty variable
    /// counts as unset. The key is required only for the public endpoint.
    pub fn from_vars(model: &str, var: impl Fn(&str) -> Option<String>) -> Result<Self, ClientError> {
        let (base_url, api_key) = endpoint_vars(var)?;
        let mut config = OpenAiConfig::new(model, base_url);
        config.api_key = api_key;
        Ok(config)
    }
}

/// The base URL and key of an OpenAI endpoint: `OPENAI_BASE_URL` (default
/// [`DEFAULT_BASE_URL`]) and `OPENAI_API_KEY` (required only for the public endpoint). Shared by
/// chat completions and the Responses API.
pub(crate) fn endpoint_vars(var: impl Fn(&str) -> Option<String>) -> Result<(String, Option<Secret>), ClientError> {
    let names = EnvNames { base_url: "OPENAI_BASE_URL", api_key: "OPENAI_API_KEY", default_base_url: DEFAULT_BASE_URL };
    endpoint_from_vars(names, var)
}

/// The endpoint `base_url` + `path` with the key as `Authorization: Bearer …` (sensitive).
pub(crate) fn bearer_endpoint(
    base_url: &str,
    path: &str,
    api_key: Option<&Secret>,
    timeouts: Timeouts,
) -> Result<Endpoint, ClientError> {
    let mut headers = HeaderMap::new();
    if let Some(key) = api_key {
        let value = Endpoint::sensitive_header(format!("Bearer {}", key.expose()), base_url)?;
        headers.insert(AUTHORIZATION, value);
    }
    Endpoint::new(base_url, path, headers, timeouts, api_key.cloned())
}

/// An OpenAI-compatible chat-completions client.
pub struct OpenAiClient {
    config: OpenAiConfig,
    endpoint: Endpoint,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("model", &self.config.model)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl OpenAiClient {
    /// Builds the client (checks the URL and the key's header form; sends nothing).
    pub fn new(config: OpenAiConfig) -> Result<Self, ClientError> {
        let endpoint =
            bearer_endpoint(&config.base_url, "/chat/completions", config.api_key.as_ref(), config.timeouts)?;
        Ok(OpenAiClient { config, endpoint })
    }

    /// Builds the client behind an `Arc<dyn ModelClient>`.
    pub fn shared(config: OpenAiConfig) -> Result<Arc<dyn ModelClient>, ClientError> {
        Ok(Arc::new(Self::new(config)?))
    }

    /// One request; every error text it produces, streamed or not, is scrubbed of the key.
    async fn attempt(&self, body: Bytes, sink: &dyn StreamSink, mode: Mode) -> Result<ModelReply, AttemptError> {
        self.attempt_unscrubbed(body, sink, mode).await.map_err(|e| self.endpoint.scrub_error(e))
    }

    async fn attempt_unscrubbed(
        &self,
        body: Bytes,
        sink: &dyn StreamSink,
        mode: Mode,
    ) -> Result<ModelReply, AttemptError> {
        let response = self.endpoint.post(body).await?;
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let shown = self.endpoint.shown();
        match mode {
            // A server that ignores `stream: true` answers with one JSON body: read it whole.
            Mode::Streaming { .. } if !is_json => {
                stream::read_stream(self.endpoint.body_stream(response), sink).await.map_err(|e| e.context(shown))
            }
            Mode::Streaming { .. } | Mode::NonStreaming => {
                let body = self.endpoint.read_body(response, MAX_REPLY_BODY).await?;
                stream::read_whole(&body, sink).map_err(|e| e.context(shown))
            }
        }
    }

    fn options(&self) -> wire::Options<'_> {
        wire::Options {
            tool_choice: self.config.tool_choice.as_ref(),
            max_tokens: self.config.max_tokens,
            temperature: self.config.temperature,
            reasoning_effort: self.config.reasoning_effort,
        }
    }
}

#[async_trait]
impl ModelClient for OpenAiClient {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn with_reasoning_effort(&self, effort: ReasoningEffort) -> Option<Arc<dyn ModelClient>> {
        let config = OpenAiConfig { reasoning_effort: Some(effort), ..self.config.clone() };
        OpenAiClient::shared(config).ok()
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
            "chat completions request"
        );
        let wire = wire::request(&self.config.model, request, self.config.mode, self.options());
        // Set once a streamed attempt ended empty: the rest of the request does not stream.
        let unstreamed = AtomicBool::new(false);
        let unstreamed = &unstreamed;
        send_request(&self.config.retry, self.config.timeouts.total, stream, &wire, cancel, |body| async move {
            if unstreamed.load(Ordering::SeqCst) {
                let whole = wire::request(&self.config.model, request, Mode::NonStreaming, self.options());
                let body = serde_json::to_vec(&whole).map(Bytes::from).map_err(|e| {
                    AttemptError::new(ModelErrorKind::Config, format!("cannot encode the request: {e}"))
                })?;
                return self.attempt(body, stream, Mode::NonStreaming).await;
            }
            match self.attempt(body, stream, self.config.mode).await {
                Err(mut e) if e.end == StreamEnd::Empty => {
                    unstreamed.store(true, Ordering::SeqCst);
                    e.error.message = format!("{}; the next attempt does not stream", e.error.message);
                    e.retry_after = Some(Duration::ZERO);
                    Err(e)
                }
                other => other,
            }
        })
        .await
    }

    fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        self.config.price.map(|p| p.cost(usage))
    }
}
