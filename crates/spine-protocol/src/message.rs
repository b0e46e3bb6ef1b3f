//! The provider-neutral conversation.
//!
//! A conversation is a list of [`Message`]s. Serialised, each message is an object tagged by
//! `role`: `system`, `user`, `assistant` (text and/or tool calls), `tool` (the one result of one
//! tool call) and `context` (hook additional context: text for the model that is never a tool
//! result nor an assistant message, so it cannot break tool-call pairing). Providers render
//! `context` in their own way (a system message for OpenAI chat, a `<system-reminder>` block in a
//! user turn for Anthropic).
//!
//! An assistant message also carries the model's reasoning ([`ReasoningItem`]s), in the order
//! the model gave them: Anthropic `thinking` (text and `signature`) and `redacted_thinking`
//! blocks, and OpenAI Responses `reasoning` items. They are opaque where the API requires it
//! (signatures, redacted data, encrypted content go back byte for byte with their turn) and
//! are never part of the message's answer text ([`Message::text`], [`AssistantMessage::content`]).
//! Serialised, the field is `reasoning`, absent when empty, so transcripts written before it
//! still load.
//!
//! User messages and tool results may carry images ([`ImageBlock`]: base64 data with a media
//! type), after their text. Serialised, the field is `images`, absent when empty, so messages
//! written before it still load. Each provider renders them in its own format; the session
//! transcript and hooks see Claude Code's block shape ([`ImageBlock::to_claude_block`]).

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
        /// Images attached to the turn, after the text (absent when empty).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImageBlock>,
    },
    /// A model turn.
    Assistant(AssistantMessage),
    /// The result of one tool call.
    Tool(ToolResultMessage),
    /// Additional context returned by a hook.
    Context(ContextMessage),
}

/// A model turn: its reasoning, optional text and the tool calls, in the order the model gave
/// them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The model's reasoning items, in order (empty when the model did not reason or the
    /// provider does not return it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<ReasoningItem>,
    /// The text the model wrote (absent when it only called tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The tool calls, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

/// One reasoning item of a model turn, kept as the provider sent it (tagged by `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningItem {
    /// An Anthropic `thinking` block.
    Thinking {
        /// The thinking text (a summary on Claude 4 models).
        thinking: String,
        /// The opaque signature the API checks when the block is sent back.
        signature: String,
    },
    /// An Anthropic `redacted_thinking` block: encrypted, sent back as is.
    RedactedThinking {
        /// The opaque data.
        data: String,
    },
    /// An OpenAI Responses `reasoning` item.
    Reasoning {
        /// The item id (`rs_…`).
        id: String,
        /// The summary texts, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summary: Vec<String>,
        /// The encrypted reasoning (`include: ["reasoning.encrypted_content"]`), sent back as
        /// is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
}

impl ReasoningItem {
    /// The readable text of the item (for `-v` and the trace), if it has any: the thinking
    /// text, or the summary texts joined by a blank line. Redacted and encrypted parts have
    /// none.
    pub fn readable_text(&self) -> Option<String> {
        let text = match self {
            ReasoningItem::Thinking { thinking, .. } => thinking.clone(),
            ReasoningItem::RedactedThinking { .. } => String::new(),
            ReasoningItem::Reasoning { summary, .. } => summary.join("\n\n"),
        };
        (!text.trim().is_empty()).then_some(text)
    }
}

/// How much the model should reason (`model_options.reasoning_effort`): sent as
/// `reasoning_effort` on chat completions and `reasoning.effort` on the Responses API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// `minimal`.
    Minimal,
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
}

impl ReasoningEffort {
    /// Every effort, in increasing order.
    pub const ALL: [ReasoningEffort; 4] =
        [ReasoningEffort::Minimal, ReasoningEffort::Low, ReasoningEffort::Medium, ReasoningEffort::High];

    /// The name as sent (`minimal`, `low`, `medium`, `high`).
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }

    /// The effort a name means.
    pub fn parse(name: &str) -> Option<ReasoningEffort> {
        ReasoningEffort::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

/// The effort of a run as hooks read it: `"effort": {"level": "high"}` in every hook input
/// (Claude Code's common field), from `--effort` (its word), else `model_options.reasoning_effort`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effort {
    /// The level (`minimal`, `low`, `medium`, `high`; `xhigh` and `max` from `--effort`).
    pub level: String,
}

impl From<ReasoningEffort> for Effort {
    fn from(effort: ReasoningEffort) -> Self {
        Effort { level: effort.as_str().to_owned() }
    }
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
    /// Images the tool returned (a `Read` of an image file), after the text (absent when
    /// empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageBlock>,
}

/// One image of a user turn or a tool result: base64 data with its media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageBlock {
    /// The media type: `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The image bytes, base64 (standard alphabet, padded).
    pub data: String,
    /// The width in pixels, when known (for token estimates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// The height in pixels, when known (for token estimates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
}

/// Tokens an image of unknown size is counted as.
pub const UNKNOWN_IMAGE_TOKENS: usize = 1600;

impl ImageBlock {
    /// An image of unknown dimensions.
    pub fn new(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        ImageBlock { media_type: media_type.into(), data: data.into(), width: None, height: None }
    }

    /// The `data:` URL of the image (`data:<media type>;base64,<data>`), as OpenAI takes it.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }

