//! The Responses API wire format: the request body built from provider-neutral messages, and
//! lenient stream event types (fields optional, unknown events and item types ignored).
//!
//! Request rules:
//!
//! - The leading `system` messages, joined by a blank line, become `instructions`.
//! - `user` → `{"type":"message","role":"user","content":[{"type":"input_text","text"}]}`,
//!   then one `{"type":"input_image","image_url":"data:<type>;base64,<data>"}` part per image.
//! - `assistant` → its `reasoning` items first (OpenAI ones only, and only those with
//!   `encrypted_content`: with `store: false` the server knows no item by id, so the id is not
//!   sent and an item without its encrypted content cannot be sent back), then its text as
//!   `{"type":"message","role":"assistant","content":[{"type":"output_text","text"}]}` (empty
//!   text not sent), then one `{"type":"function_call","call_id","name","arguments"}` per call
//!   (arguments as [`ToolArguments::to_wire`], so raw text goes back verbatim).
//! - `tool` → `{"type":"function_call_output","call_id","output"}`. A result's images follow
//!   as a user message (`input_text` `[Images from the result of tool call <id> (<name>)]`,
//!   then the `input_image` parts), placed after the outputs of that round, as chat
//!   completions does.
//! - `context` and later `system` messages → a `developer` message (`input_text`).
//! - Tools: `{"type":"function","name","description","parameters","strict":false}` (the
//!   Responses API makes functions strict by default, which tool schemas with optional
//!   properties do not satisfy).
//! - Always `store: false` and `stream: true`; `reasoning: {"effort", "summary":"auto"}` when an
//!   effort is configured.
//! - `include: ["reasoning.encrypted_content"]` for reasoning models ([`reasons`]: an effort is
//!   configured, or the model id names a reasoning family): stateless reasoning needs it, and
//!   models without reasoning reject it (400 "Encrypted content is not supported with this
//!   model").

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use spine_core::model::{ModelRequest, ToolChoice};
use spine_protocol::message::{ImageBlock, Message, ReasoningEffort, ReasoningItem};
use spine_protocol::tool::ToolArguments;

/// The request body.
#[derive(Debug, Serialize)]
pub(crate) struct ResponsesRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
    input: Vec<InputItem<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<ReasoningParam>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    stream: bool,
}

/// The model id prefixes of OpenAI's reasoning models (the o-series, GPT-5 and Codex).
pub const REASONING_MODEL_PREFIXES: &[&str] = &["o1", "o3", "o4", "gpt-5", "codex"];

/// Whether a request to `model` asks for encrypted reasoning: an effort is configured, or the
/// model id starts with one of [`REASONING_MODEL_PREFIXES`].
pub fn reasons(model: &str, effort: Option<ReasoningEffort>) -> bool {
    effort.is_some() || REASONING_MODEL_PREFIXES.iter().any(|p| model.starts_with(p))
}

#[derive(Debug, Serialize)]
struct ReasoningParam {
    effort: ReasoningEffort,
    summary: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum InputItem<'a> {
    Message { role: &'static str, content: Vec<Content<'a>> },
    FunctionCall { call_id: &'a str, name: &'a str, arguments: String },
    FunctionCallOutput { call_id: &'a str, output: &'a str },
    Reasoning { summary: Vec<SummaryText<'a>>, encrypted_content: &'a str },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Content<'a> {
    InputText { text: Cow<'a, str> },
    OutputText { text: &'a str },
    InputImage { image_url: String },
}

/// Input text then the images as `input_image` parts (empty text not sent when there are
/// images).
fn with_images<'a>(text: Cow<'a, str>, images: &[ImageBlock]) -> Vec<Content<'a>> {
    let mut parts = Vec::with_capacity(images.len() + 1);
    if images.is_empty() || !text.is_empty() {
        parts.push(Content::InputText { text });
    }
    parts.extend(images.iter().map(|i| Content::InputImage { image_url: i.data_url() }));
    parts
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum SummaryText<'a> {
    SummaryText { text: &'a str },
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    strict: bool,
}

/// Builds the request body.
/// The optional request fields of the configuration.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options<'a> {
    pub effort: Option<ReasoningEffort>,
    pub tool_choice: Option<&'a ToolChoice>,
    pub max_output_tokens: Option<u32>,
    pub temperature: Option<f64>,
}

