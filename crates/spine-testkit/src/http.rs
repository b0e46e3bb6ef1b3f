//! Local HTTP servers for tests (axum on 127.0.0.1, a fresh port each): [`serve`] runs any
//! router; [`TestServer`] plays scripted replies byte for byte (SSE pieces, pauses, cut or
//! stalled bodies) and records every request (path, headers, JSON body, arrival time);
//! [`CountingServer`] counts the requests it gets and redirects on demand. [`free_port`] is a
//! port nothing listens on; [`server_runtime`] serves them for synchronous tests.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Path;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{Redirect, Response};
use axum::routing::get;
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use serde_json::Value;

/// Serves `app` on a fresh port of 127.0.0.1 from a task of the current runtime; returns the
/// address. The server lives as long as the runtime.
pub async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

/// A runtime for the servers of a synchronous test (`#[test]`): one worker thread serves them
/// while the test blocks on a child process. Start servers with `runtime.block_on(…)`; they stop
/// when the runtime is dropped.
pub fn server_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("server runtime")
}

/// A port of 127.0.0.1 nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("addr").port()
}

/// A server that counts every request it receives: `GET /text` answers `plain text\n`
/// (`text/plain`), `GET /to/{port}` redirects (307) to `http://localhost:{port}/text`.
pub struct CountingServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    hits: Arc<AtomicUsize>,
}

impl CountingServer {
    /// Starts one on the current runtime.
    pub async fn start() -> Self {
        let hits = Arc::new(AtomicUsize::new(0));
        let (text_hits, redirect_hits) = (Arc::clone(&hits), Arc::clone(&hits));
        let app = Router::new()
            .route(
                "/text",
                get(move || {
                    text_hits.fetch_add(1, Ordering::SeqCst);
                    async { ([(axum::http::header::CONTENT_TYPE, "text/plain")], "plain text\n") }
                }),
            )
            .route(
                "/to/{port}",
                get(move |Path(port): Path<u16>| {
                    redirect_hits.fetch_add(1, Ordering::SeqCst);
                    async move { Redirect::temporary(&format!("http://localhost:{port}/text")) }
                }),
            );
        let port = serve(app).await.port();
        CountingServer { port, hits }
    }

    /// How many requests it received so far (redirects included).
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// A piece of a streamed body.
#[derive(Debug, Clone)]
pub enum Piece {
    /// Bytes written (and flushed) as one chunk.
    Bytes(Bytes),
    /// A pause before the next piece.
    Pause(Duration),
}

/// How a streamed body ends.
#[derive(Debug, Clone, Copy)]
pub enum End {
    /// The body ends normally.
    Close,
    /// The connection is aborted (no terminating chunk), 50 ms after the last piece.
    Cut,
    /// The body never ends.
    Stall,
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with `text/event-stream`.
    Sse(Vec<Piece>, End),
    /// 200 with `application/json`.
    Json(Value),
    /// Any status, headers and body.
    Status {
        /// The HTTP status code.
        status: u16,
        /// Headers: lowercase names, values.
        headers: Vec<(&'static str, String)>,
        /// The whole body.
        body: String,
    },
    /// The reply, after holding back the headers.
    Delayed(Duration, Box<Reply>),
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The URI's path (no query).
    pub path: String,
    /// Every request header.
    pub headers: HeaderMap,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub body: Value,
    /// When the whole request had arrived.
    pub at: Instant,
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    /// Played when the script is used up.
    fallback: Mutex<Option<Reply>>,
    requests: Mutex<Vec<Recorded>>,
}

/// A running server.
pub struct TestServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl TestServer {
    /// Starts a server playing `replies` in order (then 500s saying `script exhausted`).
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::start_with_fallback(replies, None).await
    }

    /// Starts a server that plays `reply` for every request.
    pub async fn always(reply: Reply) -> Self {
        Self::start_with_fallback(Vec::new(), Some(reply)).await
    }

