//! Assembling a Messages API reply from its event stream ([`read_stream`]), or from a whole
//! reply (`stream: false`, [`read_whole`]: the same blocks, stop reasons and usage rules; the
//! text reaches the sink in one piece).
//!
//! - `message_start` gives the input tokens (cache reads and writes included);
//!   `message_delta` gives `stop_reason` and the output tokens (cumulative figures replace
//!   earlier ones).
//! - `content_block_start` opens a `text`, `tool_use` (id and name), `thinking` or
//!   `redacted_thinking` block; other block types (server tools) are ignored. `text_delta`
//!   text goes to the [`StreamSink`] as it arrives; `input_json_delta` fragments are
//!   concatenated per block and parsed with [`ToolArguments::from_wire`] at the end
//!   (unparsable text is kept raw; no fragments means the block's start `input`, usually
//!   `{}`).
//! - `thinking_delta` text and `signature_delta` signatures are concatenated per block; a
//!   `redacted_thinking` block's `data` comes whole in its start. They become the reply's
//!   [`ReasoningItem`]s, in block order, and never reach the sink's text (the answer's text),
//!   nor count as delivered content for retries.
//! - Besides the text, the sink gets every other piece as it arrives ([`StreamDelta`]): a
//!   thinking block's start, text and signature, a redacted block, a tool call's start and its
//!   input fragments (a whole reply's blocks arrive the same way, each in one piece).
//! - The text of all text blocks is concatenated, as streamed; tool calls keep block order.
//! - The reply is complete only at `message_stop`: a stream that ends before it is a transport
//!   error "stream ended before the reply was complete".
//! - `error` events fail the request with their type and message; the type maps to its
//!   documented HTTP status through [`crate::retry::stream_error_kind`] (the one table both
//!   providers share: `overloaded_error` → 529, `rate_limit_error` → 429, `api_error` → 500,
//!   `invalid_request_error` → 400, …) so retries follow [`ModelErrorKind::retryable`] — only
//!   while nothing was delivered.
//! - `stop_reason`: `end_turn`, `stop_sequence` and `tool_use` are normal; `max_tokens` (and
//!   `model_context_window_exceeded`) → [`ModelErrorKind::Incomplete`]; `refusal` →
//!   [`ModelErrorKind::Refusal`]; others → [`FinishReason::Other`](spine_core::model::FinishReason::Other).
//! - A `data:` payload that is not a JSON event fails with [`ModelErrorKind::InvalidReply`]
//!   quoting the line; `ping` and unknown event types are ignored.

use bytes::Bytes;
use std::ops::ControlFlow;

use futures_util::Stream;
use serde_json::{Map, Value};
use spine_core::model::{ModelErrorKind, ModelReply, StreamDelta, StreamSink};
use spine_protocol::message::ReasoningItem;
use spine_protocol::run::Usage;
use spine_protocol::tool::{ToolArguments, ToolCall};

use super::wire::{BlockDelta, Event, StartBlock, WholeMessage, WireError};
use crate::http::BodyError;
use crate::retry::{AttemptError, Progress, stream_error_kind};
use crate::sse::{self, Assemble};

/// Reads a streamed reply from its body chunks, forwarding text to `sink`.
pub async fn read_stream<S>(body: S, sink: &dyn StreamSink) -> Result<ModelReply, AttemptError>
where
    S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
{
    sse::assemble(body, sink, Assembler::default()).await
}

/// Reads a whole (non-streamed) reply; its text goes to `sink` in one piece.
pub fn read_whole(body: &[u8], sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
    let message: WholeMessage = crate::reply::parse_whole(body)?;
    if let Some(error) = &message.error {
        return Err(stream_error(error));
    }
    let mut reply = Assembler::default();
    if let Some(usage) = &message.usage {
        reply.usage(usage);
    }
    for (index, block) in message.content.into_iter().enumerate() {
        reply.start_block(u32::try_from(index).unwrap_or(u32::MAX), block, sink);
    }
    reply.stop_reason = message.stop_reason;
    reply.finish(())
}

