//! The sandbox's network through spine's filtering proxy, end to end through the `spine`
//! binary: sandboxed commands reach an allowed domain only through the proxy (curl, python,
//! SOCKS5, pip, npm), everything else is refused with a reason the model, the trace and the
//! OTLP export read, a connection that ignores the proxy variables fails, and an interactive
//! session puts an unlisted host to the person once.
//!
//! Every test reaches only loopback servers it starts. Names are `localhost` and addresses
//! `127.0.0.1`: the proxy resolves outside the sandbox, so `web.allow_private_networks` is
//! what lets it reach them, and without it they are refused as private.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::*;

/// What the bridge inside the sandbox listens on (`spine_sandbox::policy::DEFAULT_PROXY_PORT`).
pub(super) const BRIDGE: &str = "127.0.0.1:3128";

/// The refusal of a direct connection, as the sandbox words it.
pub(super) const DIRECT_REFUSED: &str = "(sandbox: only the proxy at 127.0.0.1:3128 is reachable)";

pub(super) type Files = Arc<Mutex<HashMap<String, (String, Vec<u8>)>>>;

/// A loopback HTTP server of the test: `GET PATH` answers the file put at `PATH` (by default
/// `served PATH` as text), and every path asked for is recorded.
pub(super) struct Served {
    addr: SocketAddr,
    files: Files,
    seen: Arc<Mutex<Vec<String>>>,
    _runtime: tokio::runtime::Runtime,
}

impl Served {
    pub(super) fn start() -> Served {
        let runtime = spine_testkit::http::server_runtime();
        let files: Files = Arc::default();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let (kept_files, kept_seen) = (Arc::clone(&files), Arc::clone(&seen));
        let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
            let (files, seen) = (Arc::clone(&kept_files), Arc::clone(&kept_seen));
            async move {
                let path = uri.path().to_owned();
                seen.lock().expect("lock").push(path.clone());
                let file = files.lock().expect("lock").get(&path).cloned();
                let (kind, body) =
                    file.unwrap_or_else(|| ("text/plain".to_owned(), format!("served {path}\n").into_bytes()));
                ([(axum::http::header::CONTENT_TYPE, kind)], body)
            }
        });
        let addr = runtime.block_on(spine_testkit::http::serve(app));
        Served { addr, files, seen, _runtime: runtime }
    }

    pub(super) fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Serves `body` with content type `kind` at `path`.
    pub(super) fn put(&self, path: &str, kind: &str, body: Vec<u8>) {
        self.files.lock().expect("lock").insert(path.to_owned(), (kind.to_owned(), body));
    }

    /// The paths asked for so far, in order.
    pub(super) fn seen(&self) -> Vec<String> {
        self.seen.lock().expect("lock").clone()
    }
}

/// Settings that turn the sandbox on with these allowed domains; `private`: the proxy may
/// reach loopback (`web.allow_private_networks`).
pub(super) fn settings(allowed: &[&str], private: bool) -> Value {
    let mut settings = json!({"sandbox": {"enabled": true, "network": {"allowedDomains": allowed}}});
    if private {
        settings["web"] = json!({"allow_private_networks": true});
    }
    settings
}

/// `s`'s `spine`, with proxy exceptions for the very hosts the tests reach: the sandbox must
/// drop them (around the proxy nothing is reachable), so every test here pins that too.
pub(super) fn spine(s: &Sandbox) -> assert_cmd::Command {
    let mut cmd = s.spine();
    cmd.env("NO_PROXY", "localhost,127.0.0.1").env("no_proxy", "localhost,127.0.0.1");
    cmd
}

/// A `spine run` (bypassPermissions, with a trace) whose model makes one Bash call per
/// command, then answers: each call's tool result and `execute` trace entry, in order.
pub(super) fn run(s: &Sandbox, settings: &Value, commands: &[&str], extra: &[&str]) -> Vec<(String, Value)> {
    let calls: Vec<Value> = commands
        .iter()
        .enumerate()
        .map(|(i, command)| json!({"id": format!("c{i}"), "name": "Bash", "arguments": {"command": command}}))
        .collect();
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    let trace = s.dir.path().join("trace.jsonl");
    let _ = std::fs::remove_file(&trace);
    let out = spine(s)
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--permission-mode", "bypassPermissions", "--output-format", "json", "--include-messages"])
        .args(["--settings", &settings.to_string(), "--trace", trace.to_str().expect("utf-8")])
        .args(extra)
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert_eq!(results.len(), commands.len(), "{}", stdout(&out));
    let entries = execute_entries(&trace);
    results
        .into_iter()
        .enumerate()
        .map(|(i, result)| {
            let id = format!("c{i}");
            let entry = entries.iter().find(|e| e["tool_use_id"] == id.as_str()).cloned();
            (result, entry.unwrap_or_else(|| panic!("an execute entry for {id}: {entries:?}")))
        })
        .collect()
}

