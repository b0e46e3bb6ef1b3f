//! The OpenAI Responses API: request bodies field by field (instructions, input items, tools,
//! stateless options), replies assembled from the streaming events, a full tool loop with
//! reasoning items sent back encrypted, typed errors from `response.failed` and `error`
//! events, and retries as the other wires.

use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::model::{FinishReason, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest};
use spine_models::responses::{ResponsesClient, ResponsesConfig};
use spine_protocol::message::{AssistantMessage, Message, ReasoningEffort, ReasoningItem, ToolResultMessage};
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolArguments;
use spine_testkit::http::{End, Piece, Reply, TestServer, named_events, rechunk};

use crate::{KEY, Recorder, fast_retries, full_conversation, tools};

pub fn config(server: &TestServer) -> ResponsesConfig {
    let mut c = ResponsesConfig::new("o4-mini", server.url("/v1")).with_api_key(KEY);
    c.retry = fast_retries();
    c
}

pub async fn complete(config: ResponsesConfig, messages: &[Message]) -> (Result<ModelReply, ModelError>, Recorder) {
    let client = ResponsesClient::new(config).expect("client");
    let sink = Recorder::default();
    let tools = tools();
    let request = ModelRequest { messages, tools: &tools, stable_prefix: None };
    let result = client.complete(request, &sink, &CancellationToken::new()).await;
    (result, sink)
}

fn created() -> Value {
    json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "status": "in_progress", "output": []}})
}

fn completed(input: u64, output: u64) -> Value {
    json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "output": [],
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": output,
                  "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": input + output}}})
}

fn reasoning_item(index: u32, encrypted: &str) -> Vec<Value> {
    vec![
        json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_part.added", "output_index": index, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": index, "summary_index": 0, "delta": "**Reading** the file "}),
        json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": index, "summary_index": 0, "delta": "first."}),
        json!({"type": "response.output_item.done", "output_index": index, "item": {"type": "reasoning", "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "**Reading** the file first."}], "encrypted_content": encrypted}}),
    ]
}

fn function_call(index: u32, call_id: &str, name: &str, arguments: &str) -> Vec<Value> {
    let (a, b) = arguments.split_at(arguments.len() / 2);
    vec![
        json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "function_call", "id": "fc_1", "call_id": call_id, "name": name, "arguments": "", "status": "in_progress"}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": index, "delta": a}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": index, "delta": b}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": index, "arguments": arguments}),
        json!({"type": "response.output_item.done", "output_index": index, "item": {"type": "function_call", "id": "fc_1", "call_id": call_id, "name": name, "arguments": arguments, "status": "completed"}}),
    ]
}

fn message(index: u32, parts: &[&str]) -> Vec<Value> {
    let whole: String = parts.concat();
    let mut events = vec![
        json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}}),
        json!({"type": "response.content_part.added", "output_index": index, "content_index": 0, "part": {"type": "output_text", "text": ""}}),
    ];
    events.extend(parts.iter().map(|p| {
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": index, "content_index": 0, "delta": p})
    }));
    events.push(json!({"type": "response.output_text.done", "output_index": index, "content_index": 0, "text": whole}));
    events.push(json!({"type": "response.output_item.done", "output_index": index, "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": whole, "annotations": []}]}}));
    events
}

fn stream(parts: Vec<Vec<Value>>) -> Vec<Piece> {
    let events: Vec<Value> = parts.into_iter().flatten().collect();
    named_events(&events)
}

pub fn text_reply(text: &str) -> Reply {
    Reply::Sse(stream(vec![vec![created()], message(0, &[text]), vec![completed(5, 2)]]), End::Close)
}

