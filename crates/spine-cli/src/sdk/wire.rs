//! The lines of the Agent SDK protocol (Claude Code's stream-json input and its control
//! messages), as spine reads and writes them.
//!
//! Contract of [`parse`]: one stdin line is one message; a line that is not a JSON object, has
//! no known `type`, or lacks a field its type needs is [`Inbound::Malformed`] with the reason
//! (the session answers it and goes on); an empty line is nothing. Unknown fields are ignored,
//! as a newer SDK may send more.

use serde_json::{Map, Value, json};
use spine_protocol::message::ImageBlock;

/// A message read from the host.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A user message: a prompt for a turn.
    User(UserLine),
    /// A request the host makes of spine.
    Request {
        /// The host's id, echoed in the response.
        id: String,
        /// `subtype` and its fields.
        body: Map<String, Value>,
    },
    /// The host's answer to one of spine's requests.
    Response {
        /// spine's request id.
        id: String,
        /// The `response` of a success, or the `error` text.
        result: Result<Value, String>,
    },
    /// The host gives up one of its requests (spine answers them at once: nothing to withdraw).
    Cancel,
    /// `keep_alive`: nothing to do.
    KeepAlive,
    /// `update_environment_variables`, which spine does not apply.
    Environment,
    /// A line spine cannot use, and why; its request id when it had one.
    Malformed {
        /// Why.
        reason: String,
        /// The `request_id` the line carried, if any.
        request_id: Option<String>,
    },
}

/// A user message.
#[derive(Debug, Clone)]
pub(crate) struct UserLine {
    /// The text blocks, joined by newlines.
    pub text: String,
    /// The image blocks.
    pub images: Vec<ImageBlock>,
    /// The line as received (written back with `--replay-user-messages`).
    pub raw: Value,
}

/// Reads one stdin line; `None` for a blank line.
pub(crate) fn parse(line: &str) -> Option<Inbound> {
    if line.trim().is_empty() {
        return None;
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => return Some(malformed(format!("not JSON: {e}"), None)),
    };
    let Value::Object(map) = value else {
        return Some(malformed("a line must be a JSON object".to_owned(), None));
    };
    let request_id = map.get("request_id").and_then(Value::as_str).map(str::to_owned);
    Some(match map.get("type").and_then(Value::as_str) {
        Some("user") => match user_line(&map) {
            Ok(user) => Inbound::User(user),
            Err(reason) => malformed(reason, None),
        },
        Some("control_request") => match (request_id, map.get("request")) {
            (Some(id), Some(Value::Object(body))) if body.get("subtype").and_then(Value::as_str).is_some() => {
                Inbound::Request { id, body: body.clone() }
            }
            (Some(id), _) => {
                malformed("a control_request needs a `request` object with a `subtype`".to_owned(), Some(id))
            }
            (None, _) => malformed("a control_request needs a string `request_id`".to_owned(), None),
        },
        Some("control_response") => match response(&map) {
            Ok(inbound) => inbound,
            Err(reason) => malformed(reason, None),
        },
        Some("control_cancel_request") => match request_id {
            Some(_) => Inbound::Cancel,
            None => malformed("a control_cancel_request needs a string `request_id`".to_owned(), None),
        },
        Some("keep_alive") => Inbound::KeepAlive,
        Some("update_environment_variables") => Inbound::Environment,
        Some(other) => malformed(format!("unknown message type `{other}`"), request_id),
        None => malformed("a line needs a string `type`".to_owned(), request_id),
    })
}

fn malformed(reason: String, request_id: Option<String>) -> Inbound {
    Inbound::Malformed { reason, request_id }
}

/// `{"type":"user","message":{"role":"user","content": TEXT | [blocks]}}`.
fn user_line(map: &Map<String, Value>) -> Result<UserLine, String> {
    let Some(Value::Object(message)) = map.get("message") else {
        return Err("a user line needs a `message` object".to_owned());
    };
    let mut text = Vec::new();
    let mut images = Vec::new();
    match message.get("content") {
        Some(Value::String(s)) => text.push(s.clone()),
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => match block.get("text").and_then(Value::as_str) {
                        Some(t) => text.push(t.to_owned()),
                        None => return Err(format!("message.content[{i}].text must be a string")),
                    },
                    Some("image") => images.push(image(block).map_err(|e| format!("message.content[{i}]: {e}"))?),
                    Some(other) => return Err(format!("message.content[{i}]: unsupported block type `{other}`")),
                    None => return Err(format!("message.content[{i}] needs a string `type`")),
                }
            }
        }
        _ => return Err("message.content must be a string or a list of blocks".to_owned()),
    }
    Ok(UserLine { text: text.join("\n"), images, raw: Value::Object(map.clone()) })
}

