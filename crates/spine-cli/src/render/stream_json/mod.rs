//! `--output-format stream-json`: one JSON object per line on stdout as the run goes, written
//! as Claude Code 2.1 writes them so that its readers (the Agent SDKs, scripts) work
//! unchanged. The shapes are compared with Claude Code 2.1.328's recordings in
//! `tests/fixtures/claude-code-2.1.328/stream-json-*.jsonl`; docs/stream-json.md has the table
//! of every line type and its fields.
//!
//! Contract:
//! - `init` first ([`init`]), the result object last (`render::result`);
//! - each model turn is one `assistant` line **per content block** (thinking, text, tool_use),
//!   all with the turn's message id, model and usage; each tool result is one `user` line;
//! - a subagent's lines (its prompt as a `user` text line, its turns, its tool results, its
//!   stream events) carry `parent_tool_use_id` = the id of the `Agent`/`Task` call that started
//!   it, and its `agent_id`, `subagent_type` and `task_description`; the main agent's carry
//!   `parent_tool_use_id: null`. With `--include-hook-events`, hook and spine lines fired
//!   inside a subagent carry its `parent_tool_use_id` too (Claude Code's carry none);
//! - with `--include-partial-messages`, a `system` `status: requesting` line before each of the
//!   main agent's model requests and the reply's Anthropic streaming events as `stream_event`
//!   lines ([`partial`]);
//! - with `--include-hook-events`, Claude Code's hook lines (`hook_started`, `hook_response`,
//!   `hook_progress`) with spine's `spine_hook_id`, then spine's own lines ([`lines`]); with
//!   `--include-reports`, spine's execution reports as `report` lines.
//!
//! Lines are written under one lock, so the lines of concurrent subagents never interleave
//! within a line and each run's lines keep their order.

pub mod init;
#[cfg(test)]
mod left_out;
mod lines;
mod partial;

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Value, json};
use spine_core::model::AttemptOutcome;
use spine_core::observer::{RunEvent, RunObserver, SubagentOrigin};
use spine_core::session::blocks::{Reasoning, assistant_content};
use spine_protocol::message::{AssistantMessage, Message};
use spine_protocol::run::Usage;

pub use init::{InitInfo, mcp_statuses};
use lines::{Scope, Turn};
use partial::{Head, Out, Partial};

/// Prints reports (`execution_started` … `execution_complete`) as `{"type":"report",…}` lines.
pub struct StreamJsonReports;

impl spine_core::reports::ReportSink for StreamJsonReports {
    fn publish(&self, report: &spine_protocol::report::Report) {
        let mut value = serde_json::to_value(report).unwrap_or(Value::Null);
        if let Some(map) = value.as_object_mut() {
            map.insert("type".into(), json!("report"));
        }
        emit(&value);
    }
}

/// Which of spine's own events the stream carries besides Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvents {
    /// Only Claude Code's events.
    Omit,
    /// Also hook, permission, model-attempt and warning lines.
    Include,
}

/// The state of one run (the main agent's, or a subagent's) between its events.
#[derive(Debug, Default)]
struct RunState {
    model: String,
    /// The current model turn's message id.
    message_id: String,
    /// The current turn's usage and stop reason, known before its message.
    usage: Option<Usage>,
    stop_reason: String,
    partial: Partial,
    requested: Option<std::time::Instant>,
}

#[derive(Debug, Default)]
struct State {
    session_id: String,
    /// By the `Agent` call that started the run; the main agent's under "".
    runs: HashMap<String, RunState>,
}

/// Prints run events as JSON lines on stdout.
pub struct StreamJsonObserver {
    init: InitInfo,
    hook_events: HookEvents,
    partial_messages: bool,
    state: Mutex<State>,
}

impl StreamJsonObserver {
    /// An observer that opens the stream with `init`.
    pub fn new(init: InitInfo, hook_events: HookEvents) -> Self {
        StreamJsonObserver { init, hook_events, partial_messages: false, state: Mutex::new(State::default()) }
    }

    /// With `on`, the model's replies also stream as `stream_event` lines
    /// (`--include-partial-messages`).
    pub fn with_partial_messages(mut self, on: bool) -> Self {
        self.partial_messages = on;
        self
    }

