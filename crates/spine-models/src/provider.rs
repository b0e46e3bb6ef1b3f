//! [`Provider`]: what one HTTP provider adds to the shared client — its wire format and
//! nothing else.
//!
//! Everything else is shared: the options every provider has ([`ProviderConfig`]: model, base
//! URL, key, extra headers, timeouts, retries, `tool_choice`, `max_tokens`, `temperature`,
//! price, context window), the client ([`ProviderClient`]: the reqwest client and its headers,
//! the retry loop, error mapping and scrubbing, cancellation, the switch to a whole reply when a
//! stream ends empty), and the event-stream steps (`sse::assemble`). A provider names
//! its endpoint path and environment variables, writes its request body, and maps its stream
//! events (and, when it can answer whole, its whole reply) to a [`ModelReply`]. Its own options
//! are the `provider` field of the configuration: the type implementing this trait.
//!
//! [`ProviderClient`]: crate::client::ProviderClient

use std::future::Future;

use reqwest::header::{AUTHORIZATION, HeaderName};
use spine_core::model::{ModelErrorKind, ModelReply, ModelRequest, StreamSink};
use spine_core::model_reasoning::ReasoningFlags;
use spine_protocol::message::ReasoningEffort;

use crate::config::ProviderConfig;
use crate::error::ClientError;
use crate::http::{BodyStream, EnvNames, endpoint_from_vars};
use crate::retry::AttemptError;
use crate::secret::Secret;

/// The header that carries a credential, its value, and the secret inside it (scrubbed from
/// whatever the server sends back).
#[derive(Debug)]
pub struct Credential<'a> {
    /// The header (`authorization`, `x-api-key`).
    pub header: HeaderName,
    /// Its value; sent marked sensitive.
    pub value: String,
    /// The secret the value carries.
    pub secret: &'a Secret,
}

/// One provider's wire format; implemented by the type of its own options.
pub trait Provider: Clone + std::fmt::Debug + Default + Send + Sync + Sized + 'static {
    /// The client's name in `Debug` output (`AnthropicClient`).
    const CLIENT: &'static str;
    /// What a request is called in the debug log (`messages`, `chat completions`).
    const REQUEST: &'static str;
    /// The path appended to the base URL (`/v1/messages`).
    const PATH: &'static str;
    /// The environment variables of the base URL and the key.
    const ENV: EnvNames;
    /// Headers sent with every request, before the custom headers and the credential.
    const HEADERS: &'static [(&'static str, &'static str)] = &[];
    /// Whether a JSON answer to a streamed request is read as a whole reply (compatible servers
    /// that ignore `stream: true`).
    const JSON_ANSWERS_WHOLE: bool = false;

    /// The configuration from the provider's variables, read through `var` (an empty variable
    /// counts as unset). By default the base URL and key of [`Provider::ENV`]; the key is
    /// required only for the public endpoint.
    fn from_vars(model: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<ProviderConfig<Self>, ClientError> {
        let (base_url, api_key) = endpoint_from_vars(Self::ENV, var)?;
        Ok(ProviderConfig { api_key, ..ProviderConfig::new(model, base_url) })
    }

    /// The context window of `model`, when the provider knows it (unknown by default).
    fn context_window(_model: &str) -> Option<u64> {
        None
    }

    /// The credential header: by default the key as `Authorization: Bearer …`.
    fn credential(config: &ProviderConfig<Self>) -> Option<Credential<'_>> {
        config.api_key.as_ref().map(|key| Credential {
            header: AUTHORIZATION,
            value: format!("Bearer {}", key.expose()),
            secret: key,
        })
    }

    /// Where the credential came from, as Claude Code's `apiKeySource` names it: by default
    /// the key's variable ([`EnvNames::api_key`]) when a key is set, else `none`.
    fn key_source(config: &ProviderConfig<Self>) -> &'static str {
        if config.api_key.is_some() { Self::ENV.api_key } else { "none" }
    }

    /// Whether requests ask for a streamed reply (by default, always).
    fn streams(&self) -> bool {
        true
    }

    /// These options with `effort` as the reasoning effort, when the wire takes one.
    fn with_reasoning_effort(&self, _effort: ReasoningEffort) -> Option<Self> {
        None
    }

    /// These options with the session's reasoning flags applied for `model`, when the wire
    /// takes any of them. By default the effort alone, as [`Provider::with_reasoning_effort`]
    /// takes it ([`EffortLevel::reasoning_effort`](spine_core::model_reasoning::EffortLevel::reasoning_effort));
    /// thinking has no counterpart.
    fn with_reasoning_flags(&self, _model: &str, flags: &ReasoningFlags) -> Option<Self> {
        flags.effort.and_then(|effort| self.with_reasoning_effort(effort.reasoning_effort()))
    }

    /// The JSON request body; `stream` says whether it asks for a streamed reply.
    fn body(config: &ProviderConfig<Self>, request: ModelRequest<'_>, stream: bool) -> serde_json::Result<Vec<u8>>;

    /// Reads a streamed reply from its body, forwarding text to `sink`.
    fn read_stream(
        body: BodyStream,
        sink: &dyn StreamSink,
    ) -> impl Future<Output = Result<ModelReply, AttemptError>> + Send;

    /// Reads a whole (non-streamed) reply; its text goes to `sink` in one piece. By default a
    /// provider that only streams has none.
    fn read_whole(_body: &[u8], _sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
        Err(AttemptError::new(ModelErrorKind::InvalidReply, "a whole reply where a stream was expected"))
    }
}
