//! Assembling a Responses API reply from its event stream ([`read_stream`]).
//!
//! - Output items are kept by `output_index`, in index order: `message` (text), `function_call`
//!   (`call_id`, `name`, arguments) and `reasoning` (id, summary texts, encrypted content);
//!   other item types (built-in tools) are ignored.
//! - `response.output_item.added` opens an item; `response.output_text.delta` text goes to
//!   the [`StreamSink`] as it arrives; `response.function_call_arguments.delta` fragments are
//!   concatenated (`.done` gives the whole text); `response.reasoning_summary_text.delta`
//!   fills the summary parts (never the sink, and not counted as delivered content).
//! - `response.output_item.done` carries the finished item and replaces what the deltas
//!   built (the reasoning item's `encrypted_content` only comes there). Message text that no
//!   delta streamed goes to the sink then.
//! - The reply is complete at `response.completed`: usage (`input_tokens`, `output_tokens`,
//!   `input_tokens_details.cached_tokens` as cache reads). A stream that ends before it is a
//!   transport error "stream ended before the reply was complete".
//! - `response.incomplete` with `max_output_tokens` (or no reason) →
//!   [`ModelErrorKind::Incomplete`], with `content_filter` → [`ModelErrorKind::Refusal`]. A
//!   refusal instead of text is a [`ModelErrorKind::Refusal`].
//! - `response.failed` and `error` events fail the request; the error's `code` (or `type`)
//!   decides the kind through [`crate::retry::stream_error_kind`], the table all providers
//!   share, so retries follow [`ModelErrorKind::retryable`] — only while nothing was delivered.
//! - Function arguments go through [`ToolArguments::from_wire`] (unparsable text is kept raw);
//!   a call without a name is an invalid reply.
//! - A `data:` payload that is not a JSON event fails with [`ModelErrorKind::InvalidReply`]
//!   quoting the line; unknown event types are ignored.

use bytes::Bytes;
use std::ops::ControlFlow;

use futures_util::Stream;
use spine_core::model::{ModelErrorKind, ModelReply, StreamSink};
use spine_protocol::message::ReasoningItem;
use spine_protocol::run::Usage;
use spine_protocol::tool::{ToolArguments, ToolCall};

use super::wire::{Event, OutputContent, OutputItem, WireError, WireResponse};
use crate::http::BodyError;
use crate::retry::{AttemptError, Progress, stream_error_kind};
use crate::sse::{self, Assemble, quote};

/// Reads a streamed reply from its body chunks, forwarding text to `sink`.
pub async fn read_stream<S>(body: S, sink: &dyn StreamSink) -> Result<ModelReply, AttemptError>
where
    S: Stream<Item = Result<Bytes, BodyError>> + Unpin,
{
    sse::assemble(body, sink, Assembler::default()).await
}

#[derive(Debug)]
enum Item {
    Message { text: String, refusal: String, streamed: bool },
    FunctionCall { call_id: String, name: String, arguments: String },
    Reasoning { id: String, summary: Vec<String>, encrypted_content: Option<String> },
    Ignored,
}

impl Item {
    fn from_wire(item: OutputItem) -> Item {
        match item {
            OutputItem::Message { content } => {
                let mut text = String::new();
                let mut refusal = String::new();
                for part in content {
                    match part {
                        OutputContent::OutputText { text: t } => text.push_str(&t),
                        OutputContent::Refusal { refusal: r } => refusal.push_str(&r),
                        OutputContent::Other => {}
                    }
                }
                Item::Message { text, refusal, streamed: false }
            }
            OutputItem::FunctionCall { call_id, name, arguments } => Item::FunctionCall { call_id, name, arguments },
            OutputItem::Reasoning { id, summary, encrypted_content } => {
                Item::Reasoning { id, summary: summary.into_iter().map(|s| s.text).collect(), encrypted_content }
            }
            OutputItem::Other => Item::Ignored,
        }
    }
}

#[derive(Debug)]
struct Assembler {
    items: Vec<(u32, Item)>,
    progress: Progress,
}

impl Default for Assembler {
    fn default() -> Self {
        Assembler { items: Vec::new(), progress: Progress::NothingDelivered }
    }
}