#[derive(Debug)]
enum Block {
    Text,
    ToolUse { id: String, name: String, start_input: Option<Value>, json: String },
    Thinking { thinking: String, signature: String },
    RedactedThinking { data: String },
    Ignored,
}

#[derive(Debug)]
struct Assembler {
    text: String,
    blocks: Vec<(u32, Block)>,
    stop_reason: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_tokens: u64,
    cache_read_tokens: u64,
    progress: Progress,
}

impl Default for Assembler {
    fn default() -> Self {
        Assembler {
            text: String::new(),
            blocks: Vec::new(),
            stop_reason: None,
            input_tokens: None,
            output_tokens: None,
            cache_creation_tokens: 0,
            cache_read_tokens: 0,
            progress: Progress::NothingDelivered,
        }
    }
}

impl Assemble for Assembler {
    type End = ();
    const TERMINAL: &'static str = "message_stop";

    fn push(&mut self, data: &str, sink: &dyn StreamSink) -> Result<ControlFlow<()>, AttemptError> {
        let event: Event<'_> = sse::parse_event(data).map_err(|e| self.fail(e))?;
        match event {
            Event::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage(&usage);
                }
            }
            Event::ContentBlockStart { index, content_block } => self.start_block(index, content_block, sink),
            Event::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => self.text_delta(&text, sink),
                BlockDelta::InputJsonDelta { partial_json } => {
                    let block = self.blocks.iter_mut().rev().find(|(i, _)| *i == index);
                    match block {
                        Some((_, Block::ToolUse { json, .. })) => {
                            self.progress = Progress::ContentDelivered;
                            json.push_str(&partial_json);
                            sink.delta(StreamDelta::ToolInput { partial_json: &partial_json });
                        }
                        Some((
                            _,
                            Block::Text | Block::Thinking { .. } | Block::RedactedThinking { .. } | Block::Ignored,
                        ))
                        | None => {
                            return Err(self.fail(AttemptError::new(
                                ModelErrorKind::InvalidReply,
                                format!("input_json_delta for block {index}, which is not a tool_use block"),
                            )));
                        }
                    }
                }
                BlockDelta::ThinkingDelta { thinking: piece } => match self.block(index) {
                    Some(Block::Thinking { thinking, .. }) => {
                        thinking.push_str(&piece);
                        sink.delta(StreamDelta::Thinking { text: &piece });
                    }
                    Some(Block::Text | Block::ToolUse { .. } | Block::RedactedThinking { .. } | Block::Ignored)
                    | None => {
                        return Err(self.not_thinking("thinking_delta", index));
                    }
                },
                BlockDelta::SignatureDelta { signature: piece } => match self.block(index) {
                    Some(Block::Thinking { signature, .. }) => {
                        signature.push_str(&piece);
                        sink.delta(StreamDelta::Signature { signature: &piece });
                    }
                    Some(Block::Text | Block::ToolUse { .. } | Block::RedactedThinking { .. } | Block::Ignored)
                    | None => {
                        return Err(self.not_thinking("signature_delta", index));
                    }
                },
                BlockDelta::Other => {}
            },
            Event::ContentBlockStop | Event::Ping | Event::Unknown => {}
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = usage {
                    self.usage(&usage);
                }
            }
            Event::MessageStop => return Ok(ControlFlow::Break(())),
            Event::Error { error } => return Err(self.fail(stream_error(&error))),
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Marks an error with whether content was already delivered, and with the usage the
    /// server reported before it (a reply cut by `max_tokens` still cost its tokens).
    fn fail(&self, mut error: AttemptError) -> AttemptError {
        error.progress = self.progress;
        error.error.usage = error.error.usage.or(self.reported_usage());
        error
    }

    /// The reply at `message_stop` (or of a whole message): the stop reason decides.
    fn finish(self, (): ()) -> Result<ModelReply, AttemptError> {
        let fail = |kind, message: &str| Err(self.fail(AttemptError::new(kind, message)));
        match self.stop_reason.as_deref() {
            Some("max_tokens") => {
                return fail(ModelErrorKind::Incomplete, "the model's reply was cut off by the output token limit");
            }
            Some("model_context_window_exceeded") => {
                return fail(ModelErrorKind::Incomplete, "the model's reply was cut off by the context window");
            }
            Some("refusal") => {
                return fail(ModelErrorKind::Refusal, "the model refused to answer");
            }
            _ => {}
        }
        let usage = self.reported_usage();
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        for (_, block) in self.blocks {
            match block {
                Block::ToolUse { id, name, start_input, json } => {
                    let arguments = if json.is_empty() {
                        ToolArguments::Json(start_input.unwrap_or_else(|| Value::Object(Map::new())))
                    } else {
                        ToolArguments::from_wire(&json)
                    };
                    tool_calls.push(ToolCall { id, name, arguments });
                }
                Block::Thinking { thinking, signature } => {
                    reasoning.push(ReasoningItem::Thinking { thinking, signature })
                }
                Block::RedactedThinking { data } => reasoning.push(ReasoningItem::RedactedThinking { data }),
                Block::Text | Block::Ignored => {}
            }
        }
        Ok(crate::reply::assemble(
            reasoning,
            self.text,
            tool_calls,
            self.stop_reason.as_deref(),
            &["end_turn", "stop_sequence", "tool_use"],
            usage,
        ))
    }
}

