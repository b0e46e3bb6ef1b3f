//! OpenAI chat completions: request bodies field by field, and streamed replies assembled from
//! deltas.

use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::model::{FinishReason, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest};
use spine_models::openai::{Mode, OpenAiClient, OpenAiConfig};
use spine_protocol::message::Message;
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolArguments;

use crate::{KEY, Recorder, fast_retries, full_conversation, tools};
use spine_testkit::http::{End, Piece, Reply, TestServer, data_events, done, raw, rechunk};

pub fn config(server: &TestServer) -> OpenAiConfig {
    let mut c = OpenAiConfig::new("gpt-test", server.url("/v1")).with_api_key(KEY);
    c.retry = fast_retries();
    c
}

pub async fn complete(config: OpenAiConfig, messages: &[Message]) -> (Result<ModelReply, ModelError>, Recorder) {
    let client = OpenAiClient::new(config).expect("client");
    let sink = Recorder::default();
    let tools = tools();
    let request = ModelRequest { messages, tools: &tools, stable_prefix: None };
    let result = client.complete(request, &sink, &CancellationToken::new()).await;
    (result, sink)
}

pub fn chunk(delta: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

pub fn finish(reason: &str) -> Value {
    json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn usage(prompt: u64, completion: u64) -> Value {
    json!({"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})
}

fn call_start(index: u32, id: &str, name: &str) -> Value {
    chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
    )
}

fn call_args(index: u32, fragment: &str) -> Value {
    chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}))
}

fn text(t: &str) -> Value {
    chunk(json!({"content": t}))
}

/// A full streamed reply: the events, then `[DONE]`.
fn sse(events: &[Value]) -> Vec<Piece> {
    let mut pieces = data_events(events);
    pieces.push(done());
    pieces
}

fn user() -> Vec<Message> {
    vec![Message::system("sys"), Message::user("hi")]
}

#[tokio::test]
async fn one_tool_call_split_over_many_deltas_is_joined_by_index() {
    let args = r#"{"file_path": "src/main.rs", "limit": 10}"#;
    let mut events = vec![chunk(json!({"role": "assistant", "content": null})), call_start(0, "call_abc", "Read")];
    let chars: Vec<char> = args.chars().collect();
    events.extend(chars.chunks(3).map(|c| call_args(0, &c.iter().collect::<String>())));
    events.push(finish("tool_calls"));
    events.push(usage(120, 17));
    // 7-byte reads: events straddle chunk boundaries.
    let server = TestServer::start(vec![Reply::Sse(rechunk(sse(&events), 7), End::Close)]).await;
    let (reply, sink) = complete(config(&server), &user()).await;
    let reply = reply.expect("reply");
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.message.content, None);
    assert_eq!(reply.message.tool_calls.len(), 1);
    let call = &reply.message.tool_calls[0];
    assert_eq!((call.id.as_str(), call.name.as_str()), ("call_abc", "Read"));
    assert_eq!(call.arguments, ToolArguments::Json(json!({"file_path": "src/main.rs", "limit": 10})));
    assert_eq!(reply.usage, Some(Usage::new(120, 17)));
    assert!(sink.deltas().is_empty());
}