#[tokio::test]
async fn a_full_tool_loop_sends_reasoning_calls_and_outputs_back_statelessly() {
    let first = stream(vec![
        vec![created()],
        reasoning_item(0, "gAAAA-encrypted"),
        function_call(1, "call_abc", "Read", r#"{"file_path":"src/main.rs"}"#),
        vec![completed(120, 40)],
    ]);
    let second = stream(vec![vec![created()], message(0, &["It is ", "empty."]), vec![completed(200, 10)]]);
    let server =
        TestServer::start(vec![Reply::Sse(rechunk(first, 13), End::Close), Reply::Sse(second, End::Close)]).await;
    let mut config = config(&server);
    config.provider.reasoning_effort = Some(ReasoningEffort::High);

    let mut conversation = vec![Message::system("You are spine."), Message::user("read main.rs")];
    let (reply, _) = complete(config.clone(), &conversation).await;
    let reply = reply.expect("first reply");
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.message.content, None);
    assert_eq!(
        reply.message.reasoning,
        vec![ReasoningItem::Reasoning {
            id: "rs_1".into(),
            summary: vec!["**Reading** the file first.".into()],
            encrypted_content: Some("gAAAA-encrypted".into())
        }]
    );
    let call = &reply.message.tool_calls[0];
    assert_eq!((call.id.as_str(), call.name.as_str()), ("call_abc", "Read"));
    assert_eq!(call.arguments, ToolArguments::Json(json!({"file_path": "src/main.rs"})));
    assert_eq!(reply.usage, Some(Usage::new(120, 40)));

    conversation.push(Message::Assistant(reply.message));
    conversation.push(Message::Tool(ToolResultMessage {
        tool_call_id: "call_abc".into(),
        name: "Read".into(),
        content: "fn main() {}".into(),
        error_code: None,
        images: Vec::new(),
    }));
    let (reply, sink) = complete(config, &conversation).await;
    let reply = reply.expect("final reply");
    assert_eq!(reply.finish_reason, FinishReason::Stop);
    assert_eq!(reply.message.content.as_deref(), Some("It is empty."));
    assert_eq!(sink.deltas(), vec!["It is ", "empty."]);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].path, "/v1/responses");
    assert_eq!(requests[1].headers["authorization"], format!("Bearer {KEY}"));
    let body = &requests[1].body;
    assert_eq!(body["model"], "o4-mini");
    assert_eq!(body["instructions"], "You are spine.");
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["reasoning"], json!({"effort": "high", "summary": "auto"}));
    assert!(body.get("previous_response_id").is_none());
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "read main.rs"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Reading** the file first."}], "encrypted_content": "gAAAA-encrypted"},
            {"type": "function_call", "call_id": "call_abc", "name": "Read", "arguments": "{\"file_path\":\"src/main.rs\"}"},
            {"type": "function_call_output", "call_id": "call_abc", "output": "fn main() {}"}
        ])
    );
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "name": "Read", "description": "Reads a file", "parameters": tools()[0].input_schema, "strict": false})
    );
}

#[tokio::test]
async fn request_body_places_every_message_kind_field_by_field() {
    let server = TestServer::start(vec![text_reply("ok")]).await;
    complete(config(&server), &full_conversation()).await.0.expect("reply");
    let body = server.only_request().body;
    assert_eq!(body["instructions"], "You are spine.\n\nBe brief.");
    assert!(body.get("reasoning").is_none(), "no effort configured: no reasoning field");
    let dev =
        |text: &str| json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]});
    let user =
        |text: &str| json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]});
    assert_eq!(
        body["input"],
        json!([
            user("read main.rs"),
            dev("branch: main"),
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
            {"type": "function_call", "call_id": "call_1", "name": "Read", "arguments": "{\"file_path\":\"src/main.rs\"}"},
            {"type": "function_call", "call_id": "call_2", "name": "Bash", "arguments": "{\"command\": ls"},
            dev("careful"),
            {"type": "function_call_output", "call_id": "call_1", "output": "fn main() {}"},
            {"type": "function_call_output", "call_id": "call_2", "output": "Error [invalid_arguments]: not JSON"},
            dev("lint ok"),
            dev("Compacted earlier turns."),
            user("and now?")
        ])
    );
}

#[tokio::test]
async fn reasoning_without_encrypted_content_and_anthropic_thinking_are_not_sent() {
    let server = TestServer::start(vec![text_reply("ok")]).await;
    let turn = AssistantMessage {
        reasoning: vec![
            ReasoningItem::Thinking { thinking: "t".into(), signature: "s".into() },
            ReasoningItem::Reasoning { id: "rs_2".into(), summary: vec!["s".into()], encrypted_content: None },
        ],
        content: Some("Earlier.".into()),
        tool_calls: vec![],
    };
    complete(config(&server), &[Message::user("a"), Message::Assistant(turn), Message::user("b")]).await.0.expect("ok");
    let input = &server.only_request().body["input"];
    assert_eq!(input.as_array().map(Vec::len), Some(3), "{input}");
    assert_eq!(input[1]["role"], "assistant");
}