impl Assembler {
    /// Takes the figures a `usage` object sends (each is cumulative; absent ones stay).
    fn usage(&mut self, usage: &super::wire::WireUsage) {
        self.input_tokens = usage.input().or(self.input_tokens);
        self.output_tokens = usage.output_tokens.or(self.output_tokens);
        self.cache_creation_tokens = usage.cache_creation_input_tokens.unwrap_or(self.cache_creation_tokens);
        self.cache_read_tokens = usage.cache_read_input_tokens.unwrap_or(self.cache_read_tokens);
    }

    fn start_block(&mut self, index: u32, block: StartBlock, sink: &dyn StreamSink) {
        let block = match block {
            StartBlock::Text { text } => {
                if !text.is_empty() {
                    self.text_delta(&text, sink);
                }
                Block::Text
            }
            StartBlock::ToolUse { id, name, input } => {
                self.progress = Progress::ContentDelivered;
                sink.delta(StreamDelta::ToolUseStart { id: &id, name: &name });
                // A whole reply's block holds its input; a streamed one's is `{}`, then deltas.
                if let Some(input) = input.as_ref().filter(|i| i.as_object().is_none_or(|o| !o.is_empty())) {
                    sink.delta(StreamDelta::ToolInput { partial_json: &input.to_string() });
                }
                Block::ToolUse { id, name, start_input: input, json: String::new() }
            }
            StartBlock::Thinking { thinking, signature } => {
                sink.delta(StreamDelta::ThinkingStart);
                if !thinking.is_empty() {
                    sink.delta(StreamDelta::Thinking { text: &thinking });
                }
                if !signature.is_empty() {
                    sink.delta(StreamDelta::Signature { signature: &signature });
                }
                Block::Thinking { thinking, signature }
            }
            StartBlock::RedactedThinking { data } => {
                sink.delta(StreamDelta::RedactedThinking { data: &data });
                Block::RedactedThinking { data }
            }
            StartBlock::Other => Block::Ignored,
        };
        self.blocks.push((index, block));
    }

    /// The last block opened with `index`.
    fn block(&mut self, index: u32) -> Option<&mut Block> {
        self.blocks.iter_mut().rev().find(|(i, _)| *i == index).map(|(_, b)| b)
    }

