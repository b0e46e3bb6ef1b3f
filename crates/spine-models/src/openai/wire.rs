//! The chat-completions wire format: the request body built from provider-neutral messages,
//! and lenient reply types (every field optional, unknown fields ignored, because compatible
//! servers deviate).
//!
//! Messages: `system` → `{"role":"system"}`; `user` → `{"role":"user"}`; `assistant` →
//! `{"role":"assistant","content":text,"tool_calls":[{"id","type":"function",
//! "function":{"name","arguments":<string>}}]}` (arguments as [`ToolArguments::to_wire`], so raw
//! text goes back verbatim; `tool_calls` omitted when empty); `tool` →
//! `{"role":"tool","tool_call_id","content"}`; `context` → `{"role":"system","content"}`.
//! An assistant turn with only tool calls sends `"content": ""`, never `null`: some compatible
//! servers (llama.cpp's chat templates) answer `null` with a 500.
//! Tools: `[{"type":"function","function":{"name","description","parameters"}}]`, omitted when
//! there are none. `reasoning_effort` (`minimal`…`high`) is sent when configured. Reasoning
//! items of an assistant turn are not sent (chat completions has no field for them).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use spine_core::model::ModelRequest;
use spine_protocol::message::{Message, ReasoningEffort};
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolArguments;

use super::Mode;

/// The request body.
#[derive(Debug, Serialize)]
pub(crate) struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<ReasoningEffort>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        content: &'a str,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Debug, Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Debug, Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// Builds the request body.
pub(crate) fn request<'a>(
    model: &'a str,
    request: ModelRequest<'a>,
    mode: Mode,
    reasoning_effort: Option<ReasoningEffort>,
) -> ChatRequest<'a> {
    let messages = request.messages.iter().map(message).collect();
    let tools = request
        .tools
        .iter()
        .map(|t| WireTool {
            kind: "function",
            function: WireFunction { name: &t.name, description: &t.description, parameters: &t.input_schema },
        })
        .collect();
    let (stream, stream_options) = match mode {
        Mode::Streaming { include_usage } => (true, include_usage.then_some(StreamOptions { include_usage: true })),
        Mode::NonStreaming => (false, None),
    };
    ChatRequest { model, messages, tools, stream, stream_options, reasoning_effort }
}

fn message(m: &Message) -> WireMessage<'_> {
    match m {
        Message::System { content } => WireMessage::System { content },
        Message::User { content } => WireMessage::User { content },
        Message::Assistant(a) => WireMessage::Assistant {
            content: a.content.as_deref().unwrap_or(""),
            tool_calls: a
                .tool_calls
                .iter()
                .map(|c| WireToolCall {
                    id: &c.id,
                    kind: "function",
                    function: WireFunctionCall { name: &c.name, arguments: c.arguments.to_wire() },
                })
                .collect(),
        },
        Message::Tool(t) => WireMessage::Tool { tool_call_id: &t.tool_call_id, content: &t.content },
        Message::Context(c) => WireMessage::System { content: &c.content },
    }
}

/// One streamed chunk.
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk<'a> {
    #[serde(default, borrow)]
    pub choices: Option<Vec<ChunkChoice<'a>>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<WireError>,
}

/// One choice of a streamed chunk.
#[derive(Debug, Deserialize)]
pub(crate) struct ChunkChoice<'a> {
    #[serde(default)]
    pub index: u32,
    #[serde(default, borrow)]
    pub delta: Option<Delta<'a>>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// The delta of a streamed choice.
#[derive(Debug, Deserialize)]
pub(crate) struct Delta<'a> {
    #[serde(default, borrow)]
    pub content: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub refusal: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

/// A fragment of one tool call.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolCallDelta<'a> {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub function: Option<FunctionDelta<'a>>,
}

/// A fragment of a tool call's function.
#[derive(Debug, Deserialize)]
pub(crate) struct FunctionDelta<'a> {
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub arguments: Option<Cow<'a, str>>,
}

/// Token usage as sent.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_tokens_details: Option<WirePromptDetails>,
}

/// `usage.prompt_tokens_details`: the cached part of the prompt.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct WirePromptDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

impl WireUsage {
    pub(crate) fn usage(self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens.unwrap_or(0),
            output_tokens: self.completion_tokens.unwrap_or(0),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: self.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0),
        }
    }
}

/// An error object (in a stream or a 200 body).
#[derive(Debug, Deserialize)]
pub(crate) struct WireError {
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<Value>,
}

/// A whole (non-streamed) reply.
#[derive(Debug, Deserialize)]
pub(crate) struct Completion {
    #[serde(default)]
    pub choices: Option<Vec<Choice>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<WireError>,
}

/// One choice of a whole reply.
#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub message: Option<ReplyMessage>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// The message of a whole reply.
#[derive(Debug, Deserialize)]
pub(crate) struct ReplyMessage {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub refusal: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<ReplyToolCall>>,
}

/// A tool call of a whole reply.
#[derive(Debug, Deserialize)]
pub(crate) struct ReplyToolCall {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<ReplyFunction>,
}

/// The function of a whole reply's tool call.
#[derive(Debug, Deserialize)]
pub(crate) struct ReplyFunction {
    #[serde(default)]
    pub name: Option<String>,
    /// A string per the API; an object from some compatible servers (taken as parsed JSON).
    #[serde(default)]
    pub arguments: Option<Value>,
}

impl ReplyFunction {
    /// The arguments: a string goes through [`ToolArguments::from_wire`], any other JSON is
    /// taken as already parsed, absent means `{}`.
    pub(crate) fn arguments(&self) -> ToolArguments {
        match &self.arguments {
            Some(Value::String(s)) => ToolArguments::from_wire(s),
            Some(Value::Null) | None => ToolArguments::from_wire(""),
            Some(other) => ToolArguments::Json(other.clone()),
        }
    }
}
