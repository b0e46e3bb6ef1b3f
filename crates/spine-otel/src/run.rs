//! [`RunSpans`]: collects one run's trace entries (as a [`TraceSink`]) and the little the
//! entries do not hold (the session id, and message content when it may be recorded, as a
//! [`RunObserver`]); [`RunSpans::finish`] turns them into spans when the run has ended.
//!
//! Spans are built at the end because an entry is written when its step ends: a tool call's
//! span starts at its first hook and ends with its decision record, which comes last. Recording
//! costs one lock and a copy of the entry.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use serde_json::Value;
use spine_core::observer::{RunEvent, RunObserver};
use spine_core::trace::TraceSink;
use spine_protocol::message::Message;
use spine_protocol::trace::TraceEntry;

use crate::config::ContentCapture;
use crate::spans;
use crate::traceparent::TraceParent;

/// What a run's spans say about the run besides its trace.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// `gen_ai.provider.name` (`anthropic`, `openai`…); guessed from the model name when absent.
    pub provider: Option<String>,
    /// The submitter's span, for a worker's assignment: the run joins that trace.
    pub parent: Option<TraceParent>,
    /// More attributes of the run span (a worker's item id and attempt).
    pub attributes: Vec<(String, String)>,
}

/// One run's spans in the making.
pub struct RunSpans {
    tracer: SdkTracer,
    provider: SdkTracerProvider,
    content: ContentCapture,
    info: RunInfo,
    state: Mutex<Collected>,
}

impl std::fmt::Debug for RunSpans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSpans").field("content", &self.content).field("info", &self.info).finish_non_exhaustive()
    }
}

/// What a run recorded, for [`spans::emit`].
#[derive(Debug, Default)]
pub struct Collected {
    /// The wall-clock time of the trace's `t_us = 0`.
    pub base: Option<SystemTime>,
    /// The entries, in order.
    pub entries: Vec<TraceEntry>,
    /// The session id (`gen_ai.conversation.id`).
    pub session_id: Option<String>,
    /// The model, as its client names it.
    pub model: Option<String>,
    /// Content only: the run's first user message.
    pub prompt: Option<String>,
    /// Content only: the messages sent before each request, by request number (as JSON).
    pub inputs: HashMap<u32, String>,
    /// Content only: each request's reply, by request number (as JSON).
    pub outputs: HashMap<u32, String>,
    /// Content only: each tool call's arguments, by call id (as JSON).
    pub tool_arguments: HashMap<String, String>,
    /// Content only: each tool call's result text, by call id.
    pub tool_results: HashMap<String, String>,
    conversation: Vec<Value>,
    turn: u32,
    finished: bool,
}

impl RunSpans {
    pub(crate) fn new(tracer: SdkTracer, provider: SdkTracerProvider, content: ContentCapture, info: RunInfo) -> Self {
        RunSpans { tracer, provider, content, info, state: Mutex::new(Collected::default()) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Collected> {
        match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Builds the run's spans and queues them for export. Only the first call does anything; a
    /// run that recorded nothing has no spans. A run of more than 2048 spans waits for each
    /// full chunk to be sent before it queues the next.
    pub fn finish(&self) {
        let mut state = self.state();
        if state.finished {
            return;
        }
        let collected = std::mem::take(&mut *state);
        state.finished = true;
        drop(state);
        if collected.entries.is_empty() {
            return;
        }
        // A long run's spans go out in chunks that fit the processor's queue.
        let mut ended = 0usize;
        let mut chunked = || {
            ended += 1;
            if ended.is_multiple_of(crate::exporter::MAX_QUEUE / 2) {
                let _ = self.provider.force_flush();
            }
        };
        spans::emit(&self.tracer, self.content, &self.info, collected, &mut chunked);
    }
}

impl TraceSink for RunSpans {
    fn record(&self, entry: &TraceEntry) {
        let mut state = self.state();
        if state.base.is_none() {
            let now = SystemTime::now();
            state.base = Some(now.checked_sub(Duration::from_micros(entry.t_us)).unwrap_or(now));
        }
        state.entries.push(entry.clone());
    }
}

impl RunObserver for RunSpans {
    fn on_event(&self, event: &RunEvent<'_>) {
        match event {
            RunEvent::SessionStarted { session_id, model } => {
                let mut state = self.state();
                state.session_id = Some((*session_id).to_owned());
                state.model = Some((*model).to_owned());
            }
            RunEvent::ModelRequest { turn } => {
                let mut state = self.state();
                state.turn = *turn;
                if self.content == ContentCapture::Record {
                    let input = Value::Array(state.conversation.clone()).to_string();
                    state.inputs.insert(*turn, input);
                }
            }
            RunEvent::Message { message } => {
                if self.content == ContentCapture::Omit {
                    return;
                }
                let mut state = self.state();
                let json = serde_json::to_value(message).unwrap_or(Value::Null);
                match message {
                    Message::User { content, .. } if state.prompt.is_none() => state.prompt = Some(content.clone()),
                    Message::Assistant(reply) => {
                        let turn = state.turn;
                        state.outputs.insert(turn, Value::Array(vec![json.clone()]).to_string());
                        for call in &reply.tool_calls {
                            let arguments = serde_json::to_value(&call.arguments).unwrap_or(Value::Null);
                            let arguments = arguments.get("arguments").cloned().unwrap_or(arguments);
                            state.tool_arguments.insert(call.id.clone(), arguments.to_string());
                        }
                    }
                    Message::System { .. } | Message::User { .. } | Message::Tool(_) | Message::Context(_) => {}
                }
                state.conversation.push(json);
            }
            RunEvent::ToolResult { result } => {
                if self.content == ContentCapture::Record {
                    self.state().tool_results.insert(result.tool_call_id.clone(), result.content.clone());
                }
            }
            RunEvent::HookFired { .. }
            | RunEvent::HookAnswered { .. }
            | RunEvent::Permission { .. }
            | RunEvent::ModelReplied { .. }
            | RunEvent::ModelAttempt { .. }
            | RunEvent::TextDelta { .. }
            | RunEvent::SystemMessage { .. }
            | RunEvent::Warning { .. } => {}
        }
    }
}
