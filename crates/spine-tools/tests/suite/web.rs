//! WebFetch and WebSearch against HTTP servers on 127.0.0.1 (axum): conversion, limits,
//! redirects, errors, the SearXNG shape, and the runner path with a PreToolUse hook; URL
//! refusals (userinfo, redirect hops under the policy, private networks) counted on the
//! server.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde_json::json;
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::permission::{DenyApprover, PermissionRule, PermissionRules};
use spine_protocol::hook::{HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;
use spine_testkit::http::CountingServer;
use spine_tools::FamilyConfig;
use spine_tools::web::{PrivateNetworks, WebOptions};

use crate::agent::{AgentHarness, calls, projected_metadata, results, text};
use crate::direct::Direct;

const PAGE: &str = "<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>\
<body><h1>Release notes</h1><p>Version <b>2.0</b> is out.</p><ul><li>faster</li><li>smaller</li></ul>\
<a href=\"/docs\">docs</a><script>var hidden = 1;</script></body></html>";

static BIG_CHUNK: [u8; 65_536] = [b'a'; 65_536];

async fn search(Query(q): Query<HashMap<String, String>>) -> Response {
    if q.get("format").map(String::as_str) != Some("json") {
        return (StatusCode::BAD_REQUEST, "format=json expected").into_response();
    }
    let query = q.get("q").cloned().unwrap_or_default();
    axum::Json(json!({
        "query": query,
        "results": [
            {"title": format!("{query} guide"), "url": "https://docs.rs/tokio", "content": "An async runtime."},
            {"title": "Blog", "url": "https://blog.example.com/post", "content": "A post."},
            {"title": "Sub", "url": "https://www.docs.rs/serde", "content": ""},
            {"title": "No url"}
        ]
    }))
    .into_response()
}

/// Starts the test server; returns its base URL.
async fn serve() -> String {
    let app = Router::new()
        .route("/page", get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE) }))
        .route("/text", get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "plain text\n") }))
        .route("/json", get(|| async { axum::Json(json!({"ok": true, "items": [1, 2]})) }))
        .route(
            "/png",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], vec![0x89u8, b'P', b'N', b'G', 0, 1, 2]) }),
        )
        .route(
            "/big",
            get(|| async {
                let chunks = futures_util::stream::iter(
                    (0..800).map(|_| Ok::<_, std::io::Error>(Bytes::from_static(&BIG_CHUNK))),
                );
                ([(header::CONTENT_TYPE, "text/plain")], Body::from_stream(chunks))
            }),
        )
        .route(
            "/redirect/{n}",
            get(|Path(n): Path<u32>| async move {
                if n == 0 { Redirect::temporary("/text") } else { Redirect::temporary(&format!("/redirect/{}", n - 1)) }
            }),
        )
        .route("/loop", get(|| async { Redirect::temporary("/loop") }))
        .route("/missing", get(|| async { (StatusCode::NOT_FOUND, "no such page here") }))
        .route("/broken", get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom") }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(10)).await;
                "late"
            }),
        )
        .route("/search", get(search));
    format!("http://{}", spine_testkit::http::serve(app).await)
}

/// The web options of tests against servers on 127.0.0.1: private networks allowed.
fn loopback_web() -> WebOptions {
    WebOptions { private_networks: PrivateNetworks::Allow, ..WebOptions::default() }
}

/// The families with private networks allowed (the test servers listen on 127.0.0.1).
fn loopback() -> FamilyConfig {
    FamilyConfig { web: loopback_web(), ..FamilyConfig::default() }
}

#[tokio::test]
async fn webfetch_turns_html_into_readable_text_with_metadata() {
    let base = serve().await;
    let d = Direct::with(loopback());
    let r = d.call("WebFetch", json!({"url": format!("{base}/page"), "prompt": "what version?"})).await.expect("fetch");
    assert_eq!(r["code"], json!(200));
    assert_eq!(r["content_type"], json!("text/html; charset=utf-8"));
    assert_eq!(r["bytes"], json!(PAGE.len()));
    assert_eq!(r["truncated"], json!(false));
    let result = r["result"].as_str().expect("text");
    assert!(result.contains("# Release notes") && result.contains("Version **2.0** is out."), "{result}");
    assert!(result.contains("[docs][1]") && result.contains("[1]: /docs"), "links as footnotes: {result}");
    assert!(result.contains("faster") && result.contains("smaller"), "{result}");
    assert!(!result.contains("<p>") && !result.contains("color:red") && !result.contains("hidden"), "{result}");
    let p = d.project("WebFetch", &r);
    assert!(
        p.content.starts_with(&format!(
            "Fetched {base}/page (HTTP 200, text/html; charset=utf-8, {} bytes).\nPrompt: what version?\n\n",
            PAGE.len()
        )),
        "{}",
        p.content
    );
    assert_eq!(
        p.metadata,
        json!({
            "status": 200,
            "content_type": "text/html; charset=utf-8",
            "bytes": PAGE.len(),
            "truncated": false,
            "final_url": format!("{base}/page")
        })
        .as_object()
        .expect("object")
        .clone()
    );
}

