//! Payload messages (`{role, content}` objects) into a transcript: the roles `system`, `user`
//! and `assistant`, nothing else kept.

use serde_json::Value;
use spine_protocol::message::Message;

/// Normalises payload messages (`{role, content}` objects) into a transcript; anything else
/// about them is dropped. Unknown roles are an error naming the index.
pub fn normalize_transcript(values: &[Value]) -> Result<Vec<Message>, String> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let role = v
                .get("role")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("context_messages[{i}]: missing `role`"))?;
            let content = match v.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            match role {
                "system" => Ok(Message::system(content)),
                "user" => Ok(Message::user(content)),
                "assistant" => Ok(Message::assistant_text(content)),
                other => Err(format!("context_messages[{i}]: unsupported role `{other}` (system, user or assistant)")),
            }
        })
        .collect()
}
