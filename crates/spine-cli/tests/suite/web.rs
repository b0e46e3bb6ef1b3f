//! WebFetch through `spine run`: settings `web.allow_private_networks` reaches the tool, and the
//! run's permission rules decide every redirect hop. Servers on 127.0.0.1 count the requests
//! they receive.

use serde_json::{Value, json};
use spine_testkit::http::{CountingServer, server_runtime};

use crate::support::*;

/// Runs one WebFetch call with these settings; returns the tool result message.
fn fetch(s: &Sandbox, url: &str, settings: &Value) -> Value {
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "WebFetch", "arguments": {"url": url}}]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let messages = v["messages"].as_array().expect("messages");
    messages.iter().find(|m| m["role"] == "tool").cloned().expect("a tool result")
}

#[test]
fn spine_run_checks_webfetch_redirect_hops_against_the_rules_and_private_networks_against_settings() {
    let runtime = server_runtime();
    let first = runtime.block_on(CountingServer::start());
    let second = runtime.block_on(CountingServer::start());
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
