//! Reasoning over the wire: Anthropic extended thinking (the `thinking` request field,
//! `thinking_delta`/`signature_delta` assembly, thinking and redacted thinking sent back with
//! their tool turn, signatures intact) and OpenAI `reasoning_effort`.

use serde_json::{Value, json};
use spine_core::model::FinishReason;
use spine_models::anthropic::Thinking;
use spine_protocol::message::{Message, ReasoningEffort, ReasoningItem, ToolResultMessage};
use spine_testkit::http::{End, Reply, TestServer, named_events, rechunk};

use crate::anthropic::{self, message_delta, message_start, message_stop, text_block, text_delta, text_reply};

fn thinking_block(index: u32) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}})
}

fn thinking_delta(index: u32, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": text}})
}

fn signature_delta(index: u32, signature: &str) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": signature}})
}

fn block_stop(index: u32) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/==";

/// A thinking block, text, then a `Read` tool use.
fn thinking_then_tool_use() -> Vec<spine_testkit::http::Piece> {
    named_events(&[
        message_start(40),
        thinking_block(0),
        thinking_delta(0, "The user wants main.rs; "),
        thinking_delta(0, "I should read it."),
        signature_delta(0, &SIGNATURE[..20]),
        signature_delta(0, &SIGNATURE[20..]),
        block_stop(0),
        text_block(1),
        text_delta(1, "Reading."),
        block_stop(1),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"main.rs\"}"}}),
        block_stop(2),
        message_delta("tool_use", 30),
        message_stop(),
    ])
}

fn thinking_config(server: &TestServer, budget_tokens: u32) -> spine_models::AnthropicConfig {
    let mut config = anthropic::config(server);
    config.provider.thinking = Some(Thinking::Enabled { budget_tokens });
    config
}

fn answer(call: &str) -> Message {
    Message::Tool(ToolResultMessage {
        tool_call_id: call.into(),
        name: "Read".into(),
        content: "fn main() {}".into(),
        error_code: None,
        images: Vec::new(),
    })
}

#[tokio::test]
async fn thinking_blocks_with_signatures_are_sent_back_on_the_tool_turn() {
    let server = TestServer::start(vec![
        Reply::Sse(rechunk(thinking_then_tool_use(), 7), End::Close),
        Reply::Sse(text_reply("It is empty."), End::Close),
    ])
    .await;
    let mut conversation = vec![Message::system("sys"), Message::user("read main.rs")];
    let (first, sink) = anthropic::complete(thinking_config(&server, 2048), &conversation).await;
    let first = first.expect("first reply");
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        first.message.reasoning,
        vec![ReasoningItem::Thinking {
            thinking: "The user wants main.rs; I should read it.".into(),
            signature: SIGNATURE.into()
        }]
    );
    assert_eq!(first.message.content.as_deref(), Some("Reading."), "thinking is not the answer");
    assert_eq!(sink.deltas(), vec!["Reading."], "thinking never streams as answer text");

    conversation.push(Message::Assistant(first.message));
    conversation.push(answer("toolu_1"));
    let (second, _) = anthropic::complete(thinking_config(&server, 2048), &conversation).await;
    assert_eq!(second.expect("second reply").message.content.as_deref(), Some("It is empty."));

    let requests = server.requests();
    assert_eq!(requests[0].body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    assert_eq!(requests[0].body["max_tokens"], 8192);
    let turn = &requests[1].body["messages"][1];
    assert_eq!(
        turn,
        &json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "The user wants main.rs; I should read it.", "signature": SIGNATURE},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "main.rs"}}
        ]})
    );
}

#[tokio::test]
async fn redacted_thinking_round_trips_byte_for_byte() {
    let data = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";
    let events = named_events(&[
        message_start(10),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "redacted_thinking", "data": data}}),
        block_stop(0),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "a"}}}),
        block_stop(1),
        message_delta("tool_use", 5),
        message_stop(),
    ]);
    let server =
        TestServer::start(vec![Reply::Sse(events, End::Close), Reply::Sse(text_reply("done"), End::Close)]).await;
    let mut conversation = vec![Message::user("go")];
    let (first, _) = anthropic::complete(thinking_config(&server, 1024), &conversation).await;
    let first = first.expect("reply");
    assert_eq!(first.message.reasoning, vec![ReasoningItem::RedactedThinking { data: data.into() }]);
    conversation.push(Message::Assistant(first.message));
    conversation.push(answer("toolu_9"));
    anthropic::complete(thinking_config(&server, 1024), &conversation).await.0.expect("second reply");
    let sent = &server.requests()[1].body["messages"][1]["content"];
    assert_eq!(sent[0], json!({"type": "redacted_thinking", "data": data}));
    assert_eq!(sent[1]["type"], "tool_use");
}

#[tokio::test]
async fn a_thinking_budget_at_or_over_max_tokens_raises_max_tokens_above_it() {
    let server = TestServer::always(Reply::Sse(text_reply("ok"), End::Close)).await;
    anthropic::complete(thinking_config(&server, 16_000), &[Message::user("hi")]).await.0.expect("reply");
    let body = &server.only_request().body;
    assert_eq!(body["thinking"]["budget_tokens"], 16_000);
    assert_eq!(body["max_tokens"], 16_000 + 8192);
}

