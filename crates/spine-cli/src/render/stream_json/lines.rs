//! The lines of the stream other than `init` and `stream_event`: Claude Code's `assistant` and
//! `user` lines, its hook lines, and spine's own lines (see the parent module's table).

use serde_json::{Map, Value, json};
use spine_core::hooks::raw::{HookRaw, HookRunOutcome};
use spine_core::model::AttemptOutcome;
use spine_core::observer::{RunEvent, SubagentOrigin};
use spine_core::session::blocks::tool_result_block;
use spine_core::session::timestamp_now;
use spine_protocol::hook::HookEventName;
use spine_protocol::message::{ImageBlock, Message, ToolResultMessage};
use spine_protocol::run::Usage;
use spine_protocol::trace::AttemptResult;

/// Who a line is about: the session, and the subagent when the event happened in one.
#[derive(Clone, Copy)]
pub(super) struct Scope<'a> {
    /// The session id.
    pub session_id: &'a str,
    /// The subagent, when the event is one of a subagent's.
    pub origin: Option<&'a SubagentOrigin>,
}

impl Scope<'_> {
    /// `parent_tool_use_id`: the subagent's `Agent` call, else null.
    fn parent(&self) -> Value {
        self.origin.map_or(Value::Null, |o| json!(o.parent_tool_use_id))
    }

    /// Claude Code's fields of a message line: `parent_tool_use_id` (and a subagent's
    /// `agent_id`), `session_id`, `uuid`, `timestamp` (and a subagent's `subagent_type` and
    /// `task_description`).
    fn message_fields(&self, line: &mut Map<String, Value>) {
        line.insert("parent_tool_use_id".into(), self.parent());
        if let Some(origin) = self.origin {
            line.insert("agent_id".into(), json!(origin.agent_id));
        }
        line.insert("session_id".into(), json!(self.session_id));
        line.insert("uuid".into(), json!(uuid::Uuid::new_v4().to_string()));
        line.insert("timestamp".into(), json!(timestamp_now()));
        if let Some(origin) = self.origin {
            line.insert("subagent_type".into(), json!(origin.agent_type));
            line.insert("task_description".into(), json!(origin.description));
        }
    }

    /// A hook or spine line fired inside a subagent gets its `parent_tool_use_id` (Claude Code
    /// 2.1.328's hook lines carry none).
    pub fn tag(&self, mut line: Value) -> Value {
        if let (Some(origin), Some(map)) = (self.origin, line.as_object_mut()) {
            map.insert("parent_tool_use_id".into(), json!(origin.parent_tool_use_id));
        }
        line
    }
}

/// Claude Code's usage object of a model turn: uncached input, output, cache writes and reads
/// (zeros when the provider reported none).
pub(super) fn usage_json(usage: Option<Usage>) -> Value {
    let u = usage.unwrap_or_default();
    json!({
        "input_tokens": u.uncached_input_tokens(),
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
    })
}

/// The message a model turn's lines share.
pub(super) struct Turn<'a> {
    /// The message id (the same on every line of the turn and in its stream events).
    pub id: &'a str,
    /// The model's name.
    pub model: &'a str,
    /// The turn's usage.
    pub usage: Option<Usage>,
}

/// One `assistant` line: one content block of a model turn (Claude Code writes a line per
/// block, each with the turn's message id).
pub(super) fn assistant(scope: Scope<'_>, turn: &Turn<'_>, block: Value) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), json!("assistant"));
    line.insert(
        "message".into(),
        json!({
            "id": turn.id,
            "type": "message",
            "role": "assistant",
            "model": turn.model,
            "content": [block],
            "stop_reason": Value::Null,
            "stop_sequence": Value::Null,
            "usage": usage_json(turn.usage),
            "context_management": Value::Null,
        }),
    );
    scope.message_fields(&mut line);
    Value::Object(line)
}

/// The `user` line of a tool result (once: there is no second copy of a result).
pub(super) fn tool_result(scope: Scope<'_>, result: &ToolResultMessage) -> Value {
    user(scope, vec![tool_result_block(result)])
}

/// The `user` line of a subagent's prompt (or of a user turn a hook forced in it): a text
/// block, then its images.
pub(super) fn subagent_prompt(scope: Scope<'_>, text: &str, images: &[ImageBlock]) -> Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    content.extend(images.iter().map(ImageBlock::to_claude_block));
    user(scope, content)
}