pub(super) fn execute_entries(trace: &Path) -> Vec<Value> {
    std::fs::read_to_string(trace)
        .expect("trace")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["hook"] == "execute")
        .collect()
}

/// The proxy's line for a refused destination.
pub(super) fn refused(host: &str, port: u16, reason: &str) -> String {
    format!("spine sandbox: proxy refused {host}:{port} ({reason})")
}

/// `result` ran behind the proxy and nothing was refused: the trace entry names the proxy and
/// has no notes.
pub(super) fn assert_reached(result: &str, entry: &Value, body: &str) {
    assert!(result.starts_with("Command exited with status 0."), "it ran: {result}");
    assert!(result.contains(body), "the server's answer `{body}`: {result}");
    assert!(!result.contains("spine sandbox"), "nothing refused: {result}");
    let profile = entry["sandbox"].as_str().unwrap_or_default();
    assert!(profile.starts_with("workspace-write,net=proxy,"), "{entry}");
    assert!(entry.get("sandbox_notes").is_none(), "no refusal in the trace: {entry}");
}

/// The proxy refused the call's one destination with `line`: the model reads it at the end of
/// the output and the trace entry lists exactly it.
pub(super) fn assert_refused_by_proxy(result: &str, entry: &Value, line: &str) {
    assert!(result.trim_end().ends_with(line), "the output ends with `{line}`: {result}");
    assert_eq!(entry["sandbox_notes"], json!([line]), "{entry}");
}

/// The stdout of `python3 -c SCRIPT ARGS…`, run by the test (outside any sandbox).
pub(super) fn python(script: &str, args: &[&str]) -> String {
    let out = std::process::Command::new("python3").arg("-c").arg(script).args(args).output().expect("python3 runs");
    assert!(out.status.success(), "python3: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
pub(super) fn an_allowed_domain_is_reached_through_the_proxy_by_curl_python_and_socks5() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let commands = [
        // An absolute-form request to HTTP_PROXY.
        format!("curl -sS http://localhost:{port}/absolute"),
        // A CONNECT tunnel through the same proxy.
        format!("curl -sS --proxytunnel http://localhost:{port}/connect"),
        // SOCKS5 on the same port, the name resolved by the proxy.
        format!("curl -sS --socks5-hostname \"${{ALL_PROXY#http://}}\" http://localhost:{port}/socks"),
        // Python's urllib honours HTTP_PROXY.
        format!(
            "python3 -c \"import urllib.request as u; print(u.urlopen('http://localhost:{port}/urllib').read().decode())\""
        ),
    ];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let calls = run(&s, &settings(&["localhost"], true), &commands, &[]);
    for ((result, entry), path) in calls.iter().zip(["/absolute", "/connect", "/socks", "/urllib"]) {
        assert_reached(result, entry, &format!("served {path}"));
    }
    let mut seen = server.seen();
    seen.sort();
    assert_eq!(seen, ["/absolute", "/connect", "/socks", "/urllib"]);
}

#[test]
pub(super) fn a_name_no_allowed_domain_covers_is_refused_and_the_model_and_the_trace_read_why() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let commands = [
        format!("curl -sS -w ' status=%{{http_code}}' http://localhost:{port}/name"),
        format!("curl -sS --socks5-hostname {BRIDGE} http://localhost:{port}/socks"),
        // The allowed address in the same session: the proxy is there, the name is refused.
        format!("curl -sS http://127.0.0.1:{port}/allowed"),
    ];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let calls = run(&s, &settings(&["127.0.0.1"], true), &commands, &[]);
    let line = refused("localhost", port, "localhost is not an allowed domain");
    let (result, entry) = &calls[0];
    assert!(result.contains("spine sandbox proxy: localhost is not an allowed domain\n status=403"), "{result}");
    assert_refused_by_proxy(result, entry, &line);
    let (result, entry) = &calls[1];
    assert!(result.starts_with("Error [command_failed]"), "SOCKS5 refuses the connection: {result}");
    assert_refused_by_proxy(result, entry, &line);
    assert_reached(&calls[2].0, &calls[2].1, "served /allowed");
    assert_eq!(server.seen(), ["/allowed"]);
}

