//! The chat-completions wire format: the request body built from provider-neutral messages,
//! and lenient reply types (every field optional, unknown fields ignored, because compatible
//! servers deviate).
//!
//! Messages, in an order strict chat templates (llama.cpp's) accept: ONE system message first,
//! then user/assistant alternation (tool results after their call).
//! - The leading `system` messages, joined by a blank line, become the one `system` message.
//! - `user` → `{"role":"user"}`; a later `system` message or a `context` message becomes user
//!   text `<system-reminder>\n…\n</system-reminder>` (never a second system message); adjacent
//!   user texts are merged into one message, joined by a blank line. A reminder that arrives
//!   between a tool call and its results is moved after the results (a `tool` message must
//!   follow its call).
//! - `assistant` → `{"role":"assistant","content":text,"tool_calls":[{"id","type":"function",
//!   "function":{"name","arguments":<string>}}]}` (arguments as [`ToolArguments::to_wire`], so
//!   raw text goes back verbatim; `tool_calls` omitted when empty). An assistant turn with only
//!   tool calls sends `"content": ""`, never `null`: some compatible servers (llama.cpp's chat
//!   templates) answer `null` with a 500.
//! - `tool` → `{"role":"tool","tool_call_id","content"}`.
//! - Images: a `user` message with images sends `content` as an array of parts, `{"type":
//!   "text","text"}` then `{"type":"image_url","image_url":{"url":"data:<type>;base64,<data>"}}`
//!   per image (plain string content otherwise). A `tool` message cannot carry images in chat
//!   completions: its text goes in the tool message, and its images follow in a user message
//!   (text `[Images from the result of tool call <id> (<name>)]`, then the image parts) placed
//!   after the tool results of that round, as the reminders are, so the order stays valid for
//!   strict templates. Merged with adjacent user text, such a message keeps its parts.
//!
//! Tools: `[{"type":"function","function":{"name","description","parameters"}}]`, omitted when
//! there are none. With tools, `tool_choice` is sent when set: `"auto"`, `"required"`,
//! `"none"`, or `{"type":"function","function":{"name":…}}` (some servers drop the tools
//! without it). `max_tokens` (`max_completion_tokens` for o-series and GPT-5 models, which
//! reject the older name), `temperature` and `reasoning_effort` (`minimal`…`high`) are sent
//! when set. Reasoning items of an assistant turn are not sent (chat completions has no field
//! for them).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use spine_core::model::ModelRequest;
use spine_protocol::message::{ImageBlock, Message, ReasoningEffort};
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolArguments;

use spine_core::model::ToolChoice;

use super::Mode;

/// The optional request fields of the configuration.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options<'a> {
    pub tool_choice: Option<&'a ToolChoice>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// The request body.
#[derive(Debug, Serialize)]
pub(crate) struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
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
        content: Cow<'a, str>,
    },
    User {
        content: UserContent<'a>,
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

/// A user message's `content`: a string, or parts when it carries images.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

impl<'a> UserContent<'a> {
    fn into_parts(self) -> Vec<Part<'a>> {
        match self {
            UserContent::Text(text) => vec![Part::Text { text }],
            UserContent::Parts(parts) => parts,
        }
    }
}

/// One part of a user message with images.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Serialize)]
struct ImageUrl {
    url: String,
}

/// User content: the text, with the images as parts after it when there are any.
fn user_content<'a>(text: Cow<'a, str>, images: &[ImageBlock]) -> UserContent<'a> {
    if images.is_empty() {
        return UserContent::Text(text);
    }
    let mut parts = Vec::with_capacity(images.len() + 1);
    if !text.is_empty() {
        parts.push(Part::Text { text });
    }
    parts.extend(images.iter().map(|i| Part::ImageUrl { image_url: ImageUrl { url: i.data_url() } }));
    UserContent::Parts(parts)
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
    options: Options<'_>,
) -> ChatRequest<'a> {
    let messages = messages(request.messages);
    let tools: Vec<WireTool<'a>> = request
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
    let tool_choice = options.tool_choice.filter(|_| !tools.is_empty()).map(tool_choice);
    let (max_tokens, max_completion_tokens) = match options.max_tokens {
        Some(n) if uses_max_completion_tokens(model) => (None, Some(n)),
        n => (n, None),
    };
    ChatRequest {
        model,
        messages,
        tools,
        tool_choice,
        max_tokens,
        max_completion_tokens,
        temperature: options.temperature,
        stream,
        stream_options,
        reasoning_effort: options.reasoning_effort,
    }
}

