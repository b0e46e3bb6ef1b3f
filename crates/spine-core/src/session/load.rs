//! Reading a transcript back for `--resume` and `--continue`.
//!
//! The reader takes the lines of [`super::line`] and is lenient the way a reader of Claude
//! Code's own files must be: line types and content blocks it does not know are skipped, an
//! assistant turn split over several lines with the same `message.id` is joined, a `user`
//! line's `content` may be a string or blocks. A line that is not JSON is an error naming the
//! file and line — except a last line with no newline, which a killed run may have left half
//! written: it is dropped. A run killed mid-round left calls unanswered; they are answered
//! `Error [canceled]` so the history is valid.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;
use spine_protocol::hook::HookEventName;
use spine_protocol::message::{AssistantMessage, Message};
use spine_protocol::pairing::answer_unanswered;
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};

use super::LoadedSession;
use super::blocks::{read_assistant_blocks, read_images, read_tool_result};

/// Reads the transcript at `path`.
pub(super) fn load(path: &Path) -> io::Result<LoadedSession> {
    let text = std::fs::read_to_string(path)?;
    let mut reader = Reader::default();
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(value) => value,
            Err(_) if n + 1 == lines.len() && !text.ends_with('\n') => break,
            Err(e) => {
                return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{}:{}: {e}", path.display(), n + 1)));
            }
        };
        reader.line(&value);
    }
    let mut loaded = reader.loaded;
    let keep: Vec<&str> = loaded.deferred.iter().map(|c| c.id.as_str()).collect();
    let canceled = ToolError::new(ErrorCode::Canceled, "the run ended before this call was answered");
    loaded.repaired = answer_unanswered(&mut loaded.messages, &canceled, &keep);
    Ok(loaded)
}

#[derive(Default)]
struct Reader {
    loaded: LoadedSession,
    /// Tool names by call id, for results whose line does not name the tool.
    names: HashMap<String, String>,
    /// The `message.id` of the assistant turn the last message is, if it is one.
    open_turn: Option<String>,
}

impl Reader {
    fn line(&mut self, value: &Value) {
        if let Some(cwd) = value["cwd"].as_str() {
            self.loaded.cwd = Some(PathBuf::from(cwd));
        }
        match value["type"].as_str() {
            Some("user") => self.user(value),
            Some("assistant") => self.assistant(value),
            Some("attachment") => self.attachment(&value["attachment"]),
            Some("system") => self.system(value),
            _ => {}
        }
    }

    fn push(&mut self, message: Message) {
        self.open_turn = None;
        self.loaded.messages.push(message);
    }

    fn user(&mut self, value: &Value) {
        let content = &value["message"]["content"];
        let blocks = match content {
            Value::String(text) => return self.push(Message::user(text.clone())),
            Value::Array(blocks) => blocks,
            _ => return,
        };
        let mut text: Vec<&str> = Vec::new();
        for block in blocks {
            match block["type"].as_str() {
                Some("text") => text.extend(block["text"].as_str()),
                Some("tool_result") => {
                    let id = block["tool_use_id"].as_str().unwrap_or_default();
                    let name = value["toolName"]
                        .as_str()
                        .or_else(|| self.names.get(id).map(String::as_str))
                        .unwrap_or("unknown")
                        .to_owned();
                    let code: Option<ErrorCode> = serde_json::from_value(value["errorCode"].clone()).ok();
                    if let Some(result) = read_tool_result(block, name, code) {
                        self.push(Message::Tool(result));
                    }
                }
                _ => {}
            }
        }
        let images = read_images(blocks);
        if !text.is_empty() || !images.is_empty() {
            self.push(Message::user_with_images(text.join("\n"), images));
        }
    }

    fn assistant(&mut self, value: &Value) {
        let message = &value["message"];
        if let Some(model) = message["model"].as_str().filter(|m| !m.is_empty()) {
            self.loaded.model = Some(model.to_owned());
        }
        let id = message["id"].as_str().map(str::to_owned);
        let continues = id.is_some() && id == self.open_turn;
        let mut turn = match (continues, self.loaded.messages.last_mut()) {
            (true, Some(Message::Assistant(last))) => std::mem::take(last),
            _ => AssistantMessage::default(),
        };
        let understood = read_assistant_blocks(&message["content"], &mut turn);
        for call in &turn.tool_calls {
            self.names.insert(call.id.clone(), call.name.clone());
        }
        match (continues, self.loaded.messages.last_mut()) {
            (true, Some(Message::Assistant(last))) => *last = turn,
            _ if understood => {
                self.push(Message::Assistant(turn));
                self.open_turn = id;
            }
            // A turn whose first line has only blocks spine does not keep (thinking): the
            // next line of the same turn opens it.
            _ => {}
        }
    }

    fn attachment(&mut self, attachment: &Value) {
        if attachment["type"] != "hook_additional_context" {
            return;
        }
        let Some(event) = attachment["hookEvent"].as_str().and_then(|e| e.parse::<HookEventName>().ok()) else {
            return;
        };
        let content = match &attachment["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n"),
            _ => return,
        };
        self.push(Message::context(event, content));
    }

    fn system(&mut self, value: &Value) {
        match value["subtype"].as_str() {
            Some("compact_boundary") => {
                self.loaded.messages.clear();
                self.open_turn = None;
            }
            Some("spine_session_start") => {
                if let Some(model) = value["model"].as_str() {
                    self.loaded.model = Some(model.to_owned());
                }
            }
            Some("spine_deferred") => {
                if let Ok(call) = serde_json::from_value::<ToolCall>(value["call"].clone()) {
                    self.loaded.deferred = Some(call);
                }
            }
            Some("spine_result") => {
                let subtype: Option<RunSubtype> = serde_json::from_value(value["result"].clone()).ok();
                if subtype != Some(RunSubtype::Deferred) {
                    self.loaded.deferred = None;
                }
            }
            Some("spine_message") => {
                if let Some(content) = value["content"].as_str() {
                    self.push(Message::system(content));
                }
            }
            _ => {}
        }
    }
}
