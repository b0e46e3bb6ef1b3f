//! The sandbox's filtering network proxy.
//!
//! Programs spine runs in its OS sandbox have no network of their own; when domains are
//! allowed, the sandbox bridges `127.0.0.1:PORT` in its network namespace to this proxy,
//! which runs outside, and the program gets `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`.
//!
//! Contract:
//! - One listener, a unix socket or a loopback TCP address ([`Listen`]), speaks both
//!   protocols: a connection whose first byte is `0x05` is SOCKS5 (`socks`: `CONNECT` only),
//!   anything else HTTP/1.1 (`http`: `CONNECT` tunnels and absolute-form `http://`
//!   requests). One port therefore serves `HTTP_PROXY=http://…` and
//!   `ALL_PROXY=socks5h://…` alike, which is what the sandbox's single bridge needs.
//! - Every destination goes through `dial`: the caller's [`Gate`] decides about the name
//!   (allow, deny, or ask the caller's approver and await the answer), then the proxy resolves
//!   an allowed name once and, unless [`ProxyConfig::private_networks`] is
//!   [`PrivateNetworks::Allow`] (explicitly; refused by default), refuses loopback, private,
//!   link-local, CGNAT, ULA and similar addresses and connects only to the addresses it
//!   checked. [`DomainGate`] is the standard gate (Claude Code's `allowedDomains` and the
//!   `WebFetch(domain:…)` rules).
//! - Every decision is reported to the [`Observer`] as a [`ProxyEvent`]; a refused client is
//!   told why (HTTP `403` with `spine sandbox proxy: <reason>`, SOCKS5 reply `0x02`).
//! - Bounds: at most [`ProxyConfig::max_connections`] clients at once (more wait in the
//!   listen backlog; a tunnel counts until it closes), request heads within
//!   [`ProxyConfig::head_timeout`] and [`ProxyConfig::max_head_bytes`], name resolution plus
//!   upstream connection within [`ProxyConfig::connect_timeout`]. An approver's answer has no
//!   time limit (a person may be answering), and neither has an open tunnel.
//! - [`ProxyHandle::close`] stops accepting, ends every connection and tunnel and waits for
//!   them; dropping the handle does the same without waiting. Either removes the unix socket.

mod dial;
mod domains;
mod gate;
mod http;
mod io;
mod socks;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use dial::{Resolver, SystemResolver};
pub use domains::{DomainGate, DomainPattern, PatternError, Unlisted};
pub use gate::{Answer, Approver, Decision, DenyReason, Gate, Observer, Outcome, Protocol, ProxyEvent};
pub use io::{Listen, ProxyError};
pub use url::Host;

pub use crate::web::address::PrivateNetworks;

use dial::Dialer;
use io::{Client, Listener, Prefixed, remove_socket};

/// The first byte of a SOCKS5 greeting.
const SOCKS5: u8 = 0x05;

/// How the proxy listens and its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyConfig {
    /// Where to listen.
    pub listen: Listen,
    /// Whether private network addresses may be reached (default: refused).
    pub private_networks: PrivateNetworks,
    /// Clients served at once (default 256).
    pub max_connections: usize,
    /// Bytes of an HTTP request head at most, request line included (default 64 KiB).
    pub max_head_bytes: usize,
    /// Time to receive an HTTP request head or a SOCKS5 handshake (default 30 s).
    pub head_timeout: Duration,
    /// Time to resolve and connect to an upstream (default 10 s).
    pub connect_timeout: Duration,
}