/// `tool_choice` in the Responses format (`{"type": "function", "name": …}` for one tool).
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => Value::from("auto"),
        ToolChoice::Required => Value::from("required"),
        ToolChoice::None => Value::from("none"),
        ToolChoice::Tool(name) => serde_json::json!({"type": "function", "name": name}),
    }
}

pub(crate) fn request<'a>(model: &'a str, request: ModelRequest<'a>, options: Options<'_>) -> ResponsesRequest<'a> {
    let effort = options.effort;
    let leading = request.messages.iter().take_while(|m| matches!(m, Message::System { .. })).count();
    let system: Vec<&str> = request.messages[..leading]
        .iter()
        .filter_map(|m| match m {
            Message::System { content } if !content.trim().is_empty() => Some(content.as_str()),
            _ => None,
        })
        .collect();
    let instructions = (!system.is_empty()).then(|| system.join("\n\n"));
    let mut input = Vec::new();
    // Images of tool results wait until the round's outputs are out.
    let mut deferred = Vec::new();
    for m in &request.messages[leading..] {
        match m {
            Message::Tool(t) => {
                input.push(InputItem::FunctionCallOutput { call_id: &t.tool_call_id, output: &t.content });
                if !t.images.is_empty() {
                    let label = format!("[Images from the result of tool call {} ({})]", t.tool_call_id, t.name);
                    deferred
                        .push(InputItem::Message { role: "user", content: with_images(Cow::Owned(label), &t.images) });
                }
            }
            other => {
                input.append(&mut deferred);
                items(other, &mut input);
            }
        }
    }
    input.append(&mut deferred);
    let tools: Vec<Tool<'_>> = request
        .tools
        .iter()
        .map(|t| Tool {
            kind: "function",
            name: &t.name,
            description: &t.description,
            parameters: &t.input_schema,
            strict: false,
        })
        .collect();
    let tool_choice = options.tool_choice.filter(|_| !tools.is_empty()).map(tool_choice);
    ResponsesRequest {
        model,
        instructions,
        input,
        tools,
        reasoning: effort.map(|effort| ReasoningParam { effort, summary: "auto" }),
        tool_choice,
        max_output_tokens: options.max_output_tokens,
        temperature: options.temperature,
        store: false,
        include: if reasons(model, effort) { vec!["reasoning.encrypted_content"] } else { Vec::new() },
        stream: true,
    }
}

fn message<'a>(role: &'static str, content: Content<'a>) -> InputItem<'a> {
    InputItem::Message { role, content: vec![content] }
}

fn items<'a>(m: &'a Message, out: &mut Vec<InputItem<'a>>) {
    match m {
        Message::User { content, images } => {
            out.push(InputItem::Message { role: "user", content: with_images(Cow::Borrowed(content), images) });
        }
        Message::System { content } => {
            out.push(message("developer", Content::InputText { text: Cow::Borrowed(content) }))
        }
        Message::Context(c) => out.push(message("developer", Content::InputText { text: Cow::Borrowed(&c.content) })),
        Message::Tool(t) => out.push(InputItem::FunctionCallOutput { call_id: &t.tool_call_id, output: &t.content }),
        Message::Assistant(a) => {
            for item in &a.reasoning {
                match item {
                    ReasoningItem::Reasoning { summary, encrypted_content: Some(encrypted_content), .. } => {
                        out.push(InputItem::Reasoning {
                            summary: summary.iter().map(|text| SummaryText::SummaryText { text }).collect(),
                            encrypted_content,
                        });
                    }
                    ReasoningItem::Reasoning { encrypted_content: None, .. }
                    | ReasoningItem::Thinking { .. }
                    | ReasoningItem::RedactedThinking { .. } => {}
                }
            }
            if let Some(text) = a.content.as_deref().filter(|t| !t.is_empty()) {
                out.push(message("assistant", Content::OutputText { text }));
            }
            for call in &a.tool_calls {
                out.push(InputItem::FunctionCall {
                    call_id: &call.id,
                    name: &call.name,
                    arguments: ToolArguments::to_wire(&call.arguments),
                });
            }
        }
    }
}

