//! The sandbox's filtering proxy over real loopback sockets: HTTP `CONNECT` tunnels and
//! forwarded requests, the gate's decisions (allow lists, wildcards, deny rules, asking),
//! private-network refusal, and what the observer is told. Names resolve through a test
//! resolver (`allowed.test` is 127.0.0.1); nothing leaves the machine. SOCKS5, bounds and
//! real clients (curl, Python) are in the submodules.

mod clients;
mod limits;
mod socks;

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use futures_util::future::BoxFuture;
use spine_core::permission::{PermissionRule, PermissionRules};
use spine_tools::proxy::{
    Answer, Approver, DenyReason, DomainGate, DomainPattern, Gate, Host, Listen, Outcome, PrivateNetworks, Protocol,
    Proxy, ProxyConfig, ProxyEvent, ProxyHandle, Resolver, Unlisted,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// Resolves `*.test` names from a fixed table and records every name it was asked about.
#[derive(Default)]
pub struct TestResolver {
    pub asked: Mutex<Vec<String>>,
}

impl Resolver for TestResolver {
    fn resolve<'a>(&'a self, name: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(name.to_owned());
        }
        let table: HashMap<&str, Vec<IpAddr>> = HashMap::from([
            ("allowed.test", vec![LOOPBACK]),
            ("api.allowed.test", vec![LOOPBACK]),
            ("deep.api.allowed.test", vec![LOOPBACK]),
            ("other.test", vec![LOOPBACK]),
            ("loopback.test", vec![LOOPBACK]),
            ("ten.test", vec![IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3))]),
        ]);
        // As DNS does, a trailing dot (an absolute name) names the same host.
        let found = table
            .get(name.strip_suffix('.').unwrap_or(name))
            .map(|ips| ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect());
        Box::pin(async move { found.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "unknown test name")) })
    }
}

/// A started proxy with its resolver and the events it reported.
pub struct Running {
    /// Kept for the test's length: dropping it stops the proxy.
    _handle: ProxyHandle,
    pub addr: SocketAddr,
    pub resolver: Arc<TestResolver>,
    pub events: Arc<Mutex<Vec<ProxyEvent>>>,
}

impl Running {
    pub fn events(&self) -> Vec<ProxyEvent> {
        self.events.lock().expect("events").clone()
    }

    pub fn resolved(&self) -> Vec<String> {
        self.resolver.asked.lock().expect("resolver").clone()
    }
}

/// A gate allowing `patterns` (`sandbox.network.allowedDomains` entries), refusing the rest.
pub fn allowing(patterns: &[&str]) -> Arc<DomainGate> {
    let allow = patterns.iter().map(|p| DomainPattern::parse(p).expect("pattern")).collect();
    Arc::new(DomainGate::new(allow, Vec::new(), Unlisted::Deny))
}

/// Starts a proxy on 127.0.0.1 with `gate`, `private` networks and `tune` applied.
pub async fn start_with(gate: Arc<dyn Gate>, private: PrivateNetworks, tune: impl FnOnce(&mut ProxyConfig)) -> Running {
    let mut config = ProxyConfig::new(Listen::Tcp(SocketAddr::new(LOOPBACK, 0)));
    config.private_networks = private;
    tune(&mut config);
    let resolver = Arc::new(TestResolver::default());
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let handle = Proxy::new(config, gate)
        .with_resolver(Arc::clone(&resolver) as Arc<dyn Resolver>)
        .with_observer(Arc::new(move |event: &ProxyEvent| sink.lock().expect("events").push(event.clone())))
        .start()
        .await
        .expect("proxy starts");
    let Listen::Tcp(addr) = handle.listening().clone() else { panic!("tcp proxy") };
    Running { _handle: handle, addr, resolver, events }
}

/// Starts a proxy with defaults; the upstream servers are on loopback, so tests that reach
/// them allow private networks explicitly.
pub async fn start(gate: Arc<dyn Gate>, private: PrivateNetworks) -> Running {
    start_with(gate, private, |_| {}).await
}

/// A TCP server echoing every byte back; returns its port.
pub async fn echo_server() -> u16 {
    let listener = TcpListener::bind((LOOPBACK, 0)).await.expect("bind echo");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut read, mut write) = stream.split();
                let _ = tokio::io::copy(&mut read, &mut write).await;
            });
        }
    });
    port
}

