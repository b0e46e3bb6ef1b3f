//! HTTP hooks against a real server on 127.0.0.1: JSON answers, failures that never block,
//! time-outs, and header interpolation limited to `allowedEnvVars`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use spine_protocol::tool::ErrorCode;
use spine_testkit::http::{free_port, serve};

use crate::support::*;

type Seen = Arc<Mutex<Vec<(HeaderMap, String)>>>;

async fn server() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route(
            "/deny",
            post(|| async {
                r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "policy server says no"}}"#
            }),
        )
        .route("/empty", post(|| async { "" }))
        .route("/fail", post(|| async { (StatusCode::INTERNAL_SERVER_ERROR, r#"{"decision": "block"}"#) }))
        .route("/text", post(|| async { "all good" }))
        .route(
            "/slow",
            post(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "{}"
            }),
        )
        .route(
            "/record",
            post(|State(seen): State<Seen>, headers: HeaderMap, body: String| async move {
                seen.lock().expect("seen").push((headers, body));
                "{}"
            }),
        )
        .with_state(Arc::clone(&seen));
    (format!("http://{}", serve(app).await), seen)
}

fn http(url: String, extra: Value) -> Value {
    let mut h = json!({"type": "http", "url": url});
    if let (Some(h), Some(extra)) = (h.as_object_mut(), extra.as_object()) {
        h.extend(extra.clone());
    }
    h
}

fn pre(handler: Value) -> Setup {
    Setup { layers: vec![hooks("PreToolUse", "Bash", vec![handler])], ..Setup::default() }
}

#[tokio::test]
async fn a_2xx_json_body_is_an_answer_like_stdout() {
    let p = Project::new();
    let (base, _) = server().await;
    let ran = run(&p, pre(http(format!("{base}/deny"), json!({}))), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [permission_denied]: policy server says no");
}

#[tokio::test]
async fn an_empty_2xx_body_is_no_opinion() {
    let p = Project::new();
    let (base, _) = server().await;
    let ran = run(&p, pre(http(format!("{base}/empty"), json!({}))), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"));
    assert!(ran.warnings().is_empty(), "{:?}", ran.warnings());
}

#[tokio::test]
async fn a_500_or_a_text_body_is_a_failure_never_a_block() {
    let p = Project::new();
    let (base, _) = server().await;
    for path in ["fail", "text"] {
        let ran =
            run(&p, pre(http(format!("{base}/{path}"), json!({}))), vec![bash("c1", "echo ran"), text("ok")]).await;
        assert!(ran.results()[0].content.contains("ran"), "{path}: fails open");
        assert!(ran.warnings().iter().any(|w| w.contains("failing open")), "{path}: {:?}", ran.warnings());
    }
    let closed = http(format!("{base}/fail"), json!({"onFailure": "closed"}));
    let ran = run(&p, pre(closed), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].error_code, Some(ErrorCode::HookExecutionError), "a failure, not hook_blocked");
}

#[tokio::test]
async fn a_slow_endpoint_times_out() {
    let p = Project::new();
    let (base, _) = server().await;
    let started = Instant::now();
    let slow = http(format!("{base}/slow"), json!({"timeout": 0.3}));
    let ran = run(&p, pre(slow), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(ran.results()[0].content.contains("ran"));
    assert!(ran.warnings().iter().any(|w| w.contains("(timeout)")), "{:?}", ran.warnings());
}

#[tokio::test]
async fn a_connection_error_is_a_failure() {
    let p = Project::new();
    let port = free_port();
    let ran =
        run(&p, pre(http(format!("http://127.0.0.1:{port}/x"), json!({}))), vec![bash("c1", "echo ran"), text("ok")])
            .await;
    assert!(ran.results()[0].content.contains("ran"));
    assert!(ran.warnings().iter().any(|w| w.contains("failing open")));
}

#[tokio::test]
async fn the_event_json_is_posted_and_headers_interpolate_only_allowed_variables() {
    let p = Project::new();
    let (base, seen) = server().await;
    let handler = http(
        format!("{base}/record"),
        json!({
            "headers": {"Authorization": "Bearer $HOME", "X-Path": "${PATH}", "X-Plain": "literal"},
            "allowedEnvVars": ["HOME"],
        }),
    );
    run(&p, pre(handler), vec![bash("c1", "echo ran"), text("ok")]).await;
    let seen = seen.lock().expect("seen");
    let (headers, body) = &seen[0];
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).unwrap_or("<missing>").to_owned();
    assert_eq!(header("authorization"), format!("Bearer {}", std::env::var("HOME").unwrap_or_default()));
    assert_eq!(header("x-path"), "", "PATH is not in allowedEnvVars");
    assert_eq!(header("x-plain"), "literal");
    assert_eq!(header("content-type"), "application/json");
    let body: Value = serde_json::from_str(body).expect("json body");
    assert_eq!(body["hook_event_name"], "PreToolUse");
    assert_eq!(body["tool_input"], json!({"command": "echo ran"}));
}

/// A hook endpoint answers 307 to a second local server: nothing is re-posted there (neither
/// the event nor the secret header), and the hook fails per its failure policy.
#[tokio::test]
async fn a_redirect_is_never_followed_and_fails_the_hook() {
    let p = Project::new();
    let (second, seen) = server().await;
    let target = format!("{second}/record");
    let redirecting = Router::new().route(
        "/hook",
        post(move || {
            let target = target.clone();
            async move { (StatusCode::TEMPORARY_REDIRECT, [(axum::http::header::LOCATION, target)], "") }
        }),
    );
    let first = format!("http://{}", serve(redirecting).await);
    let secret = json!({"headers": {"Authorization": "Bearer $HOME"}, "allowedEnvVars": ["HOME"]});
    let ran =
        run(&p, pre(http(format!("{first}/hook"), secret.clone())), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"), "fails open by default");
    assert!(ran.warnings().iter().any(|w| w.contains("failing open")), "{:?}", ran.warnings());
    let trace = format!("{:?}", ran.outcome.trace.entries());
    assert!(trace.contains("HTTP 307 redirect to") && trace.contains("not followed"), "{trace}");
    let mut closed = secret;
    closed["onFailure"] = json!("closed");
    let ran = run(&p, pre(http(format!("{first}/hook"), closed)), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].error_code, Some(ErrorCode::HookExecutionError));
    assert!(seen.lock().expect("seen").is_empty(), "the redirect target received nothing");
}
