//! The mapping from one run's trace entries to spans, after the OpenTelemetry GenAI semantic
//! conventions:
//!
//! ```text
//! invoke_agent                         the run (gen_ai.operation.name = invoke_agent)
//! ├── prepare_turn, compact_context…   stages without a tool call
//! ├── hook SessionStart, hook Stop…    hooks without a tool call
//! ├── chat {model}                     one per model request (usage, finish reasons)
//! └── execute_tool {name}              one per tool call, with its combined decision record
//!     ├── hook PreToolUse              its hooks: source file and JSON path, decision, duration
//!     └── review_tool_call, execute…   its stages
//! ```
//!
//! Every span's times come from the entries (`t_us` is when a step ended, `duration_us` how
//! long it took). Attributes that hold message content (prompts, replies, reasoning, tool
//! arguments and results, hook answers, stage previews) are written only with
//! [`ContentCapture::Record`]. Nothing here reads the environment: no key can reach a span.
//!
//! # Layout
//!
//! - this module: what a run hands over ([`Segment`], with its [`Content`]);
//! - `emitter`: the [`Emitter`], the open-span bookkeeping — the run's span, the entries of
//!   steps not complete yet, the decided tool calls' spans that their steps go under;
//! - `kinds`: the span of each kind of record (`execute_tool`, `chat`, a stage, a hook), given
//!   its parent and its times;
//! - `attributes`: attribute naming and values — the decision record, usage, stage fields
//!   (`spine.stage.*`), hooks, JSON values, the provider guessed from a model name.

mod attributes;
mod emitter;
mod kinds;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::SystemTime;

use spine_protocol::trace::TraceEntry;

pub use self::attributes::{decision_attributes, json_attribute, provider_of_model, split_source};
pub use self::emitter::Emitter;
#[cfg(doc)]
use crate::config::ContentCapture;

/// Message content the run's observer saw, keyed the way the spans need it (only kept with
/// [`ContentCapture::Record`]). A span takes its part out when it is built.
#[derive(Debug, Default)]
pub struct Content {
    /// The run's first user message.
    pub prompt: Option<String>,
    /// The messages sent before each request, by request number (as JSON).
    pub inputs: HashMap<u32, String>,
    /// Each request's reply, by request number (as JSON).
    pub outputs: HashMap<u32, String>,
    /// Each tool call's arguments, by call id (as JSON).
    pub tool_arguments: HashMap<String, String>,
    /// Each tool call's result text, by call id.
    pub tool_results: HashMap<String, String>,
}

impl Content {
    fn merge(&mut self, more: Content) {
        if self.prompt.is_none() {
            self.prompt = more.prompt;
        }
        self.inputs.extend(more.inputs);
        self.outputs.extend(more.outputs);
        self.tool_arguments.extend(more.tool_arguments);
        self.tool_results.extend(more.tool_results);
    }
}

/// What a run hands its [`Emitter`] at a step boundary: the entries recorded since the last
/// segment and what the observer learnt meanwhile.
#[derive(Debug, Default)]
pub struct Segment {
    /// The wall-clock time of the trace's `t_us = 0`, once known.
    pub base: Option<SystemTime>,
    /// The new entries, in order (shared with the run's trace).
    pub entries: Vec<Arc<TraceEntry>>,
    /// The session id (`gen_ai.conversation.id`), once known.
    pub session_id: Option<String>,
    /// The model, as its client names it, once known.
    pub model: Option<String>,
    /// New message content (empty without the opt-in).
    pub content: Content,
}
