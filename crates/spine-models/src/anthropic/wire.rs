//! The Messages API wire format: the request body built from provider-neutral messages, and the
//! stream event types.
//!
//! Request rules:
//!
//! - The leading `system` messages, joined by a blank line, become the top-level `system`.
//! - `user` → a `text` block in a user turn, then its images as `image` blocks
//!   (`source: {type: "base64", media_type, data}`); `assistant` → `text` then `tool_use` blocks
//!   (`input` is the parsed arguments object; arguments that did not parse, or parsed to
//!   something other than an object, are sent as `{}` — the API only accepts an object, and
//!   the tool's error result that follows tells the model what went wrong).
//! - `tool` → a `tool_result` block (`tool_use_id`, `content`, `is_error` from `error_code`) in
//!   a **user** turn. A result with images has a list of blocks as its `content`: the `text`
//!   (when not empty), then the `image` blocks.
//! - `context` and later `system` messages → a `text` block
//!   `<system-reminder>\n…\n</system-reminder>` in a user turn.
//! - Consecutive turns of the same role are merged into one (the API requires alternation); in
//!   a merged user turn the `tool_result` blocks come first, in order.
//! - An assistant turn's reasoning goes first, in order: `thinking` blocks with their
//!   `signature` and `redacted_thinking` blocks with their `data`, byte for byte (the API
//!   checks them, and requires them on the tool-use turn when thinking is on). Reasoning items
//!   of other providers (OpenAI `reasoning`) are not sent.
//! - With a thinking budget ([`Thinking::Enabled`]), the body carries `thinking: {type:
//!   "enabled", budget_tokens}`, and `max_tokens` must exceed the budget: when it does not, it
//!   becomes the budget plus the configured `max_tokens` (room for the answer after the
//!   thinking). [`Thinking::Adaptive`] and [`Thinking::Disabled`] send `{type: "adaptive"}`
//!   and `{type: "disabled"}`.
//! - With an effort (`--effort`, see [`super::reasoning`]), the body carries `output_config:
//!   {effort}`.
//! - Empty text is not sent (the API rejects empty text blocks); a turn left without blocks is
//!   dropped.
//! - With tools, `tool_choice` is sent when set: `{"type":"auto"}`, `{"type":"any"}`
//!   (`required`), `{"type":"none"}` or `{"type":"tool","name":…}`. `temperature` is sent when
//!   set; `stream` follows the configuration.
//! - The prompt-cache breakpoints ([`super::cache`]) are fields of the body's types
//!   (`cache_control`, serialised last, only when set), so the body is encoded in one pass.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use spine_core::model::{ModelRequest, ToolChoice};
use spine_core::model_reasoning::EffortLevel;
use spine_protocol::message::{ImageBlock, Message, ReasoningItem};
use spine_protocol::tool::ToolArguments;

/// The request body.
#[derive(Debug, Serialize)]
pub(crate) struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) system: Option<System>,
    pub(super) messages: Vec<Turn<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<OutputConfig>,
    stream: bool,
}

/// The `output_config` request field.
#[derive(Debug, Serialize)]
struct OutputConfig {
    effort: &'static str,
}

/// The optional request fields of the configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options<'a> {
    pub max_tokens: u32,
    pub tool_choice: Option<&'a ToolChoice>,
    pub temperature: Option<f64>,
    pub thinking: Option<Thinking>,
    pub effort: Option<EffortLevel>,
    pub stream: bool,
}

/// `tool_choice` in the Messages API format.
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => serde_json::json!({"type": "auto"}),
        ToolChoice::Required => serde_json::json!({"type": "any"}),
        ToolChoice::None => serde_json::json!({"type": "none"}),
        ToolChoice::Tool(name) => serde_json::json!({"type": "tool", "name": name}),
    }
}

/// Extended thinking for a request: the `thinking` request field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Thinking {
    /// `{"type": "enabled", "budget_tokens": N}`: thinking with a budget of at least 1024
    /// tokens (the API's minimum; settings and flags check it).
    Enabled {
        /// `budget_tokens`.
        budget_tokens: u32,
    },
    /// `{"type": "adaptive"}`: the model decides how much to think.
    Adaptive,
    /// `{"type": "disabled"}`: no thinking.
    Disabled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Role {
    User,
    Assistant,
}

