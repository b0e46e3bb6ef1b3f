//! A turn's `result` line as the SDKs read it: Claude Code's subtypes, its `uuid` and `errors`,
//! and the session's cost and usage so far; and the line Claude Code writes before the result of
//! an interrupted turn.

use serde_json::{Map, Value, json};
use spine_core::runner::RunOutcome;
use spine_protocol::message::Message;
use spine_protocol::run::RunSubtype;

/// What a session's results add up to.
#[derive(Default)]
pub(crate) struct Totals {
    cost_usd: f64,
    model_usage: Map<String, Value>,
}

impl Totals {
    /// Adds a turn's result and writes the session's totals into it, as Claude Code's results
    /// carry them (`total_cost_usd` and `modelUsage` since the session started; `usage` stays
    /// the turn's).
    pub(crate) fn add(&mut self, result: &mut Value) {
        let Some(map) = result.as_object_mut() else { return };
        self.cost_usd += map.get("total_cost_usd").and_then(Value::as_f64).unwrap_or(0.0);
        if let Some(Value::Object(usage)) = map.get("modelUsage") {
            for (model, fields) in usage {
                let total = self.model_usage.entry(model.clone()).or_insert_with(|| json!({}));
                if let (Some(total), Some(fields)) = (total.as_object_mut(), fields.as_object()) {
                    for (key, value) in fields {
                        let sum = match (total.get(key).and_then(Value::as_f64), value.as_f64()) {
                            (Some(a), Some(b)) if value.is_u64() => json!((a + b) as u64),
                            (Some(a), Some(b)) => json!(a + b),
                            _ => value.clone(),
                        };
                        total.insert(key.clone(), sum);
                    }
                }
            }
        }
        map.insert("total_cost_usd".to_owned(), json!(self.cost_usd));
        map.insert("modelUsage".to_owned(), Value::Object(self.model_usage.clone()));
    }
}

/// A turn's result as the SDKs know it: spine's `canceled` (an interrupt) and `blocked` (a hook
/// stopped the turn) are Claude Code's `error_during_execution`, the spine subtype kept in
/// `spine_subtype`; it has a `uuid` (the Python SDK reads it) and, when it is an error, Claude
/// Code's `errors` (the TypeScript SDK builds its "returned an error result" message from them):
/// spine's message.
pub(crate) fn sdk_result(mut result: Value) -> Value {
    if let Some(map) = result.as_object_mut() {
        if let Some(subtype) = map.get("subtype").and_then(Value::as_str).map(str::to_owned)
            && (subtype == "canceled" || subtype == "blocked")
        {
            map.insert("subtype".to_owned(), json!("error_during_execution"));
            map.insert("spine_subtype".to_owned(), json!(subtype));
        }
        if map.get("is_error") == Some(&json!(true)) && !map.contains_key("errors") {
            let message = map.get("result").and_then(Value::as_str).unwrap_or_default().to_owned();
            map.insert("errors".to_owned(), json!([message]));
        }
        map.insert("uuid".to_owned(), json!(uuid::Uuid::new_v4().to_string()));
    }
    result
}

/// The `user` line Claude Code writes before an interrupted turn's result:
/// `[Request interrupted by user for tool use]` when the turn ended on its tool results,
/// `[Request interrupted by user]` otherwise; `None` for a turn that was not interrupted.
pub(crate) fn interrupted_line(outcome: &RunOutcome, session_id: &str) -> Option<Value> {
    if outcome.subtype != RunSubtype::Canceled {
        return None;
    }
    let text = match outcome.messages.last() {
        Some(Message::Tool(_)) => "[Request interrupted by user for tool use]",
        _ => "[Request interrupted by user]",
    };
    Some(json!({
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": null,
        "session_id": session_id,
        "uuid": uuid::Uuid::new_v4().to_string(),
        "timestamp": spine_core::session::timestamp_now(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_carry_the_sessions_cost_and_model_usage_so_far() {
        let mut totals = Totals::default();
        let turn = |cost: f64, tokens: u64| json!({"total_cost_usd": cost, "modelUsage": {"m": {"inputTokens": tokens, "costUSD": cost}}});
        let mut first = turn(0.5, 100);
        totals.add(&mut first);
        let mut second = turn(0.25, 40);
        totals.add(&mut second);
        assert_eq!(second["total_cost_usd"], 0.75);
        assert_eq!(second["modelUsage"]["m"]["inputTokens"], 140);
        assert_eq!(second["modelUsage"]["m"]["costUSD"], 0.75);
    }

    #[test]
    fn an_interrupted_turns_result_is_claude_codes_error_during_execution() {
        let result = sdk_result(json!({"subtype": "canceled", "is_error": true}));
        assert_eq!(result["subtype"], "error_during_execution");
        assert_eq!(result["spine_subtype"], "canceled");
        assert_eq!(sdk_result(json!({"subtype": "success"}))["subtype"], "success");
    }

    #[test]
    fn every_result_has_a_uuid_and_an_error_result_its_message_in_errors() {
        let error = sdk_result(json!({"subtype": "canceled", "is_error": true, "result": "canceled"}));
        assert_eq!(error["errors"], json!(["canceled"]));
        assert!(error["uuid"].as_str().is_some_and(|u| uuid::Uuid::parse_str(u).is_ok()), "{error}");
        let success = sdk_result(json!({"subtype": "success", "is_error": false, "result": "hi"}));
        assert!(success.get("errors").is_none(), "{success}");
        assert!(success["uuid"].is_string(), "{success}");
    }
}
