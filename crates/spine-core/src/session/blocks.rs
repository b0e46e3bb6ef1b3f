//! Claude Code's content blocks for spine's messages, both ways: an assistant turn is its
//! reasoning blocks, then `text` and `tool_use` blocks; a tool result is one `tool_result`
//! block, whose `content` is the text, or, when the result has images, a list of blocks: a
//! `text` block then `image` blocks (`{"type":"image","source":{"type":"base64",
//! "media_type","data"}}`). A user turn with images is [`user_content`]: the same list. The
//! transcript and the `stream-json` output write them; the transcript reader reads them back,
//! also from files Claude Code wrote (a `tool_result`'s `content` may be a string or a list of
//! `text` and `image` blocks; blocks spine does not know in an assistant turn, such as `image`,
//! are skipped).
//!
//! Reasoning: Anthropic `thinking` (text and `signature`) and `redacted_thinking` (`data`)
//! blocks are Claude Code's own; an OpenAI Responses reasoning item is spine's `reasoning` block
//! (`id`, `summary`, `encrypted_content`) in the transcript, so a resumed session sends every
//! item back exactly, and a `thinking` block with its summary text in `stream-json`.

use serde_json::{Value, json};
use spine_protocol::message::{AssistantMessage, ImageBlock, ReasoningItem, ToolResultMessage};
use spine_protocol::tool::{ErrorCode, ToolArguments, ToolCall};

/// How reasoning items are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reasoning {
    /// Every item as it is, signatures and encrypted content included (the transcript).
    Exact,
    /// Anthropic blocks as they are; a Responses item as a `thinking` block with its summary
    /// text, or nothing when it has none (`stream-json`, as Claude Code prints thinking).
    Readable,
}

/// The content blocks of an assistant turn: its reasoning, its text (when not empty), then
/// one `tool_use` per call, in order. Arguments that did not parse are kept as a JSON string.
pub fn assistant_content(message: &AssistantMessage, reasoning: Reasoning) -> Vec<Value> {
    let mut content = Vec::with_capacity(message.reasoning.len() + message.tool_calls.len() + 1);
    for item in &message.reasoning {
        let block = match (item, reasoning) {
            (ReasoningItem::Reasoning { .. }, Reasoning::Readable) => {
                item.readable_text().map(|text| json!({"type": "thinking", "thinking": text}))
            }
            _ => serde_json::to_value(item).ok(),
        };
        content.extend(block);
    }
    if let Some(text) = message.content.as_deref().filter(|t| !t.is_empty()) {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in &message.tool_calls {
        let input = match &call.arguments {
            ToolArguments::Json(v) => v.clone(),
            ToolArguments::Raw(raw) => Value::String(raw.clone()),
        };
        content.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    content
}

/// The `content` of a user turn or a tool result: the text alone when there are no images,
/// else a `text` block (when the text is not empty) then one `image` block per image.
pub fn user_content(text: &str, images: &[ImageBlock]) -> Value {
    if images.is_empty() {
        return json!(text);
    }
    let mut blocks = Vec::with_capacity(images.len() + 1);
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    blocks.extend(images.iter().map(ImageBlock::to_claude_block));
    Value::Array(blocks)
}

/// The `tool_result` block answering one call.
pub fn tool_result_block(result: &ToolResultMessage) -> Value {
    json!({
        "tool_use_id": result.tool_call_id,
        "type": "tool_result",
        "content": user_content(&result.content, &result.images),
        "is_error": result.is_error(),
    })
}

/// The base64 `image` blocks of a block list, in order.
pub fn read_images(blocks: &[Value]) -> Vec<ImageBlock> {
    blocks.iter().filter_map(ImageBlock::from_claude_block).collect()
}

/// Adds the blocks of one assistant line to `message`: text blocks are appended to its text
/// (separated by a blank line), `tool_use` blocks become calls. Returns whether any block was
/// understood.
pub fn read_assistant_blocks(blocks: &Value, message: &mut AssistantMessage) -> bool {
    let mut understood = false;
    let blocks: &[Value] = match blocks {
        Value::String(text) => {
            append_text(message, text);
            return true;
        }
        Value::Array(blocks) => blocks,
        _ => return false,
    };
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => {
                if let Some(text) = block["text"].as_str() {
                    append_text(message, text);
                    understood = true;
                }
            }
            Some("thinking" | "redacted_thinking" | "reasoning") => {
                if let Ok(item) = serde_json::from_value::<ReasoningItem>(block.clone()) {
                    message.reasoning.push(item);
                    understood = true;
                }
            }
            Some("tool_use") => {
                let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
                    continue;
                };
                let arguments = match &block["input"] {
                    Value::String(raw) => ToolArguments::Raw(raw.clone()),
                    Value::Null => ToolArguments::Json(json!({})),
                    other => ToolArguments::Json(other.clone()),
                };
                message.tool_calls.push(ToolCall { id: id.to_owned(), name: name.to_owned(), arguments });
                understood = true;
            }
            _ => {}
        }
    }
    understood
}

fn append_text(message: &mut AssistantMessage, text: &str) {
    match &mut message.content {
        Some(existing) if !existing.is_empty() => {
            existing.push_str("\n\n");
            existing.push_str(text);
        }
        _ => message.content = Some(text.to_owned()),
    }
}