/// One stream event (the `data:` payload, tagged by `type`).
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Event<'a> {
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded {
        #[serde(default)]
        output_index: u32,
        item: OutputItem,
    },
    #[serde(rename = "response.output_item.done")]
    OutputItemDone {
        #[serde(default)]
        output_index: u32,
        item: OutputItem,
    },
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        #[serde(default)]
        output_index: u32,
        #[serde(default, borrow)]
        delta: Cow<'a, str>,
    },
    #[serde(rename = "response.refusal.delta")]
    RefusalDelta {
        #[serde(default)]
        output_index: u32,
        #[serde(default, borrow)]
        delta: Cow<'a, str>,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta {
        #[serde(default)]
        output_index: u32,
        #[serde(default, borrow)]
        delta: Cow<'a, str>,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    FunctionCallArgumentsDone {
        #[serde(default)]
        output_index: u32,
        #[serde(default)]
        arguments: Option<String>,
    },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningSummaryTextDelta {
        #[serde(default)]
        output_index: u32,
        #[serde(default)]
        summary_index: usize,
        #[serde(default, borrow)]
        delta: Cow<'a, str>,
    },
    #[serde(rename = "response.completed")]
    Completed { response: WireResponse },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: WireResponse },
    #[serde(rename = "response.failed")]
    Failed { response: WireResponse },
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<Value>,
        #[serde(default)]
        message: Option<String>,
        /// Some servers nest the error object.
        #[serde(default)]
        error: Option<WireError>,
    },
    /// `response.created`, `response.in_progress`, content-part events, `.done` events whose
    /// content the item's `output_item.done` repeats, and types added later.
    #[serde(other)]
    Unknown,
}

/// An output item (in `output_item.added/done`).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum OutputItem {
    Message {
        #[serde(default)]
        content: Vec<OutputContent>,
    },
    FunctionCall {
        #[serde(default)]
        call_id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        arguments: String,
    },
    Reasoning {
        #[serde(default)]
        id: String,
        #[serde(default)]
        summary: Vec<Summary>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    /// Built-in tool calls and item types added later.
    #[serde(other)]
    Other,
}

/// A content part of a message item.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum OutputContent {
    OutputText {
        #[serde(default)]
        text: String,
    },
    Refusal {
        #[serde(default)]
        refusal: String,
    },
    #[serde(other)]
    Other,
}

/// A summary part of a reasoning item.
#[derive(Debug, Deserialize)]
pub(crate) struct Summary {
    #[serde(default)]
    pub text: String,
}

/// The response object of the terminal events.
#[derive(Debug, Deserialize)]
pub(crate) struct WireResponse {
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(default)]
    pub error: Option<WireError>,
    #[serde(default)]
    pub incomplete_details: Option<IncompleteDetails>,
}

/// `response.incomplete_details`.
#[derive(Debug, Deserialize)]
pub(crate) struct IncompleteDetails {
    #[serde(default)]
    pub reason: Option<String>,
}

/// An error object.
#[derive(Debug, Deserialize)]
pub(crate) struct WireError {
    #[serde(default)]
    pub code: Option<Value>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// `response.usage`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
    #[serde(default)]
    pub input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    pub output_tokens_details: Option<OutputDetails>,
}

/// `usage.input_tokens_details`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct InputDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// `usage.output_tokens_details`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct OutputDetails {
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
}
