//! What real OpenAI-compatible servers need, against a server that behaves
//! like llama.cpp's (`spine_testkit::llama`): no `null` content, `tool_choice` sent when set,
//! absent usage kept absent, a non-streaming retry when a stream ends empty, one system message
//! and alternating turns after compaction; the request fields of `model_options`.

use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::model::{FinishReason, ModelClient, ModelErrorKind, ModelRequest, ToolChoice};
use spine_models::openai::{Mode, OpenAiClient, OpenAiConfig};
use spine_protocol::hook::HookEventName;
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::run::Usage;
use spine_protocol::tool::{ToolArguments, ToolCall};
use spine_testkit::http::{End, Reply, TestServer, data_events, done};
use spine_testkit::llama::{Answer, LlamaServer, TOOLS_IGNORED};

use crate::{Recorder, fast_retries, tools};

fn config(server: &LlamaServer) -> OpenAiConfig {
    let mut c = OpenAiConfig::new("smollm2", server.base_url());
    c.retry = fast_retries();
    c
}

fn calc() -> Answer {
    Answer::Call { name: "Bash".into(), arguments: json!({"command": "echo $((17*23))"}) }
}

fn result(id: &str, content: &str) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: id.into(),
        name: "Bash".into(),
        content: content.into(),
        error_code: None,
        images: Vec::new(),
    }
}

fn roles(body: &Value) -> Vec<String> {
    body["messages"].as_array().into_iter().flatten().map(|m| m["role"].as_str().unwrap_or("").to_owned()).collect()
}

async fn send(client: &OpenAiClient, messages: &[Message], sink: &Recorder) -> spine_core::model::ModelReply {
    let tools = tools();
    client
        .complete(ModelRequest { messages, tools: &tools, stable_prefix: None }, sink, &CancellationToken::new())
        .await
        .expect("the server accepts the request")
}

#[tokio::test]
async fn a_llama_cpp_style_server_runs_a_full_tool_loop_with_tool_choice_and_no_usage() {
    let server = LlamaServer::start(vec![calc(), Answer::Text("391".into())]).await;
    let client =
        OpenAiClient::new(OpenAiConfig { tool_choice: Some(ToolChoice::Auto), ..config(&server) }).expect("client");
    let mut messages = vec![Message::system("sys"), Message::user("Compute 17*23 with a tool.")];
    let sink = Recorder::default();
    let first = send(&client, &messages, &sink).await;
    assert_eq!(first.finish_reason, FinishReason::ToolCalls);
    assert_eq!(first.message.tool_calls[0].name, "Bash");
    assert_eq!(first.usage, None, "the server sent no usage: absent, not 0/0");
    assert_eq!(sink.attempts(), vec!["1 retry", "2 ok"], "the empty stream was retried once without streaming");
    let call_id = first.message.tool_calls[0].id.clone();
    messages.push(Message::Assistant(first.message));
    messages.push(Message::Tool(result(&call_id, "391")));
    let second = send(&client, &messages, &Recorder::default()).await;
    assert_eq!(second.message.content.as_deref(), Some("391"));
    assert_eq!(second.usage, None);

    let requests = server.requests();
    assert!(
        requests.iter().all(|r| r.rejected.is_none()),
        "{:?}",
        requests.iter().map(|r| &r.rejected).collect::<Vec<_>>()
    );
    let bodies: Vec<&Value> = requests.iter().map(|r| &r.body).collect();
    assert_eq!(bodies.len(), 3);
    assert_eq!((bodies[0]["stream"].clone(), bodies[1]["stream"].clone()), (json!(true), json!(false)));
    assert!(bodies[1].get("stream_options").is_none(), "a whole reply asks for no stream options");
    assert!(bodies.iter().all(|b| b["tool_choice"] == "auto"), "tool_choice is sent on every request");
    let assistant = &bodies[2]["messages"][2];
    assert_eq!((assistant["role"].clone(), assistant["content"].clone()), (json!("assistant"), json!("")));
}