/// The top-level `system`: the text, or text blocks once it carries a cache breakpoint.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum System {
    Text(String),
    Blocks(Vec<SystemBlock>),
}

/// A `system` text block.
#[derive(Debug, Serialize)]
pub(super) struct SystemBlock {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// A prompt-cache breakpoint: `{"type": "ephemeral"}`.
#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The one kind of breakpoint.
pub(super) const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(Debug, Serialize)]
pub(super) struct Turn<'a> {
    role: Role,
    pub(super) content: Vec<Block<'a>>,
}

/// A content block; `cache_control` is set by [`super::cache`] only.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Block<'a> {
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Cow<'a, Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ToolResultContent<'a>,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl Block<'_> {
    /// The block's breakpoint slot; `None` for thinking blocks, which cannot carry one.
    pub(super) fn cache_control(&mut self) -> Option<&mut Option<CacheControl>> {
        match self {
            Block::Thinking { .. } | Block::RedactedThinking { .. } => None,
            Block::Text { cache_control, .. }
            | Block::ToolUse { cache_control, .. }
            | Block::Image { cache_control, .. }
            | Block::ToolResult { cache_control, .. } => Some(cache_control),
        }
    }
}

/// An image block's `source`.
#[derive(Debug, Serialize)]
pub(super) struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

/// A `tool_result`'s `content`: the text alone, or blocks when the result has images.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum ToolResultContent<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

fn image(image: &ImageBlock) -> Block<'_> {
    let source = ImageSource { kind: "base64", media_type: &image.media_type, data: &image.data };
    Block::Image { source, cache_control: None }
}

#[derive(Debug, Serialize)]
pub(super) struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cache_control: Option<CacheControl>,
}

/// Builds the request body.
pub(crate) fn request<'a>(model: &'a str, options: Options<'_>, request: ModelRequest<'a>) -> MessagesRequest<'a> {
    let leading = request.messages.iter().take_while(|m| matches!(m, Message::System { .. })).count();
    let system: Vec<&str> = request.messages[..leading]
        .iter()
        .filter_map(|m| match m {
            Message::System { content } if !content.trim().is_empty() => Some(content.as_str()),
            _ => None,
        })
        .collect();
    let system = (!system.is_empty()).then(|| System::Text(system.join("\n\n")));
    let mut turns: Vec<Turn<'a>> = Vec::new();
    for m in &request.messages[leading..] {
        let (role, blocks) = turn(m);
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => turns.push(Turn { role, content: blocks }),
        }
    }
    for t in &mut turns {
        if t.role == Role::User {
            // Stable: tool results keep their order, and so does the rest.
            t.content.sort_by_key(|b| !matches!(b, Block::ToolResult { .. }));
        }
    }
    let tools: Vec<Tool<'a>> = request
        .tools
        .iter()
        .map(|t| Tool {
            name: &t.name,
            description: &t.description,
            input_schema: &t.input_schema,
            cache_control: None,
        })
        .collect();
    let tool_choice = options.tool_choice.filter(|_| !tools.is_empty()).map(tool_choice);
    let max_tokens = match options.thinking {
        Some(Thinking::Enabled { budget_tokens }) if options.max_tokens <= budget_tokens => {
            budget_tokens.saturating_add(options.max_tokens)
        }
        Some(_) | None => options.max_tokens,
    };
    MessagesRequest {
        model,
        max_tokens,
        system,
        messages: turns,
        tools,
        tool_choice,
        temperature: options.temperature,
        thinking: options.thinking,
        output_config: options.effort.map(|e| OutputConfig { effort: e.as_str() }),
        stream: options.stream,
    }
}

fn text(content: &str) -> Vec<Block<'_>> {
    if content.is_empty() {
        Vec::new()
    } else {
        vec![Block::Text { text: Cow::Borrowed(content), cache_control: None }]
    }
}

fn reminder(content: &str) -> Vec<Block<'_>> {
    let text = Cow::Owned(format!("<system-reminder>\n{content}\n</system-reminder>"));
    vec![Block::Text { text, cache_control: None }]
}