/// An HTTP server: `/hello`, `/headers` (the request headers, one `name: value` a line) and
/// `POST /echo`; returns its port.
pub async fn http_server() -> u16 {
    let app = Router::new()
        .route("/hello", get(|| async { "hello from upstream" }))
        .route(
            "/headers",
            get(|headers: HeaderMap| async move {
                let mut lines: Vec<String> =
                    headers.iter().map(|(name, value)| format!("{name}: {}", value.to_str().unwrap_or("?"))).collect();
                lines.sort();
                lines.join("\n")
            }),
        )
        .route("/echo", post(|body: Bytes| async move { body }));
    let listener = TcpListener::bind((LOOPBACK, 0)).await.expect("bind http");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// Reads an HTTP response head (through the blank line) byte by byte.
pub async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let byte = tokio::time::timeout(Duration::from_secs(10), stream.read_u8()).await.expect("head in time");
        head.push(byte.expect("head byte"));
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Sends `CONNECT target` and returns the connection and the response head.
pub async fn connect(proxy: SocketAddr, target: &str) -> (TcpStream, String) {
    let mut stream = TcpStream::connect(proxy).await.expect("connect to proxy");
    stream.write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes()).await.expect("send");
    let head = read_head(&mut stream).await;
    (stream, head)
}

/// Sends a raw request with `Connection: close` and returns the whole response.
pub async fn request(proxy: SocketAddr, head: &str, body: &[u8]) -> String {
    let mut stream = TcpStream::connect(proxy).await.expect("connect to proxy");
    stream.write_all(head.as_bytes()).await.expect("send head");
    stream.write_all(body).await.expect("send body");
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response))
        .await
        .expect("response in time")
        .expect("read response");
    String::from_utf8_lossy(&response).into_owned()
}

/// Writes `ping` into a tunnel and expects it echoed.
pub async fn assert_echoes(stream: &mut TcpStream) {
    stream.write_all(b"ping through the tunnel").await.expect("write");
    let mut back = [0; 23];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut back)).await.expect("echo").expect("read");
    assert_eq!(&back, b"ping through the tunnel");
}

#[tokio::test]
async fn connect_to_an_allowed_host_tunnels_bytes_both_ways() {
    let echo = echo_server().await;
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    let (mut tunnel, head) = connect(proxy.addr, &format!("allowed.test:{echo}")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_echoes(&mut tunnel).await;
    let events = proxy.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        (events[0].protocol, events[0].host.as_str(), events[0].port),
        (Protocol::HttpConnect, "allowed.test", echo)
    );
    assert_eq!(events[0].outcome, Outcome::Allowed { address: SocketAddr::new(LOOPBACK, echo), approved: false });
}

#[tokio::test]
async fn connect_to_a_domain_not_allowed_is_403_naming_the_reason_and_is_never_resolved() {
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    let response = request(
        proxy.addr,
        "CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\nConnection: close\r\n\r\n",
        b"",
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    assert!(response.ends_with("\r\n\r\nspine sandbox proxy: other.test is not an allowed domain\n"), "{response}");
    let events = proxy.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].outcome, Outcome::Denied(DenyReason::NotAllowed { host: "other.test".into() }));
    assert_eq!(proxy.resolved(), Vec::<String>::new(), "a refused name must not even reach DNS");
}

#[tokio::test]
async fn plain_http_is_forwarded_with_host_rewritten_hop_by_hop_headers_dropped_and_bodies_streamed() {
    let upstream = http_server().await;
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    let hello = request(
        proxy.addr,
        &format!(
            "GET http://allowed.test:{upstream}/hello HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n"
        ),
        b"",
    )
    .await;
    assert!(hello.starts_with("HTTP/1.1 200"), "{hello}");
    assert!(hello.ends_with("hello from upstream"), "{hello}");

    let headers = request(
        proxy.addr,
        &format!(
            "GET http://ALLOWED.test:{upstream}/headers HTTP/1.1\r\nHost: wrong.test\r\nProxy-Authorization: Basic eA==\r\n\
             Proxy-Connection: keep-alive\r\nX-Private: 1\r\nX-Kept: yes\r\nConnection: close, X-Private\r\n\r\n"
        ),
        b"",
    )
    .await;
    let seen = headers.split("\r\n\r\n").nth(1).expect("body");
    assert!(seen.contains(&format!("host: allowed.test:{upstream}")), "Host is the target's authority: {seen}");
    assert!(seen.contains("x-kept: yes"), "{seen}");
    for dropped in ["proxy-authorization", "proxy-connection", "x-private", "connection"] {
        assert!(!seen.contains(dropped), "{dropped} must not reach the upstream: {seen}");
    }

    // A chunked request body streams through; the response comes back whole.
    let chunked = request(
        proxy.addr,
        &format!(
            "POST http://allowed.test:{upstream}/echo HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\
             Connection: close\r\n\r\n"
        ),
        b"5\r\nhello\r\n7\r\n, proxy\r\n0\r\n\r\n",
    )
    .await;
    assert!(chunked.starts_with("HTTP/1.1 200"), "{chunked}");
    assert!(chunked.ends_with("hello, proxy"), "{chunked}");
    assert!(
        proxy
            .events()
            .iter()
            .all(|e| e.protocol == Protocol::HttpForward && matches!(e.outcome, Outcome::Allowed { .. }))
    );
}

