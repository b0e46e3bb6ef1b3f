//! Anthropic Messages: request bodies field by field (system placement, tool results in user
//! turns, `<system-reminder>` context, merged turns), and replies assembled from stream events.

use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::model::{FinishReason, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest};
use spine_models::anthropic::cache::PromptCaching;
use spine_models::anthropic::{AnthropicClient, AnthropicConfig};
use spine_protocol::hook::HookEventName;
use spine_protocol::message::Message;
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolArguments;

use crate::{KEY, Recorder, fast_retries, full_conversation, tools};
use spine_testkit::http::{End, Piece, Reply, TestServer, named_events, raw, rechunk};

pub fn config(server: &TestServer) -> AnthropicConfig {
    let mut c = AnthropicConfig::new("claude-test", server.url("")).with_api_key(KEY);
    c.retry = fast_retries();
    c
}

pub async fn complete(config: AnthropicConfig, messages: &[Message]) -> (Result<ModelReply, ModelError>, Recorder) {
    let client = AnthropicClient::new(config).expect("client");
    let sink = Recorder::default();
    let tools = tools();
    let request = ModelRequest { messages, tools: &tools, stable_prefix: None };
    let result = client.complete(request, &sink, &CancellationToken::new()).await;
    (result, sink)
}

pub fn message_start(input_tokens: u64) -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": input_tokens, "output_tokens": 1}}})
}

pub fn text_block(index: u32) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
}

pub fn text_delta(index: u32, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}})
}

fn tool_block(index: u32, id: &str, name: &str) -> Value {
    json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})
}

fn json_delta(index: u32, partial: &str) -> Value {
    json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial}})
}

fn block_stop(index: u32) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

pub fn message_delta(stop_reason: &str, output_tokens: u64) -> Value {
    json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}})
}

pub fn message_stop() -> Value {
    json!({"type": "message_stop"})
}

fn ping() -> Value {
    json!({"type": "ping"})
}

/// A complete text reply.
pub fn text_reply(text: &str) -> Vec<Piece> {
    named_events(&[
        message_start(3),
        text_block(0),
        text_delta(0, text),
        block_stop(0),
        message_delta("end_turn", 2),
        message_stop(),
    ])
}

fn user() -> Vec<Message> {
    vec![Message::system("sys"), Message::user("hi")]
}

