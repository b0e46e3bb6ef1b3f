//! The [`ModelClient`] contract: send the provider-neutral conversation and the tool specs,
//! get back one assistant message. Providers (OpenAI chat completions, Anthropic Messages, the
//! scripted model) live in `spine-models`; the runner only sees this trait.

use std::time::Duration;

use async_trait::async_trait;
use spine_protocol::message::{AssistantMessage, Message, ReasoningEffort};
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
    /// The byte length of the first (system) message's stable prefix, when known: what stays
    /// the same across turns and runs (`prepare_turn` puts it first). Providers with explicit
    /// prompt caching put a cache breakpoint there.
    pub stable_prefix: Option<usize>,
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

impl FinishReason {
    /// Claude Code's word for it (`stop_reason` in its JSON result and transcript): `end_turn`,
    /// `tool_use`, or the provider's own word.
    pub fn stop_reason(&self) -> &str {
        match self {
            FinishReason::Stop => "end_turn",
            FinishReason::ToolCalls => "tool_use",
            FinishReason::Other(word) => word,
        }
    }
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
    /// Tokens the server reported before the request failed (a reply cut by the output limit
    /// still consumed and reported them); they count towards the run's usage.
    pub usage: Option<Usage>,
}

impl ModelError {
    /// A model error.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError { kind, message: message.into(), usage: None }
    }

    /// The error with the usage the server reported.
    pub fn with_usage(mut self, usage: Option<Usage>) -> Self {
        self.usage = usage;
        self
    }
}

/// Which tool the model must call (settings `model_options.tool_choice`; spine-protocol's).
pub use spine_protocol::tool_choice::ToolChoice;

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

impl std::fmt::Display for ModelErrorKind {
    /// One word (`http 503`, `transport`, `timeout`, …) for traces and `-v` lines.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelErrorKind::Http { status } => write!(f, "http {status}"),
            ModelErrorKind::Transport => f.write_str("transport"),
            ModelErrorKind::Timeout => f.write_str("timeout"),
            ModelErrorKind::InvalidReply => f.write_str("invalid_reply"),
            ModelErrorKind::Incomplete => f.write_str("incomplete"),
            ModelErrorKind::Refusal => f.write_str("refusal"),
            ModelErrorKind::Canceled => f.write_str("canceled"),
            ModelErrorKind::Exhausted => f.write_str("exhausted"),
            ModelErrorKind::Config => f.write_str("config"),
        }
    }
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

/// A streamed piece of a reply other than its text, in the order the provider sent it.
/// Providers that stream these call [`StreamSink::delta`] (Anthropic's Messages API does for
/// all of them); the others' thinking and tool calls are known only from the finished reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamDelta<'a> {
    /// A thinking block starts (its text follows as [`StreamDelta::Thinking`]).
    ThinkingStart,
    /// A piece of the current thinking block's text.
    Thinking {
        /// The new text.
        text: &'a str,
    },
    /// A piece of the current thinking block's signature.
    Signature {
        /// The new piece.
        signature: &'a str,
    },
    /// A redacted thinking block, whole.
    RedactedThinking {
        /// Its opaque data.
        data: &'a str,
    },
    /// A tool call starts (its input follows as [`StreamDelta::ToolInput`]).
    ToolUseStart {
        /// The call's id, as the provider sent it.
        id: &'a str,
        /// The tool's name.
        name: &'a str,
    },
    /// A piece of the current tool call's input JSON.
    ToolInput {
        /// The new piece of JSON text.
        partial_json: &'a str,
    },
}

/// Receives streamed text as it arrives, and a report of each attempt of the request.
pub trait StreamSink: Send + Sync {
    /// A piece of the assistant's text.
    fn text_delta(&self, text: &str);

    /// A streamed piece of the reply other than its text (the default ignores it).
    fn delta(&self, _delta: StreamDelta<'_>) {}

    /// One attempt of the request ended (clients that retry report every attempt; the default
    /// ignores it).
    fn attempt(&self, _report: &AttemptReport<'_>) {}

    /// The request moved from model `from`, which failed with `error`, to model `to`, which
    /// serves it and every later request ([`crate::model_fallback`]; the default ignores it).
    fn fallback(&self, _from: &str, _to: &str, _error: &ModelError) {}
}

/// How one attempt of a model request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptReport<'a> {
    /// 1-based attempt number within the request.
    pub attempt: u32,
    /// How long the attempt took.
    pub duration: Duration,
    /// What happened.
    pub outcome: AttemptOutcome<'a>,
}

/// The end of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome<'a> {
    /// It produced the reply.
    Succeeded,
    /// It failed and the request is sent again after `wait`.
    Retrying {
        /// The failure.
        error: &'a ModelError,
        /// The backoff (or the server's `retry-after`) before the next attempt.
        wait: Duration,
    },
    /// It failed and the request fails with it (not retryable, retries spent, or the total
    /// deadline reached).
    Failed {
        /// The failure.
        error: &'a ModelError,
    },
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

    /// What `usage` costs on this model in US dollars, when its price is known (the default:
    /// unknown).
    fn cost_usd(&self, _usage: &Usage) -> Option<f64> {
        None
    }

    /// Where the client's credential came from, as Claude Code's `apiKeySource` names it: the
    /// environment variable it was read from (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, …), or
    /// `none` (the default) without one.
    fn api_key_source(&self) -> &str {
        "none"
    }

    /// This model sending `effort` as its reasoning effort (a subagent definition's `effort`),
    /// when its wire takes one; `None` (the default) when it does not.
    fn with_reasoning_effort(&self, _effort: ReasoningEffort) -> Option<std::sync::Arc<dyn ModelClient>> {
        None
    }

    /// This model with what the session's reasoning flags ask (`--effort`, `--thinking`,
    /// `--max-thinking-tokens`) applied as its wire takes them; `None` (the default) when its
    /// wire takes none of it. See [`crate::model_reasoning`].
    fn with_reasoning_flags(
        &self,
        _flags: &crate::model_reasoning::ReasoningFlags,
    ) -> Option<std::sync::Arc<dyn ModelClient>> {
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
