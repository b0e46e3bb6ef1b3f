//! The result object of `--output-format json` (and the last line of stream-json):
//! `{"type":"result","subtype","is_error","result","session_id","num_turns","messages","usage",
//! "duration_ms"}` plus `stop_reason` and `deferred_tool_use` when they apply.

use serde_json::{Value, json};
use spine_core::runner::RunOutcome;

/// Builds the result object.
pub fn result_json(outcome: &RunOutcome, duration_ms: u64) -> Value {
    let mut v = json!({
        "type": "result",
        "subtype": outcome.subtype,
        "is_error": outcome.subtype.is_error(),
        "result": outcome.result,
        "session_id": outcome.session_id,
        "num_turns": outcome.num_turns,
        "messages": outcome.messages,
        "usage": outcome.usage,
        "duration_ms": duration_ms,
    });
    if let Some(map) = v.as_object_mut() {
        if let Some(reason) = &outcome.stop_reason {
            map.insert("stop_reason".into(), json!(reason));
        }
        if let Some(call) = &outcome.deferred {
            map.insert("deferred_tool_use".into(), json!(call));
        }
    }
    v
}
