//! Decoding a delivery's bytes into a [`MailboxItem`], step by step, so that every delivery
//! gets a report:
//!
//! 1. The [`Identity`] is read leniently first (`item_id`, else the delivery id;
//!    `logical_work_id`, else the item id; `attempt_no`, else 1; the task's conversation and
//!    turn), so that even an item too broken to decode is reported under a stable name.
//! 2. An unknown `item_type`, `payload.request_kind` or `task_payload.mode` is a
//!    [`Rejection::Unsupported`] (`unsupported_request_kind`).
//! 3. Anything else wrong — not JSON, missing or mistyped fields, another `protocol_version`,
//!    a transcript role that is not `system`/`user`/`assistant` — is a [`Rejection::Invalid`]
//!    (`validation_error`) whose message names the JSON path.
//!
//! Dependencies: none within the crate.

use serde::de::DeserializeOwned;
use serde_json::Value;
use spine_core::stages::prepare_turn::normalize_transcript;
use spine_protocol::assignment::{
    ClosePayload, ItemEnvelope, ItemRequest, ItemType, MailboxItem, PROTOCOL_VERSION, RequestKind, RequestPayload,
    TaskPayload, check_item_id,
};

/// Who a delivery's reports are about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The item id, or the delivery id when the item has none.
    pub item_id: String,
    /// The logical work id, or the item id.
    pub logical_work_id: String,
    /// The envelope's attempt (1 when absent); deliveries raise it.
    pub attempt_no: u32,
    /// `payload.task.conversation_id`, when readable.
    pub conversation_id: Option<String>,
    /// `payload.task.turn_id`, when readable.
    pub turn_id: Option<String>,
    /// How a rejection is reported: as an agent-program failure (with this request kind) or
    /// as an execution failure.
    pub program_request: Option<String>,
}

/// Why an item is not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Malformed: `validation_error`.
    Invalid(String),
    /// An unknown kind: `unsupported_request_kind`.
    Unsupported(String),
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::Invalid(m) => write!(f, "invalid item: {m}"),
            Rejection::Unsupported(m) => write!(f, "unsupported request kind: {m}"),
        }
    }
}

/// A decoded delivery.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// Who the reports are about.
    pub identity: Identity,
    /// The item, or why it is not run.
    pub item: Result<MailboxItem, Rejection>,
}

/// Decodes a delivery.
pub fn decode(body: &[u8], delivery_id: &str) -> Decoded {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Decoded {
                identity: fallback_identity(delivery_id),
                item: Err(Rejection::Invalid(format!("the item is not JSON: {e}"))),
            };
        }
    };
    let identity = identify(&value, delivery_id);
    let item = decode_value(value);
    Decoded { identity, item }
}

fn fallback_identity(delivery_id: &str) -> Identity {
    Identity {
        item_id: delivery_id.to_owned(),
        logical_work_id: delivery_id.to_owned(),
        attempt_no: 1,
        conversation_id: None,
        turn_id: None,
        program_request: None,
    }
}

fn text_at<'v>(v: &'v Value, pointer: &str) -> Option<&'v str> {
    v.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn identify(v: &Value, delivery_id: &str) -> Identity {
    let item_id = text_at(v, "/item_id").unwrap_or(delivery_id).to_owned();
    let program = v.get("item_type").and_then(Value::as_str) == Some(ItemType::AgentProgramRequest.as_str());
    Identity {
        logical_work_id: text_at(v, "/logical_work_id").unwrap_or(&item_id).to_owned(),
        attempt_no: v
            .get("attempt_no")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n >= 1)
            .unwrap_or(1),
        conversation_id: text_at(v, "/payload/task/conversation_id").map(str::to_owned),
        turn_id: text_at(v, "/payload/task/turn_id").map(str::to_owned),
        program_request: program.then(|| text_at(v, "/payload/request_kind").unwrap_or("unknown").to_owned()),
        item_id,
    }
}

/// Deserialises with the failing JSON path in the message (`prefix` names where `value` is).
fn typed<T: DeserializeOwned>(value: Value, prefix: &str) -> Result<T, Rejection> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let at = match (prefix.is_empty(), path.as_str()) {
            (true, ".") => "the item".to_owned(),
            (false, ".") => prefix.to_owned(),
            (true, p) => p.to_owned(),
            (false, p) => format!("{prefix}.{p}"),
        };
        Rejection::Invalid(format!("{at}: {}", e.into_inner()))
    })
}

