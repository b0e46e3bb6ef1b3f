//! The lines of a transcript, as Claude Code writes them.
//!
//! | record | line |
//! | --- | --- |
//! | user prompt, Stop-hook message | `{"type":"user","message":{"role":"user","content":"…"}}`; with images, `content` is `[{"type":"text"}, {"type":"image","source":{…}}…]` |
//! | model turn | `{"type":"assistant","message":{"id","type":"message","role":"assistant","model","content":[text, tool_use…],"stop_reason","usage"}}` |
//! | tool result | `{"type":"user","message":{"role":"user","content":[tool_result]},"sourceToolAssistantUUID","toolName","errorCode"?}` (a result with images has a block list as its `content`) |
//! | hook context | `{"type":"attachment","attachment":{"type":"hook_additional_context","hookEvent","content":["…"]}}` |
//! | system message | `{"type":"system","subtype":"spine_message","content":"…"}` |
//! | session start | `{"type":"system","subtype":"spine_session_start","content","model"}` |
//! | compaction | `{"type":"system","subtype":"compact_boundary","parentUuid":null,"logicalParentUuid",…}`, then every kept message |
//! | deferral | `{"type":"system","subtype":"spine_deferred","content","call"}` |
//! | end of run | `{"type":"system","subtype":"spine_result","content","result"}` |
//!
//! Every line also has `parentUuid` (the previous line's `uuid`: one chain, cut only by a
//! compaction boundary as in Claude Code), `isSidechain` (true, with `agentId`, in a subagent's
//! transcript), `uuid`, `timestamp`, `userType`,
//! `cwd`, `sessionId` and `version` (spine's). `toolName` and `errorCode` are spine's: they let
//! `--resume` restore a result exactly; Claude Code's readers ignore them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::{Map, Value, json};
use spine_protocol::message::Message;

use super::blocks::{Reasoning, assistant_content, tool_result_block, user_content};
use super::{ReplyMeta, TranscriptRecord};

/// The `version` every line carries.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Now as RFC 3339 in UTC with milliseconds, as Claude Code writes `timestamp`.
pub fn timestamp_now() -> String {
    let now = time::OffsetDateTime::from(SystemTime::now());
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    now.format(&format).unwrap_or_default()
}

/// The state lines are written in: the last line's uuid, the session and its directory, and
/// which assistant line made each call (for `sourceToolAssistantUUID`).
#[derive(Debug, Default)]
pub(super) struct Chain {
    last_uuid: Option<String>,
    session_id: String,
    cwd: PathBuf,
    model: String,
    call_lines: HashMap<String, String>,
    /// A subagent's transcript: its agent id (lines get `isSidechain: true` and `agentId`).
    pub(super) sidechain: Option<String>,
}

impl Chain {
    /// The chain of an existing transcript: it continues from the last line that has a `uuid`,
    /// in that line's session and directory.
    pub(super) fn continuing(lines: impl Iterator<Item = String>) -> Self {
        let mut chain = Chain::default();
        for line in lines {
            let Ok(value) = serde_json::from_str::<Value>(&line) else { continue };
            if let Some(uuid) = value["uuid"].as_str() {
                chain.last_uuid = Some(uuid.to_owned());
            }
            if let Some(id) = value["sessionId"].as_str() {
                id.clone_into(&mut chain.session_id);
            }
            if let Some(cwd) = value["cwd"].as_str() {
                chain.cwd = PathBuf::from(cwd);
            }
        }
        chain
    }

    /// The lines of one record (several for a compaction).
    pub(super) fn lines(&mut self, record: &TranscriptRecord) -> Vec<Value> {
        match record {
            TranscriptRecord::Session { session_id, cwd, model } => {
                session_id.clone_into(&mut self.session_id);
                self.cwd.clone_from(cwd);
                model.clone_into(&mut self.model);
                let body = json!({
                    "subtype": "spine_session_start",
                    "content": format!("spine {VERSION} session started with {model}"),
                    "level": "info",
                    "model": model,
                });
                vec![self.line("system", body, Link::Previous)]
            }
            TranscriptRecord::Message { message } => vec![self.message(message, None)],
            TranscriptRecord::Reply { message, meta } => {
                vec![self.message(&Message::Assistant(message.clone()), Some(meta))]
            }
            TranscriptRecord::Compacted { messages } => {
                let body = json!({
                    "subtype": "compact_boundary",
                    "content": "Conversation compacted",
                    "level": "info",
                    "compactMetadata": {"trigger": "auto"},
                });
                let mut lines = vec![self.line("system", body, Link::Boundary)];
                lines.extend(messages.iter().map(|m| self.message(m, None)));
                lines
            }
            TranscriptRecord::Deferred { call } => {
                let body = json!({
                    "subtype": "spine_deferred",
                    "content": format!("the call {} ({}) was deferred", call.id, call.name),
                    "level": "info",
                    "call": call,
                });
                vec![self.line("system", body, Link::Previous)]
            }
            TranscriptRecord::Result { subtype } => {
                let word = json!(subtype);
                let body = json!({
                    "subtype": "spine_result",
                    "content": format!("the run ended: {}", word.as_str().unwrap_or_default()),
                    "level": "info",
                    "result": subtype,
                });
                vec![self.line("system", body, Link::Previous)]
            }
        }
    }

