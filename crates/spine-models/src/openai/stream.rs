//! Assembling a chat-completions reply, streamed ([`read_stream`]) or whole ([`read_whole`]).
//!
//! Streaming rules:
//!
//! - Text deltas go to the [`StreamSink`] as they arrive and are concatenated.
//! - Tool calls are assembled **by `index`**: `id` and `name` arrive once (the first value is
//!   kept), `arguments` arrive in fragments that are concatenated. A delta without `index` (some
//!   compatible servers) starts a new call when it carries an unseen `id`, else continues the
//!   last call. Calls are returned in index order; the joined arguments go through
//!   [`ToolArguments::from_wire`] (unparsable text is kept raw).
//! - The stream is complete at `data: [DONE]`, or at its end (even a broken or stalled one)
//!   once a `finish_reason` was seen: only the usage chunk can be missing then. Ending without
//!   either is a transport error "stream ended before the reply was complete": a truncated
//!   answer is never passed as complete.
//! - A stream that ends **empty** (no text, no tool call, no refusal; no finish reason, or a
//!   normal one) fails with [`AttemptError::empty_stream`]: some servers cannot stream tool
//!   calls, and the client retries such a request once without streaming.
//! - Usage absent from the stream (or an object without counts) stays `None`; usage sent
//!   before a failure (a `length` stop) travels with the error.
//! - A `data:` payload that is not JSON **fails** the request with
//!   [`ModelErrorKind::InvalidReply`] quoting the line: skipping it could silently drop a
//!   piece of text or of a tool call's arguments.
//! - An `{"error": …}` chunk fails the request; its `type` (or `code`) decides the kind through
//!   [`crate::retry::stream_error_kind`], the table shared with the Anthropic client.
//! - `finish_reason`: `stop` and `tool_calls` are normal, and `stop` with tool calls present
//!   counts as tool calls (litellm sends that); `length` → [`ModelErrorKind::Incomplete`];
//!   `content_filter` or a `refusal` text → [`ModelErrorKind::Refusal`]; anything else is
//!   [`FinishReason::Other`](spine_core::model::FinishReason::Other).
//! - Only choice 0 is read.

use bytes::Bytes;
use std::ops::ControlFlow;

use futures_util::Stream;
use spine_core::model::{ModelErrorKind, ModelReply, StreamSink};
use spine_protocol::run::Usage;
use spine_protocol::tool::{ToolArguments, ToolCall};

use super::wire::{Chunk, Completion, ToolCallDelta, WireError};
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
    let completion: Completion = crate::reply::parse_whole(body)?;
    if let Some(error) = completion.error {
        return Err(server_error(&error));
    }
    let Some(choice) = completion.choices.and_then(|c| c.into_iter().next()) else {
        return Err(AttemptError::new(ModelErrorKind::InvalidReply, "the reply has no choices"));
    };
    let mut reply = Assembler {
        usage: completion.usage.and_then(|u| u.usage()),
        finish: choice.finish_reason,
        done: true,
        whole: true,
        ..Assembler::default()
    };
    if let Some(message) = choice.message {
        if let Some(text) = message.content.filter(|t| !t.is_empty()) {
            sink.text_delta(&text);
            reply.text = text;
        }
        reply.refusal = message.refusal.unwrap_or_default();
        for (index, call) in message.tool_calls.unwrap_or_default().into_iter().enumerate() {
            let function = call.function;
            reply.calls.push(PartialCall {
                index: u32::try_from(index).unwrap_or(u32::MAX),
                id: call.id.unwrap_or_default(),
                name: function.as_ref().and_then(|f| f.name.clone()).unwrap_or_default(),
                arguments: Arguments::Parsed(
                    function.as_ref().map(|f| f.arguments()).unwrap_or_else(|| ToolArguments::from_wire("")),
                ),
            });
        }
    }
    reply.finish(())
}

#[derive(Debug)]
enum Arguments {
    Fragments(String),
    Parsed(ToolArguments),
}

#[derive(Debug)]
struct PartialCall {
    index: u32,
    id: String,
    name: String,
    arguments: Arguments,
}

/// The reply so far.
#[derive(Debug)]
struct Assembler {
    text: String,
    refusal: String,
    calls: Vec<PartialCall>,
    finish: Option<String>,
    usage: Option<Usage>,
    done: bool,
    /// A whole (non-streamed) reply: an empty one is passed on as it is.
    whole: bool,
    progress: Progress,
}

impl Default for Assembler {
    fn default() -> Self {
        Assembler {
            text: String::new(),
            refusal: String::new(),
            calls: Vec::new(),
            finish: None,
            usage: None,
            done: false,
            whole: false,
            progress: Progress::NothingDelivered,
        }
    }
}