#[tokio::test]
async fn response_failed_is_a_typed_error_retried_like_a_5xx() {
    let failed = |code: &str| {
        Reply::Sse(
            named_events(&[
                created(),
                json!({"type": "response.failed", "response": {"id": "resp_1", "status": "failed", "error": {"code": code, "message": "The model had a problem."}}}),
            ]),
            End::Close,
        )
    };
    let server = TestServer::start(vec![failed("server_error"), text_reply("fine")]).await;
    let (reply, sink) = complete(config(&server), &[Message::user("hi")]).await;
    assert_eq!(reply.expect("retried").message.content.as_deref(), Some("fine"));
    assert_eq!(sink.attempts(), vec!["1 retry", "2 ok"]);

    let server = TestServer::always(failed("server_error")).await;
    let err = complete(config(&server), &[Message::user("hi")]).await.0.expect_err("fails");
    assert_eq!(err.kind, ModelErrorKind::Http { status: 500 });
    assert!(err.message.contains("response.failed server_error: The model had a problem."), "{}", err.message);
}

#[tokio::test]
async fn an_error_event_is_a_typed_error_and_a_client_error_is_not_retried() {
    let events = named_events(&[
        created(),
        json!({"type": "error", "code": "invalid_request_error", "message": "Invalid 'input[2]'.", "param": "input", "sequence_number": 1}),
    ]);
    let server = TestServer::always(Reply::Sse(events, End::Close)).await;
    let err = complete(config(&server), &[Message::user("hi")]).await.0.expect_err("fails");
    assert_eq!(err.kind, ModelErrorKind::Http { status: 400 });
    assert!(err.message.contains("Invalid 'input[2]'."), "{}", err.message);
    assert_eq!(server.requests().len(), 1);

    let events = named_events(&[
        created(),
        json!({"type": "error", "code": "rate_limit_exceeded", "message": "Slow down.", "sequence_number": 1}),
    ]);
    let server = TestServer::start(vec![Reply::Sse(events, End::Close), text_reply("ok")]).await;
    let (reply, _) = complete(config(&server), &[Message::user("hi")]).await;
    reply.expect("a rate-limit error event is retried");
}

#[tokio::test]
async fn status_429_and_503_are_retried_as_the_other_wires() {
    let status = |code: u16| Reply::Status {
        status: code,
        headers: vec![("content-type", "application/json".into())],
        body: json!({"error": {"message": "busy", "type": "server_error"}}).to_string(),
    };
    let server = TestServer::start(vec![status(429), status(503), text_reply("ok")]).await;
    let (reply, sink) = complete(config(&server), &[Message::user("hi")]).await;
    assert_eq!(reply.expect("retried").message.content.as_deref(), Some("ok"));
    assert_eq!(sink.attempts(), vec!["1 retry", "2 retry", "3 ok"]);
}

#[tokio::test]
async fn an_incomplete_response_for_max_output_tokens_is_incomplete() {
    let events = stream(vec![
        vec![created()],
        message(0, &["Half an ans"]),
        vec![
            json!({"type": "response.incomplete", "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}}),
        ],
    ]);
    let server = TestServer::always(Reply::Sse(events, End::Close)).await;
    let err = complete(config(&server), &[Message::user("hi")]).await.0.expect_err("incomplete");
    assert_eq!(err.kind, ModelErrorKind::Incomplete);
    assert_eq!(server.requests().len(), 1, "content was delivered: not retried");
}

#[tokio::test]
async fn a_stream_that_ends_before_response_completed_is_a_transport_error() {
    let events = stream(vec![vec![created()], message(0, &["Hi"])]);
    let server = TestServer::always(Reply::Sse(events, End::Close)).await;
    let err = complete(config(&server), &[Message::user("hi")]).await.0.expect_err("cut");
    assert_eq!(err.kind, ModelErrorKind::Transport);
    assert!(err.message.contains("no response.completed"), "{}", err.message);
}

#[tokio::test]
async fn the_key_never_appears_in_an_error() {
    let server = TestServer::always(Reply::Status {
        status: 401,
        headers: vec![("content-type", "application/json".into())],
        body: json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}).to_string(),
    })
    .await;
    let err = complete(config(&server), &[Message::user("hi")]).await.0.expect_err("401");
    assert_eq!(err.kind, ModelErrorKind::Http { status: 401 });
    assert!(!err.message.contains(KEY), "{}", err.message);
}

