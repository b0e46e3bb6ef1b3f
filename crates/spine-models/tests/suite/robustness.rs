//! Shared robustness rules: retries and `retry-after`, error messages, timeouts, cancellation,
//! and keys kept out of errors. Over 500 lines on purpose: one table of rules every provider
//! client must keep, read together; each test drives the clients through the same fixtures.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use spine_core::CancellationToken;
use spine_core::model::{ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink};
use spine_models::anthropic::AnthropicClient;
use spine_models::http::Timeouts;
use spine_models::openai::OpenAiClient;
use spine_models::retry::RetryPolicy;
use spine_protocol::message::Message;

use crate::{KEY, Recorder, anthropic, openai};
use spine_testkit::http::{End, Piece, Reply, TestServer, data_events, done, named_events};

fn user() -> Vec<Message> {
    vec![Message::user("hi")]
}

fn ok_stream() -> Reply {
    let mut pieces = data_events(&[
        json!({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ]);
    pieces.push(done());
    Reply::Sse(pieces, End::Close)
}

fn status(status: u16, body: &str) -> Reply {
    Reply::Status { status, headers: vec![("content-type", "application/json".into())], body: body.into() }
}

/// The two HTTP providers, for rules both must follow.
#[derive(Debug, Clone, Copy)]
enum Provider {
    OpenAi,
    Anthropic,
}

const BOTH: [Provider; 2] = [Provider::OpenAi, Provider::Anthropic];

impl Provider {
    fn ok_reply(self) -> Reply {
        match self {
            Provider::OpenAi => ok_stream(),
            Provider::Anthropic => Reply::Sse(anthropic::text_reply("ok"), End::Close),
        }
    }

    fn path(self) -> &'static str {
        match self {
            Provider::OpenAi => "/v1/chat/completions",
            Provider::Anthropic => "/v1/messages",
        }
    }

    async fn complete(self, server: &TestServer) -> (Result<ModelReply, ModelError>, Recorder) {
        match self {
            Provider::OpenAi => openai::complete(openai::config(server), &user()).await,
            Provider::Anthropic => anthropic::complete(anthropic::config(server), &user()).await,
        }
    }
}

#[tokio::test]
async fn rate_limit_retry_after_is_honoured_then_the_request_succeeds() {
    for provider in BOTH {
        let server = TestServer::start(vec![
            Reply::Status {
                status: 429,
                headers: vec![("retry-after", "1".into()), ("content-type", "application/json".into())],
                body: json!({"error": {"message": "Rate limit reached", "type": "requests"}}).to_string(),
            },
            provider.ok_reply(),
        ])
        .await;
        let started = Instant::now();
        let (reply, _) = provider.complete(&server).await;
        assert_eq!(reply.expect("retried").message.content.as_deref(), Some("ok"), "{provider:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{provider:?}");
        let gap = requests[1].at - requests[0].at;
        assert!(gap >= Duration::from_millis(990), "{provider:?} waited only {gap:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{provider:?}");
    }
}

#[tokio::test]
async fn server_errors_are_retried_three_times_then_reported() {
    for provider in BOTH {
        let server = TestServer::always(status(500, r#"{"error":{"message":"The server had an error"}}"#)).await;
        let (reply, _) = provider.complete(&server).await;
        let err = reply.expect_err("500s");
        assert_eq!(err.kind, ModelErrorKind::Http { status: 500 });
        assert_eq!(server.requests().len(), 4, "{provider:?}: 1 attempt + 3 retries");
        assert!(err.message.contains("500 Internal Server Error: The server had an error"), "{}", err.message);
        assert!(err.message.ends_with("(gave up after 3 retries)"), "{}", err.message);
    }
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_names_endpoint_status_and_server_text() {
    for provider in BOTH {
        let server = TestServer::always(status(
            401,
            r#"{"type":"error","error":{"message":"Invalid authentication","type":"authentication_error"}}"#,
        ))
        .await;
        let (reply, _) = provider.complete(&server).await;
        let err = reply.expect_err("401");
        assert_eq!(err.kind, ModelErrorKind::Http { status: 401 });
        assert_eq!(server.requests().len(), 1, "{provider:?}");
        assert_eq!(
            err.message,
            format!("POST {} returned 401 Unauthorized: Invalid authentication", server.url(provider.path()))
        );
    }
}

#[tokio::test]
async fn client_errors_400_403_404_are_not_retried() {
    for code in [400, 403, 404] {
        let server = TestServer::always(status(code, r#"{"error":{"message":"no"}}"#)).await;
        let (reply, _) = anthropic::complete(anthropic::config(&server), &user()).await;
        assert_eq!(reply.expect_err("client error").kind, ModelErrorKind::Http { status: code });
        assert_eq!(server.requests().len(), 1, "status {code}");
    }
}

#[tokio::test]
async fn non_json_error_body_gives_a_clear_truncated_message() {
    let html = format!("<html><body><h1>404 Not Found</h1>{}</body></html>", "x".repeat(2000));
    let server = TestServer::always(Reply::Status {
        status: 404,
        headers: vec![("content-type", "text/html".into())],
        body: html,
    })
    .await;
    let (reply, _) = anthropic::complete(anthropic::config(&server), &user()).await;
    let err = reply.expect_err("404");
    let prefix =
        format!("POST {} returned 404 Not Found: <html><body><h1>404 Not Found</h1>xxx", server.url("/v1/messages"));
    assert!(err.message.starts_with(&prefix), "{}", err.message);
    assert!(err.message.ends_with("… (truncated)"), "{}", err.message);
    assert!(err.message.len() < 700, "{} bytes", err.message.len());

    let server = TestServer::always(status(400, "")).await;
    let (reply, _) = openai::complete(openai::config(&server), &user()).await;
    assert!(reply.expect_err("400").message.ends_with("returned 400 Bad Request: (empty body)"));
}

#[tokio::test]
async fn connection_refused_is_a_transport_error_naming_the_endpoint() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let mut cfg = spine_models::OpenAiConfig::new("m", format!("http://{addr}/v1")).with_api_key(KEY);
    cfg.retry = RetryPolicy { max_retries: 1, ..crate::fast_retries() };
    let client = OpenAiClient::new(cfg).expect("client");
    let err = client
        .complete(
            ModelRequest { messages: &user(), tools: &[], stable_prefix: None },
            &Recorder::default(),
            &CancellationToken::new(),
        )
        .await
        .expect_err("refused");
    assert_eq!(err.kind, ModelErrorKind::Transport);
    let want = format!("POST http://{addr}/v1/chat/completions: connection failed");
    assert!(err.message.starts_with(&want), "{}", err.message);
    assert!(err.message.ends_with("(gave up after 1 retry)"), "{}", err.message);
}

#[tokio::test]
async fn first_byte_timeout_is_a_timeout_error() {
    let server = TestServer::always(Reply::Delayed(Duration::from_secs(3), Box::new(ok_stream()))).await;
    let mut cfg = openai::config(&server);
    cfg.retry = RetryPolicy::none();
    cfg.timeouts = Timeouts { first_byte: Duration::from_millis(200), ..Timeouts::default() };
    let started = Instant::now();
    let (reply, _) = openai::complete(cfg, &user()).await;
    let err = reply.expect_err("timeout");
    assert_eq!(err.kind, ModelErrorKind::Timeout);
    assert!(err.message.contains("first-byte timeout"), "{}", err.message);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn idle_stream_timeout_is_a_timeout_error() {
    let pieces = data_events(&[json!({"choices": [{"index": 0, "delta": {"content": "stalling"}}]})]);
    let server = TestServer::always(Reply::Sse(pieces, End::Stall)).await;
    let mut cfg = openai::config(&server);
    cfg.timeouts = Timeouts { idle: Duration::from_millis(200), ..Timeouts::default() };
    let started = Instant::now();
    let (reply, _) = openai::complete(cfg, &user()).await;
    let err = reply.expect_err("idle");
    assert_eq!(err.kind, ModelErrorKind::Timeout);
    assert!(err.message.contains("idle timeout"), "{}", err.message);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(server.requests().len(), 1, "text was delivered: no retry");
}

#[tokio::test]
async fn idle_timeout_applies_between_chunks_not_to_the_whole_stream() {
    let mut pieces = Vec::new();
    for word in ["a", "b", "c", "d"] {
        pieces.push(Piece::Pause(Duration::from_millis(150)));
        pieces.extend(data_events(&[json!({"choices": [{"index": 0, "delta": {"content": word}}]})]));
    }
    pieces.extend(data_events(&[json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})]));
    let server = TestServer::always(Reply::Sse(pieces, End::Close)).await;
    let mut cfg = openai::config(&server);
    cfg.timeouts = Timeouts { idle: Duration::from_millis(400), ..Timeouts::default() };
    let (reply, _) = openai::complete(cfg, &user()).await;
    assert_eq!(reply.expect("slow but steady").message.content.as_deref(), Some("abcd"));
}

#[tokio::test]
async fn transport_failure_before_any_content_is_retried() {
    let role_only = data_events(&[json!({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})]);
    let server = TestServer::start(vec![Reply::Sse(role_only, End::Cut), ok_stream()]).await;
    let (reply, sink) = openai::complete(openai::config(&server), &user()).await;
    assert_eq!(reply.expect("retried").message.content.as_deref(), Some("ok"));
    assert_eq!(sink.deltas(), vec!["ok"]);
    assert_eq!(server.requests().len(), 2);
}

/// Cancels the token when the first text delta arrives.
struct CancelOnText(CancellationToken, std::sync::Mutex<Option<Instant>>);

impl StreamSink for CancelOnText {
    fn text_delta(&self, _text: &str) {
        *self.1.lock().expect("lock") = Some(Instant::now());
        self.0.cancel();
    }
}

async fn assert_cancels_promptly(client: Arc<dyn ModelClient>) {
    let cancel = CancellationToken::new();
    let sink = CancelOnText(cancel.clone(), std::sync::Mutex::new(None));
    let messages = user();
    let err = client
        .complete(ModelRequest { messages: &messages, tools: &[], stable_prefix: None }, &sink, &cancel)
        .await
        .expect_err("canceled");
    let canceled_at = sink.1.lock().expect("lock").expect("text arrived first");
    assert_eq!(err.kind, ModelErrorKind::Canceled);
    // The server never ends the stream: returning at all proves the request was aborted.
    assert!(canceled_at.elapsed() < Duration::from_secs(10), "took {:?}", canceled_at.elapsed());
}

#[tokio::test]
async fn cancellation_mid_stream_returns_canceled_promptly() {
    let pieces = data_events(&[json!({"choices": [{"index": 0, "delta": {"content": "thinking"}}]})]);
    let server = TestServer::always(Reply::Sse(pieces, End::Stall)).await;
    assert_cancels_promptly(Arc::new(OpenAiClient::new(openai::config(&server)).expect("client"))).await;

    let pieces =
        named_events(&[anthropic::message_start(1), anthropic::text_block(0), anthropic::text_delta(0, "thinking")]);
    let server = TestServer::always(Reply::Sse(pieces, End::Stall)).await;
    assert_cancels_promptly(Arc::new(AnthropicClient::new(anthropic::config(&server)).expect("client"))).await;
}

#[tokio::test]
async fn cancellation_during_a_retry_wait_returns_canceled_promptly() {
    let server = TestServer::always(Reply::Status {
        status: 429,
        headers: vec![("retry-after", "30".into())],
        body: String::new(),
    })
    .await;
    let client = OpenAiClient::new(openai::config(&server)).expect("client");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let err = client
        .complete(ModelRequest { messages: &user(), tools: &[], stable_prefix: None }, &Recorder::default(), &cancel)
        .await
        .expect_err("canceled");
    assert_eq!(err.kind, ModelErrorKind::Canceled);
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_api_key_never_appears_in_errors_or_debug_output() {
    // The server echoes the key it rejected, as some do.
    let echo = json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}).to_string();
    let server = TestServer::always(status(401, &echo)).await;
    let (reply, _) = openai::complete(openai::config(&server), &user()).await;
    let err = reply.expect_err("401");
    for text in [err.to_string(), format!("{err:?}"), err.message.clone()] {
        assert!(!text.contains(KEY), "key leaked: {text}");
        assert!(!text.contains("0123456789abcdef"), "key leaked: {text}");
    }
    assert!(err.message.contains("Incorrect API key provided: [REDACTED]"), "{}", err.message);

    let server = TestServer::always(status(401, &echo)).await;
    let (reply, _) = anthropic::complete(anthropic::config(&server), &user()).await;
    assert!(!format!("{:?}", reply.expect_err("401")).contains(KEY));

    let oc = openai::config(&server);
    let ac = anthropic::config(&server);
    let texts = [
        format!("{oc:?}"),
        format!("{ac:?}"),
        format!("{:?}", OpenAiClient::new(oc).expect("client")),
        format!("{:?}", AnthropicClient::new(ac).expect("client")),
    ];
    for text in texts {
        assert!(!text.contains(KEY), "key leaked: {text}");
    }
}

#[tokio::test]
async fn a_key_echoed_in_a_streamed_error_event_is_redacted_for_both_providers() {
    let echoed = format!("Incorrect API key provided: {KEY}");
    // OpenAI-compatible: an `{"error": …}` chunk (400: not retried).
    let events = data_events(&[json!({"error": {"message": echoed, "type": "invalid_request_error", "code": 400}})]);
    let server = TestServer::always(Reply::Sse(events, End::Close)).await;
    let (reply, _) = openai::complete(openai::config(&server), &user()).await;
    let err = reply.expect_err("error chunk");
    for text in [err.to_string(), format!("{err:?}"), err.message.clone()] {
        assert!(!text.contains(KEY), "key leaked: {text}");
    }
    assert!(err.message.contains("Incorrect API key provided: [REDACTED]"), "{}", err.message);

    // Anthropic: an `error` event (authentication_error: not retried).
    let events = named_events(&[
        anthropic::message_start(1),
        json!({"type": "error", "error": {"type": "authentication_error", "message": echoed}}),
    ]);
    let server = TestServer::always(Reply::Sse(events, End::Close)).await;
    let (reply, _) = anthropic::complete(anthropic::config(&server), &user()).await;
    let err = reply.expect_err("error event");
    for text in [err.to_string(), format!("{err:?}"), err.message.clone()] {
        assert!(!text.contains(KEY), "key leaked: {text}");
    }
    assert!(err.message.contains("Incorrect API key provided: [REDACTED]"), "{}", err.message);
}

#[tokio::test]
async fn redirects_are_not_followed_so_keys_never_travel_to_another_host() {
    let server = TestServer::always(Reply::Status {
        status: 307,
        headers: vec![("location", "http://127.0.0.1:9/elsewhere".into())],
        body: String::new(),
    })
    .await;
    let (reply, _) = Provider::Anthropic.complete(&server).await;
    let err = reply.expect_err("redirect");
    assert_eq!(err.kind, ModelErrorKind::Http { status: 307 });
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn base_url_credentials_and_query_never_appear_in_errors() {
    let server = TestServer::always(status(401, r#"{"error":{"message":"no"}}"#)).await;
    let base = server.url("/v1").replace("http://", "http://user:hunter2hunter2@") + "?api-key=querysecret";
    let mut cfg = spine_models::OpenAiConfig::new("m", base);
    cfg.retry = RetryPolicy::none();
    let (reply, _) = openai::complete(cfg, &user()).await;
    let err = reply.expect_err("error");
    assert!(!err.message.contains("hunter2"), "{}", err.message);
    assert!(!err.message.contains("querysecret"), "{}", err.message);
    let req = server.only_request();
    assert_eq!(req.path, "/v1/chat/completions", "the query stays out of the path");
}

#[tokio::test]
async fn a_64_mib_line_without_an_end_is_an_invalid_reply_not_a_hang() {
    for provider in BOTH {
        // 64 MiB of one unterminated `data:` line, in 1 MiB writes.
        let mut pieces = vec![spine_testkit::http::Piece::Bytes(bytes::Bytes::from_static(b"data: \""))];
        let mib = bytes::Bytes::from(vec![b'x'; 1 << 20]);
        pieces.extend((0..64).map(|_| spine_testkit::http::Piece::Bytes(mib.clone())));
        let server = TestServer::always(Reply::Sse(pieces, End::Close)).await;
        let (reply, _) = provider.complete(&server).await;
        let err = reply.expect_err("an over-long line is refused");
        assert_eq!(err.kind, ModelErrorKind::InvalidReply, "{provider:?}: {err}");
        assert!(err.message.contains("longer than"), "{provider:?}: {}", err.message);
        assert_eq!(server.requests().len(), 1, "{provider:?}: an invalid reply is not retried");
    }
}

#[tokio::test]
async fn a_10_mib_tool_argument_chunk_parses() {
    let arguments = json!({"content": "y".repeat(10 << 20)}).to_string();
    let mut pieces = data_events(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "Write", "arguments": arguments}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]);
    pieces.push(done());
    let server = TestServer::always(Reply::Sse(pieces, End::Close)).await;
    let (reply, _) = openai::complete(openai::config(&server), &user()).await;
    let reply = reply.expect("a 10 MiB argument chunk is a valid reply");
    let spine_protocol::tool::ToolArguments::Json(args) = &reply.message.tool_calls[0].arguments else {
        panic!("arguments parse as JSON")
    };
    assert_eq!(args["content"].as_str().map(str::len), Some(10 << 20));
}

/// In-stream error events of each provider carrying `type`.
fn stream_error_reply(provider: Provider, error_type: &str) -> Reply {
    match provider {
        Provider::OpenAi => Reply::Sse(
            data_events(&[json!({"error": {"message": "said the server", "type": error_type, "code": null}})]),
            End::Close,
        ),
        Provider::Anthropic => Reply::Sse(
            named_events(&[
                anthropic::message_start(1),
                json!({"type": "error", "error": {"type": error_type, "message": "said the server"}}),
            ]),
            End::Close,
        ),
    }
}

#[tokio::test]
async fn in_stream_errors_follow_one_retry_class_table_for_both_providers() {
    // (type, retried): the client errors are final at once, the server-side ones are retried
    // (1 attempt + 3 retries).
    let table = [
        ("invalid_request_error", false),
        ("authentication_error", false),
        ("permission_error", false),
        ("overloaded_error", true),
        ("rate_limit_error", true),
        ("server_error", true),
        ("api_error", true),
    ];
    for provider in BOTH {
        for (error_type, retried) in table {
            let server = TestServer::always(stream_error_reply(provider, error_type)).await;
            let (reply, sink) = provider.complete(&server).await;
            let err = reply.expect_err("stream error");
            let want = if retried { 4 } else { 1 };
            assert_eq!(server.requests().len(), want, "{provider:?} {error_type}: {}", err.message);
            assert_eq!(err.kind.retryable(), retried, "{provider:?} {error_type}");
            assert!(err.message.contains(error_type) && err.message.contains("said the server"), "{}", err.message);
            let last = format!("{want} failed");
            assert_eq!(sink.attempts().last(), Some(&last), "{provider:?} {error_type}");
        }
    }
}

#[tokio::test]
async fn every_attempt_is_reported_to_the_sink() {
    for provider in BOTH {
        let server = TestServer::start(vec![status(503, "busy"), status(500, "oops"), provider.ok_reply()]).await;
        let (reply, sink) = provider.complete(&server).await;
        reply.expect("third attempt succeeds");
        assert_eq!(sink.attempts(), vec!["1 retry", "2 retry", "3 ok"], "{provider:?}");
    }
}

#[tokio::test]
async fn a_trickling_stream_is_cut_by_the_total_deadline() {
    // A byte of keep-alive every 50 ms keeps the idle timeout happy for ever; only the total
    // deadline ends the request.
    let mut pieces = Vec::new();
    for _ in 0..2000 {
        pieces.push(Piece::Pause(Duration::from_millis(50)));
        pieces.push(spine_testkit::http::raw(": keep-alive\n\n"));
    }
    for provider in BOTH {
        let server = TestServer::always(Reply::Sse(pieces.clone(), End::Stall)).await;
        let timeouts =
            Timeouts { idle: Duration::from_secs(5), total: Duration::from_millis(600), ..Timeouts::default() };
        let started = Instant::now();
        let (reply, sink) = match provider {
            Provider::OpenAi => {
                openai::complete(spine_models::OpenAiConfig { timeouts, ..openai::config(&server) }, &user()).await
            }
            Provider::Anthropic => {
                let cfg = spine_models::AnthropicConfig { timeouts, ..anthropic::config(&server) };
                anthropic::complete(cfg, &user()).await
            }
        };
        let err = reply.expect_err("cut");
        assert_eq!(err.kind, ModelErrorKind::Timeout, "{provider:?}: {}", err.message);
        assert!(err.message.contains("total deadline"), "{provider:?}: {}", err.message);
        assert!(started.elapsed() < Duration::from_secs(60), "{provider:?}: ended");
        assert_eq!(server.requests().len(), 1, "{provider:?}: the deadline covers retries too");
        assert_eq!(sink.attempts(), vec!["1 failed"], "{provider:?}");
    }
}

#[tokio::test]
async fn the_total_deadline_stops_retries_whose_wait_would_pass_it() {
    let server = TestServer::always(Reply::Status {
        status: 429,
        headers: vec![("retry-after", "30".into())],
        body: "slow down".into(),
    })
    .await;
    let mut cfg = openai::config(&server);
    cfg.timeouts = Timeouts { total: Duration::from_secs(5), ..Timeouts::default() };
    let started = Instant::now();
    let (reply, _) = openai::complete(cfg, &user()).await;
    let err = reply.expect_err("429");
    assert_eq!(err.kind, ModelErrorKind::Http { status: 429 });
    assert!(err.message.contains("not retried: the total deadline of 5 s would pass first"), "{}", err.message);
    assert_eq!(server.requests().len(), 1);
    assert!(started.elapsed() < Duration::from_secs(30), "no 30 s wait");
}