/// An Anthropic image block with a base64 source.
fn image(block: &Value) -> Result<ImageBlock, String> {
    let source = block.get("source").ok_or("an image block needs a `source`")?;
    match source.get("type").and_then(Value::as_str) {
        Some("base64") => {}
        Some(other) => return Err(format!("image source type `{other}` is not supported (base64 is)")),
        None => return Err("an image source needs a `type`".to_owned()),
    }
    let media_type = source.get("media_type").and_then(Value::as_str).ok_or("an image source needs `media_type`")?;
    if !["image/png", "image/jpeg", "image/gif", "image/webp"].contains(&media_type) {
        return Err(format!(
            "image media_type `{media_type}` is not one of image/png, image/jpeg, image/gif, image/webp"
        ));
    }
    let data = source.get("data").and_then(Value::as_str).ok_or("an image source needs `data`")?;
    Ok(ImageBlock { media_type: media_type.to_owned(), data: data.to_owned(), width: None, height: None })
}

/// `{"type":"control_response","response":{"subtype":"success"|"error","request_id",…}}`.
fn response(map: &Map<String, Value>) -> Result<Inbound, String> {
    let Some(Value::Object(response)) = map.get("response") else {
        return Err("a control_response needs a `response` object".to_owned());
    };
    let Some(id) = response.get("request_id").and_then(Value::as_str) else {
        return Err("a control_response needs `response.request_id`".to_owned());
    };
    let result = match response.get("subtype").and_then(Value::as_str) {
        Some("success") => Ok(response.get("response").cloned().unwrap_or(Value::Null)),
        Some("error") => Err(response.get("error").and_then(Value::as_str).unwrap_or("unknown error").to_owned()),
        _ => return Err("`response.subtype` must be `success` or `error`".to_owned()),
    };
    Ok(Inbound::Response { id: id.to_owned(), result })
}

/// A success answer to the host's request `id`.
pub(crate) fn success(id: &str, response: Value) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success", "request_id": id, "response": response}})
}

/// An error answer to the host's request `id` (empty when the line had none).
pub(crate) fn error(id: &str, message: &str) -> Value {
    json!({"type": "control_response", "response": {"subtype": "error", "request_id": id, "error": message}})
}

/// The answer to a request spine does not implement (Claude Code's wording and code).
pub(crate) fn unsupported(id: &str, subtype: &str) -> Value {
    json!({"type": "control_response", "response": {
        "subtype": "error",
        "request_id": id,
        "error": format!("Unsupported control request subtype: {subtype}"),
        "error_code": "unsupported_request",
    }})
}

/// spine's request `id` of the host.
pub(crate) fn request(id: &str, body: Value) -> Value {
    json!({"type": "control_request", "request_id": id, "request": body})
}

/// spine gives up its request `id`.
pub(crate) fn cancel(id: &str) -> Value {
    json!({"type": "control_cancel_request", "request_id": id})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_line_with_text_and_image_blocks_is_a_prompt_with_images() {
        let line = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"b"}]},"parent_tool_use_id":null,"session_id":""}"#;
        let Some(Inbound::User(user)) = parse(line) else { panic!("not a user line") };
        assert_eq!(user.text, "a\nb");
        assert_eq!(user.images.len(), 1);
        assert_eq!(user.images[0].media_type, "image/png");
    }

    #[test]
    fn a_line_that_is_not_json_is_malformed_with_the_reason() {
        let Some(Inbound::Malformed { reason, request_id }) = parse("{nope") else { panic!("not malformed") };
        assert!(reason.starts_with("not JSON"), "{reason}");
        assert_eq!(request_id, None);
    }

    #[test]
    fn a_control_request_without_a_subtype_is_malformed_and_keeps_its_id() {
        let Some(Inbound::Malformed { request_id, .. }) =
            parse(r#"{"type":"control_request","request_id":"r1","request":{}}"#)
        else {
            panic!("not malformed")
        };
        assert_eq!(request_id.as_deref(), Some("r1"));
    }

    #[test]
    fn a_control_response_resolves_to_its_result() {
        let ok = parse(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"s1","response":{"behavior":"allow"}}}"#,
        );
        assert!(matches!(ok, Some(Inbound::Response { ref id, result: Ok(_) }) if id == "s1"));
        let err =
            parse(r#"{"type":"control_response","response":{"subtype":"error","request_id":"s2","error":"boom"}}"#);
        assert!(matches!(err, Some(Inbound::Response { result: Err(ref e), .. }) if e == "boom"));
    }

    #[test]
    fn blank_lines_are_nothing_and_unknown_types_are_malformed() {
        assert!(parse("   ").is_none());
        assert!(matches!(parse(r#"{"type":"mystery"}"#), Some(Inbound::Malformed { .. })));
        assert!(matches!(parse(r#"{"type":"keep_alive"}"#), Some(Inbound::KeepAlive)));
    }
}