impl Assemble for Assembler {
    type End = WireResponse;
    const TERMINAL: &'static str = "response.completed";

    fn push(&mut self, data: &str, sink: &dyn StreamSink) -> Result<ControlFlow<WireResponse>, AttemptError> {
        // Some compatible servers end with `data: [DONE]`, which carries nothing.
        if data.trim() == "[DONE]" {
            return Ok(ControlFlow::Continue(()));
        }
        Ok(match self.event(data, sink)? {
            Some(response) => ControlFlow::Break(response),
            None => ControlFlow::Continue(()),
        })
    }

    fn fail(&self, mut error: AttemptError) -> AttemptError {
        error.progress = self.progress;
        error
    }

    fn finish(mut self, response: WireResponse) -> Result<ModelReply, AttemptError> {
        let status = response.status.as_deref().unwrap_or("completed");
        if status == "incomplete" {
            let reason = response.incomplete_details.and_then(|d| d.reason);
            let error = match reason.as_deref() {
                Some("content_filter") => {
                    AttemptError::new(ModelErrorKind::Refusal, "the reply was stopped by the content filter")
                }
                Some("max_output_tokens") | None => AttemptError::new(
                    ModelErrorKind::Incomplete,
                    "the model's reply was cut off by the output token limit",
                ),
                Some(other) => {
                    AttemptError::new(ModelErrorKind::Incomplete, format!("the model's reply is incomplete ({other})"))
                }
            };
            return Err(self.fail(error));
        }
        self.items.sort_by_key(|(index, _)| *index);
        let mut text = String::new();
        let mut refusal = String::new();
        let mut reasoning = Vec::new();
        let mut tool_calls = Vec::new();
        for (index, item) in self.items {
            match item {
                Item::Message { text: t, refusal: r, .. } => {
                    text.push_str(&t);
                    refusal.push_str(&r);
                }
                Item::FunctionCall { call_id, name, arguments } => {
                    if name.is_empty() {
                        let error = AttemptError::new(
                            ModelErrorKind::InvalidReply,
                            format!("function call in output item {index} has no name"),
                        );
                        return Err(AttemptError { progress: self.progress, ..error });
                    }
                    tool_calls.push(ToolCall { id: call_id, name, arguments: ToolArguments::from_wire(&arguments) });
                }
                Item::Reasoning { id, summary, encrypted_content } => {
                    reasoning.push(ReasoningItem::Reasoning { id, summary, encrypted_content });
                }
                Item::Ignored => {}
            }
        }
        if text.is_empty() && tool_calls.is_empty() && !refusal.is_empty() {
            let error = AttemptError::new(ModelErrorKind::Refusal, format!("the model refused: {}", quote(&refusal)));
            return Err(AttemptError { progress: self.progress, ..error });
        }
        let usage = response.usage.and_then(|u| {
            if let Some(reasoning_tokens) = u.output_tokens_details.and_then(|d| d.reasoning_tokens) {
                tracing::debug!(reasoning_tokens, "responses usage");
            }
            match (u.input_tokens, u.output_tokens) {
                (None, None) => None,
                (input, output) => Some(Usage {
                    input_tokens: input.unwrap_or(0),
                    output_tokens: output.unwrap_or(0),
                    cache_creation_input_tokens: 0,
                    cache_read_input_tokens: u.input_tokens_details.and_then(|d| d.cached_tokens).unwrap_or(0),
                }),
            }
        });
        Ok(crate::reply::assemble(reasoning, text, tool_calls, Some(status), &["completed"], usage))
    }
}