fn decode_value(value: Value) -> Result<MailboxItem, Rejection> {
    if !value.is_object() {
        return Err(Rejection::Invalid("the item must be a JSON object".into()));
    }
    let item_type = match value.get("item_type") {
        None | Some(Value::Null) => ItemType::ExecutionAssignment,
        Some(Value::String(name)) => ItemType::parse(name).ok_or_else(|| {
            Rejection::Unsupported(format!(
                "item_type `{name}` (supported: {})",
                ItemType::ALL.map(ItemType::as_str).join(", ")
            ))
        })?,
        Some(_) => return Err(Rejection::Invalid("item_type: must be a string".into())),
    };
    let payload = value.get("payload");
    if let Some(p) = payload.filter(|p| p.is_object()) {
        check_version(p)?;
        check_kinds(item_type, p)?;
    }
    let envelope: ItemEnvelope = typed(value, "")?;
    if envelope.attempt_no == 0 {
        return Err(Rejection::Invalid("attempt_no: must be at least 1".into()));
    }
    for (field, text) in [
        ("item_id", &envelope.item_id),
        ("protocol_message_id", &envelope.protocol_message_id),
        ("logical_work_id", &envelope.logical_work_id),
    ] {
        if text.is_empty() {
            return Err(Rejection::Invalid(format!("{field}: must not be empty")));
        }
    }
    check_item_id(&envelope.item_id).map_err(|e| Rejection::Invalid(format!("item_id: {e}")))?;
    if !envelope.payload.is_object() {
        return Err(Rejection::Invalid("payload: must be an object".into()));
    }
    let request = match item_type {
        ItemType::ResourceCloseRequest => ItemRequest::Close(typed::<ClosePayload>(envelope.payload, "payload")?),
        ItemType::ExecutionAssignment | ItemType::AgentProgramRequest => {
            let payload: RequestPayload = typed(envelope.payload, "payload")?;
            check_transcript(&payload)?;
            request_of(item_type, payload)?
        }
    };
    Ok(MailboxItem {
        item_id: envelope.item_id,
        protocol_message_id: envelope.protocol_message_id,
        logical_work_id: envelope.logical_work_id,
        attempt_no: envelope.attempt_no,
        traceparent: envelope.traceparent,
        tracestate: envelope.tracestate,
        request,
    })
}

fn check_version(payload: &Value) -> Result<(), Rejection> {
    match payload.get("protocol_version") {
        None | Some(Value::Null) => {
            Err(Rejection::Invalid(format!("payload.protocol_version: missing (expected `{PROTOCOL_VERSION}`)")))
        }
        Some(Value::String(v)) if v == PROTOCOL_VERSION => Ok(()),
        Some(Value::String(v)) => Err(Rejection::Invalid(format!(
            "payload.protocol_version: unknown protocol version `{v}` (this worker speaks `{PROTOCOL_VERSION}`)"
        ))),
        Some(_) => Err(Rejection::Invalid("payload.protocol_version: must be a string".into())),
    }
}

/// Unknown request kinds and modes are unsupported, not malformed.
fn check_kinds(item_type: ItemType, payload: &Value) -> Result<(), Rejection> {
    if let Some(Value::String(kind)) = payload.get("request_kind") {
        let valid = RequestKind::valid_for(item_type);
        let known = match item_type {
            ItemType::ResourceCloseRequest => kind == item_type.as_str(),
            ItemType::ExecutionAssignment | ItemType::AgentProgramRequest => {
                RequestKind::parse(kind).is_some_and(|k| valid.contains(&k))
            }
        };
        if !known {
            let names: Vec<&str> = match item_type {
                ItemType::ResourceCloseRequest => vec![item_type.as_str()],
                ItemType::ExecutionAssignment | ItemType::AgentProgramRequest => {
                    valid.iter().map(|k| k.as_str()).collect()
                }
            };
            return Err(Rejection::Unsupported(format!(
                "request_kind `{kind}` for item_type `{}` (supported: {})",
                item_type.as_str(),
                names.join(", ")
            )));
        }
    }
    if item_type == ItemType::ExecutionAssignment
        && let Some(Value::String(mode)) = payload.pointer("/task_payload/mode")
        && !TaskPayload::MODES.contains(&mode.as_str())
    {
        return Err(Rejection::Unsupported(format!(
            "task_payload.mode `{mode}` (supported: {})",
            TaskPayload::MODES.join(", ")
        )));
    }
    Ok(())
}

fn check_transcript(payload: &RequestPayload) -> Result<(), Rejection> {
    let values: Vec<Value> =
        payload.context_messages.iter().map(|m| serde_json::json!({"role": m.role, "content": m.content})).collect();
    normalize_transcript(&values).map(drop).map_err(|e| Rejection::Invalid(format!("payload.{e}")))
}