#[test]
pub(super) fn a_denied_domain_or_webfetch_deny_rule_wins_over_an_allowed_domain() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let command = format!("curl -sS http://localhost:{port}/denied");
    let mut denied = settings(&["localhost"], true);
    denied["sandbox"]["network"]["deniedDomains"] = json!(["localhost"]);
    let calls = run(&s, &denied, &[&command], &[]);
    let line = refused("localhost", port, "localhost is a denied domain (localhost)");
    assert_refused_by_proxy(&calls[0].0, &calls[0].1, &line);

    let mut rule = settings(&["localhost"], true);
    rule["permissions"] = json!({"deny": ["WebFetch(domain:localhost)"]});
    let calls = run(&s, &rule, &[&command], &[]);
    let line = refused("localhost", port, "localhost is a denied domain (WebFetch(domain:localhost))");
    assert_refused_by_proxy(&calls[0].0, &calls[0].1, &line);

    let flag = ["--disallowedTools", "WebFetch(domain:localhost)"];
    let calls = run(&s, &settings(&["localhost"], true), &[&command], &flag);
    assert_refused_by_proxy(&calls[0].0, &calls[0].1, &line);
    assert!(server.seen().is_empty(), "{:?}", server.seen());
}

#[test]
pub(super) fn without_allow_private_networks_an_allowed_loopback_name_or_address_is_refused_as_private() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let commands =
        [format!("curl -sS http://localhost:{port}/name"), format!("curl -sS http://127.0.0.1:{port}/address")];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let calls = run(&s, &settings(&["localhost", "127.0.0.1"], false), &commands, &[]);
    let (result, entry) = &calls[0];
    // `localhost` may resolve to ::1 as well: the list is the machine's.
    let prefix = format!(
        "spine sandbox: proxy refused localhost:{port} (localhost resolves only to private network addresses ("
    );
    assert!(result.contains(&prefix), "{result}");
    let notes = entry["sandbox_notes"].as_array().cloned().unwrap_or_default();
    assert!(notes.len() == 1 && notes[0].as_str().is_some_and(|n| n.starts_with(&prefix)), "{entry}");
    let line = refused("127.0.0.1", port, "127.0.0.1 is a private network address");
    assert_refused_by_proxy(&calls[1].0, &calls[1].1, &line);
    assert!(server.seen().is_empty(), "{:?}", server.seen());
}

#[test]
pub(super) fn a_direct_connection_that_ignores_the_proxy_variables_fails() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let commands = [
        format!("curl -sS --noproxy '*' http://127.0.0.1:{port}/noproxy"),
        format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port})).sendall(b'GET /socket HTTP/1.0\\r\\n\\r\\n')\""
        ),
    ];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    // The proxy would let both through: the sandbox is what refuses them.
    let calls = run(&s, &settings(&["localhost", "127.0.0.1"], true), &commands, &[]);
    for (result, entry) in &calls {
        assert!(result.starts_with("Error [command_failed]"), "{result}");
        assert!(result.contains(DIRECT_REFUSED), "the model reads why: {result}");
        let notes = entry["sandbox_notes"].as_array().cloned().unwrap_or_default();
        assert!(notes.iter().any(|n| n.as_str().is_some_and(|n| n.ends_with(DIRECT_REFUSED))), "{entry}");
    }
    assert!(server.seen().is_empty(), "{:?}", server.seen());
}

#[test]
pub(super) fn udp_from_a_sandboxed_command_never_leaves_its_network() {
    let s = Sandbox::new();
    let socket = UdpSocket::bind("127.0.0.1:0").expect("udp");
    let port = socket.local_addr().expect("addr").port();
    let send = |word: &str| {
        format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'{word}', ('127.0.0.1', {port}))\""
        )
    };
    // Inside, the command has a network namespace of its own: `sendto` may well succeed, into
    // that namespace's loopback.
    let sandboxed = send("sandboxed");
    run(&s, &settings(&["localhost", "127.0.0.1"], true), &[&sandboxed], &[]);
    // The same command outside the sandbox reaches the socket (the test would see a leak).
    let unconfined = send("unconfined");
    let calls = run(&s, &settings(&["localhost"], true), &[&unconfined], &["--sandbox", "off"]);
    assert!(calls[0].0.starts_with("Command exited with status 0."), "{}", calls[0].0);
    // The first datagram to arrive is the unconfined one, and nothing else came.
    socket.set_read_timeout(Some(std::time::Duration::from_secs(30))).expect("a liveness bound");
    let mut buffer = [0; 64];
    let n = socket.recv(&mut buffer).expect("the unconfined datagram");
    assert_eq!(String::from_utf8_lossy(&buffer[..n]), "unconfined");
    socket.set_nonblocking(true).expect("nonblocking");
    let more = socket.recv(&mut buffer).map(|n| String::from_utf8_lossy(&buffer[..n]).into_owned());
    assert!(more.is_err(), "another datagram arrived: {more:?}");
}

mod ask;
mod packages;
