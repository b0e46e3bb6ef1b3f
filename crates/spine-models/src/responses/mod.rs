//! The OpenAI Responses API: `POST {base_url}/responses`, always streamed, stateless.
//!
//! The model spec `openai-responses:MODEL` selects it. [`ResponsesConfig`] is the shared
//! [`ProviderConfig`], read from the same variables as chat completions (`OPENAI_BASE_URL`,
//! which includes `/v1`, and `OPENAI_API_KEY`, sent as `Authorization: Bearer`; required only
//! for the public endpoint), with [`ResponsesOptions`]: the reasoning effort. `max_tokens` is
//! sent as `max_output_tokens`. [`ResponsesClient`] is the shared
//! [`crate::client::ProviderClient`] over this wire: the `wire` module builds the body,
//! [`stream::read_stream`] reads the reply.
//!
//! Every request carries the whole conversation (`store: false`, no `previous_response_id`):
//! a reasoning model's reasoning items come back with `include:
//! ["reasoning.encrypted_content"]` and are sent back encrypted with their turn, so nothing is
//! kept on the server. The include is sent only to reasoning models ([`reasons`]): the
//! others reject it.

pub mod stream;
mod wire;

pub use wire::{REASONING_MODEL_PREFIXES, reasons};

use spine_core::model::{ModelReply, ModelRequest, StreamSink};
use spine_protocol::message::ReasoningEffort;

use crate::client::ProviderClient;
use crate::config::ProviderConfig;
use crate::http::{BodyStream, EnvNames};
use crate::provider::Provider;
use crate::retry::AttemptError;

/// The configuration of a [`ResponsesClient`] (its context window is unknown by default).
pub type ResponsesConfig = ProviderConfig<ResponsesOptions>;

/// An OpenAI Responses API client.
pub type ResponsesClient = ProviderClient<ResponsesOptions>;

/// What only the Responses API has.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponsesOptions {
    /// `reasoning: {effort, summary: "auto"}` (`model_options.reasoning_effort`); not sent when
    /// `None` (models without reasoning reject the field).
    pub reasoning_effort: Option<ReasoningEffort>,
}

impl Provider for ResponsesOptions {
    const CLIENT: &'static str = "ResponsesClient";
    const REQUEST: &'static str = "responses";
    const PATH: &'static str = "/responses";
    const ENV: EnvNames = crate::openai::ENV;

    fn with_reasoning_effort(&self, effort: ReasoningEffort) -> Option<Self> {
        Some(ResponsesOptions { reasoning_effort: Some(effort) })
    }

    fn body(config: &ResponsesConfig, request: ModelRequest<'_>, _stream: bool) -> serde_json::Result<Vec<u8>> {
        let options = wire::Options {
            effort: config.provider.reasoning_effort,
            tool_choice: config.tool_choice.as_ref(),
            max_output_tokens: config.max_tokens,
            temperature: config.temperature,
        };
        serde_json::to_vec(&wire::request(&config.model, request, options))
    }

    async fn read_stream(body: BodyStream, sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
        stream::read_stream(body, sink).await
    }
}
