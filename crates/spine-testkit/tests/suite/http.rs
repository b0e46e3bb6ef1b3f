//! The local servers: scripted replies in order, then `script exhausted`; the counting
//! redirect server; free ports.

use std::time::Duration;

use serde_json::json;
use spine_testkit::http::{CountingServer, End, Reply, TestServer, free_port, raw};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends one HTTP/1.1 request and returns the whole response (head and body) as text.
async fn request(port: u16, method: &str, path: &str, body: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write head");
    stream.write_all(body.as_bytes()).await.expect("write body");
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut response))
        .await
        .expect("the server answers within 30 s")
        .expect("read");
    String::from_utf8_lossy(&response).into_owned()
}

#[tokio::test]
async fn a_test_server_plays_its_replies_in_order_records_requests_then_answers_500_script_exhausted() {
    let server =
        TestServer::start(vec![Reply::Sse(vec![raw("data: one\n\n")], End::Close), Reply::Json(json!({"ok": true}))])
            .await;
    let port = server.addr().port();
    let first = request(port, "POST", "/v1/chat/completions", r#"{"n": 1}"#).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(first.contains("text/event-stream") && first.contains("data: one"), "{first}");
    let second = request(port, "POST", "/v1/messages", "not json").await;
    assert!(second.contains("application/json") && second.contains(r#"{"ok":true}"#), "{second}");
    let third = request(port, "POST", "/x", "{}").await;
    assert!(third.starts_with("HTTP/1.1 500") && third.contains("script exhausted"), "{third}");
    let recorded = server.requests();
    let paths: Vec<&str> = recorded.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/v1/chat/completions", "/v1/messages", "/x"]);
    assert_eq!(recorded[0].body, json!({"n": 1}));
    assert_eq!(recorded[1].body, serde_json::Value::Null, "a body that is not JSON is recorded as null");
    assert_eq!(server.url("/v1"), format!("http://127.0.0.1:{port}/v1"));
}

#[tokio::test]
async fn a_counting_server_counts_every_request_and_redirects_to_the_named_port() {
    let server = CountingServer::start().await;
    let text = request(server.port, "GET", "/text", "").await;
    assert!(text.starts_with("HTTP/1.1 200") && text.ends_with("plain text\n"), "{text}");
    let hop = request(server.port, "GET", "/to/4321", "").await;
    assert!(hop.starts_with("HTTP/1.1 307"), "{hop}");
    assert!(hop.to_ascii_lowercase().contains("location: http://localhost:4321/text"), "{hop}");
    assert_eq!(server.hits(), 2);
}

#[test]
fn a_free_port_refuses_connections() {
    let port = free_port();
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "nothing listens on {port}");
}