#[tokio::test]
async fn without_tool_choice_the_server_ignores_the_tools_and_with_a_tool_name_it_calls_it() {
    let server = LlamaServer::start(vec![calc(), calc()]).await;
    let messages = [Message::system("sys"), Message::user("Use Bash.")];
    let plain = OpenAiClient::new(config(&server)).expect("client");
    let reply = send(&plain, &messages, &Recorder::default()).await;
    assert_eq!(reply.message.content.as_deref(), Some(TOOLS_IGNORED));
    let mut named = OpenAiConfig { tool_choice: Some(ToolChoice::Tool("Bash".into())), ..config(&server) };
    named.provider.mode = Mode::NonStreaming;
    let named = OpenAiClient::new(named).expect("client");
    let reply = send(&named, &messages, &Recorder::default()).await;
    assert_eq!(reply.message.tool_calls[0].name, "Bash");
    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert!(bodies[0].get("tool_choice").is_none(), "unset: not sent");
    assert_eq!(bodies[1]["tool_choice"], json!({"type": "function", "function": {"name": "Bash"}}));
}

#[tokio::test]
async fn tool_choice_required_and_none_are_sent_as_words_and_never_without_tools() {
    for (choice, word) in [(ToolChoice::Required, "required"), (ToolChoice::None, "none")] {
        let server = LlamaServer::start(vec![Answer::Text("ok".into()), Answer::Text("ok".into())]).await;
        let client = OpenAiClient::new(OpenAiConfig { tool_choice: Some(choice), ..config(&server) }).expect("client");
        let messages = [Message::user("hi")];
        send(&client, &messages, &Recorder::default()).await;
        client
            .complete(
                ModelRequest { messages: &messages, tools: &[], stable_prefix: None },
                &Recorder::default(),
                &CancellationToken::new(),
            )
            .await
            .expect("reply");
        let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
        assert_eq!(bodies[0]["tool_choice"], word);
        assert!(bodies[1].get("tool_choice").is_none(), "no tools, no tool_choice (OpenAI rejects it)");
    }
}