#[tokio::test]
async fn three_tool_calls_in_one_stream_keep_index_order_ids_and_arguments() {
    let events = vec![
        call_start(0, "call_0", "Read"),
        call_start(1, "call_1", "Bash"),
        call_args(0, r#"{"file_"#),
        call_start(2, "call_2", "Read"),
        call_args(1, r#"{"command""#),
        call_args(2, r#"{"file_path":"#),
        call_args(0, r#"path":"a"}"#),
        call_args(2, r#""c"}"#),
        call_args(1, r#":"ls"}"#),
        finish("tool_calls"),
    ];
    let server = TestServer::start(vec![Reply::Sse(sse(&events), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let calls = reply.expect("reply").message.tool_calls;
    let got: Vec<(&str, &str, &ToolArguments)> =
        calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), &c.arguments)).collect();
    assert_eq!(
        got,
        vec![
            ("call_0", "Read", &ToolArguments::Json(json!({"file_path": "a"}))),
            ("call_1", "Bash", &ToolArguments::Json(json!({"command": "ls"}))),
            ("call_2", "Read", &ToolArguments::Json(json!({"file_path": "c"}))),
        ]
    );
}

#[tokio::test]
async fn text_then_tool_call_streams_the_text_and_returns_both() {
    let events = vec![
        chunk(json!({"role": "assistant", "content": ""})),
        text("Let me "),
        text("look at 🌍 "),
        text("the file."),
        call_start(0, "call_1", "Read"),
        call_args(0, r#"{"file_path":"x"}"#),
        finish("tool_calls"),
        usage(5, 6),
    ];
    // 5-byte reads split the 4-byte emoji across chunks.
    let server = TestServer::start(vec![Reply::Sse(rechunk(sse(&events), 5), End::Close)]).await;
    let (reply, sink) = complete(config(&server), &user()).await;
    let reply = reply.expect("reply");
    assert_eq!(sink.deltas(), vec!["Let me ", "look at 🌍 ", "the file."]);
    assert_eq!(reply.message.content.as_deref(), Some("Let me look at 🌍 the file."));
    assert_eq!(reply.message.tool_calls.len(), 1);
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
}

#[tokio::test]
async fn a_plain_text_answer_finishes_with_stop() {
    let events = vec![text("Hello"), text(" there"), finish("stop"), usage(1, 2)];
    let server = TestServer::start(vec![Reply::Sse(sse(&events), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let reply = reply.expect("reply");
    assert_eq!(reply.message.content.as_deref(), Some("Hello there"));
    assert_eq!(reply.finish_reason, FinishReason::Stop);
}

#[tokio::test]
async fn malformed_data_line_fails_with_invalid_reply_naming_the_line() {
    let pieces = [data_events(&[text("Hi")]), vec![raw("data: {\"choices\": [oops\n\n")], vec![done()]].concat();
    let server = TestServer::start(vec![Reply::Sse(pieces, End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let err = reply.expect_err("malformed");
    assert_eq!(err.kind, ModelErrorKind::InvalidReply);
    assert!(err.message.contains(r#"data: {"choices": [oops"#), "{}", err.message);
    assert!(err.message.contains(&server.url("/v1/chat/completions")), "{}", err.message);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_cut_midway_is_a_transport_error_never_a_truncated_answer() {
    let pieces = data_events(&[text("The answer is "), text("forty")]);
    let server = TestServer::start(vec![Reply::Sse(pieces, End::Cut)]).await;
    let (reply, sink) = complete(config(&server), &user()).await;
    let err = reply.expect_err("cut");
    assert_eq!(err.kind, ModelErrorKind::Transport);
    assert!(err.message.contains("stream ended before the reply was complete"), "{}", err.message);
    // Text was already delivered: no retry may repeat it.
    assert_eq!(sink.deltas(), vec!["The answer is ", "forty"]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_closed_without_done_or_finish_reason_is_a_transport_error() {
    let pieces = data_events(&[text("partial")]);
    let server = TestServer::start(vec![Reply::Sse(pieces, End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let err = reply.expect_err("incomplete");
    assert_eq!(err.kind, ModelErrorKind::Transport);
    assert!(
        err.message.contains("stream ended before the reply was complete (no finish_reason and no [DONE])"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn stop_with_tool_calls_counts_as_tool_calls_and_a_missing_usage_chunk_or_done_is_tolerated() {
    // litellm: finish_reason "stop" with tool calls; fakellm: no usage chunk. No [DONE] either.
    let events = vec![call_start(0, "call_1", "Bash"), call_args(0, r#"{"command":"ls"}"#), finish("stop")];
    let server = TestServer::start(vec![Reply::Sse(data_events(&events), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let reply = reply.expect("reply");
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.usage, None);
    assert_eq!(reply.message.tool_calls[0].arguments, ToolArguments::Json(json!({"command": "ls"})));
}

#[tokio::test]
async fn length_finish_is_an_incomplete_error() {
    let server = TestServer::start(vec![Reply::Sse(sse(&[text("cut"), finish("length")]), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let err = reply.expect_err("length");
    assert_eq!(err.kind, ModelErrorKind::Incomplete);
    assert!(err.message.contains("the model's reply was cut off by the output token limit"), "{}", err.message);
}

#[tokio::test]
async fn content_filter_finish_is_a_refusal() {
    let server = TestServer::start(vec![Reply::Sse(sse(&[text("I"), finish("content_filter")]), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    assert_eq!(reply.expect_err("filtered").kind, ModelErrorKind::Refusal);
}

#[tokio::test]
async fn unparsable_arguments_are_kept_raw() {
    let events = vec![call_start(0, "call_1", "Bash"), call_args(0, "{\"command\": ls"), finish("tool_calls")];
    let server = TestServer::start(vec![Reply::Sse(sse(&events), End::Close)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    let call = &reply.expect("reply").message.tool_calls[0];
    assert_eq!(call.arguments, ToolArguments::Raw("{\"command\": ls".into()));
}

#[tokio::test]
async fn an_error_chunk_in_the_stream_fails_with_the_server_text() {
    let events = vec![json!({"error": {"message": "model overloaded", "type": "server_error", "code": 503}})];
    let server = TestServer::start(vec![
        Reply::Sse(data_events(&events), End::Close),
        Reply::Sse(sse(&[text("ok"), finish("stop")]), End::Close),
    ])
    .await;
    let (reply, _) = complete(config(&server), &user()).await;
    // Nothing was delivered before the error chunk: 503 is retried.
    assert_eq!(reply.expect("retried").message.content.as_deref(), Some("ok"));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn request_body_maps_every_message_kind_field_by_field() {
    let server = TestServer::start(vec![Reply::Sse(sse(&[text("ok"), finish("stop")]), End::Close)]).await;
    let (reply, _) = complete(config(&server), &full_conversation()).await;
    reply.expect("reply");
    let req = server.only_request();
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.headers["authorization"], format!("Bearer {KEY}").as_str());
    assert_eq!(req.headers["content-type"], "application/json");
    let body = &req.body;
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    let m = body["messages"].as_array().expect("messages");
    // One system message, then alternating turns (strict chat templates): hook
    // context and later system messages become user reminders, merged with the next user text,
    // and a reminder given inside a tool round follows the round's results.
    assert_eq!(m.len(), 6);
    assert_eq!(m[0], json!({"role": "system", "content": "You are spine.\n\nBe brief."}));
    assert_eq!(
        m[1],
        json!({"role": "user", "content": "read main.rs\n\n<system-reminder>\nbranch: main\n</system-reminder>"})
    );
    assert_eq!(
        m[2],
        json!({"role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"src/main.rs\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\": ls"}}
        ]})
    );
    assert_eq!(m[3], json!({"role": "tool", "tool_call_id": "call_1", "content": "fn main() {}"}));
    assert_eq!(
        m[4],
        json!({"role": "tool", "tool_call_id": "call_2", "content": "Error [invalid_arguments]: not JSON"})
    );
    assert_eq!(
        m[5],
        json!({"role": "user", "content": "<system-reminder>\ncareful\n</system-reminder>\n\n<system-reminder>\nlint ok\n</system-reminder>\n\n<system-reminder>\nCompacted earlier turns.\n</system-reminder>\n\nand now?"})
    );
    assert_eq!(
        body["tools"],
        json!([
            {"type": "function", "function": {"name": "Read", "description": "Reads a file", "parameters": tools()[0].input_schema}},
            {"type": "function", "function": {"name": "Bash", "description": "Runs a command", "parameters": tools()[1].input_schema}}
        ])
    );
    let keys: Vec<&String> = body.as_object().expect("object").keys().collect();
    assert_eq!(keys, vec!["model", "messages", "tools", "stream", "stream_options"]);
}

#[tokio::test]
async fn an_assistant_turn_with_only_tool_calls_sends_empty_content_and_no_key_sends_no_authorization() {
    let server = TestServer::start(vec![Reply::Sse(sse(&[text("ok"), finish("stop")]), End::Close)]).await;
    let mut cfg = config(&server);
    cfg.api_key = None;
    let messages = vec![
        Message::user("go"),
        Message::Assistant(spine_protocol::message::AssistantMessage {
            reasoning: Vec::new(),
            content: None,
            tool_calls: vec![spine_protocol::tool::ToolCall {
                id: "c".into(),
                name: "Bash".into(),
                arguments: ToolArguments::Json(json!({})),
            }],
        }),
    ];
    let client = OpenAiClient::new(cfg).expect("client");
    let request = ModelRequest { messages: &messages, tools: &[], stable_prefix: None };
    client.complete(request, &Recorder::default(), &CancellationToken::new()).await.expect("reply");
    let req = server.only_request();
    assert!(req.headers.get("authorization").is_none());
    assert_eq!(req.body["messages"][1]["content"], "", "a tool-call turn sends empty content, never null");
    assert!(req.body.get("tools").is_none(), "tools are omitted when empty");
}

#[tokio::test]
async fn non_streaming_mode_sends_stream_false_and_reads_the_whole_reply() {
    let whole = json!({
        "id": "chatcmpl-1", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\":\"a\"}"}}
        ]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}
    });
    let server = TestServer::start(vec![Reply::Json(whole)]).await;
    let mut cfg = config(&server);
    cfg.provider.mode = Mode::NonStreaming;
    let (reply, sink) = complete(cfg, &user()).await;
    let reply = reply.expect("reply");
    let body = server.only_request().body;
    assert_eq!(body["stream"], false);
    assert!(body.get("stream_options").is_none());
    assert_eq!(sink.deltas(), vec!["Checking."]);
    assert_eq!(reply.message.content.as_deref(), Some("Checking."));
    assert_eq!(reply.message.tool_calls[0].id, "call_9");
    assert_eq!(reply.message.tool_calls[0].arguments, ToolArguments::Json(json!({"file_path": "a"})));
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.usage, Some(Usage::new(9, 4)));
}

#[tokio::test]
async fn a_server_ignoring_stream_true_is_read_as_a_whole_reply() {
    let whole = json!({"choices": [{"message": {"content": "plain"}, "finish_reason": "stop"}]});
    let server = TestServer::start(vec![Reply::Json(whole)]).await;
    let (reply, _) = complete(config(&server), &user()).await;
    assert_eq!(reply.expect("reply").message.content.as_deref(), Some("plain"));
}

#[tokio::test]
async fn usage_option_can_be_left_out_for_servers_that_reject_it() {
    let server = TestServer::start(vec![Reply::Sse(sse(&[text("ok"), finish("stop")]), End::Close)]).await;
    let mut cfg = config(&server);
    cfg.provider.mode = Mode::Streaming { include_usage: false };
    let (reply, _) = complete(cfg, &user()).await;
    reply.expect("reply");
    let body = server.only_request().body;
    assert_eq!(body["stream"], true);
    assert!(body.get("stream_options").is_none());
}
