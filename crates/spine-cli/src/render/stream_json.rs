//! `--output-format stream-json`: one JSON object per line on stdout as the run goes, in Claude
//! Code's event stream so that its readers work unchanged:
//!
//! - `{"type":"system","subtype":"init", cwd, session_id, tools, mcp_servers, model,
//!   permissionMode, spine_version, uuid}` when the session starts;
//! - `{"type":"assistant","message":{…, "content":[thinking, text and tool_use blocks]},
//!   session_id, parent_tool_use_id, uuid}` for each model turn (Anthropic `thinking` blocks
//!   with their `signature` and `redacted_thinking` blocks as Claude Code prints them; an OpenAI
//!   reasoning item's summary as a `thinking` block without signature);
//! - `{"type":"user","message":{"role":"user","content":[one tool_result block]}, …}` for each
//!   tool result (once: there is no second copy of a result);
//! - the result object of `json`, always the last line.
//!
//! With `--include-hook-events`, Claude Code's hook lines: `{"type":"system","subtype":
//! "hook_started", hook_id, hook_name, hook_event, uuid, session_id}` when a hook starts and
//! `{"type":"system","subtype":"hook_response", hook_id, hook_name, hook_event, output, stdout,
//! stderr, exit_code?, outcome, uuid, session_id}` when it ends (`hook_id` is the firing's
//! UUID; `hook_progress` with `backgrounded: true` for a hook that went on in the background;
//! shapes recorded in `tests/fixtures/claude-code-2.1.328/stream-json-hook-events.jsonl`),
//! each with spine's `spine_hook_id` (the hook's command, URL or name). Then spine's own:
//! `hook_answer`, `permission`, `model_request`, `model_attempt`, `system_message`, `warning`
//! and `context` (hook context for the model) lines; with `--include-reports`, the execution
//! reports of docs/pipeline.md as `report` lines.

use serde_json::{Value, json};
use spine_core::hooks::raw::{HookRaw, HookRunOutcome};
use spine_core::model::AttemptOutcome;
use spine_core::observer::{RunEvent, RunObserver};
use spine_core::session::blocks::{Reasoning, assistant_content, tool_result_block};
use spine_core::session::timestamp_now;
use spine_protocol::hook::HookEventName;
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::trace::AttemptResult;

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

/// What the `init` line says about the run, known before it starts.
#[derive(Debug, Clone)]
pub struct InitInfo {
    /// The working directory.
    pub cwd: String,
    /// The tools visible to the model, by name.
    pub tools: Vec<String>,
    /// The connected MCP servers, by name.
    pub mcp_servers: Vec<String>,
    /// The permission mode, as written on the command line.
    pub permission_mode: String,
}

/// Which of spine's own events the stream carries besides Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvents {
    /// Only Claude Code's events.
    Omit,
    /// Also hook, permission, model-attempt and warning lines.
    Include,
}

/// Prints run events as JSON lines on stdout.
pub struct StreamJsonObserver {
    init: InitInfo,
    hook_events: HookEvents,
    session_id: std::sync::Mutex<String>,
    model: std::sync::Mutex<String>,
}

impl StreamJsonObserver {
    /// An observer that opens the stream with `init`.
    pub fn new(init: InitInfo, hook_events: HookEvents) -> Self {
        StreamJsonObserver {
            init,
            hook_events,
            session_id: std::sync::Mutex::new(String::new()),
            model: std::sync::Mutex::new(String::new()),
        }
    }