#[tokio::test]
async fn webfetch_passes_text_and_json_through_and_describes_binary_bodies() {
    let base = serve().await;
    let d = Direct::with(loopback());
    let t = d.call("WebFetch", json!({"url": format!("{base}/text")})).await.expect("text");
    assert_eq!(t["result"], json!("plain text\n"));
    let j = d.call("WebFetch", json!({"url": format!("{base}/json")})).await.expect("json");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(j["result"].as_str().expect("s")).expect("json"),
        json!({"ok": true, "items": [1, 2]})
    );
    let b = d.call("WebFetch", json!({"url": format!("{base}/png")})).await.expect("png");
    assert_eq!(b["binary"], json!(true));
    assert_eq!(b["result"], json!(""));
    assert!(d.project("WebFetch", &b).content.ends_with("It is not text, so no content is shown."));
}

#[tokio::test]
async fn webfetch_refuses_urls_that_are_not_http() {
    let d = Direct::new();
    for url in ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "not a url"] {
        let e = d.call("WebFetch", json!({"url": url})).await.expect_err(url);
        assert_eq!(e.code, ErrorCode::ValidationError, "{url}: {e}");
    }
    let e = d.call("WebFetch", json!({"url": "file:///etc/passwd"})).await.expect_err("file");
    assert_eq!(e.message, "only http and https URLs can be fetched; \"file:///etc/passwd\" is a file URL");
}

/// A 52 MB page is cut at the 10 MiB limit, flagged, and the model's text capped.
#[tokio::test]
async fn a_50_mb_page_is_cut_at_the_size_limit_with_a_flag() {
    let base = serve().await;
    let d = Direct::with(loopback());
    let started = Instant::now();
    let r = d.call("WebFetch", json!({"url": format!("{base}/big")})).await.expect("cut, not refused");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(r["bytes"], json!(10 * 1024 * 1024));
    assert_eq!(r["truncated"], json!(true));
    assert_eq!(r["body_truncated"], json!(true));
    assert_eq!(r["result"].as_str().expect("text").len(), 100_000, "text capped for the model");
    let p = d.project("WebFetch", &r);
    assert!(p.content.contains("The body was cut at 10485760 bytes."), "{}", &p.content[..200]);
    assert_eq!(p.metadata["truncated"], json!(true));
}

#[tokio::test]
async fn redirects_are_followed_up_to_the_limit() {
    let base = serve().await;
    let d = Direct::with(loopback());
    let r = d.call("WebFetch", json!({"url": format!("{base}/redirect/3")})).await.expect("3 hops");
    assert_eq!(r["final_url"], json!(format!("{base}/text")));
    assert_eq!(r["result"], json!("plain text\n"));
    let e = d.call("WebFetch", json!({"url": format!("{base}/loop")})).await.expect_err("loop");
    assert_eq!(e.code, ErrorCode::RuntimeError);
    assert_eq!(e.message, format!("GET {base}/loop was redirected more than 5 times"));
    let six = d.call("WebFetch", json!({"url": format!("{base}/redirect/5")})).await.expect_err("6 hops");
    assert!(six.message.contains("redirected more than 5 times"), "{}", six.message);
}

#[tokio::test]
async fn http_error_statuses_are_tool_errors_with_the_page() {
    let base = serve().await;
    let d = Direct::with(loopback());
    let e = d.call("WebFetch", json!({"url": format!("{base}/missing")})).await.expect_err("404");
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(e.message, format!("GET {base}/missing returned HTTP 404 Not Found\nno such page here"));
    assert_eq!(e.response.expect("response")["code"], json!(404));
    let e = d.call("WebFetch", json!({"url": format!("{base}/broken")})).await.expect_err("500");
    assert_eq!(e.code, ErrorCode::RuntimeError);
}