/// o-series and GPT-5 models reject `max_tokens` and take `max_completion_tokens`.
fn uses_max_completion_tokens(model: &str) -> bool {
    let m = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5"].iter().any(|p| m.starts_with(p))
}

/// `tool_choice` in the chat-completions format.
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => Value::from("auto"),
        ToolChoice::Required => Value::from("required"),
        ToolChoice::None => Value::from("none"),
        ToolChoice::Tool(name) => serde_json::json!({"type": "function", "function": {"name": name}}),
    }
}

/// The messages in the order strict chat templates accept (see the module documentation).
fn messages(all: &[Message]) -> Vec<WireMessage<'_>> {
    let leading = all.iter().take_while(|m| matches!(m, Message::System { .. })).count();
    let mut out: Vec<WireMessage<'_>> = Vec::with_capacity(all.len());
    let system: Vec<&str> = all[..leading]
        .iter()
        .filter_map(|m| match m {
            Message::System { content } if !content.trim().is_empty() => Some(content.as_str()),
            _ => None,
        })
        .collect();
    match system.as_slice() {
        [] => {}
        [one] => out.push(WireMessage::System { content: Cow::Borrowed(one) }),
        many => out.push(WireMessage::System { content: Cow::Owned(many.join("\n\n")) }),
    }
    // Reminders that arrive inside a tool round (between a call and its results) wait until
    // the round's results are out: a tool message must follow its call.
    let mut deferred: Vec<WireMessage<'_>> = Vec::new();
    for m in &all[leading..] {
        let next = message(m);
        let in_round = matches!(out.last(), Some(WireMessage::Tool { .. }))
            || matches!(out.last(), Some(WireMessage::Assistant { tool_calls, .. }) if !tool_calls.is_empty());
        match next {
            WireMessage::Tool { .. } => {
                out.push(next);
                if let Message::Tool(t) = m
                    && !t.images.is_empty()
                {
                    let label = format!("[Images from the result of tool call {} ({})]", t.tool_call_id, t.name);
                    deferred.push(WireMessage::User { content: user_content(Cow::Owned(label), &t.images) });
                }
            }
            WireMessage::User { .. } if in_round && matches!(m, Message::Context(_) | Message::System { .. }) => {
                deferred.push(next);
            }
            next => {
                for d in deferred.drain(..) {
                    push_merged(&mut out, d);
                }
                push_merged(&mut out, next);
            }
        }
    }
    for d in deferred {
        push_merged(&mut out, d);
    }
    out
}

/// Pushes `next`, merged into the last message when both are user messages (texts joined by a
/// blank line; with images, the parts one after the other).
fn push_merged<'a>(out: &mut Vec<WireMessage<'a>>, next: WireMessage<'a>) {
    match (out.last_mut(), next) {
        (
            Some(WireMessage::User { content: UserContent::Text(content) }),
            WireMessage::User { content: UserContent::Text(more) },
        ) => {
            let joined = content.to_mut();
            joined.push_str("\n\n");
            joined.push_str(&more);
        }
        (Some(WireMessage::User { content }), WireMessage::User { content: more }) => {
            let taken = std::mem::replace(content, UserContent::Parts(Vec::new()));
            let mut parts = taken.into_parts();
            parts.extend(more.into_parts());
            *content = UserContent::Parts(parts);
        }
        (_, next) => out.push(next),
    }
}

fn reminder(content: &str) -> Cow<'_, str> {
    Cow::Owned(format!("<system-reminder>\n{content}\n</system-reminder>"))
}

fn message(m: &Message) -> WireMessage<'_> {
    match m {
        Message::System { content } => WireMessage::User { content: UserContent::Text(reminder(content)) },
        Message::User { content, images } => {
            WireMessage::User { content: user_content(Cow::Borrowed(content), images) }
        }
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
        Message::Context(c) => WireMessage::User { content: UserContent::Text(reminder(&c.content)) },
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
    /// The usage, or `None` when the object holds neither count (never guessed as 0/0).
    pub(crate) fn usage(self) -> Option<Usage> {
        if self.prompt_tokens.is_none() && self.completion_tokens.is_none() {
            return None;
        }
        Some(Usage {
            input_tokens: self.prompt_tokens.unwrap_or(0),
            output_tokens: self.completion_tokens.unwrap_or(0),
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: self.prompt_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0),
        })
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