    fn not_thinking(&self, delta: &str, index: u32) -> AttemptError {
        self.fail(AttemptError::new(
            ModelErrorKind::InvalidReply,
            format!("{delta} for block {index}, which is not a thinking block"),
        ))
    }

    fn text_delta(&mut self, text: &str, sink: &dyn StreamSink) {
        if !text.is_empty() {
            self.progress = Progress::ContentDelivered;
            sink.text_delta(text);
            self.text.push_str(text);
        }
    }

    /// The usage reported so far; `None` when the server sent no counts.
    fn reported_usage(&self) -> Option<Usage> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (i, o) => Some(Usage {
                input_tokens: i.unwrap_or(0),
                output_tokens: o.unwrap_or(0),
                cache_creation_input_tokens: self.cache_creation_tokens,
                cache_read_input_tokens: self.cache_read_tokens,
            }),
        }
    }
}

/// An `error` event as a model error: its type decides the kind (and so retries) through
/// [`stream_error_kind`], shared with the OpenAI client.
fn stream_error(error: &WireError) -> AttemptError {
    let kind_name = error.kind.as_deref().unwrap_or("error");
    let kind = stream_error_kind(error.kind.as_deref(), None);
    let message = error.message.as_deref().unwrap_or("no message");
    AttemptError::new(kind, format!("the stream reported {kind_name}: {message}"))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Every piece the sink gets, in one word each.
    #[derive(Default)]
    struct Pieces(Mutex<Vec<String>>);

    impl StreamSink for Pieces {
        fn text_delta(&self, text: &str) {
            self.push(format!("text {text}"));
        }

        fn delta(&self, delta: StreamDelta<'_>) {
            self.push(match delta {
                StreamDelta::ThinkingStart => "thinking_start".to_owned(),
                StreamDelta::Thinking { text } => format!("thinking {text}"),
                StreamDelta::Signature { signature } => format!("signature {signature}"),
                StreamDelta::RedactedThinking { data } => format!("redacted {data}"),
                StreamDelta::ToolUseStart { id, name } => format!("tool_use {id} {name}"),
                StreamDelta::ToolInput { partial_json } => format!("input {partial_json}"),
            });
        }
    }

    impl Pieces {
        fn push(&self, piece: String) {
            if let Ok(mut pieces) = self.0.lock() {
                pieces.push(piece);
            }
        }

        fn taken(&self) -> Vec<String> {
            self.0.lock().map(|p| p.clone()).unwrap_or_default()
        }
    }

    fn sse(events: &[Value]) -> Bytes {
        let text: String =
            events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or(""))).collect();
        Bytes::from(text)
    }

    #[tokio::test]
    async fn thinking_and_tool_input_reach_the_sink_as_they_stream_in_block_order() {
        use serde_json::json;
        let body = sse(&[
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "think."}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "opaque"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Run it."}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": "}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "\"ls\"}"}}),
            json!({"type": "content_block_stop", "index": 3}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ]);
        let sink = Pieces::default();
        let reply = read_stream(futures_util::stream::iter(vec![Ok(body)]), &sink).await;
        assert!(reply.is_ok(), "{reply:?}");
        assert_eq!(
            sink.taken(),
            [
                "thinking_start",
                "thinking Let me ",
                "thinking think.",
                "signature sig",
                "redacted opaque",
                "text Run it.",
                "tool_use toolu_1 Bash",
                "input {\"command\": ",
                "input \"ls\"}"
            ]
        );
    }

    #[test]
    fn a_whole_replys_blocks_reach_the_sink_each_in_one_piece() {
        let body = br#"{"content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
            {"type": "text", "text": "ok"}, {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 2}}"#;
        let sink = Pieces::default();
        assert!(read_whole(body, &sink).is_ok());
        assert_eq!(
            sink.taken(),
            [
                "thinking_start",
                "thinking hmm",
                "signature s",
                "text ok",
                "tool_use t1 Bash",
                "input {\"command\":\"ls\"}"
            ]
        );
    }
}
