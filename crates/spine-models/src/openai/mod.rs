//! OpenAI-compatible chat completions: `POST {base_url}/chat/completions`.
//!
//! [`OpenAiConfig`] is the shared [`ProviderConfig`] (model, base URL which includes `/v1` like
//! `OPENAI_BASE_URL` and the official SDKs, the optional key sent as `Authorization: Bearer` —
//! local servers need none —, timeouts, retries, `tool_choice`, `max_tokens`, `temperature`,
//! price) with [`OpenAiOptions`]: the [`Mode`] and `reasoning_effort`. [`OpenAiClient`] is the
//! shared [`crate::client::ProviderClient`] over this wire: the `wire` module builds the body,
//! [`stream::read_stream`] (or [`stream::read_whole`], also for a server that answers a
//! streamed request with one JSON body) reads the reply. A streamed attempt that ends empty
//! (servers such as llama-cpp-python's cannot stream a tool call) is retried once without
//! streaming, by the shared client.

pub mod stream;
mod wire;

use spine_core::model::{ModelReply, ModelRequest, StreamSink};
use spine_protocol::message::ReasoningEffort;

use crate::client::ProviderClient;
use crate::config::ProviderConfig;
use crate::http::{BodyStream, EnvNames};
use crate::provider::Provider;
use crate::retry::AttemptError;

/// The public endpoint, used when `OPENAI_BASE_URL` is unset.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The variables of an OpenAI endpoint: `OPENAI_BASE_URL` (default [`DEFAULT_BASE_URL`]) and
/// `OPENAI_API_KEY` (required only for the public endpoint). Shared by chat completions and the
/// Responses API.
pub(crate) const ENV: EnvNames =
    EnvNames { base_url: "OPENAI_BASE_URL", api_key: "OPENAI_API_KEY", default_base_url: DEFAULT_BASE_URL };

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

/// The configuration of an [`OpenAiClient`]. Its context window is unknown by default:
/// compatible servers serve any model. `max_tokens` is sent as `max_completion_tokens` to
/// o-series and GPT-5 models.
pub type OpenAiConfig = ProviderConfig<OpenAiOptions>;

/// An OpenAI-compatible chat-completions client.
pub type OpenAiClient = ProviderClient<OpenAiOptions>;

/// What only chat completions has.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiOptions {
    /// Streaming or not.
    pub mode: Mode,
    /// `reasoning_effort` (`model_options.reasoning_effort`); not sent when `None`.
    pub reasoning_effort: Option<ReasoningEffort>,
}

impl Provider for OpenAiOptions {
    const CLIENT: &'static str = "OpenAiClient";
    const REQUEST: &'static str = "chat completions";
    const PATH: &'static str = "/chat/completions";
    const ENV: EnvNames = ENV;
    const JSON_ANSWERS_WHOLE: bool = true;

    fn streams(&self) -> bool {
        matches!(self.mode, Mode::Streaming { .. })
    }

    fn with_reasoning_effort(&self, effort: ReasoningEffort) -> Option<Self> {
        Some(OpenAiOptions { reasoning_effort: Some(effort), ..*self })
    }

    fn body(config: &OpenAiConfig, request: ModelRequest<'_>, stream: bool) -> serde_json::Result<Vec<u8>> {
        let options = wire::Options {
            tool_choice: config.tool_choice.as_ref(),
            max_tokens: config.max_tokens,
            temperature: config.temperature,
            reasoning_effort: config.provider.reasoning_effort,
        };
        let mode = if stream { config.provider.mode } else { Mode::NonStreaming };
        serde_json::to_vec(&wire::request(&config.model, request, mode, options))
    }

    async fn read_stream(body: BodyStream, sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
        stream::read_stream(body, sink).await
    }

    fn read_whole(body: &[u8], sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
        stream::read_whole(body, sink)
    }
}
