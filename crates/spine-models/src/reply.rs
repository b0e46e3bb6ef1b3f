//! The assembled reply of a provider stream: reasoning items and tool calls in order, text, and
//! the finish reason
//! (the provider's normal endings become `Stop` or `ToolCalls` by whether calls came; any other
//! reason is kept as `Other`).

use spine_core::model::{FinishReason, ModelReply};
use spine_protocol::message::{AssistantMessage, ReasoningItem};
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolCall;

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