impl Assemble for Assembler {
    type End = ();
    const TERMINAL: &'static str = "[DONE]";

    /// Takes one event's data.
    fn push(&mut self, data: &str, sink: &dyn StreamSink) -> Result<ControlFlow<()>, AttemptError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(ControlFlow::Break(()));
        }
        let chunk: Chunk<'_> = sse::parse_event(data).map_err(|e| self.fail(e))?;
        if let Some(error) = &chunk.error {
            return Err(self.fail(server_error(error)));
        }
        if let Some(usage) = chunk.usage.and_then(|u| u.usage()) {
            self.usage = Some(usage);
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                    self.progress = Progress::ContentDelivered;
                    sink.text_delta(&text);
                    self.text.push_str(&text);
                }
                if let Some(refusal) = delta.refusal {
                    self.refusal.push_str(&refusal);
                }
                for call in delta.tool_calls.into_iter().flatten() {
                    self.progress = Progress::ContentDelivered;
                    self.push_call(call);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(reason);
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Marks an error with whether content was already delivered, and with the usage the
    /// server reported before it (a reply cut by `length` still cost its tokens).
    fn fail(&self, mut error: AttemptError) -> AttemptError {
        error.progress = self.progress;
        error.error.usage = error.error.usage.or(self.usage);
        error
    }

    /// The reply, once the stream ended.
    fn finish(mut self, (): ()) -> Result<ModelReply, AttemptError> {
        let silent = self.text.is_empty() && self.refusal.is_empty() && self.calls.is_empty();
        let normal_end = matches!(self.finish.as_deref(), None | Some("stop" | "tool_calls" | "function_call"));
        if silent && normal_end && self.progress == Progress::NothingDelivered && !self.whole {
            return Err(self.fail(AttemptError::empty_stream()));
        }
        if !self.done && self.finish.is_none() {
            return Err(self.fail(AttemptError::new(
                ModelErrorKind::Transport,
                "stream ended before the reply was complete (no finish_reason and no [DONE])",
            )));
        }
        match self.finish.as_deref() {
            Some("length") => {
                return Err(self.fail(AttemptError::new(
                    ModelErrorKind::Incomplete,
                    "the model's reply was cut off by the output token limit",
                )));
            }
            Some("content_filter") => {
                return Err(self.fail(AttemptError::new(
                    ModelErrorKind::Refusal,
                    "the provider's content filter stopped the reply",
                )));
            }
            _ => {}
        }
        if !self.refusal.trim().is_empty() {
            return Err(self.fail(AttemptError::new(
                ModelErrorKind::Refusal,
                format!("the model refused: {}", self.refusal.trim()),
            )));
        }
        self.calls.sort_by_key(|c| c.index);
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for call in std::mem::take(&mut self.calls) {
            // A missing id is passed on empty: the runner gives every such call a unique
            // synthetic id at ingestion, for every provider alike. A call without a name cannot
            // be run or answered meaningfully.
            if call.name.is_empty() {
                return Err(self.fail(AttemptError::new(
                    ModelErrorKind::InvalidReply,
                    format!("tool call {} has no name", call.index),
                )));
            }
            let arguments = match call.arguments {
                Arguments::Fragments(text) => ToolArguments::from_wire(&text),
                Arguments::Parsed(parsed) => parsed,
            };
            tool_calls.push(ToolCall { id: call.id, name: call.name, arguments });
        }
        Ok(crate::reply::assemble(
            Vec::new(),
            self.text,
            tool_calls,
            self.finish.as_deref(),
            &["stop", "tool_calls", "function_call"],
            self.usage,
        ))
    }

    /// A stream that ends (or breaks) after `finish_reason` is complete: only the usage chunk
    /// and `[DONE]` can be lost. [`Assemble::finish`] judges one that ends without either.
    fn cut(self, broken: Option<BodyError>) -> Result<ModelReply, AttemptError> {
        match broken {
            Some(e) if self.finish.is_none() => Err(self.fail(e.into_attempt_error())),
            Some(e) => {
                tracing::debug!(error = %e, "stream broke after finish_reason; the reply is complete");
                self.finish(())
            }
            None => self.finish(()),
        }
    }
}

