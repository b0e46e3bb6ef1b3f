//! `--include-partial-messages`: the Anthropic streaming events of one model reply, as Claude
//! Code 2.1 prints them in `stream_event` lines (recorded in
//! `tests/fixtures/claude-code-2.1.328/stream-json-partial.jsonl`).
//!
//! Contract, per reply:
//! - `message_start` (its `message` with the reply's id and model, empty `content`) before the
//!   first block; then per block `content_block_start` (`index` from 0), its
//!   `content_block_delta`s (`text_delta`, `thinking_delta`, `signature_delta`,
//!   `input_json_delta`) and `content_block_stop`; then `message_delta` (`stop_reason`, usage)
//!   and `message_stop`. A block always stops before the next one starts.
//! - What the provider streams ([`RunEvent::TextDelta`](spine_core::observer::RunEvent) for
//!   text, [`StreamDelta`] for the rest — Anthropic's client streams everything) goes out as it
//!   arrives. Whatever the finished reply holds that was not streamed (an OpenAI model's tool
//!   calls and reasoning, the scripted model's tool calls and thinking) is synthesized when the
//!   reply is complete: a start, the whole content as one delta, a stop, after the streamed
//!   blocks.
//! - Each block's `assistant` line ([`Out::Assistant`], one content block per line, as Claude
//!   Code writes them) comes just before the block's `content_block_stop` when the block is
//!   synthesized or the last one streamed; a streamed block that stopped earlier (because the
//!   next one started) gets its line when the reply is complete, in content order.
//! - `message_start`'s usage is zeros while the reply streams (spine learns the figures at the
//!   end); `message_delta` carries the reply's usage (zeros when the provider reported none).
//! - A retried attempt starts the reply over (a new `message_start`).

use serde_json::{Value, json};
use spine_core::model::StreamDelta;

/// What to print, in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Out {
    /// A streaming event (the `event` of a `stream_event` line).
    Event(Value),
    /// The `assistant` line of the reply's content block at this position.
    Assistant(usize),
}

/// The reply a stream belongs to.
pub(super) struct Head<'a> {
    /// Its message id.
    pub id: &'a str,
    /// The model's name.
    pub model: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    RedactedThinking,
    ToolUse,
}

impl Kind {
    fn of(block: &Value) -> Option<Kind> {
        Some(match block["type"].as_str()? {
            "text" => Kind::Text,
            "thinking" => Kind::Thinking,
            "redacted_thinking" => Kind::RedactedThinking,
            "tool_use" => Kind::ToolUse,
            _ => return None,
        })
    }
}

/// The block that is open: its kind, index, and position among the streamed blocks.
#[derive(Debug, Clone, Copy)]
struct Open {
    kind: Kind,
    index: u32,
    streamed: usize,
}

/// The streaming state of one reply.
#[derive(Debug, Default)]
pub(super) struct Partial {
    started: bool,
    next: u32,
    open: Option<Open>,
    streamed: Vec<Kind>,
}