    async fn start_with_fallback(replies: Vec<Reply>, fallback: Option<Reply>) -> Self {
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            fallback: Mutex::new(fallback),
            requests: Mutex::new(Vec::new()),
        });
        let addr = serve(Router::new().fallback(handle).with_state(Arc::clone(&shared))).await;
        TestServer { addr, shared }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("lock").clone()
    }

    /// The only request received (panics unless exactly one arrived).
    pub fn only_request(&self) -> Recorded {
        let r = self.requests();
        assert_eq!(r.len(), 1, "expected exactly one request");
        r.into_iter().next().expect("one")
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
    shared.requests.lock().expect("lock").push(Recorded {
        path: parts.uri.path().to_owned(),
        headers: parts.headers,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        at: Instant::now(),
    });
    let next = shared.replies.lock().expect("lock").pop_front();
    let reply = next.or_else(|| shared.fallback.lock().expect("lock").clone()).unwrap_or(Reply::Status {
        status: 500,
        headers: Vec::new(),
        body: "test server: script exhausted".into(),
    });
    respond(reply).await
}

async fn respond(reply: Reply) -> Response {
    let mut reply = reply;
    while let Reply::Delayed(wait, inner) = reply {
        tokio::time::sleep(wait).await;
        reply = *inner;
    }
    let (status, headers, body) = match reply {
        Reply::Sse(pieces, end) => {
            (200, vec![("content-type", "text/event-stream".to_owned())], Body::from_stream(body_stream(pieces, end)))
        }
        Reply::Json(v) => (200, vec![("content-type", "application/json".to_owned())], Body::from(v.to_string())),
        Reply::Status { status, headers, body } => (status, headers, Body::from(body)),
        Reply::Delayed(..) => unreachable!("unwrapped above"),
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(status).expect("status");
    for (name, value) in headers {
        response.headers_mut().insert(HeaderName::from_static(name), HeaderValue::from_str(&value).expect("header"));
    }
    response
}

fn body_stream(pieces: Vec<Piece>, end: End) -> BoxStream<'static, Result<Bytes, io::Error>> {
    let body = stream::iter(pieces).filter_map(|p| async move {
        match p {
            Piece::Bytes(b) => Some(Ok(b)),
            Piece::Pause(d) => {
                tokio::time::sleep(d).await;
                None
            }
        }
    });
    let tail: BoxStream<'static, Result<Bytes, io::Error>> = match end {
        End::Close => stream::empty().boxed(),
        // The pause lets hyper flush what came before; the error then aborts the connection.
        End::Cut => stream::once(async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(io::Error::other("test server cut the stream"))
        })
        .boxed(),
        End::Stall => stream::pending().boxed(),
    };
    body.chain(tail).boxed()
}

/// OpenAI-style SSE: each JSON value as `data: …\n\n`.
pub fn data_events(events: &[Value]) -> Vec<Piece> {
    events.iter().map(|e| Piece::Bytes(Bytes::from(format!("data: {e}\n\n")))).collect()
}

/// Raw bytes as one piece.
pub fn raw(text: &str) -> Piece {
    Piece::Bytes(Bytes::from(text.to_owned()))
}

/// `data: [DONE]\n\n`.
pub fn done() -> Piece {
    Piece::Bytes(Bytes::from_static(b"data: [DONE]\n\n"))
}

/// Anthropic-style SSE: `event: <type>\ndata: …\n\n` for each value.
pub fn named_events(events: &[Value]) -> Vec<Piece> {
    events
        .iter()
        .map(|e| {
            let name = e["type"].as_str().unwrap_or("message");
            Piece::Bytes(Bytes::from(format!("event: {name}\ndata: {e}\n\n")))
        })
        .collect()
}

/// The pieces' bytes re-cut into chunks of `size` bytes (so events straddle reads).
pub fn rechunk(pieces: Vec<Piece>, size: usize) -> Vec<Piece> {
    let mut all = Vec::new();
    for p in pieces {
        if let Piece::Bytes(b) = p {
            all.extend_from_slice(&b);
        }
    }
    all.chunks(size).map(|c| Piece::Bytes(Bytes::copy_from_slice(c))).collect()
}