    fn message(&mut self, message: &Message, meta: Option<&ReplyMeta>) -> Value {
        match message {
            Message::User { content, images } => {
                let content = user_content(content, images);
                self.line("user", json!({"message": {"role": "user", "content": content}}), Link::Previous)
            }
            Message::Assistant(turn) => {
                let meta =
                    meta.cloned().unwrap_or_else(|| ReplyMeta { model: self.model.clone(), ..ReplyMeta::default() });
                let usage = meta.usage.map(|u| {
                    json!({
                        "input_tokens": u.uncached_input_tokens(),
                        "cache_creation_input_tokens": u.cache_creation_input_tokens,
                        "cache_read_input_tokens": u.cache_read_input_tokens,
                        "output_tokens": u.output_tokens,
                    })
                });
                let body = json!({"message": {
                    "id": format!("msg_{}", uuid::Uuid::new_v4().simple()),
                    "type": "message",
                    "role": "assistant",
                    "model": meta.model,
                    "content": assistant_content(turn, Reasoning::Exact),
                    "stop_reason": meta.finish.as_ref().map(|f| f.stop_reason()),
                    "stop_sequence": Value::Null,
                    "stop_details": Value::Null,
                    "usage": usage,
                }});
                let line = self.line("assistant", body, Link::Previous);
                if let Some(uuid) = line["uuid"].as_str() {
                    for call in &turn.tool_calls {
                        self.call_lines.insert(call.id.clone(), uuid.to_owned());
                    }
                }
                line
            }
            Message::Tool(result) => {
                let mut body = json!({
                    "message": {"role": "user", "content": [tool_result_block(result)]},
                    "toolName": result.name,
                });
                if let Some(source) = self.call_lines.get(&result.tool_call_id) {
                    body["sourceToolAssistantUUID"] = json!(source);
                }
                if let Some(code) = result.error_code {
                    body["errorCode"] = json!(code);
                }
                self.line("user", body, Link::Previous)
            }
            Message::Context(context) => {
                let body = json!({"attachment": {
                    "type": "hook_additional_context",
                    "hookEvent": context.event,
                    "content": [context.content],
                }});
                self.line("attachment", body, Link::Previous)
            }
            Message::System { content } => {
                let body = json!({"subtype": "spine_message", "content": content, "level": "info"});
                self.line("system", body, Link::Previous)
            }
        }
    }

    /// One line: the envelope around `body`'s fields, chained to the previous line.
    fn line(&mut self, kind: &str, body: Value, link: Link) -> Value {
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut map = Map::new();
        match link {
            Link::Previous => {
                map.insert("parentUuid".into(), json!(self.last_uuid));
            }
            Link::Boundary => {
                map.insert("parentUuid".into(), Value::Null);
                map.insert("logicalParentUuid".into(), json!(self.last_uuid));
            }
        }
        map.insert("isSidechain".into(), json!(self.sidechain.is_some()));
        if let Some(agent_id) = &self.sidechain {
            map.insert("agentId".into(), json!(agent_id));
        }
        map.insert("type".into(), json!(kind));
        if let Value::Object(fields) = body {
            map.extend(fields);
        }
        map.insert("uuid".into(), json!(uuid));
        map.insert("timestamp".into(), json!(timestamp_now()));
        map.insert("userType".into(), json!("external"));
        map.insert("cwd".into(), json!(self.cwd));
        map.insert("sessionId".into(), json!(self.session_id));
        map.insert("version".into(), json!(VERSION));
        self.last_uuid = Some(uuid);
        Value::Object(map)
    }
}

/// How a line links to the one before.
#[derive(Debug, Clone, Copy)]
enum Link {
    /// `parentUuid` is the previous line.
    Previous,
    /// A compaction boundary: `parentUuid` is null, `logicalParentUuid` the previous line.
    Boundary,
}