#[tokio::test]
async fn requests_that_are_not_absolute_http_urls_are_bad_requests() {
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    for head in [
        "GET /hello HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
        "GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
        "CONNECT allowed.test HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
    ] {
        let response = request(proxy.addr, head, b"").await;
        assert!(response.starts_with("HTTP/1.1 400"), "{head:?} → {response}");
    }
    assert!(proxy.resolved().is_empty());
}

#[tokio::test]
async fn names_and_addresses_on_private_networks_are_refused_by_default() {
    let echo = echo_server().await;
    let gate = allowing(&["loopback.test", "ten.test", "127.0.0.1", "allowed.test"]);
    let proxy = start(gate, PrivateNetworks::Refuse).await;
    let cases = [
        (format!("loopback.test:{echo}"), "loopback.test resolves only to private network addresses (127.0.0.1)"),
        ("ten.test:80".to_owned(), "ten.test resolves only to private network addresses (10.1.2.3)"),
        (format!("127.0.0.1:{echo}"), "127.0.0.1 is a private network address"),
        // Another spelling of the same address is the same address.
        (format!("0x7f.1:{echo}"), "127.0.0.1 is a private network address"),
        (format!("[::ffff:127.0.0.1]:{echo}"), "[::ffff:7f00:1] is a private network address"),
    ];
    for (target, reason) in &cases {
        let response = request(
            proxy.addr,
            &format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nConnection: close\r\n\r\n"),
            b"",
        )
        .await;
        assert!(response.starts_with("HTTP/1.1 403"), "{target}: {response}");
        assert!(response.contains(&format!("spine sandbox proxy: {reason}\n")), "{target}: {response}");
    }
    let events = proxy.events();
    assert_eq!(events.len(), cases.len());
    assert!(
        events.iter().all(|e| matches!(e.outcome, Outcome::Denied(DenyReason::PrivateAddress { .. }))),
        "{events:?}"
    );
}

/// An approver that hands each question to the test.
struct TestApprover {
    questions: mpsc::UnboundedSender<(String, oneshot::Sender<Answer>)>,
}

impl Approver for TestApprover {
    fn ask(&self, host: &Host<String>, _port: u16) -> BoxFuture<'static, Answer> {
        let (answer, answered) = oneshot::channel();
        let _ = self.questions.send((host.to_string(), answer));
        Box::pin(async move { answered.await.unwrap_or_else(|_| Answer::Deny("no one answered".into())) })
    }
}

#[tokio::test]
async fn ask_waits_for_the_approvers_answer_allow_once_or_deny() {
    let echo = echo_server().await;
    let (questions, mut asked) = mpsc::unbounded_channel();
    let gate = Arc::new(DomainGate::new(Vec::new(), Vec::new(), Unlisted::Ask(Arc::new(TestApprover { questions }))));
    let proxy = start(Arc::clone(&gate) as Arc<dyn Gate>, PrivateNetworks::Allow).await;

    for answer in [Answer::Allow, Answer::Deny("declined by the user".into())] {
        let mut client = TcpStream::connect(proxy.addr).await.expect("connect");
        let target = format!("allowed.test:{echo}");
        client
            .write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes())
            .await
            .expect("send");
        let (host, reply) =
            tokio::time::timeout(Duration::from_secs(10), asked.recv()).await.expect("asked").expect("q");
        assert_eq!(host, "allowed.test");
        let early = tokio::time::timeout(Duration::from_millis(200), client.read_u8()).await;
        assert!(early.is_err(), "the client must wait for the answer");
        assert_eq!(proxy.events().last().map(|e| e.outcome.clone()), Some(Outcome::Asked));
        reply.send(answer.clone()).expect("answer");
        let head = read_head(&mut client).await;
        match answer {
            Answer::Allow => {
                assert!(head.starts_with("HTTP/1.1 200"), "{head}");
                assert_echoes(&mut client).await;
                let last = proxy.events().last().map(|e| e.outcome.clone());
                assert_eq!(last, Some(Outcome::Allowed { address: SocketAddr::new(LOOPBACK, echo), approved: true }));
            }
            Answer::Deny(_) => {
                assert!(head.starts_with("HTTP/1.1 403"), "{head}");
                let mut body = vec![0; 80];
                let n = client.read(&mut body).await.expect("body");
                let body = String::from_utf8_lossy(&body[..n]);
                assert_eq!(body, "spine sandbox proxy: allowed.test was not approved: declined by the user\n");
            }
        }
    }
    // "Always allow" is the approver's to remember: once added, nobody is asked.
    gate.allow(DomainPattern::parse("allowed.test").expect("pattern"));
    let (_tunnel, head) = connect(proxy.addr, &format!("allowed.test:{echo}")).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(asked.try_recv().is_err(), "an allowed domain is not asked about");
}