/// Zero usage, for `message_start` while the figures are unknown.
pub(super) fn zero_usage() -> Value {
    json!({"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
}

impl Partial {
    /// Forgets the reply so far (a new request, or a retried attempt).
    pub fn reset(&mut self) {
        *self = Partial::default();
    }

    /// A piece of the reply's text.
    pub fn text(&mut self, head: &Head<'_>, text: &str) -> Vec<Out> {
        let mut out = Vec::new();
        if text.is_empty() {
            return out;
        }
        let index = self.ensure_open(head, Kind::Text, &mut out, || json!({"type": "text", "text": ""}));
        out.push(delta(index, json!({"type": "text_delta", "text": text})));
        out
    }

    /// Another streamed piece.
    pub fn delta(&mut self, head: &Head<'_>, piece: StreamDelta<'_>) -> Vec<Out> {
        let mut out = Vec::new();
        let thinking_start = || json!({"type": "thinking", "thinking": "", "signature": ""});
        match piece {
            StreamDelta::ThinkingStart => {
                self.close(&mut out);
                self.ensure_open(head, Kind::Thinking, &mut out, thinking_start);
            }
            StreamDelta::Thinking { text } => {
                let index = self.ensure_open(head, Kind::Thinking, &mut out, thinking_start);
                if !text.is_empty() {
                    out.push(delta(index, json!({"type": "thinking_delta", "thinking": text})));
                }
            }
            StreamDelta::Signature { signature } => {
                if let Some(open) = self.open.filter(|o| o.kind == Kind::Thinking) {
                    out.push(delta(open.index, json!({"type": "signature_delta", "signature": signature})));
                }
            }
            StreamDelta::RedactedThinking { data } => {
                self.close(&mut out);
                let index = self.ensure_open(
                    head,
                    Kind::RedactedThinking,
                    &mut out,
                    || json!({"type": "redacted_thinking", "data": data}),
                );
                self.open = None;
                out.push(Out::Event(json!({"type": "content_block_stop", "index": index})));
            }
            StreamDelta::ToolUseStart { id, name } => {
                self.close(&mut out);
                self.ensure_open(
                    head,
                    Kind::ToolUse,
                    &mut out,
                    || json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                );
            }
            StreamDelta::ToolInput { partial_json } => {
                if let Some(open) = self.open.filter(|o| o.kind == Kind::ToolUse) {
                    out.push(delta(open.index, json!({"type": "input_json_delta", "partial_json": partial_json})));
                }
            }
        }
        out
    }

    /// The reply is complete: its content blocks (as the `assistant` lines carry them), why
    /// it stopped and its usage. Closes what streamed, synthesizes the rest (see the module
    /// documentation) and ends the message.
    pub fn finish(&mut self, head: &Head<'_>, content: &[Value], stop_reason: &str, usage: Value) -> Vec<Out> {
        let mut out = Vec::new();
        if !self.started {
            self.started = true;
            out.push(message_start(head, usage.clone()));
        }
        // The blocks of the reply that streamed, matched in order by kind.
        let mut next_streamed = 0;
        let streamed: Vec<Option<usize>> = content
            .iter()
            .map(|block| {
                let position = next_streamed;
                (Kind::of(block).is_some() && self.streamed.get(position).copied() == Kind::of(block)).then(|| {
                    next_streamed += 1;
                    position
                })
            })
            .collect();
        let mut open = self.open.take();
        for (i, (block, streamed)) in content.iter().zip(streamed).enumerate() {
            match streamed {
                Some(position) => {
                    out.push(Out::Assistant(i));
                    if let Some(o) = open.filter(|o| o.streamed == position) {
                        out.push(Out::Event(json!({"type": "content_block_stop", "index": o.index})));
                        open = None;
                    }
                }
                None => {
                    if let Some(o) = open.take() {
                        out.push(Out::Event(json!({"type": "content_block_stop", "index": o.index})));
                    }
                    let index = self.next;
                    self.next += 1;
                    let (start, deltas) = synthesized(block);
                    out.push(Out::Event(
                        json!({"type": "content_block_start", "index": index, "content_block": start}),
                    ));
                    out.extend(deltas.into_iter().map(|d| delta(index, d)));
                    out.push(Out::Assistant(i));
                    out.push(Out::Event(json!({"type": "content_block_stop", "index": index})));
                }
            }
        }
        if let Some(o) = open {
            out.push(Out::Event(json!({"type": "content_block_stop", "index": o.index})));
        }
        out.push(Out::Event(json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": Value::Null},
            "usage": usage,
        })));
        out.push(Out::Event(json!({"type": "message_stop"})));
        self.reset();
        out
    }

    /// The open block when it is of `kind`, else a new one (after `message_start` when it is
    /// the reply's first event, and after the open block's stop); its index.
    fn ensure_open(&mut self, head: &Head<'_>, kind: Kind, out: &mut Vec<Out>, start: impl FnOnce() -> Value) -> u32 {
        if !self.started {
            self.started = true;
            out.push(message_start(head, zero_usage()));
        }
        if let Some(open) = self.open.filter(|o| o.kind == kind) {
            return open.index;
        }
        self.close(out);
        let index = self.next;
        self.next += 1;
        out.push(Out::Event(json!({"type": "content_block_start", "index": index, "content_block": start()})));
        self.open = Some(Open { kind, index, streamed: self.streamed.len() });
        self.streamed.push(kind);
        index
    }

    /// Stops the open block, if any.
    fn close(&mut self, out: &mut Vec<Out>) {
        if let Some(open) = self.open.take() {
            out.push(Out::Event(json!({"type": "content_block_stop", "index": open.index})));
        }
    }
}

fn message_start(head: &Head<'_>, usage: Value) -> Out {
    Out::Event(json!({
        "type": "message_start",
        "message": {
            "id": head.id,
            "type": "message",
            "role": "assistant",
            "model": head.model,
            "content": [],
            "stop_reason": Value::Null,
            "stop_sequence": Value::Null,
            "usage": usage,
        },
    }))
}

fn delta(index: u32, delta: Value) -> Out {
    Out::Event(json!({"type": "content_block_delta", "index": index, "delta": delta}))
}

