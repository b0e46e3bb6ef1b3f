//! WebFetch through `spine run`: settings `web.allow_private_networks` reaches the tool, and the
//! run's permission rules decide every redirect hop. Servers on 127.0.0.1 count the requests
//! they receive.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::Path;
use axum::response::Redirect;
use axum::routing::get;
use serde_json::{Value, json};

use crate::support::*;

/// A server on 127.0.0.1: `/text`, and `/to/{port}` redirecting to `http://localhost:{port}/text`.
struct Counted {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Counted {
    fn start(runtime: &tokio::runtime::Runtime) -> Counted {
        let hits = Arc::new(AtomicUsize::new(0));
        let (a, b) = (Arc::clone(&hits), Arc::clone(&hits));
        let app = Router::new()
            .route(
                "/text",
                get(move || {
                    a.fetch_add(1, Ordering::SeqCst);
                    async { "plain text\n" }
                }),
            )
            .route(
                "/to/{port}",
                get(move |Path(port): Path<u16>| {
                    b.fetch_add(1, Ordering::SeqCst);
                    async move { Redirect::temporary(&format!("http://localhost:{port}/text")) }
                }),
            );
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind");
        let port = listener.local_addr().expect("addr").port();
        runtime.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Counted { port, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Runs one WebFetch call with these settings; returns the tool result message.
fn fetch(s: &Sandbox, url: &str, settings: &Value) -> Value {
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "WebFetch", "arguments": {"url": url}}]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let messages = v["messages"].as_array().expect("messages");
    messages.iter().find(|m| m["role"] == "tool").cloned().expect("a tool result")
}

#[test]
fn spine_run_checks_webfetch_redirect_hops_against_the_rules_and_private_networks_against_settings() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("rt");
    let first = Counted::start(&runtime);
    let second = Counted::start(&runtime);
    let s = Sandbox::new();
    let hop = format!("http://127.0.0.1:{}/to/{}", first.port, second.port);

    // Only the first host is allowed: the hop to localhost is refused and never requested.
    let only_first = json!({"web": {"allow_private_networks": true},
        "permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]}});
    let r = fetch(&s, &hop, &only_first);
    assert_eq!(r["error_code"], "permission_denied", "{r}");
    let content = r["content"].as_str().expect("content");
    assert!(content.contains(&format!("to http://localhost:{}/text refused", second.port)), "{content}");
    assert_eq!((first.hits(), second.hits()), (1, 0));

    // Both allowed: followed.
    let both = json!({"web": {"allow_private_networks": true},
        "permissions": {"allow": ["WebFetch(domain:127.0.0.1)", "WebFetch(domain:localhost)"]}});
    let r = fetch(&s, &hop, &both);
    assert!(r["content"].as_str().expect("content").ends_with("plain text"), "{r}");
    assert_eq!((first.hits(), second.hits()), (2, 1));

    // Without the setting, loopback is refused before any request, whatever the rules say.
    let default = json!({"permissions": {"allow": ["WebFetch(domain:127.0.0.1)"], "defaultMode": "bypassPermissions"}});
    let r = fetch(&s, &format!("http://127.0.0.1:{}/text", first.port), &default);
    assert_eq!(r["error_code"], "permission_denied", "{r}");
    assert!(r["content"].as_str().expect("content").contains("web.allow_private_networks"), "{r}");

    // Userinfo: no domain rule matches it, and the tool refuses it even in bypass mode.
    let bypass = json!({"web": {"allow_private_networks": true},
        "permissions": {"allow": ["WebFetch(domain:allowed.test)"], "defaultMode": "bypassPermissions"}});
    let r = fetch(&s, &format!("http://allowed.test@127.0.0.1:{}/text", first.port), &bypass);
    assert_eq!(r["error_code"], "permission_denied", "{r}");
    assert_eq!(first.hits(), 2, "no request for the refused URLs");
}