    fn session_id(&self) -> String {
        self.session_id.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn model(&self) -> String {
        self.model.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn assistant(&self, message: &AssistantMessage) -> Value {
        let content = assistant_content(message, Reasoning::Readable);
        json!({
            "type": "assistant",
            "message": {
                "id": format!("msg_{}", uuid::Uuid::new_v4().simple()),
                "type": "message",
                "role": "assistant",
                "model": self.model(),
                "content": content,
                "stop_reason": Value::Null,
                "stop_sequence": Value::Null,
            },
            "parent_tool_use_id": Value::Null,
            "session_id": self.session_id(),
            "uuid": uuid::Uuid::new_v4().to_string(),
        })
    }

    fn tool_result(&self, result: &ToolResultMessage) -> Value {
        json!({
            "type": "user",
            "message": {
                "role": "user",
                "content": [tool_result_block(result)],
            },
            "parent_tool_use_id": Value::Null,
            "session_id": self.session_id(),
            "uuid": uuid::Uuid::new_v4().to_string(),
            "timestamp": timestamp_now(),
        })
    }

    /// spine's own lines (`--include-hook-events`).
    fn spine_event(&self, event: &RunEvent<'_>) -> Option<Value> {
        Some(match *event {
            RunEvent::HookStarted { event, hook_id, hook_name, execution } => json!({
                "type": "system",
                "subtype": "hook_started",
                "hook_id": execution,
                "hook_name": hook_name,
                "hook_event": event,
                "uuid": uuid::Uuid::new_v4().to_string(),
                "session_id": self.session_id(),
                "spine_hook_id": hook_id,
            }),
            RunEvent::HookEnded { event, hook_id, hook_name, execution, outcome, raw } => {
                hook_ended(HookLine { event, hook_id, hook_name, execution }, outcome, raw, &self.session_id())
            }
            RunEvent::HookAnswered { event, hook_id, decision } => {
                json!({"type": "hook_answer", "event": event, "hook_id": hook_id, "decision": decision})
            }
            RunEvent::Permission { tool_name, decision } => {
                json!({"type": "permission", "tool_name": tool_name, "decision": decision})
            }
            RunEvent::ModelRequest { turn } => json!({"type": "model_request", "turn": turn}),
            RunEvent::ModelReplied { turn, usage } => json!({"type": "model_reply", "turn": turn, "usage": usage}),
            RunEvent::ModelAttempt { turn, report } => {
                let (outcome, error, wait_ms) = match report.outcome {
                    AttemptOutcome::Succeeded => (AttemptResult::Ok, None, None),
                    AttemptOutcome::Retrying { error, wait } => {
                        (AttemptResult::Retry, Some(error), Some(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)))
                    }
                    AttemptOutcome::Failed { error } => (AttemptResult::Failed, Some(error), None),
                };
                json!({
                    "type": "model_attempt",
                    "turn": turn,
                    "attempt": report.attempt,
                    "outcome": outcome.as_str(),
                    "error_kind": error.map(|e| e.kind.to_string()),
                    "error": error.map(|e| e.message.as_str()),
                    "wait_ms": wait_ms,
                })
            }
            RunEvent::Message { message: Message::Context(context) } => {
                json!({"type": "context", "event": context.event, "content": context.content})
            }
            RunEvent::SystemMessage { hook_id, text } => {
                json!({"type": "system_message", "hook_id": hook_id, "text": text})
            }
            RunEvent::Warning { text } => json!({"type": "warning", "text": text}),
            RunEvent::Note { text } => json!({"type": "note", "text": text}),
            RunEvent::HookFired { .. }
            | RunEvent::SessionStarted { .. }
            | RunEvent::TextDelta { .. }
            | RunEvent::Message { .. }
            | RunEvent::ToolResult { .. } => return None,
        })
    }
}

/// Who a `hook_response` line is about.
struct HookLine<'a> {
    event: HookEventName,
    hook_id: &'a str,
    hook_name: &'a str,
    execution: &'a str,
}

/// Claude Code's `hook_response` line (`output` is stdout then stderr, `exit_code` absent when
/// the hook has none; an HTTP hook's status stands in), or its `hook_progress` line with
/// `backgrounded: true` for a hook that went on in the background.
fn hook_ended(line: HookLine<'_>, outcome: HookRunOutcome, raw: Option<&HookRaw>, session_id: &str) -> Value {
    let empty = HookRaw::default();
    let raw = raw.unwrap_or(&empty);
    let mut value = json!({
        "type": "system",
        "subtype": "hook_response",
        "hook_id": line.execution,
        "hook_name": line.hook_name,
        "hook_event": line.event,
        "output": format!("{}{}", raw.stdout, raw.stderr),
        "stdout": raw.stdout,
        "stderr": raw.stderr,
    });
    if let Some(map) = value.as_object_mut() {
        if outcome == HookRunOutcome::Background {
            map.insert("subtype".into(), json!("hook_progress"));
            map.insert("backgrounded".into(), json!(true));
        } else {
            if let Some(code) = raw.exit_code.or(raw.http_status.map(i32::from)) {
                map.insert("exit_code".into(), json!(code));
            }
            map.insert("outcome".into(), json!(outcome.as_str()));
        }
        map.insert("uuid".into(), json!(uuid::Uuid::new_v4().to_string()));
        map.insert("session_id".into(), json!(session_id));
        map.insert("spine_hook_id".into(), json!(line.hook_id));
    }
    value
}

/// Writes one JSON line to stdout.
pub fn emit(value: &Value) {
    let _ = crate::out::line(value);
}

impl RunObserver for StreamJsonObserver {
    fn on_event(&self, event: &RunEvent<'_>) {
        let value = match event {
            RunEvent::SessionStarted { session_id, model } => {
                if let Ok(mut s) = self.session_id.lock() {
                    *s = (*session_id).to_owned();
                }
                if let Ok(mut m) = self.model.lock() {
                    *m = (*model).to_owned();
                }
                let mcp: Vec<Value> =
                    self.init.mcp_servers.iter().map(|name| json!({"name": name, "status": "connected"})).collect();
                Some(json!({
                    "type": "system",
                    "subtype": "init",
                    "cwd": self.init.cwd,
                    "session_id": session_id,
                    "tools": self.init.tools,
                    "mcp_servers": mcp,
                    "model": model,
                    "permissionMode": self.init.permission_mode,
                    "spine_version": env!("CARGO_PKG_VERSION"),
                    "uuid": uuid::Uuid::new_v4().to_string(),
                }))
            }
            RunEvent::Message { message: Message::Assistant(a) } => Some(self.assistant(a)),
            RunEvent::Message { message: Message::Tool(result) } => Some(self.tool_result(result)),
            other => match self.hook_events {
                HookEvents::Include => self.spine_event(other),
                HookEvents::Omit => None,
            },
        };
        if let Some(value) = value {
            emit(&value);
        }
    }
}