/// The start and deltas of a block that did not stream: its whole content in one delta.
fn synthesized(block: &Value) -> (Value, Vec<Value>) {
    match Kind::of(block) {
        Some(Kind::Text) => {
            (json!({"type": "text", "text": ""}), vec![json!({"type": "text_delta", "text": block["text"]})])
        }
        Some(Kind::Thinking) => {
            let mut deltas = vec![json!({"type": "thinking_delta", "thinking": block["thinking"]})];
            if let Some(signature) = block["signature"].as_str().filter(|s| !s.is_empty()) {
                deltas.push(json!({"type": "signature_delta", "signature": signature}));
            }
            (json!({"type": "thinking", "thinking": "", "signature": ""}), deltas)
        }
        Some(Kind::ToolUse) => {
            // Arguments that did not parse are a JSON string in the block: sent as they came.
            let partial_json = match &block["input"] {
                Value::String(raw) => raw.clone(),
                input => input.to_string(),
            };
            (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                vec![json!({"type": "input_json_delta", "partial_json": partial_json})],
            )
        }
        Some(Kind::RedactedThinking) | None => (block.clone(), Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: Head<'static> = Head { id: "msg_1", model: "m" };

    /// `start:0:text`, `delta:0:text_delta`, `stop:0`, `assistant:1`, `message_start`…
    fn gist(out: &[Out]) -> Vec<String> {
        out.iter()
            .map(|o| match o {
                Out::Assistant(i) => format!("assistant:{i}"),
                Out::Event(e) => match e["type"].as_str().unwrap_or_default() {
                    "content_block_start" => {
                        format!("start:{}:{}", e["index"], e["content_block"]["type"].as_str().unwrap_or(""))
                    }
                    "content_block_delta" => {
                        format!("delta:{}:{}", e["index"], e["delta"]["type"].as_str().unwrap_or(""))
                    }
                    "content_block_stop" => format!("stop:{}", e["index"]),
                    other => other.to_owned(),
                },
            })
            .collect()
    }

    #[test]
    fn a_reply_that_streamed_nothing_is_synthesized_block_by_block_with_each_assistant_line_before_its_stop() {
        let mut p = Partial::default();
        let content = [
            json!({"type": "text", "text": "hi"}),
            json!({"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "ls"}}),
        ];
        let out = p.finish(&HEAD, &content, "tool_use", zero_usage());
        assert_eq!(
            gist(&out),
            [
                "message_start",
                "start:0:text",
                "delta:0:text_delta",
                "assistant:0",
                "stop:0",
                "start:1:tool_use",
                "delta:1:input_json_delta",
                "assistant:1",
                "stop:1",
                "message_delta",
                "message_stop"
            ]
        );
        let Out::Event(input) = &out[6] else { panic!("an event") };
        assert_eq!(input["delta"]["partial_json"], r#"{"command":"ls"}"#);
        let Out::Event(end) = &out[9] else { panic!("an event") };
        assert_eq!(end["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn streamed_blocks_go_out_as_they_come_and_the_unstreamed_rest_follows_them() {
        let mut p = Partial::default();
        let mut out = p.delta(&HEAD, StreamDelta::ThinkingStart);
        out.extend(p.delta(&HEAD, StreamDelta::Thinking { text: "hmm" }));
        out.extend(p.delta(&HEAD, StreamDelta::Signature { signature: "s" }));
        out.extend(p.text(&HEAD, "I will "));
        out.extend(p.text(&HEAD, "run it."));
        let content = [
            json!({"type": "thinking", "thinking": "hmm", "signature": "s"}),
            json!({"type": "text", "text": "I will run it."}),
            json!({"type": "tool_use", "id": "c1", "name": "Bash", "input": {}}),
        ];
        out.extend(p.finish(&HEAD, &content, "tool_use", zero_usage()));
        assert_eq!(
            gist(&out),
            [
                "message_start",
                "start:0:thinking",
                "delta:0:thinking_delta",
                "delta:0:signature_delta",
                "stop:0",
                "start:1:text",
                "delta:1:text_delta",
                "delta:1:text_delta",
                "assistant:0",
                "assistant:1",
                "stop:1",
                "start:2:tool_use",
                "delta:2:input_json_delta",
                "assistant:2",
                "stop:2",
                "message_delta",
                "message_stop"
            ]
        );
    }

    #[test]
    fn a_streamed_tool_call_keeps_its_input_fragments_and_a_retry_starts_the_message_over() {
        let mut p = Partial::default();
        let mut out = p.delta(&HEAD, StreamDelta::ToolUseStart { id: "c1", name: "Bash" });
        out.extend(p.delta(&HEAD, StreamDelta::ToolInput { partial_json: "{\"a\":" }));
        p.reset();
        let mut retried = p.delta(&HEAD, StreamDelta::ToolUseStart { id: "c1", name: "Bash" });
        retried.extend(p.delta(&HEAD, StreamDelta::ToolInput { partial_json: "{\"a\":1}" }));
        retried.extend(p.finish(
            &HEAD,
            &[json!({"type": "tool_use", "id": "c1", "name": "Bash", "input": {"a": 1}})],
            "tool_use",
            zero_usage(),
        ));
        assert_eq!(gist(&out), ["message_start", "start:0:tool_use", "delta:0:input_json_delta"]);
        assert_eq!(
            gist(&retried),
            [
                "message_start",
                "start:0:tool_use",
                "delta:0:input_json_delta",
                "assistant:0",
                "stop:0",
                "message_delta",
                "message_stop"
            ]
        );
    }

    #[test]
    fn a_block_the_finished_reply_puts_before_the_streamed_ones_closes_the_open_block_first() {
        let mut p = Partial::default();
        let mut out = p.text(&HEAD, "answer");
        let content = [json!({"type": "thinking", "thinking": "summary"}), json!({"type": "text", "text": "answer"})];
        out.extend(p.finish(&HEAD, &content, "end_turn", zero_usage()));
        assert_eq!(
            gist(&out),
            [
                "message_start",
                "start:0:text",
                "delta:0:text_delta",
                "stop:0",
                "start:1:thinking",
                "delta:1:thinking_delta",
                "assistant:0",
                "stop:1",
                "assistant:1",
                "message_delta",
                "message_stop"
            ]
        );
    }
}