impl Assembler {
    /// Takes one event's data; the terminal response when the reply is complete.
    fn event(&mut self, data: &str, sink: &dyn StreamSink) -> Result<Option<WireResponse>, AttemptError> {
        let event: Event<'_> = sse::parse_event(data).map_err(|e| self.fail(e))?;
        match event {
            Event::OutputItemAdded { output_index, item } => {
                let item = Item::from_wire(item);
                if let Item::FunctionCall { .. } = item {
                    self.progress = Progress::ContentDelivered;
                }
                self.items.push((output_index, item));
                if let Some(Item::Message { text, streamed, .. }) = self.item(output_index)
                    && !text.is_empty()
                {
                    *streamed = true;
                    let text = text.clone();
                    self.text_to_sink(&text, sink);
                }
            }
            Event::OutputItemDone { output_index, item } => {
                let mut done = Item::from_wire(item);
                match (self.item(output_index), &mut done) {
                    (Some(Item::Message { text, streamed, .. }), Item::Message { text: whole, streamed: now, .. }) => {
                        // The deltas already showed the text; a message without deltas shows now.
                        *now = *streamed || !text.is_empty();
                        if whole.is_empty() {
                            whole.clone_from(text);
                        }
                    }
                    (Some(Item::FunctionCall { arguments, .. }), Item::FunctionCall { arguments: whole, .. })
                        if whole.is_empty() =>
                    {
                        whole.clone_from(arguments);
                    }
                    (Some(Item::Reasoning { summary, .. }), Item::Reasoning { summary: whole, .. })
                        if whole.is_empty() =>
                    {
                        whole.clone_from(summary);
                    }
                    _ => {}
                }
                if let Item::Message { text, streamed: false, .. } = &done
                    && !text.is_empty()
                {
                    let text = text.clone();
                    self.text_to_sink(&text, sink);
                    if let Item::Message { streamed, .. } = &mut done {
                        *streamed = true;
                    }
                }
                if let Item::FunctionCall { .. } = done {
                    self.progress = Progress::ContentDelivered;
                }
                match self.items.iter_mut().rev().find(|(i, _)| *i == output_index) {
                    Some((_, slot)) => *slot = done,
                    None => self.items.push((output_index, done)),
                }
            }
            Event::OutputTextDelta { output_index, delta } => {
                if delta.is_empty() {
                    return Ok(None);
                }
                match self.item(output_index) {
                    Some(Item::Message { text, streamed, .. }) => {
                        text.push_str(&delta);
                        *streamed = true;
                    }
                    Some(Item::FunctionCall { .. } | Item::Reasoning { .. } | Item::Ignored) => {
                        return Err(self.wrong_item("response.output_text.delta", output_index, "message"));
                    }
                    None => self.items.push((
                        output_index,
                        Item::Message { text: delta.to_string(), refusal: String::new(), streamed: true },
                    )),
                }
                self.text_to_sink(&delta, sink);
            }
            Event::RefusalDelta { output_index, delta } => match self.item(output_index) {
                Some(Item::Message { refusal, .. }) => refusal.push_str(&delta),
                Some(Item::FunctionCall { .. } | Item::Reasoning { .. } | Item::Ignored) => {
                    return Err(self.wrong_item("response.refusal.delta", output_index, "message"));
                }
                None => self.items.push((
                    output_index,
                    Item::Message { text: String::new(), refusal: delta.into_owned(), streamed: false },
                )),
            },
            Event::FunctionCallArgumentsDelta { output_index, delta } => match self.item(output_index) {
                Some(Item::FunctionCall { arguments, .. }) => {
                    arguments.push_str(&delta);
                    self.progress = Progress::ContentDelivered;
                }
                Some(Item::Message { .. } | Item::Reasoning { .. } | Item::Ignored) | None => {
                    return Err(self.wrong_item(
                        "response.function_call_arguments.delta",
                        output_index,
                        "function_call",
                    ));
                }
            },
            Event::FunctionCallArgumentsDone { output_index, arguments } => match self.item(output_index) {
                Some(Item::FunctionCall { arguments: so_far, .. }) => {
                    if let Some(whole) = arguments {
                        *so_far = whole;
                    }
                }
                Some(Item::Message { .. } | Item::Reasoning { .. } | Item::Ignored) | None => {
                    return Err(self.wrong_item(
                        "response.function_call_arguments.done",
                        output_index,
                        "function_call",
                    ));
                }
            },
            Event::ReasoningSummaryTextDelta { output_index, summary_index, delta } => match self.item(output_index) {
                Some(Item::Reasoning { summary, .. }) => {
                    if summary.len() <= summary_index {
                        summary.resize(summary_index + 1, String::new());
                    }
                    summary[summary_index].push_str(&delta);
                }
                Some(Item::Message { .. } | Item::FunctionCall { .. } | Item::Ignored) | None => {
                    return Err(self.wrong_item("response.reasoning_summary_text.delta", output_index, "reasoning"));
                }
            },
            Event::Completed { response } | Event::Incomplete { response } => return Ok(Some(response)),
            Event::Failed { response } => {
                let error = response.error.unwrap_or(WireError { code: None, kind: None, message: None });
                return Err(self.fail(stream_error("response.failed", &error)));
            }
            Event::Error { code, message, error } => {
                let error = error.unwrap_or(WireError { code, kind: None, message });
                return Err(self.fail(stream_error("error", &error)));
            }
            Event::Unknown => {}
        }
        Ok(None)
    }

