//! The assembled reply of a provider stream: reasoning items and tool calls in order, text, and
//! the finish reason
//! (the provider's normal endings become `Stop` or `ToolCalls` by whether calls came; any other
//! reason is kept as `Other`). A whole (non-streamed) reply's body is read by [`parse_whole`].

use serde::Deserialize;
use spine_core::model::{FinishReason, ModelErrorKind, ModelReply};
use spine_protocol::message::{AssistantMessage, ReasoningItem};
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolCall;

use crate::retry::AttemptError;
use crate::sse::quote;

/// A whole reply's body as the provider's type; a body that is not (that shape of) JSON is an
/// invalid reply quoting it.
pub(crate) fn parse_whole<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, AttemptError> {
    serde_json::from_slice(body).map_err(|e| {
        AttemptError::new(
            ModelErrorKind::InvalidReply,
            format!("the reply is not valid JSON ({e}): {}", quote(&String::from_utf8_lossy(body))),
        )
    })
}

/// Builds the reply; `normal` lists the provider's reasons that end a turn normally.
pub(crate) fn assemble(
    reasoning: Vec<ReasoningItem>,
    text: String,
    tool_calls: Vec<ToolCall>,
    reason: Option<&str>,
    normal: &[&str],
    usage: Option<Usage>,
) -> ModelReply {
    let finish_reason = match reason {
        Some(other) if !normal.contains(&other) => FinishReason::Other(other.to_owned()),
        None | Some(_) if tool_calls.is_empty() => FinishReason::Stop,
        None | Some(_) => FinishReason::ToolCalls,
    };
    ModelReply {
        message: AssistantMessage { reasoning, content: (!text.is_empty()).then_some(text), tool_calls },
        finish_reason,
        usage,
    }
}
