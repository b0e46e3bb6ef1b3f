//! The OpenAI Responses API: `POST {base_url}/responses`, always streamed, stateless.
//!
//! The model spec `openai-responses:MODEL` selects it. [`ResponsesConfig`] reads the same
//! variables as chat completions (`OPENAI_BASE_URL`, which includes `/v1`, and
//! `OPENAI_API_KEY`, sent as `Authorization: Bearer`; required only for the public endpoint)
//! and has the same timeouts and retry policy. [`ResponsesClient`] sends one request per
//! [`ModelClient::complete`] call through the shared layers: [`crate::retry`] around
//! [`crate::http`], then [`stream::read_stream`].
//!
//! Every request carries the whole conversation (`store: false`, no `previous_response_id`):
//! a reasoning model's reasoning items come back with `include:
//! ["reasoning.encrypted_content"]` and are sent back encrypted with their turn, so nothing is
//! kept on the server. The include is sent only to reasoning models ([`reasons`]): the
//! others reject it. Cancellation drops the
//! in-flight request at once and returns
//! [`ModelErrorKind::Canceled`](spine_core::model::ModelErrorKind::Canceled).

pub mod stream;
mod wire;

pub use wire::{REASONING_MODEL_PREFIXES, reasons};

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use spine_core::CancellationToken;
use spine_core::model::{ModelClient, ModelError, ModelReply, ModelRequest, StreamSink, ToolChoice};
use spine_protocol::message::ReasoningEffort;
use spine_protocol::run::Usage;

use crate::error::ClientError;
use crate::http::{Endpoint, Timeouts};
use crate::pricing::{Price, PriceTable};
use crate::retry::{AttemptError, RetryPolicy, send_request};
use crate::secret::Secret;

/// The configuration of a [`ResponsesClient`].
#[derive(Debug, Clone)]
pub struct ResponsesConfig {
    /// The model id sent as `model`.
    pub model: String,
    /// The base URL, including `/v1`; `/responses` is appended.
    pub base_url: String,
    /// The key, sent as a bearer token when present.
    pub api_key: Option<Secret>,
    /// `reasoning: {effort, summary: "auto"}` (`model_options.reasoning_effort`); not sent when
    /// `None` (models without reasoning reject the field).
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Connect, first-byte, idle and total timeouts.
    pub timeouts: Timeouts,
    /// Retries on 429, 5xx and connection failures.
    pub retry: RetryPolicy,
    /// The context window reported by [`ModelClient::context_window`] (unknown by default).
    pub context_window: Option<u64>,
    /// `tool_choice`, sent with the tools when set.
    pub tool_choice: Option<ToolChoice>,
    /// `max_output_tokens`, sent when set.
    pub max_tokens: Option<u32>,
    /// `temperature`, sent when set.
    pub temperature: Option<f64>,
    /// The model's price (from the built-in table by default), for [`ModelClient::cost_usd`].
    pub price: Option<Price>,
}

impl ResponsesConfig {
    /// A configuration for `model` at `base_url`, without a key, with default settings.
    pub fn new(model: impl Into<String>, base_url: impl Into<String>) -> Self {
        let model = model.into();
        ResponsesConfig {
            price: PriceTable::builtin().price(&model),
            tool_choice: None,
            max_tokens: None,
            temperature: None,
            model,
            base_url: base_url.into(),
            api_key: None,
            reasoning_effort: None,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            context_window: None,
        }
    }

    /// Sets the key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(Secret::new(key));
        self
    }

    /// From `OPENAI_BASE_URL` (default [`crate::openai::DEFAULT_BASE_URL`]) and `OPENAI_API_KEY`, as chat
    /// completions.
    pub fn from_env(model: &str) -> Result<Self, ClientError> {
        Self::from_vars(model, |name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading variables through `var`. An empty variable
    /// counts as unset. The key is required only for the public endpoint.
    pub fn from_vars(model: &str, var: impl Fn(&str) -> Option<String>) -> Result<Self, ClientError> {
        let (base_url, api_key) = crate::openai::endpoint_vars(var)?;
        let mut config = ResponsesConfig::new(model, base_url);
        config.api_key = api_key;
        Ok(config)
    }
}

/// An OpenAI Responses API client.
pub struct ResponsesClient {
    config: ResponsesConfig,
    endpoint: Endpoint,
}

impl std::fmt::Debug for ResponsesClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponsesClient")
            .field("model", &self.config.model)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl ResponsesClient {
    /// Builds the client (checks the URL and the key's header form; sends nothing).
    pub fn new(config: ResponsesConfig) -> Result<Self, ClientError> {
        let endpoint =
            crate::openai::bearer_endpoint(&config.base_url, "/responses", config.api_key.as_ref(), config.timeouts)?;
        Ok(ResponsesClient { config, endpoint })
    }

    /// Builds the client behind an `Arc<dyn ModelClient>`.
    pub fn shared(config: ResponsesConfig) -> Result<Arc<dyn ModelClient>, ClientError> {
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
impl ModelClient for ResponsesClient {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn with_reasoning_effort(&self, effort: ReasoningEffort) -> Option<Arc<dyn ModelClient>> {
        let config = ResponsesConfig { reasoning_effort: Some(effort), ..self.config.clone() };
        ResponsesClient::shared(config).ok()
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
            "responses request"
        );
        let options = wire::Options {
            effort: self.config.reasoning_effort,
            tool_choice: self.config.tool_choice.as_ref(),
            max_output_tokens: self.config.max_tokens,
            temperature: self.config.temperature,
        };
        let wire = wire::request(&self.config.model, request, options);
        send_request(&self.config.retry, self.config.timeouts.total, stream, &wire, cancel, |body| {
            self.attempt(body, stream)
        })
        .await
    }

    fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        self.config.price.map(|p| p.cost(usage))
    }
}
