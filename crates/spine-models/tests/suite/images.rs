//! Images over the wire: a user turn's images and a tool result's images, in each provider's
//! own format (Anthropic `image` blocks, chat-completions `image_url` parts with a follow-up
//! user message for tool images, Responses `input_image` parts), exact body shapes.

use serde_json::json;
use spine_protocol::message::{AssistantMessage, ImageBlock, Message, ToolResultMessage};
use spine_protocol::tool::{ToolArguments, ToolCall};
use spine_testkit::http::{End, Reply, TestServer, data_events, done};

use crate::{anthropic, openai, responses};

const PNG: &str = "iVBORw0KGgo=";
const JPEG: &str = "/9j/4AAQ";

/// A user turn with an image, a Read call, its result with an image, then the follow-up.
fn conversation() -> Vec<Message> {
    vec![
        Message::system("sys"),
        Message::user_with_images("what is this?", vec![ImageBlock::new("image/png", PNG)]),
        Message::Assistant(AssistantMessage {
            reasoning: Vec::new(),
            content: None,
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "Read".into(),
                arguments: ToolArguments::Json(json!({"file_path": "b.jpg"})),
            }],
        }),
        Message::Tool(ToolResultMessage {
            tool_call_id: "call_1".into(),
            name: "Read".into(),
            content: "Image: b.jpg (2x2, 1 KB)".into(),
            error_code: None,
            images: vec![ImageBlock::new("image/jpeg", JPEG)],
        }),
    ]
}

#[tokio::test]
async fn anthropic_sends_user_images_as_blocks_and_tool_images_inside_the_tool_result() {
    let server = TestServer::always(Reply::Sse(anthropic::text_reply("a cat"), End::Close)).await;
    let (reply, _) = anthropic::complete(anthropic::config(&server), &conversation()).await;
    assert_eq!(reply.expect("reply").message.content.as_deref(), Some("a cat"));
    let body = &server.only_request().body;
    assert_eq!(
        body["messages"][0]["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
        ])
    );
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "call_1");
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "Image: b.jpg (2x2, 1 KB)"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": JPEG}}
        ])
    );
}

#[tokio::test]
async fn anthropic_results_without_images_keep_plain_string_content() {
    let server = TestServer::always(Reply::Sse(anthropic::text_reply("ok"), End::Close)).await;
    let mut messages = conversation();
    messages[1] = Message::user("plain");
    if let Message::Tool(t) = &mut messages[3] {
        t.images.clear();
    }
    anthropic::complete(anthropic::config(&server), &messages).await.0.expect("reply");
    let body = &server.only_request().body;
    assert_eq!(body["messages"][0]["content"], json!([{"type": "text", "text": "plain"}]));
    assert_eq!(body["messages"][2]["content"][0]["content"], "Image: b.jpg (2x2, 1 KB)");
}

#[tokio::test]
async fn chat_completions_send_image_url_parts_and_tool_images_in_a_user_message_after_the_round() {
    let reply = data_events(&[openai::chunk(json!({"content": "a cat"})), openai::finish("stop")]);
    let mut pieces = reply;
    pieces.push(done());
    let server = TestServer::always(Reply::Sse(pieces, End::Close)).await;
    let (reply, _) = openai::complete(openai::config(&server), &conversation()).await;
    assert_eq!(reply.expect("reply").message.content.as_deref(), Some("a cat"));
    let messages = &server.only_request().body["messages"];
    let roles: Vec<&str> = messages.as_array().expect("messages").iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"], "valid order for strict templates");
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}
        ])
    );
    assert_eq!(messages[3], json!({"role": "tool", "tool_call_id": "call_1", "content": "Image: b.jpg (2x2, 1 KB)"}));
    assert_eq!(
        messages[4]["content"],
        json!([
            {"type": "text", "text": "[Images from the result of tool call call_1 (Read)]"},
            {"type": "image_url", "image_url": {"url": format!("data:image/jpeg;base64,{JPEG}")}}
        ])
    );
}

#[tokio::test]
async fn chat_completions_merge_a_following_user_turn_into_the_tool_image_message() {
    let mut pieces = data_events(&[openai::chunk(json!({"content": "ok"})), openai::finish("stop")]);
    pieces.push(done());
    let server = TestServer::always(Reply::Sse(pieces, End::Close)).await;
    let mut messages = conversation();
    messages.push(Message::user("and now?"));
    openai::complete(openai::config(&server), &messages).await.0.expect("reply");
    let sent = &server.only_request().body["messages"];
    assert_eq!(sent.as_array().map(Vec::len), Some(5), "user turns stay merged: {sent}");
    assert_eq!(sent[4]["content"][1]["type"], "image_url");
    assert_eq!(sent[4]["content"][2], json!({"type": "text", "text": "and now?"}));
}

#[tokio::test]
async fn responses_send_input_image_parts_and_tool_images_as_a_user_message_after_the_outputs() {
    let server = TestServer::always(responses::text_reply("a cat")).await;
    let (reply, _) = responses::complete(responses::config(&server), &conversation()).await;
    assert_eq!(reply.expect("reply").message.content.as_deref(), Some("a cat"));
    let input = &server.only_request().body["input"];
    assert_eq!(
        input[0],
        json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")}
        ]})
    );
    assert_eq!(input[1]["type"], "function_call");
    assert_eq!(
        input[2],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "Image: b.jpg (2x2, 1 KB)"})
    );
    assert_eq!(
        input[3],
        json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "[Images from the result of tool call call_1 (Read)]"},
            {"type": "input_image", "image_url": format!("data:image/jpeg;base64,{JPEG}")}
        ]})
    );
    assert_eq!(input.as_array().map(Vec::len), Some(4));
}