#[tokio::test]
async fn wildcards_cover_subdomains_but_not_the_domain_and_deny_rules_win() {
    let echo = echo_server().await;
    let rules = PermissionRules {
        allow: vec![PermissionRule::parse("WebFetch(domain:other.test)").expect("rule")],
        ask: Vec::new(),
        deny: vec![PermissionRule::parse("WebFetch(domain:deep.api.allowed.test)").expect("rule")],
    };
    let gate = DomainGate::from_settings(&["*.allowed.test".to_owned()], &rules, Unlisted::Deny).expect("gate");
    let proxy = start(Arc::new(gate), PrivateNetworks::Allow).await;
    let status = |head: String| head.split(' ').nth(1).unwrap_or_default().to_owned();
    assert_eq!(status(connect(proxy.addr, &format!("api.allowed.test:{echo}")).await.1), "200");
    assert_eq!(status(connect(proxy.addr, &format!("API.Allowed.Test.:{echo}")).await.1), "200");
    assert_eq!(status(connect(proxy.addr, &format!("other.test:{echo}")).await.1), "200");
    assert_eq!(status(connect(proxy.addr, &format!("allowed.test:{echo}")).await.1), "403");
    assert_eq!(status(connect(proxy.addr, &format!("deep.api.allowed.test:{echo}")).await.1), "403");
    let last = proxy.events().pop().map(|e| e.outcome);
    let pattern = "WebFetch(domain:deep.api.allowed.test)".to_owned();
    assert_eq!(last, Some(Outcome::Denied(DenyReason::DeniedDomain { host: "deep.api.allowed.test".into(), pattern })));
}

#[tokio::test]
async fn a_unix_socket_proxy_serves_and_close_ends_tunnels_and_removes_the_socket() {
    let echo = echo_server().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("proxy.sock");
    let mut config = ProxyConfig::new(Listen::Unix(path.clone()));
    config.private_networks = PrivateNetworks::Allow;
    let handle = Proxy::new(config, allowing(&["allowed.test"]))
        .with_resolver(Arc::new(TestResolver::default()))
        .start()
        .await
        .expect("starts");
    let mut client = tokio::net::UnixStream::connect(&path).await.expect("connect");
    let target = format!("allowed.test:{echo}");
    client.write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes()).await.expect("send");
    let mut head = [0; 12];
    client.read_exact(&mut head).await.expect("head");
    assert_eq!(&head, b"HTTP/1.1 200");
    tokio::time::timeout(Duration::from_secs(10), handle.close()).await.expect("close returns");
    assert!(!path.exists(), "the socket file is removed");
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut rest)).await.expect("eof");
    assert!(read.is_ok(), "the tunnel was closed by the proxy");
}

#[tokio::test]
async fn private_addresses_are_refused_before_anyone_is_asked() {
    let (questions, mut asked) = mpsc::unbounded_channel();
    let gate = DomainGate::new(Vec::new(), Vec::new(), Unlisted::Ask(Arc::new(TestApprover { questions })));
    let proxy = start(Arc::new(gate), PrivateNetworks::Refuse).await;
    let response =
        request(proxy.addr, "CONNECT 10.0.0.1:80 HTTP/1.1\r\nHost: 10.0.0.1:80\r\nConnection: close\r\n\r\n", b"")
            .await;
    assert!(response.contains("spine sandbox proxy: 10.0.0.1 is a private network address"), "{response}");
    assert!(asked.try_recv().is_err(), "no one is asked about an address that would be refused");
}