    /// The image as a Claude content block:
    /// `{"type":"image","source":{"type":"base64","media_type":…,"data":…}}`.
    pub fn to_claude_block(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "image",
            "source": {"type": "base64", "media_type": self.media_type, "data": self.data},
        })
    }

    /// The image a Claude content block holds, if it is a base64 image block.
    pub fn from_claude_block(block: &serde_json::Value) -> Option<ImageBlock> {
        if block.get("type")?.as_str()? != "image" {
            return None;
        }
        let source = block.get("source")?;
        if source.get("type")?.as_str()? != "base64" {
            return None;
        }
        Some(ImageBlock::new(source.get("media_type")?.as_str()?, source.get("data")?.as_str()?))
    }

    /// The estimated token cost: `width * height / 750` (Anthropic's formula), or
    /// [`UNKNOWN_IMAGE_TOKENS`] when the dimensions are unknown. The base64 text is never
    /// counted.
    pub fn estimated_tokens(&self) -> usize {
        match (self.width, self.height) {
            (Some(w), Some(h)) => ((u64::from(w) * u64::from(h)) / 750).max(1) as usize,
            _ => UNKNOWN_IMAGE_TOKENS,
        }
    }
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
        Message::User { content: content.into(), images: Vec::new() }
    }

    /// A user message with images after its text.
    pub fn user_with_images(content: impl Into<String>, images: Vec<ImageBlock>) -> Self {
        Message::User { content: content.into(), images }
    }

    /// The images the message carries (a user turn's or a tool result's; none for the
    /// others).
    pub fn images(&self) -> &[ImageBlock] {
        match self {
            Message::User { images, .. } => images,
            Message::Tool(t) => &t.images,
            Message::System { .. } | Message::Assistant(_) | Message::Context(_) => &[],
        }
    }

    /// An assistant message with text only.
    pub fn assistant_text(content: impl Into<String>) -> Self {
        Message::Assistant(AssistantMessage {
            reasoning: Vec::new(),
            content: Some(content.into()),
            tool_calls: Vec::new(),
        })
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
    /// An assistant message's reasoning is not part of it.
    pub fn text(&self) -> Option<&str> {
        match self {
            Message::System { content } | Message::User { content, .. } => Some(content),
            Message::Assistant(a) => a.content.as_deref(),
            Message::Tool(t) => Some(&t.content),
            Message::Context(c) => Some(&c.content),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_messages_without_reasoning_load_and_serialise_without_the_field() {
        let old = r#"{"role":"assistant","content":"hi"}"#;
        let message: Message = serde_json::from_str(old).expect("an old message loads");
        assert_eq!(message, Message::assistant_text("hi"));
        assert_eq!(serde_json::to_string(&message).expect("json"), old);
    }

    #[test]
    fn reasoning_items_round_trip_in_order_with_their_opaque_parts() {
        let message = Message::Assistant(AssistantMessage {
            reasoning: vec![
                ReasoningItem::Thinking { thinking: "Let me look.".into(), signature: "sig==".into() },
                ReasoningItem::RedactedThinking { data: "opaque".into() },
                ReasoningItem::Reasoning {
                    id: "rs_1".into(),
                    summary: vec!["a".into(), "b".into()],
                    encrypted_content: Some("enc".into()),
                },
            ],
            content: Some("Done.".into()),
            tool_calls: Vec::new(),
        });
        let json = serde_json::to_value(&message).expect("json");
        assert_eq!(
            json["reasoning"],
            serde_json::json!([
                {"type": "thinking", "thinking": "Let me look.", "signature": "sig=="},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "reasoning", "id": "rs_1", "summary": ["a", "b"], "encrypted_content": "enc"}
            ])
        );
        assert_eq!(serde_json::from_value::<Message>(json).expect("loads"), message);
        assert_eq!(message.text(), Some("Done."), "reasoning is not the message's text");
    }

    #[test]
    fn messages_without_images_load_and_serialise_without_the_field() {
        let old = r#"{"role":"user","content":"hi"}"#;
        let message: Message = serde_json::from_str(old).expect("an old user message loads");
        assert_eq!(message, Message::user("hi"));
        assert_eq!(serde_json::to_string(&message).expect("json"), old);
        let old_tool = r#"{"role":"tool","tool_call_id":"c1","name":"Read","content":"x"}"#;
        let tool: Message = serde_json::from_str(old_tool).expect("an old tool result loads");
        assert!(tool.images().is_empty());
        assert_eq!(serde_json::to_string(&tool).expect("json"), old_tool);
    }

    #[test]
    fn images_round_trip_and_render_as_claude_blocks() {
        let image = ImageBlock { width: Some(10), height: Some(20), ..ImageBlock::new("image/png", "aGk=") };
        let message = Message::user_with_images("look", vec![image.clone()]);
        let json = serde_json::to_value(&message).expect("json");
        assert_eq!(json["images"][0]["media_type"], "image/png");
        assert_eq!(serde_json::from_value::<Message>(json).expect("loads"), message);
        let block = image.to_claude_block();
        assert_eq!(
            block,
            serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}})
        );
        assert_eq!(ImageBlock::from_claude_block(&block), Some(ImageBlock::new("image/png", "aGk=")));
        assert_eq!(image.data_url(), "data:image/png;base64,aGk=");
    }

    #[test]
    fn image_tokens_follow_the_area_formula_or_a_fixed_count() {
        let known = ImageBlock { width: Some(1000), height: Some(750), ..ImageBlock::new("image/png", "x") };
        assert_eq!(known.estimated_tokens(), 1000);
        assert_eq!(ImageBlock::new("image/png", "x".repeat(100_000)).estimated_tokens(), UNKNOWN_IMAGE_TOKENS);
    }

    #[test]
    fn readable_text_skips_redacted_and_joins_summaries() {
        assert_eq!(ReasoningItem::RedactedThinking { data: "x".into() }.readable_text(), None);
        let item = ReasoningItem::Reasoning {
            id: "rs".into(),
            summary: vec!["a".into(), "b".into()],
            encrypted_content: None,
        };
        assert_eq!(item.readable_text().as_deref(), Some("a\n\nb"));
    }
}
