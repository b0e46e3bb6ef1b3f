//! `--output-format stream-json`: one JSON object per line on stdout as the run goes, then the
//! result object. Event types: `session_start`, `hook`, `hook_answer`, `permission`,
//! `model_request`, `model_attempt` (one per attempt of a model request), `message`,
//! `tool_result`, `system_message`, `warning`, `report` (the execution reports of
//! docs/pipeline.md), `result`.

use serde_json::{Value, json};
use spine_core::model::AttemptOutcome;
use spine_core::observer::{RunEvent, RunObserver};
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

/// Prints run events as JSON lines on stdout.
#[derive(Default)]
pub struct StreamJsonObserver;

/// Writes one JSON line to stdout.
pub fn emit(value: &Value) {
    let _ = crate::out::line(value);
}

impl RunObserver for StreamJsonObserver {
    fn on_event(&self, event: &RunEvent<'_>) {
        let value = match *event {
            RunEvent::SessionStarted { session_id, model } => {
                json!({"type": "session_start", "session_id": session_id, "model": model})
            }
            RunEvent::HookFired { event, tool_name, status } => {
                json!({"type": "hook", "event": event, "tool_name": tool_name, "status": status})
            }
            RunEvent::HookAnswered { event, hook_id, decision } => {
                json!({"type": "hook_answer", "event": event, "hook_id": hook_id, "decision": decision})
            }
            RunEvent::Permission { tool_name, decision } => {
                json!({"type": "permission", "tool_name": tool_name, "decision": decision})
            }
            RunEvent::ModelRequest { turn } => json!({"type": "model_request", "turn": turn}),
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
            RunEvent::TextDelta { .. } => return,
            RunEvent::Message { message } => json!({"type": "message", "message": message}),
            RunEvent::ToolResult { result } => json!({"type": "tool_result", "result": result}),
            RunEvent::SystemMessage { hook_id, text } => {
                json!({"type": "system_message", "hook_id": hook_id, "text": text})
            }
            RunEvent::Warning { text } => json!({"type": "warning", "text": text}),
        };
        emit(&value);
    }
}