    /// The lines of one event of the run `origin` names (the main agent's when `None`).
    fn lines(&self, state: &mut State, origin: Option<&SubagentOrigin>, event: &RunEvent<'_>) -> Vec<Value> {
        if let (RunEvent::SessionStarted { session_id, .. }, None) = (event, origin) {
            state.session_id = (*session_id).to_owned();
        }
        let State { session_id, runs } = state;
        let scope = Scope { session_id, origin };
        let run = runs.entry(origin.map(|o| o.parent_tool_use_id.clone()).unwrap_or_default()).or_default();
        let mut out = Vec::new();
        match event {
            RunEvent::SessionStarted { model, .. } => {
                run.model = (*model).to_owned();
                if origin.is_none() {
                    out.push(self.init.line(scope.session_id, model));
                }
            }
            RunEvent::ModelRequest { .. } => {
                run.message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
                run.usage = None;
                run.partial.reset();
                run.requested = Some(std::time::Instant::now());
                if self.partial_messages && origin.is_none() {
                    out.push(lines::requesting(scope.session_id));
                }
            }
            RunEvent::ModelAttempt { report, .. } if matches!(report.outcome, AttemptOutcome::Retrying { .. }) => {
                run.partial.reset();
            }
            RunEvent::ModelReplied { usage, stop_reason, .. } => {
                run.usage = *usage;
                run.stop_reason = (*stop_reason).to_owned();
            }
            RunEvent::TextDelta { text } if self.partial_messages => {
                let head = Head { id: &run.message_id, model: &run.model };
                let pieces = run.partial.text(&head, text);
                stream_lines(scope, run, pieces, &[], &mut out);
            }
            RunEvent::StreamDelta { delta } if self.partial_messages => {
                let head = Head { id: &run.message_id, model: &run.model };
                let pieces = run.partial.delta(&head, *delta);
                stream_lines(scope, run, pieces, &[], &mut out);
            }
            RunEvent::Message { message: Message::Assistant(message) } => {
                self.assistant_lines(scope, run, message, &mut out);
            }
            RunEvent::Message { message: Message::Tool(result) } => out.push(lines::tool_result(scope, result)),
            RunEvent::Message { message: Message::User { content, images } } if origin.is_some() => {
                out.push(lines::subagent_prompt(scope, content, images));
            }
            _ => {}
        }
        if self.hook_events == HookEvents::Include
            && let Some(line) = lines::hook_event_line(event, scope.session_id)
        {
            out.push(scope.tag(line));
        }
        out
    }

    /// The `assistant` lines of a model turn, one per content block; with partial messages,
    /// between the end of its stream events.
    fn assistant_lines(&self, scope: Scope<'_>, run: &mut RunState, message: &AssistantMessage, out: &mut Vec<Value>) {
        if run.message_id.is_empty() {
            run.message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
        }
        let content = assistant_content(message, Reasoning::Readable);
        if self.partial_messages {
            let head = Head { id: &run.message_id, model: &run.model };
            let pieces = run.partial.finish(&head, &content, &run.stop_reason, lines::usage_json(run.usage));
            stream_lines(scope, run, pieces, &content, out);
            return;
        }
        let turn = Turn { id: &run.message_id, model: &run.model, usage: run.usage };
        for block in content {
            out.push(lines::assistant(scope, &turn, block));
        }
    }
}

/// The lines of streamed pieces: `stream_event` lines (`message_start` with `ttft_ms`, the
/// time since the request), and the `assistant` lines of `content`'s blocks where they fall.
fn stream_lines(scope: Scope<'_>, run: &RunState, pieces: Vec<Out>, content: &[Value], out: &mut Vec<Value>) {
    let turn = Turn { id: &run.message_id, model: &run.model, usage: run.usage };
    for piece in pieces {
        match piece {
            Out::Event(event) => {
                let first = event["type"] == "message_start";
                let mut line = lines::stream_event(scope, &run.message_id, event);
                if let (true, Some(requested), Some(map)) = (first, run.requested, line.as_object_mut()) {
                    map.insert("ttft_ms".into(), json!(u64::try_from(requested.elapsed().as_millis()).unwrap_or(0)));
                }
                out.push(line);
            }
            Out::Assistant(i) => {
                if let Some(block) = content.get(i) {
                    out.push(lines::assistant(scope, &turn, block.clone()));
                }
            }
        }
    }
}

/// The innermost run an event happened in: the subagent that reported it (`None`: the main
/// agent), and the event as that run reported it.
fn innermost<'e>(mut event: &'e RunEvent<'e>) -> (Option<&'e SubagentOrigin>, &'e RunEvent<'e>) {
    let mut origin = None;
    while let RunEvent::Subagent { origin: o, event: inner } = event {
        origin = Some(*o);
        event = inner;
    }
    (origin, event)
}

/// Writes one JSON line to stdout.
pub fn emit(value: &Value) {
    let _ = crate::out::line(value);
}

impl RunObserver for StreamJsonObserver {
    fn on_event(&self, event: &RunEvent<'_>) {
        let (origin, event) = innermost(event);
        let mut state = match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Written under the lock: each run's lines keep their order.
        for line in self.lines(&mut state, origin, event) {
            emit(&line);
        }
    }
}