#[tokio::test]
async fn after_compaction_the_request_has_one_system_message_then_alternating_turns() {
    // The transcript after a sandwich compaction that followed hook context: the note, the
    // kept tail (a call and its result), then context from PostToolUse and the next prompt.
    let call =
        ToolCall { id: "c1".into(), name: "Bash".into(), arguments: ToolArguments::Json(json!({"command": "ls"})) };
    let messages = vec![
        Message::system("You are spine."),
        Message::system("Operator notes."),
        Message::user("Earlier context compacted for smollm2."),
        Message::context(HookEventName::SessionStart, "Session restarted after compaction."),
        Message::Assistant(AssistantMessage { content: None, tool_calls: vec![call], reasoning: Vec::new() }),
        Message::Tool(result("c1", "a.txt")),
        Message::context(HookEventName::PostToolUse, "Listed one file."),
        Message::user("Now answer."),
    ];
    let server = LlamaServer::start(vec![Answer::Text("done".into())]).await;
    let client = OpenAiClient::new(config(&server)).expect("client");
    send(&client, &messages, &Recorder::default()).await;
    let request = server.requests().remove(0);
    assert_eq!(request.rejected, None, "the strict template accepts it");
    let body = request.body;
    assert_eq!(roles(&body), ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(body["messages"][0]["content"], "You are spine.\n\nOperator notes.");
    assert_eq!(
        body["messages"][1]["content"],
        "Earlier context compacted for smollm2.\n\n<system-reminder>\nSession restarted after compaction.\n</system-reminder>"
    );
    assert_eq!(
        body["messages"][4]["content"],
        "<system-reminder>\nListed one file.\n</system-reminder>\n\nNow answer."
    );
}

#[tokio::test]
async fn max_tokens_and_temperature_are_sent_when_set_with_the_field_each_model_takes() {
    let server =
        LlamaServer::start(vec![Answer::Text("a".into()), Answer::Text("b".into()), Answer::Text("c".into())]).await;
    let messages = [Message::user("hi")];
    let set = OpenAiConfig { max_tokens: Some(400), temperature: Some(0.2), ..config(&server) };
    send(&OpenAiClient::new(set.clone()).expect("client"), &messages, &Recorder::default()).await;
    let reasoning = OpenAiConfig { model: "o4-mini".into(), ..set };
    send(&OpenAiClient::new(reasoning).expect("client"), &messages, &Recorder::default()).await;
    send(&OpenAiClient::new(config(&server)).expect("client"), &messages, &Recorder::default()).await;
    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!((bodies[0]["max_tokens"].clone(), bodies[0]["temperature"].clone()), (json!(400), json!(0.2)));
    assert!(bodies[0].get("max_completion_tokens").is_none());
    assert_eq!(bodies[1]["max_completion_tokens"], 400, "o-series models take max_completion_tokens");
    assert!(bodies[1].get("max_tokens").is_none());
    for field in ["max_tokens", "max_completion_tokens", "temperature"] {
        assert!(bodies[2].get(field).is_none(), "unset: `{field}` not sent");
    }
}

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

#[tokio::test]
async fn usage_sent_with_a_length_stop_is_kept_on_the_error() {
    let mut pieces = data_events(&[
        chunk(json!({"content": "on and on"}), Value::Null),
        chunk(json!({}), json!("length")),
        json!({"choices": [], "usage": {"prompt_tokens": 7514, "completion_tokens": 400}}),
    ]);
    pieces.push(done());
    let server = TestServer::start(vec![Reply::Sse(pieces, End::Close)]).await;
    let config = OpenAiConfig::new("smollm2", server.url("/v1"));
    let client = OpenAiClient::new(config).expect("client");
    let messages = [Message::user("ramble")];
    let err = client
        .complete(
            ModelRequest { messages: &messages, tools: &[], stable_prefix: None },
            &Recorder::default(),
            &CancellationToken::new(),
        )
        .await
        .expect_err("cut by the limit");
    assert_eq!(err.kind, ModelErrorKind::Incomplete);
    assert_eq!(err.usage, Some(Usage::new(7514, 400)));
}

#[tokio::test]
async fn a_usage_object_without_counts_is_absent_not_zero() {
    let mut pieces = data_events(&[
        chunk(json!({"content": "hi"}), json!("stop")),
        json!({"choices": [], "usage": {"total_tokens": null}}),
    ]);
    pieces.push(done());
    let server = TestServer::start(vec![Reply::Sse(pieces, End::Close)]).await;
    let client = OpenAiClient::new(OpenAiConfig::new("smollm2", server.url("/v1"))).expect("client");
    let messages = [Message::user("hi")];
    let reply = client
        .complete(
            ModelRequest { messages: &messages, tools: &[], stable_prefix: None },
            &Recorder::default(),
            &CancellationToken::new(),
        )
        .await
        .expect("reply");
    assert_eq!(reply.usage, None);
}

#[tokio::test]
async fn an_empty_stream_is_retried_once_without_streaming_and_then_stays_whole() {
    // Attempt 1 streams nothing; attempt 2 (whole) fails with a 503; attempt 3 is whole again.
    let server = TestServer::start(vec![
        Reply::Sse(vec![done()], End::Close),
        Reply::Status { status: 503, headers: Vec::new(), body: "busy".into() },
        Reply::Json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}]})),
    ])
    .await;
    let mut config = OpenAiConfig::new("smollm2", server.url("/v1"));
    config.retry = fast_retries();
    let client = OpenAiClient::new(config).expect("client");
    let sink = Recorder::default();
    let messages = [Message::user("hi")];
    let reply = client
        .complete(
            ModelRequest { messages: &messages, tools: &[], stable_prefix: None },
            &sink,
            &CancellationToken::new(),
        )
        .await
        .expect("reply");
    assert_eq!(reply.message.content.as_deref(), Some("hello"));
    assert_eq!(sink.attempts(), ["1 retry", "2 retry", "3 ok"]);
    let streams: Vec<Value> = server.requests().into_iter().map(|r| r.body["stream"].clone()).collect();
    assert_eq!(streams, [json!(true), json!(false), json!(false)]);
}