#[tokio::test]
async fn without_a_budget_no_thinking_field_is_sent() {
    let server = TestServer::always(Reply::Sse(text_reply("ok"), End::Close)).await;
    anthropic::complete(anthropic::config(&server), &[Message::user("hi")]).await.0.expect("reply");
    let body = &server.only_request().body;
    assert!(body.get("thinking").is_none(), "{body}");
}

#[tokio::test]
async fn a_signature_delta_for_a_text_block_is_an_invalid_reply() {
    let events =
        named_events(&[message_start(1), text_block(0), signature_delta(0, "x"), message_delta("end_turn", 1)]);
    let server = TestServer::always(Reply::Sse(events, End::Close)).await;
    let err = anthropic::complete(anthropic::config(&server), &[Message::user("hi")]).await.0.expect_err("invalid");
    assert_eq!(err.kind, spine_core::model::ModelErrorKind::InvalidReply);
    assert!(err.message.contains("signature_delta for block 0, which is not a thinking block"), "{}", err.message);
}

#[tokio::test]
async fn reasoning_items_of_another_provider_are_not_sent_to_anthropic() {
    let server = TestServer::always(Reply::Sse(text_reply("ok"), End::Close)).await;
    let turn = spine_protocol::message::AssistantMessage {
        reasoning: vec![ReasoningItem::Reasoning {
            id: "rs_1".into(),
            summary: vec![],
            encrypted_content: Some("e".into()),
        }],
        content: Some("Earlier answer.".into()),
        tool_calls: vec![],
    };
    let conversation = vec![Message::user("a"), Message::Assistant(turn), Message::user("b")];
    anthropic::complete(anthropic::config(&server), &conversation).await.0.expect("reply");
    let body = &server.only_request().body;
    assert_eq!(body["messages"][1]["content"], json!([{"type": "text", "text": "Earlier answer."}]));
}

#[tokio::test]
async fn reasoning_effort_is_sent_on_chat_completions_when_set() {
    let reply = || {
        let mut pieces = spine_testkit::http::data_events(&[
            json!({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}),
        ]);
        pieces.push(spine_testkit::http::done());
        Reply::Sse(pieces, End::Close)
    };
    let server = TestServer::start(vec![reply(), reply()]).await;
    let mut config = crate::openai::config(&server);
    crate::openai::complete(config.clone(), &[Message::user("hi")]).await.0.expect("reply");
    config.provider.reasoning_effort = Some(ReasoningEffort::Minimal);
    crate::openai::complete(config, &[Message::user("hi")]).await.0.expect("reply");
    let requests = server.requests();
    assert!(requests[0].body.get("reasoning_effort").is_none(), "unset: not sent");
    assert_eq!(requests[1].body["reasoning_effort"], "minimal");
}

#[tokio::test]
async fn a_subagents_effort_is_sent_by_a_copy_of_the_openai_clients_and_anthropic_takes_none() {
    use spine_core::CancellationToken;
    use spine_core::model::{ModelClient, ModelRequest, NoStream};
    let chat = || {
        let mut pieces = spine_testkit::http::data_events(&[
            json!({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}),
        ]);
        pieces.push(spine_testkit::http::done());
        Reply::Sse(pieces, End::Close)
    };
    let server = TestServer::start(vec![chat(), chat()]).await;
    let responses = TestServer::start(vec![crate::responses::text_reply("ok")]).await;
    let base = spine_models::openai::OpenAiClient::new(crate::openai::config(&server)).expect("client");
    let copy = base.with_reasoning_effort(ReasoningEffort::Low).expect("chat completions take an effort");
    let responses_copy = spine_models::responses::ResponsesClient::new(crate::responses::config(&responses))
        .expect("client")
        .with_reasoning_effort(ReasoningEffort::High)
        .expect("the Responses API takes an effort");
    let messages = [Message::user("hi")];
    for client in [&base as &dyn ModelClient, copy.as_ref(), responses_copy.as_ref()] {
        let request = ModelRequest { messages: &messages, tools: &[], stable_prefix: None };
        client.complete(request, &NoStream, &CancellationToken::new()).await.expect("reply");
    }
    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert!(bodies[0].get("reasoning_effort").is_none(), "the session's client is unchanged");
    assert_eq!(bodies[1]["reasoning_effort"], "low");
    assert_eq!(copy.model(), "gpt-test");
    assert_eq!(responses.only_request().body["reasoning"]["effort"], "high");
    let anthropic = spine_models::anthropic::AnthropicClient::new(spine_models::anthropic::AnthropicConfig::new(
        "claude-test",
        "http://127.0.0.1:9",
    ))
    .expect("client");
    assert!(anthropic.with_reasoning_effort(ReasoningEffort::Low).is_none(), "spine sends Anthropic no effort");
}
