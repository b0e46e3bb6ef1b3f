//! The breakpoints' places, and the body byte for byte as the earlier marker made it (which
//! edited the request as a `serde_json::Value`).

use serde_json::{Value, json};
use spine_core::model::ModelRequest;
use spine_protocol::message::{AssistantMessage, ImageBlock, Message, ReasoningItem, ToolResultMessage};
use spine_protocol::tool::{ToolArguments, ToolCall, ToolSpec};

use super::mark;
use crate::anthropic::wire::{self, Options};

const SYSTEM: &str = "Agent Prompt:\nbe good\n\nOperator State:\n{}";

fn tools() -> Vec<ToolSpec> {
    ["a", "b"]
        .iter()
        .map(|name| ToolSpec { name: (*name).into(), description: "d".into(), input_schema: json!({"type": "object"}) })
        .collect()
}

fn thinking() -> ReasoningItem {
    ReasoningItem::Thinking { thinking: "t".into(), signature: "s".into() }
}

fn result(id: &str, images: Vec<ImageBlock>) -> Message {
    Message::Tool(ToolResultMessage {
        tool_call_id: id.into(),
        name: "a".into(),
        content: "ok".into(),
        error_code: None,
        images,
    })
}

/// System, user, an assistant turn with thinking and a tool use, then its result and more text.
fn conversation() -> Vec<Message> {
    vec![
        Message::system(SYSTEM),
        Message::user("hi"),
        Message::Assistant(AssistantMessage {
            reasoning: vec![thinking()],
            content: None,
            tool_calls: vec![ToolCall { id: "1".into(), name: "a".into(), arguments: ToolArguments::Json(json!({})) }],
        }),
        result("1", Vec::new()),
        Message::user("more"),
    ]
}

fn options() -> Options<'static> {
    Options { max_tokens: 1024, tool_choice: None, temperature: Some(0.5), thinking: None, effort: None, stream: true }
}

/// The marked body as JSON.
fn marked(messages: &[Message], tools: &[ToolSpec], prefix: Option<usize>) -> Value {
    let request = ModelRequest { messages, tools, stable_prefix: prefix };
    let mut body = wire::request("m", options(), request);
    mark(&mut body, prefix);
    serde_json::to_value(&body).expect("json")
}

fn breakpoints(v: &Value) -> usize {
    match v {
        Value::Object(m) => usize::from(m.contains_key("cache_control")) + m.values().map(breakpoints).sum::<usize>(),
        Value::Array(a) => a.iter().map(breakpoints).sum(),
        _ => 0,
    }
}

#[test]
fn three_breakpoints_on_the_last_tool_the_stable_system_prefix_and_the_last_block() {
    let b = marked(&conversation(), &tools(), Some("Agent Prompt:\nbe good".len()));
    assert_eq!(breakpoints(&b), 3, "within the API's limit of four: {b}");
    assert!(b["tools"][1]["cache_control"].is_object() && b["tools"][0].get("cache_control").is_none());
    assert_eq!(
        b["system"][0],
        json!({"type": "text", "text": "Agent Prompt:\nbe good", "cache_control": {"type": "ephemeral"}})
    );
    assert_eq!(b["system"][1], json!({"type": "text", "text": "Operator State:\n{}"}));
    assert_eq!(b["messages"][2]["content"][0]["type"], "tool_result");
    assert!(b["messages"][2]["content"][1]["cache_control"].is_object());
}

#[test]
fn without_a_usable_prefix_the_whole_system_prompt_is_one_marked_block() {
    for prefix in [None, Some(0), Some(10_000), Some(SYSTEM.len())] {
        let b = marked(&conversation(), &tools(), prefix);
        assert_eq!(b["system"].as_array().map(Vec::len), Some(1), "{prefix:?}");
        assert!(b["system"][0]["cache_control"].is_object());
    }
    let b = marked(&[Message::system("é"), Message::user("x")], &[], Some(1));
    assert_eq!(b["system"][0]["text"], "é", "a prefix inside a character is not a split");
}

#[test]
fn a_thinking_block_never_carries_the_message_breakpoint() {
    let turn = |content: Option<&str>| {
        Message::Assistant(AssistantMessage {
            reasoning: vec![thinking()],
            content: content.map(str::to_owned),
            tool_calls: Vec::new(),
        })
    };
    let b = marked(&[Message::user("x"), turn(Some("y"))], &[], None);
    assert!(b["messages"][1]["content"][1]["cache_control"].is_object());
    assert!(b["messages"][1]["content"][0].get("cache_control").is_none());
    let b = marked(&[Message::user("x"), turn(None)], &[], None);
    assert_eq!(breakpoints(&b), 0, "{b}");
}

/// The earlier marker, which edited the encoded request as a `Value`: the reference.
fn value_marker(body: &mut Value, stable_prefix: Option<usize>) {
    let ephemeral = || json!({"type": "ephemeral"});
    let set = |target: &mut Value| {
        if let Some(map) = target.as_object_mut() {
            map.insert("cache_control".into(), ephemeral());
        }
    };
    if let Some(last) = body.get_mut("tools").and_then(Value::as_array_mut).and_then(|t| t.last_mut()) {
        set(last);
    }
    if let Some(system) = body.get_mut("system")
        && let Some(text) = system.as_str()
    {
        let split = stable_prefix.filter(|&n| n > 0 && n < text.len() && text.is_char_boundary(n));
        let blocks = match split {
            Some(n) if !text[n..].trim().is_empty() => vec![
                json!({"type": "text", "text": &text[..n], "cache_control": ephemeral()}),
                json!({"type": "text", "text": text[n..].trim_start()}),
            ],
            Some(_) | None => vec![json!({"type": "text", "text": text, "cache_control": ephemeral()})],
        };
        *system = Value::Array(blocks);
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

#[test]
fn the_encoded_body_is_byte_for_byte_the_value_markers() {
    let image = ImageBlock::new("image/png", "iVBORw0KGgo=");
    let mut with_images = conversation();
    with_images.push(result("2", vec![image.clone()]));
    with_images.push(Message::user_with_images("see", vec![image]));
    let cases: Vec<(Vec<Message>, Option<usize>)> = vec![
        (conversation(), Some(13)),
        (conversation(), None),
        (with_images.clone(), Some(5)),
        (with_images[..4].to_vec(), Some(13)),
        (vec![Message::user("no system")], Some(3)),
    ];
    for (messages, prefix) in cases {
        let request = ModelRequest { messages: &messages, tools: &tools(), stable_prefix: prefix };
        let mut reference = serde_json::to_value(wire::request("m", options(), request)).expect("value");
        value_marker(&mut reference, prefix);
        let mut body = wire::request("m", options(), request);
        mark(&mut body, prefix);
        let bytes = serde_json::to_vec(&body).expect("bytes");
        assert_eq!(String::from_utf8_lossy(&bytes), reference.to_string(), "{prefix:?}");
    }
}