#[test]
fn the_openai_responses_spec_reads_the_openai_variables_and_needs_the_key_for_the_public_endpoint() {
    use spine_models::ClientError;
    use spine_models::factory::client_for_vars;
    use spine_models::spec::ModelSpec;
    let spec: ModelSpec = "openai-responses:o4-mini".parse().expect("spec");
    let local = |name: &str| (name == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:9/v1".to_owned());
    assert_eq!(client_for_vars(&spec, local).expect("a local server needs no key").model(), "o4-mini");
    let config =
        ResponsesConfig::from_vars("o4-mini", |name| (name == "OPENAI_API_KEY").then(|| "k".to_owned())).expect("key");
    assert_eq!(config.base_url, "https://api.openai.com/v1");
    let missing = client_for_vars(&spec, |_| None).err().expect("the public endpoint needs a key");
    assert!(matches!(missing, ClientError::MissingApiKey { var: "OPENAI_API_KEY", .. }), "{missing}");
}

#[tokio::test]
async fn encrypted_reasoning_is_asked_only_of_reasoning_models() {
    let server = TestServer::start(vec![text_reply("a"), text_reply("b"), text_reply("c")]).await;
    let mut gpt = config(&server);
    gpt.model = "gpt-4.1".into();
    complete(gpt.clone(), &[Message::user("hi")]).await.0.expect("reply");
    gpt.provider.reasoning_effort = Some(ReasoningEffort::Low);
    complete(gpt, &[Message::user("hi")]).await.0.expect("reply");
    complete(config(&server), &[Message::user("hi")]).await.0.expect("reply");
    let requests = server.requests();
    assert!(requests[0].body.get("include").is_none(), "gpt-4.1 rejects encrypted reasoning: {}", requests[0].body);
    assert!(requests[0].body.get("reasoning").is_none());
    assert_eq!(requests[1].body["include"], json!(["reasoning.encrypted_content"]), "an effort means reasoning");
    assert_eq!(requests[2].body["include"], json!(["reasoning.encrypted_content"]), "o4-mini reasons");
    assert!(requests[2].body.get("reasoning").is_none(), "no effort configured: the server's default");
}

#[tokio::test]
async fn tool_choice_max_output_tokens_and_temperature_are_sent_when_set_and_usage_is_priced() {
    let server = TestServer::start(vec![text_reply("ok"), text_reply("ok")]).await;
    let mut cfg = config(&server);
    cfg.tool_choice = Some(spine_core::model::ToolChoice::Tool("Read".into()));
    cfg.max_tokens = Some(2048);
    cfg.temperature = Some(0.2);
    let (reply, _) = complete(cfg, &[Message::user("hi")]).await;
    reply.expect("reply");
    let (reply, _) = complete(config(&server), &[Message::user("hi")]).await;
    reply.expect("reply");
    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies[0]["tool_choice"], json!({"type": "function", "name": "Read"}));
    assert_eq!(bodies[0]["max_output_tokens"], 2048);
    assert_eq!(bodies[0]["temperature"], 0.2);
    for field in ["tool_choice", "max_output_tokens", "temperature"] {
        assert!(bodies[1].get(field).is_none(), "{field} is not sent unless set");
    }
    let client = ResponsesClient::new(config(&server)).expect("client");
    let cost = client.cost_usd(&Usage::new(1_000_000, 0)).expect("o4-mini is in the price table");
    assert!((cost - 1.1).abs() < 1e-9, "{cost}");
}