fn user(scope: Scope<'_>, content: Vec<Value>) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), json!("user"));
    line.insert("message".into(), json!({"role": "user", "content": content}));
    scope.message_fields(&mut line);
    Value::Object(line)
}

/// A `stream_event` line (`--include-partial-messages`).
pub(super) fn stream_event(scope: Scope<'_>, message_id: &str, event: Value) -> Value {
    json!({
        "type": "stream_event",
        "event": event,
        "session_id": scope.session_id,
        "parent_tool_use_id": scope.parent(),
        "uuid": uuid::Uuid::new_v4().to_string(),
        "api_message_id": message_id,
    })
}

/// Claude Code's `status` line before a model request (with partial messages).
pub(super) fn requesting(session_id: &str) -> Value {
    json!({
        "type": "system",
        "subtype": "status",
        "status": "requesting",
        "session_id": session_id,
        "uuid": uuid::Uuid::new_v4().to_string(),
    })
}

/// The lines of `--include-hook-events`: Claude Code's hook lines, then spine's own; `None`
/// for the events that have no such line.
pub(super) fn hook_event_line(event: &RunEvent<'_>, session_id: &str) -> Option<Value> {
    Some(match *event {
        RunEvent::HookStarted { event, hook_id, hook_name, execution } => json!({
            "type": "system",
            "subtype": "hook_started",
            "hook_id": execution,
            "hook_name": hook_name,
            "hook_event": event,
            "uuid": uuid::Uuid::new_v4().to_string(),
            "session_id": session_id,
            "spine_hook_id": hook_id,
        }),
        RunEvent::HookEnded { event, hook_id, hook_name, execution, outcome, raw } => {
            hook_ended(HookLine { event, hook_id, hook_name, execution }, outcome, raw, session_id)
        }
        RunEvent::HookAnswered { event, hook_id, decision } => {
            json!({"type": "hook_answer", "event": event, "hook_id": hook_id, "decision": decision})
        }
        RunEvent::Permission { tool_name, decision } => {
            json!({"type": "permission", "tool_name": tool_name, "decision": decision})
        }
        RunEvent::ModelRequest { turn } => json!({"type": "model_request", "turn": turn}),
        RunEvent::ModelReplied { turn, usage, stop_reason } => {
            json!({"type": "model_reply", "turn": turn, "usage": usage, "stop_reason": stop_reason})
        }
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
        | RunEvent::StreamDelta { .. }
        | RunEvent::Subagent { .. }
        | RunEvent::Message { .. }
        | RunEvent::ToolResult { .. } => return None,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> SubagentOrigin {
        SubagentOrigin {
            parent_tool_use_id: "call_1".into(),
            agent_id: "a1".into(),
            agent_type: "general-purpose".into(),
            description: "sub".into(),
        }
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
    }

    #[test]
    fn a_subagents_message_lines_carry_its_call_agent_type_and_description_and_the_main_agents_do_not() {
        let turn = Turn { id: "msg_1", model: "m", usage: None };
        let main = assistant(Scope { session_id: "s", origin: None }, &turn, json!({"type": "text", "text": "x"}));
        assert_eq!(keys(&main), ["type", "message", "parent_tool_use_id", "session_id", "uuid", "timestamp"]);
        assert_eq!(main["parent_tool_use_id"], Value::Null);
        let o = origin();
        let sub = assistant(Scope { session_id: "s", origin: Some(&o) }, &turn, json!({"type": "text", "text": "x"}));
        assert_eq!(
            keys(&sub),
            [
                "type",
                "message",
                "parent_tool_use_id",
                "agent_id",
                "session_id",
                "uuid",
                "timestamp",
                "subagent_type",
                "task_description"
            ]
        );
        assert_eq!(sub["parent_tool_use_id"], "call_1");
        assert_eq!(sub["message"]["usage"]["output_tokens"], 0);
    }

    #[test]
    fn a_hook_line_is_tagged_with_the_subagents_call_only_inside_a_subagent() {
        let o = origin();
        let line = json!({"type": "system", "subtype": "hook_started"});
        assert_eq!(Scope { session_id: "s", origin: None }.tag(line.clone()).get("parent_tool_use_id"), None);
        assert_eq!(Scope { session_id: "s", origin: Some(&o) }.tag(line)["parent_tool_use_id"], "call_1");
    }
}
