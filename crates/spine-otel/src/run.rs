//! [`RunSpans`]: collects one run's trace entries (as a [`TraceSink`]) and the little the
//! entries do not hold (the session id, and message content when it may be recorded, as a
//! [`RunObserver`]) for the exporter's span builder, which takes them while the run goes on —
//! once [`HANDOVER_ENTRIES`] are waiting, and at least every 100 ms —
//! so that the spans of a run are built and sent as its steps complete; [`RunSpans::finish`]
//! hands over the rest.
//!
//! An entry is written when its step ends: a tool call's span starts at its first hook and ends
//! with its decision record, which comes last, so the builder holds a call's steps until then
//! (see [`crate::spans::Emitter`]). Recording costs one lock and a shared pointer to the entry
//! (the trace keeps it anyway); the run wakes the builder once per [`HANDOVER_ENTRIES`]
//! entries, not per step.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use spine_core::observer::{RunEvent, RunObserver};
use spine_core::trace::TraceSink;
use spine_protocol::message::Message;
use spine_protocol::trace::TraceEntry;

use crate::builder::Jobs;
use crate::config::ContentCapture;
use crate::spans::Segment;
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

/// The entries a run collects before it wakes the span builder to take them.
pub const HANDOVER_ENTRIES: usize = 64;

/// One run's spans in the making.
pub struct RunSpans {
    jobs: Jobs,
    id: u64,
    content: ContentCapture,
    state: Arc<Collector>,
}

/// What a run has collected and not handed over yet, shared with the span builder (which takes
/// it with [`Collector::take`]).
#[derive(Debug, Default)]
pub(crate) struct Collector(Mutex<Collected>);

impl Collector {
    fn lock(&self) -> std::sync::MutexGuard<'_, Collected> {
        match self.0.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// What was collected since the last call.
    pub(crate) fn take(&self) -> Segment {
        let mut state = self.lock();
        state.woken = false;
        std::mem::take(&mut state.segment)
    }
}

impl std::fmt::Debug for RunSpans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSpans").field("id", &self.id).field("content", &self.content).finish_non_exhaustive()
    }
}

/// What a run recorded since its last hand-over.
#[derive(Debug, Default)]
struct Collected {
    /// The next segment.
    segment: Segment,
    /// Whether the base time was set (it goes with the first segment only).
    based: bool,
    /// Whether the builder was woken to take the segment and has not taken it yet.
    woken: bool,
    /// Content only: the conversation so far (as JSON), for each request's input.
    conversation: Vec<Value>,
    /// Content only: whether the first user message (the prompt) was seen.
    prompted: bool,
    turn: u32,
    finished: bool,
}

impl RunSpans {
    pub(crate) fn new(jobs: Jobs, id: u64, content: ContentCapture, info: RunInfo) -> Self {
        let state = Arc::new(Collector::default());
        jobs.start(id, info, Arc::clone(&state));
        RunSpans { jobs, id, content, state }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Collected> {
        self.state.lock()
    }

    /// Hands the rest of the run to the span builder, which ends the run's span. Only the first
    /// call does anything; it does not wait (the exporter's flush does).
    pub fn finish(&self) {
        let mut state = self.state();
        if state.finished {
            return;
        }
        state.finished = true;
        drop(state);
        self.jobs.end(self.id);
    }
}

impl TraceSink for RunSpans {
    fn record(&self, entry: &Arc<TraceEntry>) {
        let mut state = self.state();
        if state.finished {
            return;
        }
        if !state.based {
            let now = SystemTime::now();
            state.based = true;
            state.segment.base = Some(now.checked_sub(Duration::from_micros(entry.t_us)).unwrap_or(now));
        }
        state.segment.entries.push(Arc::clone(entry));
        if state.segment.entries.len() >= HANDOVER_ENTRIES && !state.woken {
            state.woken = true;
            drop(state);
            self.jobs.ready(self.id);
        }
    }
}

impl RunObserver for RunSpans {
    fn on_event(&self, event: &RunEvent<'_>) {
        match event {
            RunEvent::SessionStarted { session_id, model } => {
                let mut state = self.state();
                state.segment.session_id = Some((*session_id).to_owned());
                state.segment.model = Some((*model).to_owned());
            }
            RunEvent::ModelRequest { turn } => {
                let mut state = self.state();
                state.turn = *turn;
                if self.content == ContentCapture::Record {
                    let input = Value::Array(state.conversation.clone()).to_string();
                    state.segment.content.inputs.insert(*turn, input);
                }
            }
            RunEvent::Message { message } => {
                if self.content == ContentCapture::Omit {
                    return;
                }
                let mut state = self.state();
                let json = serde_json::to_value(message).unwrap_or(Value::Null);
                match message {
                    Message::User { content, .. } if !state.prompted => {
                        state.prompted = true;
                        state.segment.content.prompt = Some(content.clone());
                    }
                    Message::Assistant(reply) => {
                        let turn = state.turn;
                        state.segment.content.outputs.insert(turn, Value::Array(vec![json.clone()]).to_string());
                        for call in &reply.tool_calls {
                            let arguments = serde_json::to_value(&call.arguments).unwrap_or(Value::Null);
                            let arguments = arguments.get("arguments").cloned().unwrap_or(arguments);
                            state.segment.content.tool_arguments.insert(call.id.clone(), arguments.to_string());
                        }
                    }
                    Message::System { .. } | Message::User { .. } | Message::Tool(_) | Message::Context(_) => {}
                }
                state.conversation.push(json);
            }
            RunEvent::ToolResult { result } => {
                if self.content == ContentCapture::Record {
                    self.state()
                        .segment
                        .content
                        .tool_results
                        .insert(result.tool_call_id.clone(), result.content.clone());
                }
            }
            RunEvent::HookFired { .. }
            | RunEvent::HookStarted { .. }
            | RunEvent::HookEnded { .. }
            | RunEvent::HookAnswered { .. }
            | RunEvent::Permission { .. }
            | RunEvent::ModelReplied { .. }
            | RunEvent::ModelAttempt { .. }
            | RunEvent::TextDelta { .. }
            | RunEvent::SystemMessage { .. }
            | RunEvent::StreamDelta { .. }
            | RunEvent::Subagent { .. }
            | RunEvent::Warning { .. }
            | RunEvent::Note { .. } => {}
        }
    }
}
