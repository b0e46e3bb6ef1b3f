//! The [`ModelClient`] contract: send the provider-neutral conversation and the tool specs,
//! get back one assistant message. Providers (OpenAI chat completions, Anthropic Messages, the
//! scripted model) live in `spine-models`; the runner only sees this trait.

use async_trait::async_trait;
use spine_protocol::message::{AssistantMessage, Message};
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolSpec;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

/// One model request.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The messages: the system prompt first, then the transcript (pairing already checked).
    pub messages: &'a [Message],
    /// The tools the model may call.
    pub tools: &'a [ToolSpec],
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// A final answer (or a turn the model ended itself).
    Stop,
    /// It wants tool calls answered.
    ToolCalls,
    /// Something else the provider reported.
    Other(String),
}

/// One model reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReply {
    /// The assistant message (text and/or tool calls).
    pub message: AssistantMessage,
    /// Why it stopped.
    pub finish_reason: FinishReason,
    /// Token usage, when the provider reported it.
    pub usage: Option<Usage>,
}

/// A failed model request.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ModelError {
    /// The kind (decides retries and `retryable`).
    pub kind: ModelErrorKind,
    /// What went wrong, naming the endpoint and status when there is one. Never a secret.
    pub message: String,
}

impl ModelError {
    /// A model error.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError { kind, message: message.into() }
    }
}

/// Kinds of model failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelErrorKind {
    /// The server answered with an error status.
    Http {
        /// The status code.
        status: u16,
    },
    /// The connection failed or broke (including a stream cut before its end).
    Transport,
    /// A connect, first-byte or idle timeout.
    Timeout,
    /// The reply could not be understood.
    InvalidReply,
    /// The reply was cut by the output limit (`finish_reason: length`).
    Incomplete,
    /// The provider refused (`content_filter`).
    Refusal,
    /// The request was canceled.
    Canceled,
    /// The scripted model ran out of turns.
    Exhausted,
    /// The client is misconfigured (no key, bad URL).
    Config,
}

impl ModelErrorKind {
    /// Whether the same request may succeed later (429, 5xx, 529, transport, timeouts).
    pub fn retryable(self) -> bool {
        match self {
            ModelErrorKind::Http { status } => status == 408 || status == 409 || status == 429 || status >= 500,
            ModelErrorKind::Transport | ModelErrorKind::Timeout => true,
            ModelErrorKind::InvalidReply
            | ModelErrorKind::Incomplete
            | ModelErrorKind::Refusal
            | ModelErrorKind::Canceled
            | ModelErrorKind::Exhausted
            | ModelErrorKind::Config => false,
        }
    }
}

/// Receives streamed text as it arrives.
pub trait StreamSink: Send + Sync {
    /// A piece of the assistant's text.
    fn text_delta(&self, text: &str);
}

/// Ignores streamed text.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoStream;

impl StreamSink for NoStream {
    fn text_delta(&self, _text: &str) {}
}

/// A model.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// The model's name (for traces and `likely_model`).
    fn model(&self) -> &str;

    /// The context window in tokens, when known.
    fn context_window(&self) -> Option<u64> {
        None
    }

    /// Sends one request.
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        stream: &dyn StreamSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError>;
}

/// The model of an agent that only runs single tool calls (`Agent::run_tool_call`, the
/// worker's deterministic items): it has no model, and a request fails with a `Config` error.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoModel;

#[async_trait]
impl ModelClient for NoModel {
    fn model(&self) -> &str {
        "none"
    }

    async fn complete(
        &self,
        _request: ModelRequest<'_>,
        _stream: &dyn StreamSink,
        _cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        Err(ModelError::new(ModelErrorKind::Config, "this agent runs single tool calls and has no model"))
    }
}