fn request_of(item_type: ItemType, mut payload: RequestPayload) -> Result<ItemRequest, Rejection> {
    match item_type {
        ItemType::ExecutionAssignment => {
            let task = payload.task_payload.take().ok_or_else(|| {
                Rejection::Invalid("payload.task_payload: required for an execution_assignment".into())
            })?;
            Ok(ItemRequest::Execution { payload: Box::new(payload), task })
        }
        ItemType::AgentProgramRequest => match payload.request_kind {
            None | Some(RequestKind::ExecutionAssignment) => Err(Rejection::Invalid(
                "payload.request_kind: required for an agent_program_request (prepare_round or execute_program_tool)"
                    .into(),
            )),
            Some(RequestKind::PrepareRound) => Ok(ItemRequest::PrepareRound { payload: Box::new(payload) }),
            Some(RequestKind::ExecuteProgramTool) => {
                let call = payload.program_tool_call.take().ok_or_else(|| {
                    Rejection::Invalid("payload.program_tool_call: required for execute_program_tool".into())
                })?;
                Ok(ItemRequest::ExecuteProgramTool { payload: Box::new(payload), call })
            }
        },
        ItemType::ResourceCloseRequest => {
            Err(Rejection::Invalid("internal: a close request has no request payload".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn example() -> Value {
        spine_protocol::assignment::example_item("item-0001")
    }

    fn run(v: &Value) -> Decoded {
        decode(v.to_string().as_bytes(), "sqlite-7")
    }

    #[test]
    fn the_pipeline_example_decodes_into_a_deterministic_tool_call() {
        let d = run(&example());
        let item = d.item.expect("decodes");
        assert_eq!(item.item_id, "item-0001");
        let ItemRequest::Execution { task, .. } = item.request else { panic!("execution") };
        assert_eq!(task.mode(), "deterministic_tool_call");
        assert_eq!(d.identity.conversation_id.as_deref(), Some("conv-1"));
    }

    #[test]
    fn a_missing_item_type_means_execution_assignment() {
        let mut v = example();
        v.as_object_mut().map(|m| m.remove("item_type"));
        assert!(matches!(run(&v).item.map(|i| i.request.item_type()), Ok(ItemType::ExecutionAssignment)));
    }

    #[test]
    fn unknown_kinds_are_unsupported_not_invalid() {
        for (pointer, value) in [
            ("/item_type", json!("capabilities_refresh_request")),
            ("/payload/request_kind", json!("prepare_round")),
            ("/payload/task_payload/mode", json!("raise_error")),
        ] {
            let mut v = example();
            *v.pointer_mut(pointer).expect("pointer") = value;
            assert!(matches!(run(&v).item, Err(Rejection::Unsupported(_))), "{pointer}");
        }
    }

    #[test]
    fn malformed_items_are_invalid_with_the_path_named() {
        let not_json = decode(b"{nope", "nats-3");
        assert_eq!(not_json.identity.item_id, "nats-3");
        assert!(matches!(not_json.item, Err(Rejection::Invalid(ref m)) if m.contains("not JSON")));
        let cases = [
            ("/payload/task/turn_id", None, "payload.task"),
            ("/payload/task/conversation_id", Some(json!(5)), "payload.task.conversation_id"),
            ("/payload/protocol_version", Some(json!("agent-program/2026-04-01")), "unknown protocol version"),
            ("/attempt_no", Some(json!("one")), "attempt_no"),
            ("/payload/context_messages", Some(json!([{"role": "tool", "content": "x"}])), "unsupported role"),
            ("/payload/task_payload", None, "payload.task_payload: required"),
        ];
        for (pointer, value, expected) in cases {
            let mut v = example();
            match value {
                Some(value) => *v.pointer_mut(pointer).expect("pointer") = value,
                None => {
                    let (parent, key) = pointer.rsplit_once('/').expect("parent");
                    v.pointer_mut(parent).and_then(Value::as_object_mut).map(|m| m.remove(key));
                }
            }
            let d = run(&v);
            assert_eq!(d.identity.item_id, "item-0001");
            match d.item {
                Err(Rejection::Invalid(m)) => assert!(m.contains(expected), "{pointer}: {m}"),
                other => panic!("{pointer}: {other:?}"),
            }
        }
    }

    #[test]
    fn program_requests_are_reported_as_program_failures() {
        let mut v = example();
        v["item_type"] = json!("agent_program_request");
        v["payload"]["request_kind"] = json!("summon_dragon");
        let d = run(&v);
        assert_eq!(d.identity.program_request.as_deref(), Some("summon_dragon"));
        assert!(matches!(d.item, Err(Rejection::Unsupported(_))));
    }
}