fn turn(m: &Message) -> (Role, Vec<Block<'_>>) {
    match m {
        Message::User { content, images } => {
            let mut blocks = text(content);
            blocks.extend(images.iter().map(image));
            (Role::User, blocks)
        }
        Message::System { content } => (Role::User, reminder(content)),
        Message::Context(c) => (Role::User, reminder(&c.content)),
        Message::Tool(t) => {
            let content = if t.images.is_empty() {
                ToolResultContent::Text(&t.content)
            } else {
                let mut blocks = text(&t.content);
                blocks.extend(t.images.iter().map(image));
                ToolResultContent::Blocks(blocks)
            };
            let result = Block::ToolResult {
                tool_use_id: &t.tool_call_id,
                content,
                is_error: t.is_error(),
                cache_control: None,
            };
            (Role::User, vec![result])
        }
        Message::Assistant(a) => {
            let mut blocks: Vec<Block<'_>> = a
                .reasoning
                .iter()
                .filter_map(|item| match item {
                    ReasoningItem::Thinking { thinking, signature } => Some(Block::Thinking { thinking, signature }),
                    ReasoningItem::RedactedThinking { data } => Some(Block::RedactedThinking { data }),
                    ReasoningItem::Reasoning { .. } => None,
                })
                .collect();
            blocks.extend(text(a.content.as_deref().unwrap_or("")));
            for call in &a.tool_calls {
                let input = match &call.arguments {
                    ToolArguments::Json(v @ Value::Object(_)) => Cow::Borrowed(v),
                    ToolArguments::Json(_) | ToolArguments::Raw(_) => Cow::Owned(Value::Object(Map::new())),
                };
                blocks.push(Block::ToolUse { id: &call.id, name: &call.name, input, cache_control: None });
            }
            (Role::Assistant, blocks)
        }
    }
}

/// One stream event (the `data:` payload, tagged by `type`).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Event<'a> {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u32,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        index: u32,
        #[serde(borrow)]
        delta: BlockDelta<'a>,
    },
    /// Blocks are complete at `message_stop`; the per-block stop carries nothing needed.
    ContentBlockStop,
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: WireError,
    },
    /// Event types added after this client was written.
    #[serde(other)]
    Unknown,
}

/// A whole (non-streamed) reply: the message, or an error object.
#[derive(Debug, Deserialize)]
pub(crate) struct WholeMessage {
    #[serde(default)]
    pub content: Vec<StartBlock>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<WireError>,
}

/// `message_start.message`.
#[derive(Debug, Deserialize)]
pub(crate) struct StartMessage {
    #[serde(default)]
    pub usage: Option<WireUsage>,
}

/// `content_block_start.content_block`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    /// Server-tool blocks: not part of the reply.
    #[serde(other)]
    Other,
}

/// `content_block_delta.delta`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum BlockDelta<'a> {
    TextDelta {
        #[serde(borrow)]
        text: Cow<'a, str>,
    },
    InputJsonDelta {
        #[serde(borrow)]
        partial_json: Cow<'a, str>,
    },
    ThinkingDelta {
        #[serde(borrow)]
        thinking: Cow<'a, str>,
    },
    SignatureDelta {
        #[serde(borrow)]
        signature: Cow<'a, str>,
    },
    /// Deltas added after this client was written.
    #[serde(other)]
    Other,
}

/// `message_delta.delta`.
#[derive(Debug, Deserialize)]
pub(crate) struct MessageDeltaBody {
    #[serde(default)]
    pub stop_reason: Option<String>,
}

/// Usage as sent. Counts are cumulative; cache reads and writes count as input.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
}

impl WireUsage {
    /// All input tokens, when any input figure was sent.
    pub(crate) fn input(&self) -> Option<u64> {
        let parts = [self.input_tokens, self.cache_creation_input_tokens, self.cache_read_input_tokens];
        parts.iter().any(Option::is_some).then(|| parts.iter().flatten().sum())
    }
}

/// An `error` event's body.
#[derive(Debug, Deserialize)]
pub(crate) struct WireError {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}
