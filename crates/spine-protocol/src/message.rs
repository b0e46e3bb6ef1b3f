//! The provider-neutral conversation.
//!
//! A conversation is a list of [`Message`]s. Serialised, each message is an object tagged by
//! `role`: `system`, `user`, `assistant` (text and/or tool calls), `tool` (the one result of one
//! tool call) and `context` (hook additional context: text for the model that is never a tool
//! result nor an assistant message, so it cannot break tool-call pairing). Providers render
//! `context` in their own way (a system message for OpenAI chat, a `<system-reminder>` block in a
//! user turn for Anthropic).

use serde::{Deserialize, Serialize};

use crate::hook::HookEventName;
use crate::tool::{ErrorCode, ToolCall};

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions from the runtime (the assembled system prompt, compaction notes).
    System {
        /// The instructions.
        content: String,
    },
    /// A user turn: the prompt, or a message forced by a Stop hook.
    User {
        /// What the user (or the Stop hook) says.
        content: String,
    },
    /// A model turn.
    Assistant(AssistantMessage),
    /// The result of one tool call.
    Tool(ToolResultMessage),
    /// Additional context returned by a hook.
    Context(ContextMessage),
}

/// A model turn: optional text and the tool calls, in the order the model gave them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The text the model wrote (absent when it only called tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The tool calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

/// The result of one tool call, paired to it by `tool_call_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// The tool's name (kept for providers and readers; pairing goes by id).
    pub name: String,
    /// The text the model reads. For errors: `Error [<code>]: <message>`.
    pub content: String,
    /// The error code when the call failed (the content then starts with `Error [<code>]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
}

impl ToolResultMessage {
    /// Whether this result reports an error.
    pub fn is_error(&self) -> bool {
        self.error_code.is_some()
    }
}

/// Additional context from a hook, addressed to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextMessage {
    /// The event whose hook produced it.
    pub event: HookEventName,
    /// The text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System { content: content.into() }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User { content: content.into() }
    }

    /// An assistant message with text only.
    pub fn assistant_text(content: impl Into<String>) -> Self {
        Message::Assistant(AssistantMessage { content: Some(content.into()), tool_calls: Vec::new() })
    }

    /// A hook context message.
    pub fn context(event: HookEventName, content: impl Into<String>) -> Self {
        Message::Context(ContextMessage { event, content: content.into() })
    }

    /// The role name as serialised.
    pub fn role(&self) -> &'static str {
        match self {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant(_) => "assistant",
            Message::Tool(_) => "tool",
            Message::Context(_) => "context",
        }
    }

    /// The text content of the message, if any (for token estimates and skill references).
    pub fn text(&self) -> Option<&str> {
        match self {
            Message::System { content } | Message::User { content } => Some(content),
            Message::Assistant(a) => a.content.as_deref(),
            Message::Tool(t) => Some(&t.content),
            Message::Context(c) => Some(&c.content),
        }
    }
}