    /// The last item opened at `index`.
    fn item(&mut self, index: u32) -> Option<&mut Item> {
        self.items.iter_mut().rev().find(|(i, _)| *i == index).map(|(_, item)| item)
    }

    fn text_to_sink(&mut self, text: &str, sink: &dyn StreamSink) {
        self.progress = Progress::ContentDelivered;
        sink.text_delta(text);
    }

    fn wrong_item(&self, event: &str, index: u32, expected: &str) -> AttemptError {
        self.fail(AttemptError::new(
            ModelErrorKind::InvalidReply,
            format!("{event} for output item {index}, which is not a {expected} item"),
        ))
    }
}

/// A `response.failed` or `error` event as a model error: its `code` (or `type`) decides the
/// kind through [`stream_error_kind`].
fn stream_error(event: &str, error: &WireError) -> AttemptError {
    let code_text = error.code.as_ref().and_then(|c| c.as_str().map(str::to_owned).or_else(|| Some(c.to_string())));
    let kind = stream_error_kind(error.kind.as_deref(), error.code.as_ref());
    let name = error.kind.clone().or(code_text).unwrap_or_else(|| "error".to_owned());
    let message = error.message.as_deref().unwrap_or("no message");
    AttemptError::new(kind, format!("the stream reported {event} {name}: {message}"))
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use futures_util::stream;
    use serde_json::json;
    use spine_core::model::{FinishReason, NoStream};

    use super::*;

    async fn read(events: &[serde_json::Value]) -> Result<ModelReply, AttemptError> {
        let pieces: Vec<Result<Bytes, BodyError>> =
            events.iter().map(|e| Ok(Bytes::from(format!("data: {e}\n\n")))).collect();
        read_stream(stream::iter(pieces), &NoStream).await
    }

    fn completed() -> serde_json::Value {
        json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 10, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 4}}}})
    }

    #[tokio::test]
    async fn items_keep_output_index_order_and_done_items_replace_deltas() {
        let reply = read(&[
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "Think"}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Think."}], "encrypted_content": "ENC"}}),
            json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "call_id": "call_1", "name": "Read", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"file_path\":"}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "\"a\"}"}),
            completed(),
        ])
        .await
        .expect("reply");
        assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
        assert_eq!(
            reply.message.reasoning,
            vec![ReasoningItem::Reasoning {
                id: "rs_1".into(),
                summary: vec!["Think.".into()],
                encrypted_content: Some("ENC".into())
            }]
        );
        assert_eq!(reply.message.tool_calls[0].arguments, ToolArguments::Json(json!({"file_path": "a"})));
        assert_eq!(reply.usage, Some(Usage { cache_read_input_tokens: 4, ..Usage::new(10, 5) }));
    }

    #[tokio::test]
    async fn incomplete_for_max_output_tokens_is_an_incomplete_error() {
        let err = read(&[json!({"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}})])
            .await
            .expect_err("incomplete");
        assert_eq!(err.error.kind, ModelErrorKind::Incomplete);
    }

    #[tokio::test]
    async fn a_refusal_instead_of_text_is_a_refusal() {
        let err = read(&[
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}}),
            completed(),
        ])
        .await
        .expect_err("refusal");
        assert_eq!(err.error.kind, ModelErrorKind::Refusal);
    }

    #[tokio::test]
    async fn a_function_call_without_a_name_is_an_invalid_reply() {
        let err = read(&[
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call", "call_id": "c", "arguments": "{}"}}),
            completed(),
        ])
        .await
        .expect_err("no name");
        assert_eq!(err.error.kind, ModelErrorKind::InvalidReply);
    }
}
