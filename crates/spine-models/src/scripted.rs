//! The scripted model: a JSON file of turns; turn *k* answers the *k*-th model request of the
//! run. A turn holds `text`, `tool_calls`, or both; a tool call carries `arguments` (JSON) or
//! `arguments_raw` (a string sent as is, to test bad model output). Running past the last turn
//! is an error, never a hang.
//!
//! Extensions for tests: `delay_ms` (answer after a pause, honouring cancellation), `error`
//! (fail this request with a transport error), `usage`, and `reasoning` (the turn's reasoning
//! items, as an assistant message carries them: `{"type": "thinking", "thinking", "signature"}`,
//! `{"type": "redacted_thinking", "data"}`, `{"type": "reasoning", "id", "summary",
//! "encrypted_content"}`).
//!
//! ```json
//! {"turns": [
//!   {"tool_calls": [{"id": "call_1", "name": "Read", "arguments": {"file_path": "README.md"}}]},
//!   {"text": "Here is the summary."}
//! ]}
//! ```

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use spine_core::CancellationToken;
use spine_core::model::{FinishReason, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink};
use spine_protocol::message::{AssistantMessage, Message, ReasoningItem};
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolCall;
use thiserror::Error;

/// A script that cannot be used.
#[derive(Debug, Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read scripted model file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid script.
    #[error("invalid scripted model file {path}: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// Why (with line and column).
        reason: String,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    turns: Vec<Turn>,
}

/// One scripted answer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Text of the answer.
    #[serde(default)]
    pub text: Option<String>,
    /// Tool calls of the answer.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// Wait this long before answering.
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Fail the request with this message.
    #[serde(default)]
    pub error: Option<String>,
    /// Usage to report.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Reasoning items of the answer.
    #[serde(default)]
    pub reasoning: Vec<ReasoningItem>,
}

/// The scripted model.
#[derive(Debug)]
pub struct ScriptedModel {
    name: String,
    turns: Vec<Turn>,
    next: AtomicUsize,
    requests: Mutex<Vec<Vec<Message>>>,
}

impl ScriptedModel {
    /// A scripted model from turns.
    pub fn new(turns: Vec<Turn>) -> Self {
        ScriptedModel {
            name: "scripted".to_owned(),
            turns,
            next: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Reads a script file.
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ScriptError::Read { path: path.display().to_string(), source })?;
        Self::from_json(&text).map_err(|reason| ScriptError::Invalid { path: path.display().to_string(), reason })
    }

    /// Parses a script.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let script: Script = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for (i, turn) in script.turns.iter().enumerate() {
            if turn.text.is_none() && turn.tool_calls.is_empty() && turn.error.is_none() {
                return Err(format!("turn {} has neither `text`, `tool_calls` nor `error`", i + 1));
            }
        }
        Ok(Self::new(script.turns))
    }

    /// The messages of every request received so far (for tests).
    pub fn requests(&self) -> Vec<Vec<Message>> {
        match self.requests.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// How many turns the script has.
    pub fn len(&self) -> usize {
        self.turns.len()
    }

    /// Whether the script has no turns.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }
}

#[async_trait]
impl ModelClient for ScriptedModel {
    fn model(&self) -> &str {
        &self.name
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        stream: &dyn StreamSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        match self.requests.lock() {
            Ok(mut g) => g.push(request.messages.to_vec()),
            Err(p) => p.into_inner().push(request.messages.to_vec()),
        }
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let Some(turn) = self.turns.get(index) else {
            return Err(ModelError::new(
                ModelErrorKind::Exhausted,
                format!("scripted model exhausted after {} turns", self.turns.len()),
            ));
        };
        if let Some(ms) = turn.delay_ms {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                () = cancel.cancelled() => return Err(ModelError::new(ModelErrorKind::Canceled, "canceled")),
            }
        }
        if let Some(error) = &turn.error {
            return Err(ModelError::new(ModelErrorKind::Transport, error.clone()));
        }
        if let Some(text) = &turn.text {
            stream.text_delta(text);
        }
        let finish_reason = if turn.tool_calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
        Ok(ModelReply {
            message: AssistantMessage {
                reasoning: turn.reasoning.clone(),
                content: turn.text.clone(),
                tool_calls: turn.tool_calls.clone(),
            },
            finish_reason,
            usage: turn.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spine_core::model::NoStream;

    fn req() -> ModelRequest<'static> {
        ModelRequest { messages: &[], tools: &[], stable_prefix: None }
    }

    #[tokio::test]
    async fn turns_answer_requests_in_order_then_the_script_is_exhausted() {
        let m = ScriptedModel::from_json(
            r#"{"turns": [{"tool_calls": [{"id": "c1", "name": "Bash", "arguments_raw": "{bad"}]}, {"text": "done"}]}"#,
        )
        .expect("script");
        let cancel = CancellationToken::new();
        let first = m.complete(req(), &NoStream, &cancel).await.expect("turn 1");
        assert_eq!(first.message.tool_calls[0].arguments, spine_protocol::tool::ToolArguments::Raw("{bad".into()));
        let second = m.complete(req(), &NoStream, &cancel).await.expect("turn 2");
        assert_eq!(second.message.content.as_deref(), Some("done"));
        let err = m.complete(req(), &NoStream, &cancel).await.expect_err("exhausted");
        assert_eq!(err.kind, ModelErrorKind::Exhausted);
        assert_eq!(err.message, "scripted model exhausted after 2 turns");
    }

    #[test]
    fn empty_turns_and_unknown_fields_are_rejected() {
        assert!(ScriptedModel::from_json(r#"{"turns": [{}]}"#).is_err());
        assert!(ScriptedModel::from_json(r#"{"turns": [{"txt": "x"}]}"#).is_err());
    }

    #[tokio::test]
    async fn a_turn_may_carry_reasoning_items_which_never_stream_as_text() {
        let m = ScriptedModel::from_json(
            r#"{"turns": [{"reasoning": [{"type": "thinking", "thinking": "hmm", "signature": "s"}], "text": "ok"}]}"#,
        )
        .expect("script");
        let reply = m.complete(req(), &NoStream, &CancellationToken::new()).await.expect("turn");
        assert_eq!(
            reply.message.reasoning,
            vec![ReasoningItem::Thinking { thinking: "hmm".into(), signature: "s".into() }]
        );
        assert_eq!(reply.message.content.as_deref(), Some("ok"));
    }
}
