//! A scripted model: [`Script`] answers from a list of assistant messages, checks that every
//! request it receives is paired, and records every request. Message builders ([`text`],
//! [`calls`], [`raw_call`]), inspectors ([`results`], [`roles`]), and [`write_script_file`],
//! the file `--model scripted:FILE` reads.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use spine_core::CancellationToken;
use spine_core::model::{FinishReason, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink};
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::pairing::validate_pairing;
use spine_protocol::tool::{ToolArguments, ToolCall};

/// A model that answers from a list and records every request.
pub struct Script {
    replies: Mutex<VecDeque<AssistantMessage>>,
    requests: Mutex<Vec<Vec<Message>>>,
    delay: Option<Duration>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Script {
    /// A script answering with `replies`, in order; past the end every request fails with
    /// `script exhausted`.
    pub fn new(replies: Vec<AssistantMessage>) -> Arc<Self> {
        Arc::new(Script { replies: Mutex::new(replies.into()), requests: Mutex::default(), delay: None })
    }

    /// The same, answering each request after `delay`.
    pub fn with_delay(replies: Vec<AssistantMessage>, delay: Duration) -> Arc<Self> {
        Arc::new(Script { replies: Mutex::new(replies.into()), requests: Mutex::default(), delay: Some(delay) })
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Vec<Message>> {
        lock(&self.requests).clone()
    }
}

#[async_trait]
impl ModelClient for Script {
    fn model(&self) -> &str {
        "script"
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        _stream: &dyn StreamSink,
        _cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        if let Err(e) = validate_pairing(request.messages) {
            return Err(ModelError::new(
                ModelErrorKind::InvalidReply,
                format!("the runner sent an unpaired history: {e}"),
            ));
        }
        lock(&self.requests).push(request.messages.to_vec());
        if let Some(d) = self.delay {
            tokio::time::sleep(d).await;
        }
        match lock(&self.replies).pop_front() {
            Some(message) => {
                let finish = if message.tool_calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
                Ok(ModelReply { message, finish_reason: finish, usage: None })
            }
            None => Err(ModelError::new(ModelErrorKind::Exhausted, "script exhausted")),
        }
    }
}

/// A final answer.
pub fn text(t: &str) -> AssistantMessage {
    AssistantMessage { reasoning: Vec::new(), content: Some(t.to_owned()), tool_calls: vec![] }
}

/// One model turn with these tool calls `(id, name, arguments)`.
pub fn calls(list: &[(&str, &str, Value)]) -> AssistantMessage {
    AssistantMessage {
        reasoning: Vec::new(),
        content: None,
        tool_calls: list
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: ToolArguments::Json(args.clone()),
            })
            .collect(),
    }
}

/// One model turn with a call whose arguments did not parse.
pub fn raw_call(id: &str, name: &str, raw: &str) -> AssistantMessage {
    AssistantMessage {
        reasoning: Vec::new(),
        content: None,
        tool_calls: vec![ToolCall { id: id.into(), name: name.into(), arguments: ToolArguments::Raw(raw.into()) }],
    }
}

/// The tool results of a conversation, in order.
pub fn results(messages: &[Message]) -> Vec<ToolResultMessage> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// The roles of a conversation, context messages as `context:<Event>`.
pub fn roles(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::Context(c) => format!("context:{}", c.event),
            other => other.role().to_owned(),
        })
        .collect()
}

/// Writes the file of a scripted model (`--model scripted:FILE`): `{"turns": turns}`.
pub fn write_script_file(path: &Path, turns: Value) -> std::io::Result<()> {
    std::fs::write(path, serde_json::json!({ "turns": turns }).to_string())
}