#[tokio::test]
async fn a_slow_server_hits_the_time_limit() {
    let base = serve().await;
    let config = FamilyConfig {
        web: WebOptions { timeout: Duration::from_millis(300), ..loopback_web() },
        ..FamilyConfig::default()
    };
    let d = Direct::with(config);
    let started = Instant::now();
    let e = d.call("WebFetch", json!({"url": format!("{base}/slow")})).await.expect_err("slow");
    assert_eq!(e.code, ErrorCode::Timeout);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn websearch_without_an_endpoint_is_a_validation_error() {
    let d = Direct::new();
    let e = d.call("WebSearch", json!({"query": "rust"})).await.expect_err("not configured");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert!(e.message.starts_with("WebSearch is not configured: set `web.search_url`"), "{}", e.message);
}

#[tokio::test]
async fn websearch_queries_the_searxng_endpoint_and_filters_domains() {
    let base = serve().await;
    let config = FamilyConfig { search_url: Some(format!("{base}/search")), ..loopback() };
    let d = Direct::with(config);
    let r = d.call("WebSearch", json!({"query": "tokio & co"})).await.expect("search");
    // Claude Code's shape: the hits of one search under the call's id, and the time taken.
    let seconds = r["durationSeconds"].clone();
    assert!(seconds.is_f64(), "{r}");
    assert_eq!(
        r,
        json!({"query": "tokio & co", "results": [{"tool_use_id": "call-1", "content": [
            {"title": "tokio & co guide", "url": "https://docs.rs/tokio", "snippet": "An async runtime."},
            {"title": "Blog", "url": "https://blog.example.com/post", "snippet": "A post."},
            {"title": "Sub", "url": "https://www.docs.rs/serde", "snippet": ""}
        ]}], "durationSeconds": seconds})
    );
    let expected = "Web results for \"tokio & co\":\n1. tokio & co guide\n   https://docs.rs/tokio\n   An async runtime.\n\
                    2. Blog\n   https://blog.example.com/post\n   A post.\n3. Sub\n   https://www.docs.rs/serde";
    assert_eq!(d.project("WebSearch", &r).content, expected);
    // Hits listed without a search around them (a hook's replacement) read the same.
    let flat = json!({"query": "tokio & co", "results": r["results"][0]["content"].clone()});
    assert_eq!(d.project("WebSearch", &flat).content, expected);
    let hits = |r: &serde_json::Value| r["results"][0]["content"].as_array().expect("hits").len();
    let only = d.call("WebSearch", json!({"query": "x", "allowed_domains": ["docs.rs"]})).await.expect("allowed");
    assert_eq!(hits(&only), 2);
    let blocked = d.call("WebSearch", json!({"query": "x", "blocked_domains": ["docs.rs"]})).await.expect("blocked");
    assert_eq!(blocked["results"][0]["content"][0]["url"], json!("https://blog.example.com/post"));
    assert_eq!(hits(&blocked), 1);
}

#[tokio::test]
async fn webfetch_goes_through_pre_tool_use_and_projection_in_the_runner() {
    let base = serve().await;
    let mut h = AgentHarness::new();
    spine_tools::register_families(&mut h.tools, loopback());
    h.hooks
        .on_matching::<PreToolUse>(
            "WebFetch",
            "no-broken",
            hook_fn(|_c: &HookContext, input: &PreToolUseInput| {
                let url = input.tool_input.get("url").and_then(|u| u.as_str()).unwrap_or("");
                Ok(HookOutput::new(if url.ends_with("/broken") {
                    PreToolUseAction::block("that page is broken")
                } else {
                    PreToolUseAction::default()
                }))
            }),
        )
        .expect("matcher");
    let run = h
        .run(
            "fetch",
            vec![
                calls(&[
                    ("c1", "WebFetch", json!({"url": format!("{base}/text")})),
                    ("c2", "WebFetch", json!({"url": format!("{base}/broken")})),
                    ("c3", "WebFetch", json!({"url": "file:///etc/passwd"})),
                ]),
                text("fetched"),
            ],
        )
        .await;
    assert_eq!(run.outcome.subtype, RunSubtype::Success);
    let r = results(&run.outcome.messages);
    assert_eq!(r[0].content, format!("Fetched {base}/text (HTTP 200, text/plain, 11 bytes).\n\nplain text"));
    assert_eq!(projected_metadata(&run.outcome, "c1")["final_url"], json!(format!("{base}/text")));
    assert_eq!(r[1].content, "Error [hook_blocked]: that page is broken");
    assert_eq!(r[2].error_code, Some(ErrorCode::ValidationError));
}

/// A runner with the web families on loopback, these allow rules, and no one to answer `ask`.
fn gated_harness(allow: &[&str]) -> AgentHarness {
    let mut h = AgentHarness::new();
    spine_tools::register_families(&mut h.tools, loopback());
    h.rules = PermissionRules {
        allow: allow.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect(),
        ..PermissionRules::default()
    };
    h.approver = Arc::new(DenyApprover);
    h
}

#[tokio::test]
async fn domain_rules_are_not_fooled_by_userinfo_and_no_request_is_made() {
    let server = CountingServer::start().await;
    let port = server.port;
    let h = gated_harness(&["WebFetch(domain:allowed.test)"]);
    let run = h
        .run(
            "fetch",
            vec![
                calls(&[
                    ("c1", "WebFetch", json!({"url": format!("http://127.0.0.1:{port}\\@allowed.test/text")})),
                    ("c2", "WebFetch", json!({"url": format!("http://allowed.test@127.0.0.1:{port}/text")})),
                ]),
                text("done"),
            ],
        )
        .await;
    let r = results(&run.outcome.messages);
    for result in &r {
        assert_eq!(result.error_code, Some(ErrorCode::PermissionDenied), "{}", result.content);
    }
    // Even with no policy in the way, WebFetch itself refuses a URL with userinfo.
    let d = Direct::with(loopback());
    let e = d
        .call("WebFetch", json!({"url": format!("http://allowed.test@127.0.0.1:{port}/text")}))
        .await
        .expect_err("userinfo");
    assert_eq!(e.code, ErrorCode::PermissionDenied);
    assert!(e.message.contains("URLs with credentials are refused"), "{}", e.message);
    assert_eq!(server.hits(), 0, "no request reached the server");
}

#[tokio::test]
async fn a_redirect_to_a_host_the_rules_do_not_allow_is_refused_and_never_requested() {
    let (first_server, second_server) = (CountingServer::start().await, CountingServer::start().await);
    let (first, second) = (first_server.port, second_server.port);
    let url = format!("http://127.0.0.1:{first}/to/{second}");
    let h = gated_harness(&["WebFetch(domain:127.0.0.1)"]);
    let run = h.run("fetch", vec![calls(&[("c1", "WebFetch", json!({"url": url}))]), text("done")]).await;
    let r = results(&run.outcome.messages);
    assert_eq!(r[0].error_code, Some(ErrorCode::PermissionDenied), "{}", r[0].content);
    assert!(
        r[0].content.contains(&format!("redirect from {url} to http://localhost:{second}/text refused")),
        "{}",
        r[0].content
    );
    assert_eq!((first_server.hits(), second_server.hits()), (1, 0));

    let h = gated_harness(&["WebFetch(domain:127.0.0.1)", "WebFetch(domain:localhost)"]);
    let run = h.run("fetch", vec![calls(&[("c1", "WebFetch", json!({"url": url}))]), text("done")]).await;
    let r = results(&run.outcome.messages);
    assert_eq!(
        r[0].content,
        format!("Fetched http://localhost:{second}/text (HTTP 200, text/plain, 11 bytes).\n\nplain text")
    );
    assert_eq!(second_server.hits(), 1, "followed when both hosts are allowed");
}

#[tokio::test]
async fn private_networks_are_refused_after_dns_unless_allowed() {
    let server = CountingServer::start().await;
    let port = server.port;
    let refused = Direct::new();
    let e = refused.call("WebFetch", json!({"url": format!("http://localhost:{port}/text")})).await.expect_err("name");
    assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
    assert!(e.message.contains("localhost resolved only to addresses that are not public"), "{}", e.message);
    assert!(e.message.contains("web.allow_private_networks"), "{}", e.message);
    let e = refused.call("WebFetch", json!({"url": format!("http://127.0.0.1:{port}/text")})).await.expect_err("ip");
    assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
    assert!(e.message.contains("127.0.0.1 is not a public address"), "{}", e.message);
    let e = refused.call("WebFetch", json!({"url": format!("http://[::ffff:127.0.0.1]:{port}/text")})).await;
    assert_eq!(e.expect_err("mapped").code, ErrorCode::PermissionDenied);
    let search = Direct::with(FamilyConfig {
        search_url: Some(format!("http://localhost:{port}/search")),
        ..FamilyConfig::default()
    });
    let e = search.call("WebSearch", json!({"query": "x"})).await.expect_err("search endpoint on loopback");
    assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
    assert_eq!(server.hits(), 0, "nothing reached the server");

    let allowed = Direct::with(loopback());
    let r = allowed.call("WebFetch", json!({"url": format!("http://localhost:{port}/text")})).await.expect("allowed");
    assert_eq!(r["result"], json!("plain text\n"));
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn a_redirect_hop_into_a_private_network_or_another_scheme_is_refused() {
    let server = CountingServer::start().await;
    let port = server.port;
    let app = Router::new()
        .route("/file", get(|| async { Redirect::temporary("file:///etc/passwd") }))
        .route("/creds", get(move || async move { Redirect::temporary(&format!("http://u:p@127.0.0.1:{port}/text")) }));
    let base = format!("http://{}", spine_testkit::http::serve(app).await);
    let d = Direct::with(loopback());
    let e = d.call("WebFetch", json!({"url": format!("{base}/file")})).await.expect_err("file hop");
    assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
    assert!(e.message.contains("only http and https URLs can be fetched"), "{}", e.message);
    let e = d.call("WebFetch", json!({"url": format!("{base}/creds")})).await.expect_err("userinfo hop");
    assert_eq!(e.code, ErrorCode::PermissionDenied, "{e}");
    assert_eq!(server.hits(), 0);
}