#[tokio::test]
async fn tool_use_input_split_over_many_json_deltas_is_joined() {
    let input = r#"{"file_path": "src/main.rs", "limit": 10}"#;
    let mut events = vec![message_start(50), ping(), tool_block(0, "toolu_1", "Read")];
    let chars: Vec<char> = input.chars().collect();
    events.extend(chars.chunks(2).map(|c| json_delta(0, &c.iter().collect::<String>())));
    events.extend([block_stop(0), message_delta("tool_use", 30), message_stop()]);
    let server = TestServer::start(vec![Reply::Sse(rechunk(named_events(&events), 11), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let reply = reply.expect("reply");
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    let call = &reply.message.tool_calls[0];
    assert_eq!((call.id.as_str(), call.name.as_str()), ("toolu_1", "Read"));
    assert_eq!(call.arguments, ToolArguments::Json(json!({"file_path": "src/main.rs", "limit": 10})));
    assert_eq!(reply.usage, Some(Usage::new(50, 30)));
}

#[tokio::test]
async fn three_tool_uses_in_one_stream_keep_block_order() {
    let events = vec![
        message_start(1),
        tool_block(0, "toolu_a", "Read"),
        json_delta(0, r#"{"file_path":"a"}"#),
        block_stop(0),
        tool_block(1, "toolu_b", "Bash"),
        json_delta(1, r#"{"comm"#),
        json_delta(1, r#"and":"ls"}"#),
        block_stop(1),
        tool_block(2, "toolu_c", "Read"),
        block_stop(2),
        message_delta("tool_use", 9),
        message_stop(),
    ];
    let server = TestServer::start(vec![Reply::Sse(named_events(&events), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let calls = reply.expect("reply").message.tool_calls;
    let got: Vec<(&str, &str, &ToolArguments)> =
        calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), &c.arguments)).collect();
    assert_eq!(
        got,
        vec![
            ("toolu_a", "Read", &ToolArguments::Json(json!({"file_path": "a"}))),
            ("toolu_b", "Bash", &ToolArguments::Json(json!({"command": "ls"}))),
            // No input_json_delta: the start block's input.
            ("toolu_c", "Read", &ToolArguments::Json(json!({}))),
        ]
    );
}

#[tokio::test]
async fn text_then_tool_use_streams_the_text_and_returns_both() {
    let events = vec![
        message_start(12),
        text_block(0),
        text_delta(0, "Let me "),
        ping(),
        text_delta(0, "check ü."),
        block_stop(0),
        tool_block(1, "toolu_1", "Bash"),
        json_delta(1, r#"{"command":"ls"}"#),
        block_stop(1),
        message_delta("tool_use", 20),
        message_stop(),
    ];
    let server = TestServer::start(vec![Reply::Sse(rechunk(named_events(&events), 3), End::Close)]).await;
    let (reply, sink) = complete(config(&server), &user()).await;
    let reply = reply.expect("reply");
    assert_eq!(sink.deltas(), vec!["Let me ", "check ü."]);
    assert_eq!(reply.message.content.as_deref(), Some("Let me check ü."));
    assert_eq!(reply.message.tool_calls.len(), 1);
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.usage, Some(Usage::new(12, 20)));
}

#[tokio::test]
async fn malformed_data_line_fails_with_invalid_reply_naming_the_line() {
    let pieces = [
        named_events(&[message_start(1), text_block(0)]),
        vec![raw("event: content_block_delta\ndata: {\"type\": \"content_block_delta\", oops\n\n")],
        named_events(&[message_stop()]),
    ]
    .concat();
    let server = TestServer::start(vec![Reply::Sse(pieces, End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let err = reply.expect_err("malformed");
    assert_eq!(err.kind, ModelErrorKind::InvalidReply);
    assert!(err.message.contains(r#"data: {"type": "content_block_delta", oops"#), "{}", err.message);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_cut_before_message_stop_is_a_transport_error() {
    let pieces = named_events(&[message_start(1), text_block(0), text_delta(0, "Half an ans")]);
    let server = TestServer::start(vec![Reply::Sse(pieces, End::Cut)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let err = reply.expect_err("cut");
    assert_eq!(err.kind, ModelErrorKind::Transport);
    assert!(err.message.contains("stream ended before the reply was complete"), "{}", err.message);
    assert_eq!(server.requests().len(), 1, "content was delivered: no retry");
}

#[tokio::test]
async fn stream_closed_cleanly_before_message_stop_is_a_transport_error() {
    let pieces = named_events(&[
        message_start(1),
        text_block(0),
        text_delta(0, "Hi"),
        block_stop(0),
        message_delta("end_turn", 1),
    ]);
    let server = TestServer::start(vec![Reply::Sse(pieces, End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let err = reply.expect_err("no message_stop");
    assert_eq!(err.kind, ModelErrorKind::Transport);
    assert!(err.message.contains("stream ended before the reply was complete (no message_stop)"), "{}", err.message);
}

#[tokio::test]
async fn max_tokens_stop_is_incomplete_and_refusal_stop_is_a_refusal() {
    let cut = named_events(&[
        message_start(1),
        text_block(0),
        text_delta(0, "a"),
        message_delta("max_tokens", 1),
        message_stop(),
    ]);
    let refused = named_events(&[message_start(1), message_delta("refusal", 1), message_stop()]);
    let server = TestServer::start(vec![Reply::Sse(cut, End::Close), Reply::Sse(refused, End::Close)]).await;
    let (first, _) = complete(config(&server), &user()).await;
    let err = first.expect_err("max_tokens");
    assert_eq!(err.kind, ModelErrorKind::Incomplete);
    assert!(err.message.contains("the model's reply was cut off by the output token limit"));
    let (second, _) = complete(config(&server), &user()).await;
    assert_eq!(second.expect_err("refusal").kind, ModelErrorKind::Refusal);
}

#[tokio::test]
async fn overloaded_error_event_before_content_is_retried() {
    let overloaded = named_events(&[
        message_start(1),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let server =
        TestServer::start(vec![Reply::Sse(overloaded, End::Close), Reply::Sse(text_reply("fine"), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    assert_eq!(reply.expect("retried").message.content.as_deref(), Some("fine"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn error_event_after_content_is_not_retried_and_names_its_type() {
    let events = named_events(&[
        message_start(1),
        text_block(0),
        text_delta(0, "Sure, "),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let server = TestServer::always(Reply::Sse(events, End::Close)).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let err = reply.expect_err("error event");
    assert_eq!(err.kind, ModelErrorKind::Http { status: 529 });
    assert!(err.message.contains("overloaded_error: Overloaded"), "{}", err.message);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn status_529_is_retried() {
    let server = TestServer::start(vec![
        Reply::Status {
            status: 529,
            headers: vec![("content-type", "application/json".into())],
            body: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
        },
        Reply::Sse(text_reply("ok"), End::Close),
    ])
    .await;
    let (reply, _) = complete(config(&server), &user()).await;
    reply.expect("retried");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn request_body_places_system_tool_results_and_context_field_by_field() {
    let server = TestServer::start(vec![Reply::Sse(text_reply("ok"), End::Close)]).await;
    // The wire rules alone: cache breakpoints are `anthropic::cache`'s and tested there.
    let mut cfg = config(&server);
    cfg.provider.prompt_caching = PromptCaching::Off;
    let (reply, _) = complete(cfg, &full_conversation()).await;
    reply.expect("reply");
    let req = server.only_request();
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.headers["x-api-key"], KEY);
    assert_eq!(req.headers["anthropic-version"], "2023-06-01");
    assert_eq!(req.headers["content-type"], "application/json");
    assert!(req.headers.get("authorization").is_none());
    let body = &req.body;
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["stream"], true);
    // The leading system messages, joined, at the top level.
    assert_eq!(body["system"], "You are spine.\n\nBe brief.");
    let m = body["messages"].as_array().expect("messages");
    assert_eq!(m.len(), 3, "{m:#?}");
    // User prompt and its hook context merged into one user turn.
    assert_eq!(
        m[0],
        json!({"role": "user", "content": [
            {"type": "text", "text": "read main.rs"},
            {"type": "text", "text": "<system-reminder>\nbranch: main\n</system-reminder>"}
        ]})
    );
    // Raw arguments go out as an empty input object.
    assert_eq!(
        m[1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "call_1", "name": "Read", "input": {"file_path": "src/main.rs"}},
            {"type": "tool_use", "id": "call_2", "name": "Bash", "input": {}}
        ]})
    );
    // Tool results first (paired by id, is_error from error_code), then the contexts, the
    // later system message and the next prompt, in order.
    assert_eq!(
        m[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "fn main() {}", "is_error": false},
            {"type": "tool_result", "tool_use_id": "call_2", "content": "Error [invalid_arguments]: not JSON", "is_error": true},
            {"type": "text", "text": "<system-reminder>\ncareful\n</system-reminder>"},
            {"type": "text", "text": "<system-reminder>\nlint ok\n</system-reminder>"},
            {"type": "text", "text": "<system-reminder>\nCompacted earlier turns.\n</system-reminder>"},
            {"type": "text", "text": "and now?"}
        ]})
    );
    assert_eq!(
        body["tools"],
        json!([
            {"name": "Read", "description": "Reads a file", "input_schema": tools()[0].input_schema},
            {"name": "Bash", "description": "Runs a command", "input_schema": tools()[1].input_schema}
        ])
    );
}

#[tokio::test]
async fn consecutive_assistant_turns_merge_and_empty_text_is_not_sent() {
    let server = TestServer::start(vec![Reply::Sse(text_reply("ok"), End::Close)]).await;
    let mut cfg = config(&server);
    cfg.max_tokens = Some(1024);
    cfg.provider.prompt_caching = PromptCaching::Off;
    let messages = vec![
        Message::context(HookEventName::SessionStart, "started"),
        Message::user("one"),
        Message::assistant_text(""),
        Message::assistant_text("two"),
        Message::assistant_text("three"),
        Message::user("four"),
    ];
    let (reply, _) = complete(cfg, &messages).await;
    reply.expect("reply");
    let body = server.only_request().body;
    assert_eq!(body["max_tokens"], 1024);
    assert!(body.get("system").is_none(), "no leading system message");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>\nstarted\n</system-reminder>"},
                {"type": "text", "text": "one"}
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "two"}, {"type": "text", "text": "three"}]},
            {"role": "user", "content": [{"type": "text", "text": "four"}]}
        ])
    );
}

#[tokio::test]
async fn tool_choice_is_sent_in_the_messages_format_when_set() {
    use spine_core::model::ToolChoice;
    let cases = [
        (ToolChoice::Auto, json!({"type": "auto"})),
        (ToolChoice::Required, json!({"type": "any"})),
        (ToolChoice::None, json!({"type": "none"})),
        (ToolChoice::Tool("Read".into()), json!({"type": "tool", "name": "Read"})),
    ];
    for (choice, wire) in cases {
        let server = TestServer::start(vec![Reply::Sse(text_reply("ok"), End::Close)]).await;
        let (reply, _) = complete(AnthropicConfig { tool_choice: Some(choice), ..config(&server) }, &user()).await;
        reply.expect("reply");
        assert_eq!(server.only_request().body["tool_choice"], wire);
    }
    let server = TestServer::start(vec![Reply::Sse(text_reply("ok"), End::Close)]).await;
    complete(config(&server), &user()).await.0.expect("reply");
    assert!(server.only_request().body.get("tool_choice").is_none(), "unset: not sent");
}

#[tokio::test]
async fn max_tokens_and_temperature_come_from_the_configuration() {
    let server = TestServer::start(vec![Reply::Sse(text_reply("ok"), End::Close)]).await;
    let config = AnthropicConfig { max_tokens: Some(1000), temperature: Some(0.3), ..config(&server) };
    complete(config, &user()).await.0.expect("reply");
    let body = server.only_request().body;
    assert_eq!((body["max_tokens"].clone(), body["temperature"].clone()), (json!(1000), json!(0.3)));
}

#[tokio::test]
async fn stream_false_reads_one_whole_message_with_its_usage() {
    let whole = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Reading."}, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 4}});
    let server = TestServer::start(vec![Reply::Json(whole)]).await;
    let mut config = config(&server);
    config.provider.streaming = spine_models::Streaming::Off;
    let (reply, sink) = complete(config, &user()).await;
    let reply = reply.expect("reply");
    assert_eq!(server.only_request().body["stream"], false);
    assert_eq!(sink.deltas(), ["Reading."]);
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.message.tool_calls[0].arguments, ToolArguments::Json(json!({"file_path": "a"})));
    let usage = reply.usage.expect("usage");
    assert_eq!((usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens), (15, 5, 4));
}

#[tokio::test]
async fn usage_sent_with_a_max_tokens_stop_is_kept_on_the_error() {
    let events = named_events(&[
        message_start(7514),
        text_block(0),
        text_delta(0, "on and on"),
        message_delta("max_tokens", 400),
        message_stop(),
    ]);
    let server = TestServer::start(vec![Reply::Sse(events, End::Close)]).await;
    let err = complete(config(&server), &user()).await.0.expect_err("cut by the limit");
    assert_eq!(err.kind, ModelErrorKind::Incomplete);
    assert_eq!(err.usage, Some(Usage::new(7514, 400)));
}