impl ProxyConfig {
    /// The defaults, listening at `listen`.
    pub fn new(listen: Listen) -> Self {
        ProxyConfig {
            listen,
            private_networks: PrivateNetworks::Refuse,
            max_connections: 256,
            max_head_bytes: 64 * 1024,
            head_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// A proxy to start: its configuration, gate, resolver and observer.
pub struct Proxy {
    config: ProxyConfig,
    gate: Arc<dyn Gate>,
    resolver: Arc<dyn Resolver>,
    observer: Option<Observer>,
}

impl Proxy {
    /// A proxy deciding with `gate`, resolving with the [`SystemResolver`], observed by no one.
    pub fn new(config: ProxyConfig, gate: Arc<dyn Gate>) -> Self {
        Proxy { config, gate, resolver: Arc::new(SystemResolver), observer: None }
    }

    /// Resolves names with `resolver` instead.
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Reports every decision to `observer`.
    pub fn with_observer(mut self, observer: Observer) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Binds the listener and starts serving on the current tokio runtime.
    pub async fn start(self) -> Result<ProxyHandle, ProxyError> {
        self.spawn()
    }

    /// [`Proxy::start`] from synchronous code running within a tokio runtime (its tasks run
    /// there); [`ProxyError::NoRuntime`] outside one.
    pub fn spawn(self) -> Result<ProxyHandle, ProxyError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(ProxyError::NoRuntime);
        }
        let (listener, listening) = Listener::bind(&self.config.listen)?;
        let cancel = CancellationToken::new();
        let tracker = TaskTracker::new();
        let shared = Arc::new(Shared {
            dialer: Dialer {
                gate: self.gate,
                resolver: self.resolver,
                observer: self.observer,
                private_networks: self.config.private_networks,
                connect_timeout: self.config.connect_timeout,
            },
            head_timeout: self.config.head_timeout,
            max_head_bytes: self.config.max_head_bytes,
            cancel: cancel.clone(),
            tracker: tracker.clone(),
        });
        let slots = Arc::new(Semaphore::new(self.config.max_connections.max(1)));
        tracker.spawn(accept_loop(listener, shared, slots));
        let socket = match &listening {
            Listen::Unix(path) => Some(path.clone()),
            Listen::Tcp(_) => None,
        };
        Ok(ProxyHandle { listening, cancel, tracker, socket })
    }
}

/// A running proxy; dropping it shuts the proxy down.
#[derive(Debug)]
pub struct ProxyHandle {
    listening: Listen,
    cancel: CancellationToken,
    tracker: TaskTracker,
    socket: Option<PathBuf>,
}

impl ProxyHandle {
    /// Where the proxy listens (with the port bound, for `127.0.0.1:0`).
    pub fn listening(&self) -> &Listen {
        &self.listening
    }

    /// Stops the proxy: no new clients, every connection and tunnel ended; returns once all
    /// its tasks are done and the unix socket is removed.
    pub async fn close(mut self) {
        self.cancel.cancel();
        self.tracker.close();
        self.tracker.wait().await;
        if let Some(path) = self.socket.take() {
            remove_socket(&path);
        }
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.tracker.close();
        if let Some(path) = self.socket.take() {
            remove_socket(&path);
        }
    }
}

/// What every connection of one proxy shares.
pub(crate) struct Shared {
    pub(crate) dialer: Dialer,
    pub(crate) head_timeout: Duration,
    pub(crate) max_head_bytes: usize,
    pub(crate) cancel: CancellationToken,
    pub(crate) tracker: TaskTracker,
}

async fn accept_loop(listener: Listener, shared: Arc<Shared>, slots: Arc<Semaphore>) {
    let cancel = shared.cancel.clone();
    loop {
        let permit = tokio::select! {
            () = cancel.cancelled() => return,
            permit = Arc::clone(&slots).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        let client = tokio::select! {
            () = cancel.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let client = match client {
            Ok(client) => client,
            // Out of descriptors or a client gone before it was accepted: wait a little
            // rather than spin, and keep serving.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let shared = Arc::clone(&shared);
        shared.tracker.clone().spawn(async move {
            let cancel = shared.cancel.clone();
            tokio::select! {
                () = cancel.cancelled() => {}
                () = serve_client(client, shared, permit) => {}
            }
        });
    }
}

async fn serve_client(client: Client, shared: Arc<Shared>, permit: OwnedSemaphorePermit) {
    match client {
        Client::Unix(stream) => {
            let peer = stream.peer_cred().ok().and_then(|cred| cred.pid()).and_then(|pid| u32::try_from(pid).ok());
            serve_stream(stream, shared, permit, peer).await;
        }
        Client::Tcp(stream) => serve_stream(stream, shared, permit, None).await,
    }
}

/// Reads the first byte and hands the client to SOCKS5 or HTTP. Errors end the connection:
/// the client sees it closed.
async fn serve_stream<S>(mut stream: S, shared: Arc<Shared>, permit: OwnedSemaphorePermit, peer: Option<u32>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut first = [0; 1];
    match tokio::time::timeout(shared.head_timeout, stream.read(&mut first)).await {
        Ok(Ok(1)) => {}
        Ok(Ok(_) | Err(_)) | Err(_) => return,
    }
    if first[0] == SOCKS5 {
        let _permit = permit;
        let _ = socks::serve(stream, &shared, peer).await;
    } else {
        let _ = http::serve(Prefixed::new(first[0], stream), shared, permit, peer).await;
    }
}
