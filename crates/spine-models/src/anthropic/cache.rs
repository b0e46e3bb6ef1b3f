//! Prompt caching for the Messages API: `cache_control: {"type": "ephemeral"}` breakpoints on
//! the request body, three of the API's four:
//!
//! 1. the last tool definition (the tools are the start of the cached prefix);
//! 2. the end of the system prompt's stable prefix ([`ModelRequest::stable_prefix`]): the
//!    `system` string becomes two text blocks, the stable part (marked) and the rest; without a
//!    known prefix the whole system prompt is one marked block;
//! 3. the last content block of the last message (not a `thinking` block, which cannot carry
//!    one), so the next request of the conversation reads everything before it from the cache.
//!
//! A prefix that is not on a character boundary, or covers the whole prompt, marks the whole
//! prompt. Turned off by `DISABLE_PROMPT_CACHING` (as in Claude Code) or the settings; then the
//! body is left as it is.
//!
//! [`ModelRequest::stable_prefix`]: spine_core::model::ModelRequest::stable_prefix

use serde_json::{Value, json};

/// Whether requests carry cache breakpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptCaching {
    /// Breakpoints on the tools, the stable system prefix and the last message.
    #[default]
    On,
    /// No `cache_control` anywhere.
    Off,
}

/// Adds the breakpoints to a serialised request body.
pub(crate) fn mark(body: &mut Value, stable_prefix: Option<usize>) {
    if let Some(last) = body.get_mut("tools").and_then(Value::as_array_mut).and_then(|t| t.last_mut()) {
        set(last);
    }
    if let Some(system) = body.get_mut("system") {
        mark_system(system, stable_prefix);
    }
    let last_block = body
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .and_then(|m| m.last_mut())
        .and_then(|turn| turn.get_mut("content"))
        .and_then(Value::as_array_mut)
        .and_then(|blocks| {
            blocks.iter_mut().rev().find(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
        });
    if let Some(block) = last_block {
        set(block);
    }
}

fn mark_system(system: &mut Value, stable_prefix: Option<usize>) {
    let Some(text) = system.as_str() else { return };
    let split = stable_prefix.filter(|&n| n > 0 && n < text.len() && text.is_char_boundary(n));
    let blocks = match split {
        Some(n) if !text[n..].trim().is_empty() => {
            let (stable, rest) = text.split_at(n);
            vec![
                json!({"type": "text", "text": stable, "cache_control": ephemeral()}),
                json!({"type": "text", "text": rest.trim_start()}),
            ]
        }
        Some(_) | None => vec![json!({"type": "text", "text": text, "cache_control": ephemeral()})],
    };
    *system = Value::Array(blocks);
}

fn set(target: &mut Value) {
    if let Some(map) = target.as_object_mut() {
        map.insert("cache_control".into(), ephemeral());
    }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> Value {
        json!({
            "system": "Agent Prompt:\nbe good\n\nOperator State:\n{}",
            "tools": [{"name": "a"}, {"name": "b"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "tool_use", "id": "1", "name": "a", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": "ok"}, {"type": "text", "text": "more"}]}
            ]
        })
    }

    fn breakpoints(v: &Value) -> usize {
        match v {
            Value::Object(m) => {
                usize::from(m.contains_key("cache_control")) + m.values().map(breakpoints).sum::<usize>()
            }
            Value::Array(a) => a.iter().map(breakpoints).sum(),
            _ => 0,
        }
    }

    #[test]
    fn three_breakpoints_on_the_last_tool_the_stable_system_prefix_and_the_last_block() {
        let mut b = body();
        let prefix = "Agent Prompt:\nbe good".len();
        mark(&mut b, Some(prefix));
        assert_eq!(breakpoints(&b), 3, "within the API's limit of four: {b}");
        assert!(b["tools"][1]["cache_control"].is_object() && b["tools"][0].get("cache_control").is_none());
        assert_eq!(
            b["system"][0],
            json!({"type": "text", "text": "Agent Prompt:\nbe good", "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(b["system"][1], json!({"type": "text", "text": "Operator State:\n{}"}));
        assert!(b["messages"][2]["content"][1]["cache_control"].is_object());
    }

    #[test]
    fn without_a_usable_prefix_the_whole_system_prompt_is_one_marked_block() {
        for prefix in [None, Some(0), Some(10_000), Some(body()["system"].as_str().map_or(0, str::len))] {
            let mut b = body();
            mark(&mut b, prefix);
            assert_eq!(b["system"].as_array().map(Vec::len), Some(1), "{prefix:?}");
            assert!(b["system"][0]["cache_control"].is_object());
        }
        let mut b = json!({"system": "é", "messages": []});
        mark(&mut b, Some(1));
        assert_eq!(b["system"][0]["text"], "é", "a prefix inside a character is not a split");
    }

    #[test]
    fn a_thinking_block_never_carries_the_message_breakpoint() {
        let mut b = json!({"messages": [{"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "thinking", "thinking": "t", "signature": "s"}]}]});
        mark(&mut b, None);
        assert!(b["messages"][0]["content"][0]["cache_control"].is_object());
        assert!(b["messages"][0]["content"][1].get("cache_control").is_none());
    }
}