impl Assembler {
    fn push_call(&mut self, delta: ToolCallDelta<'_>) {
        let slot = match delta.index {
            Some(index) => self.calls.iter().rposition(|c| c.index == index).unwrap_or_else(|| {
                self.calls.push(PartialCall::new(index));
                self.calls.len() - 1
            }),
            None => {
                let known = delta.id.as_deref().and_then(|id| self.calls.iter().rposition(|c| c.id == id));
                match (known, &delta.id, self.calls.len()) {
                    (Some(i), _, _) => i,
                    (None, None, len) if len > 0 => len - 1,
                    (None, _, _) => {
                        let next = self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0);
                        self.calls.push(PartialCall::new(next));
                        self.calls.len() - 1
                    }
                }
            }
        };
        let Some(call) = self.calls.get_mut(slot) else {
            return;
        };
        if let Some(id) = delta.id.filter(|s| !s.is_empty())
            && call.id.is_empty()
        {
            call.id = id.into_owned();
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name.filter(|s| !s.is_empty())
                && call.name.is_empty()
            {
                call.name = name.into_owned();
            }
            if let (Some(fragment), Arguments::Fragments(args)) = (function.arguments, &mut call.arguments) {
                args.push_str(&fragment);
            }
        }
    }
}

impl PartialCall {
    fn new(index: u32) -> Self {
        PartialCall { index, id: String::new(), name: String::new(), arguments: Arguments::Fragments(String::new()) }
    }
}

/// An error object the server sent instead of a reply.
/// Its `type` (or `code`) decides the kind, and so retries, through [`stream_error_kind`],
/// shared with the Anthropic client.
fn server_error(error: &WireError) -> AttemptError {
    let kind = stream_error_kind(error.kind.as_deref(), error.code.as_ref());
    let what = match (&error.kind, &error.message) {
        (Some(t), Some(m)) => format!("{t}: {m}"),
        (None, Some(m)) => m.clone(),
        (Some(t), None) => t.clone(),
        (None, None) => "no message".to_owned(),
    };
    AttemptError::new(kind, format!("the server reported an error: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;
    use spine_core::model::{FinishReason, NoStream};

    async fn read(chunks: &[&str]) -> Result<ModelReply, AttemptError> {
        let body =
            stream::iter(chunks.iter().map(|c| Ok::<_, BodyError>(Bytes::from(c.to_string()))).collect::<Vec<_>>());
        read_stream(body, &NoStream).await
    }

    #[tokio::test]
    async fn deltas_without_index_are_paired_by_id() {
        let reply = read(&[
            r#"data: {"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"X","arguments":"{\"n\":"}}]}}]}"#,
            "\n\n",
            r#"data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}"#,
            "\n\n",
            r#"data: {"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"Y","arguments":""}}]},"finish_reason":"tool_calls"}]}"#,
            "\n\n",
        ])
        .await
        .expect("reply");
        let calls = &reply.message.tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].id.as_str(), &calls[0].arguments),
            ("a", &ToolArguments::Json(serde_json::json!({"n": 1})))
        );
        assert_eq!((calls[1].id.as_str(), &calls[1].arguments), ("b", &ToolArguments::Json(serde_json::json!({}))));
    }

    #[tokio::test]
    async fn a_body_error_after_finish_reason_still_completes_the_reply() {
        let body = stream::iter(vec![
            Ok(Bytes::from_static(
                b"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n",
            )),
            Err(BodyError::Transport("reset".into())),
        ]);
        let reply = read_stream(body, &NoStream).await.expect("complete");
        assert_eq!(reply.message.content.as_deref(), Some("hi"));
        let body = stream::iter(vec![
            Ok(Bytes::from_static(b"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n")),
            Err(BodyError::Transport("reset".into())),
        ]);
        let err = read_stream(body, &NoStream).await.expect_err("cut");
        assert_eq!(err.error.message, "stream ended before the reply was complete: reset");
        assert_eq!(err.progress, Progress::ContentDelivered);
    }

    #[tokio::test]
    async fn a_tool_call_without_an_id_is_passed_on_for_the_runner_to_name() {
        let reply = read(&[
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"X"}}]},"finish_reason":"tool_calls"}]}"#,
            "\n\ndata: [DONE]\n\n",
        ])
        .await
        .expect("a call without an id is not a broken reply");
        assert_eq!(reply.message.tool_calls[0].id, "");
        assert_eq!(reply.message.tool_calls[0].name, "X");
    }

    #[tokio::test]
    async fn a_tool_call_without_a_name_is_an_invalid_reply() {
        let err = read(&[
            r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#,
            "\n\ndata: [DONE]\n\n",
        ])
        .await
        .expect_err("no name");
        assert_eq!(err.error.kind, ModelErrorKind::InvalidReply);
        assert_eq!(err.error.message, "tool call 0 has no name");
    }

    #[test]
    fn whole_replies_accept_object_arguments_and_stream_text_once() {
        let body = br#"{"choices":[{"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"c","type":"function","function":{"name":"X","arguments":{"a":1}}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#;
        let reply = read_whole(body, &NoStream).expect("reply");
        assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
        assert_eq!(reply.message.tool_calls[0].arguments, ToolArguments::Json(serde_json::json!({"a": 1})));
        assert_eq!(reply.usage, Some(Usage::new(3, 4)));
    }
}