/// One `tool_result` block read back. `name` is the called tool's name when the caller knows it;
/// `error_code` the code spine recorded, else one read from the `Error [<code>]:` text spine
/// writes, else `runtime_error` for a result marked `is_error`.
pub fn read_tool_result(block: &Value, name: String, error_code: Option<ErrorCode>) -> Option<ToolResultMessage> {
    let tool_call_id = block["tool_use_id"].as_str()?.to_owned();
    let (content, images) = match &block["content"] {
        Value::String(text) => (text.clone(), Vec::new()),
        Value::Array(parts) => (
            parts
                .iter()
                .filter_map(|p| (p["type"] == "text").then(|| p["text"].as_str()).flatten())
                .collect::<Vec<_>>()
                .join("\n"),
            read_images(parts),
        ),
        _ => (String::new(), Vec::new()),
    };
    let error_code = match error_code {
        Some(code) => Some(code),
        None if block["is_error"] == true => Some(code_in_text(&content).unwrap_or(ErrorCode::RuntimeError)),
        None => None,
    };
    Some(ToolResultMessage { tool_call_id, name, content, error_code, images })
}

/// The code of a result text spine wrote as `Error [<code>]: …`.
fn code_in_text(content: &str) -> Option<ErrorCode> {
    let rest = content.strip_prefix("Error [")?;
    let code = &rest[..rest.find(']')?];
    serde_json::from_value(Value::String(code.to_owned())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_blocks_round_trip_reasoning_text_and_calls_including_raw_arguments() {
        let message = AssistantMessage {
            reasoning: vec![
                ReasoningItem::Thinking { thinking: "plan".into(), signature: "sig".into() },
                ReasoningItem::RedactedThinking { data: "opaque".into() },
                ReasoningItem::Reasoning {
                    id: "rs_1".into(),
                    summary: vec!["why".into()],
                    encrypted_content: Some("enc".into()),
                },
            ],
            content: Some("Looking.".into()),
            tool_calls: vec![
                ToolCall {
                    id: "c1".into(),
                    name: "Read".into(),
                    arguments: ToolArguments::Json(json!({"file_path": "a"})),
                },
                ToolCall { id: "c2".into(), name: "Bash".into(), arguments: ToolArguments::Raw("{not json".into()) },
            ],
        };
        let blocks = Value::Array(assistant_content(&message, Reasoning::Exact));
        assert_eq!(blocks[0], json!({"type": "thinking", "thinking": "plan", "signature": "sig"}));
        assert_eq!(blocks[1], json!({"type": "redacted_thinking", "data": "opaque"}));
        assert_eq!(blocks[2]["encrypted_content"], "enc");
        assert_eq!(blocks[3], json!({"type": "text", "text": "Looking."}));
        assert_eq!(blocks[4]["type"], "tool_use");
        let mut back = AssistantMessage::default();
        assert!(read_assistant_blocks(&blocks, &mut back));
        assert_eq!(back, message);
    }

    #[test]
    fn readable_reasoning_shows_a_responses_summary_as_thinking_text() {
        let message = AssistantMessage {
            reasoning: vec![
                ReasoningItem::Reasoning {
                    id: "rs_1".into(),
                    summary: vec!["why".into()],
                    encrypted_content: Some("enc".into()),
                },
                ReasoningItem::Reasoning { id: "rs_2".into(), summary: vec![], encrypted_content: Some("enc".into()) },
            ],
            content: Some("ok".into()),
            tool_calls: vec![],
        };
        let blocks = assistant_content(&message, Reasoning::Readable);
        assert_eq!(blocks, vec![json!({"type": "thinking", "thinking": "why"}), json!({"type": "text", "text": "ok"})]);
    }

    #[test]
    fn unknown_blocks_are_skipped_and_text_blocks_join() {
        let blocks = json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}},
            {"type": "text", "text": "one"},
            {"type": "text", "text": "two"}
        ]);
        let mut back = AssistantMessage::default();
        assert!(read_assistant_blocks(&blocks, &mut back));
        assert_eq!(back.content.as_deref(), Some("one\n\ntwo"));
    }

    #[test]
    fn a_tool_result_error_code_comes_from_the_record_then_the_text_then_is_error() {
        let result = ToolResultMessage {
            tool_call_id: "c1".into(),
            name: "Bash".into(),
            content: "Error [permission_denied]: no".into(),
            error_code: Some(ErrorCode::PermissionDenied),
            images: Vec::new(),
        };
        let block = tool_result_block(&result);
        assert_eq!(read_tool_result(&block, "Bash".into(), None), Some(result.clone()));
        let claude = json!({"tool_use_id": "c9", "type": "tool_result", "content": [{"type": "text", "text": "boom"}], "is_error": true});
        let read = read_tool_result(&claude, "Bash".into(), None).expect("read");
        assert_eq!(read.content, "boom");
        assert_eq!(read.error_code, Some(ErrorCode::RuntimeError));
        let ok = json!({"tool_use_id": "c3", "type": "tool_result", "content": "fine"});
        assert_eq!(read_tool_result(&ok, "Read".into(), None).expect("read").error_code, None);
    }

    #[test]
    fn a_tool_result_with_images_is_a_block_list_and_reads_back() {
        let result = ToolResultMessage {
            tool_call_id: "c1".into(),
            name: "Read".into(),
            content: "Image: a.png (2x3, 1 KB)".into(),
            error_code: None,
            images: vec![ImageBlock::new("image/png", "aGk=")],
        };
        let block = tool_result_block(&result);
        assert_eq!(
            block["content"],
            json!([
                {"type": "text", "text": "Image: a.png (2x3, 1 KB)"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}}
            ])
        );
        assert_eq!(read_tool_result(&block, "Read".into(), None), Some(result));
        let plain = ToolResultMessage { images: Vec::new(), ..tool_result_block_fixture() };
        assert_eq!(tool_result_block(&plain)["content"], json!("text"), "no images: a plain string as before");
    }

    fn tool_result_block_fixture() -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: "c2".into(),
            name: "Read".into(),
            content: "text".into(),
            error_code: None,
            images: Vec::new(),
        }
    }
}
