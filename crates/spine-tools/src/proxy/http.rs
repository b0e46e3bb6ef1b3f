//! HTTP/1.1 forward proxying, on hyper: `CONNECT` tunnels and absolute-form requests.
//!
//! Contract:
//! - Request heads are read within the head time limit and up to the head size limit (past
//!   it hyper answers `431` and closes). Connections are kept alive between requests; each
//!   request's destination is decided on its own.
//! - `CONNECT host:port`: the authority is parsed by hyper's URI parser and the host by
//!   [`url::Host`]; a port is required (`400` without). Once the upstream connection is made
//!   the client gets `200` and bytes are copied both ways until both sides close.
//! - Any other method needs an absolute-form `http://` target (`400` otherwise: origin-form is
//!   not proxying, and `https://` must use `CONNECT`). The request goes to the decided address
//!   in origin form, as HTTP/1.1, with `Host` set to the target's authority, hop-by-hop
//!   headers removed (`Connection` and the headers it names, `Keep-Alive`,
//!   `Proxy-Connection`, `Proxy-Authorization`, `Proxy-Authenticate`, `TE`, `Trailer`,
//!   `Transfer-Encoding`, `Upgrade`) and its body streamed; the response comes back the same
//!   way (hop-by-hop headers removed, body streamed, framing redone by hyper). One upstream
//!   connection per request; protocol upgrades (WebSocket over plain HTTP) are not relayed.
//! - Refusals are `403` with a `text/plain` body `spine sandbox proxy: <reason>`; a name that
//!   does not resolve or an upstream that refuses is `502`, a connect time-out `504`.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::{Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::http::uri;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, Uri, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::OwnedSemaphorePermit;
use url::Host;

use super::Shared;
use super::dial::{DialError, Via};
use super::gate::{DenyReason, Outcome, Protocol};

/// A response body: the upstream's, streamed, or the proxy's own text.
type Body = Either<Incoming, Full<Bytes>>;

/// Serves one HTTP client (keep-alive: any number of requests).
pub(crate) async fn serve<S>(
    io: S,
    shared: Arc<Shared>,
    permit: OwnedSemaphorePermit,
    peer: Option<u32>,
) -> Result<(), hyper::Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(shared.head_timeout).max_header_size(shared.max_head_bytes);
    // The permit is shared with the tunnels this connection opens: it is released when the
    // last of them ends.
    let permit = Arc::new(permit);
    let service = service_fn(move |req: Request<Incoming>| {
        let shared = Arc::clone(&shared);
        let permit = Arc::clone(&permit);
        async move { Ok::<_, Infallible>(handle(req, shared, permit, peer).await) }
    });
    builder.serve_connection(TokioIo::new(io), service).with_upgrades().await
}

async fn handle(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    permit: Arc<OwnedSemaphorePermit>,
    peer: Option<u32>,
) -> Response<Body> {
    if req.method() == Method::CONNECT {
        tunnel(req, shared, permit, Via { protocol: Protocol::HttpConnect, peer }).await
    } else {
        forward(req, &shared, Via { protocol: Protocol::HttpForward, peer }).await
    }
}

/// The destination of a request target: host (parsed by [`url::Host`]) and port.
fn destination(
    authority: &uri::Authority,
    default_port: Option<u16>,
) -> Result<(Host<String>, u16), (StatusCode, String)> {
    let port = authority
        .port_u16()
        .or(default_port)
        .ok_or_else(|| (StatusCode::BAD_REQUEST, format!("CONNECT needs host:port; {authority} has no port")))?;
    let host = Host::parse(authority.host()).map_err(|_| {
        let reason = DenyReason::InvalidTarget { target: authority.to_string() };
        (StatusCode::FORBIDDEN, reason.to_string())
    })?;
    Ok((host, port))
}

async fn tunnel(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    permit: Arc<OwnedSemaphorePermit>,
    via: Via,
) -> Response<Body> {
    let Some(authority) = req.uri().authority().cloned() else {
        return text(StatusCode::BAD_REQUEST, format!("CONNECT needs host:port, not {}", req.uri()));
    };
    let (host, port) = match destination(&authority, None) {
        Ok(found) => found,
        Err((status, message)) => return refuse_target(&shared, via, &authority, status, message),
    };
    let mut upstream = match shared.dialer.dial(via, &host, port).await {
        Ok(upstream) => upstream,
        Err(e) => return dial_failure(&e),
    };
    let upgrade = hyper::upgrade::on(req);
    let cancel = shared.cancel.clone();
    shared.tracker.spawn(async move {
        let _permit = permit;
        let copy = async {
            if let Ok(upgraded) = upgrade.await {
                let mut client = TokioIo::new(upgraded);
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            }
        };
        tokio::select! {
            () = cancel.cancelled() => {}
            () = copy => {}
        }
    });
    Response::new(Either::Right(Full::new(Bytes::new())))
}

async fn forward(req: Request<Incoming>, shared: &Shared, via: Via) -> Response<Body> {
    let target = req.uri().clone();
    let (Some("http"), Some(authority)) = (target.scheme_str(), target.authority()) else {
        return text(
            StatusCode::BAD_REQUEST,
            format!(
                "{target} is not an absolute http:// URL; a proxy needs absolute-form requests, and https goes through CONNECT"
            ),
        );
    };
    let (host, port) = match destination(authority, Some(80)) {
        Ok(found) => found,
        Err((status, message)) => return refuse_target(shared, via, authority, status, message),
    };
    let Ok(host_header) = HeaderValue::try_from(if port == 80 { host.to_string() } else { format!("{host}:{port}") })
    else {
        return text(StatusCode::BAD_REQUEST, format!("{host} cannot be a Host header"));
    };
    let mut origin = uri::Parts::default();
    origin.path_and_query =
        Some(target.path_and_query().cloned().unwrap_or_else(|| uri::PathAndQuery::from_static("/")));
    let Ok(origin) = Uri::from_parts(origin) else {
        return text(StatusCode::BAD_REQUEST, format!("{target} has no usable path"));
    };
    let upstream = match shared.dialer.dial(via, &host, port).await {
        Ok(upstream) => upstream,
        Err(e) => return dial_failure(&e),
    };
    let (mut sender, connection) = match hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await {
        Ok(pair) => pair,
        Err(e) => return text(StatusCode::BAD_GATEWAY, format!("cannot talk HTTP to {host}: {e}")),
    };
    let cancel = shared.cancel.clone();
    shared.tracker.spawn(async move {
        tokio::select! {
            () = cancel.cancelled() => {}
            _ = connection => {}
        }
    });
    let (mut parts, body) = req.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    parts.headers.insert(header::HOST, host_header);
    parts.uri = origin;
    parts.version = Version::HTTP_11;
    match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(response) => {
            let (mut parts, body) = response.into_parts();
            strip_hop_by_hop(&mut parts.headers);
            Response::from_parts(parts, Either::Left(body))
        }
        Err(e) => text(StatusCode::BAD_GATEWAY, format!("{host} failed to answer: {e}")),
    }
}

/// Answers a target that cannot be checked, reporting refusals.
fn refuse_target(
    shared: &Shared,
    via: Via,
    authority: &uri::Authority,
    status: StatusCode,
    message: String,
) -> Response<Body> {
    if status == StatusCode::FORBIDDEN {
        let reason = DenyReason::InvalidTarget { target: authority.to_string() };
        let port = authority.port_u16().unwrap_or(0);
        shared.dialer.report(via, authority.host().to_owned(), port, Outcome::Denied(reason));
    }
    text(status, message)
}

/// The answer to a failed dial: `403` refused, `502` unresolved or unreachable, `504` timed out.
fn dial_failure(e: &DialError) -> Response<Body> {
    let status = match e {
        DialError::Denied(_) => StatusCode::FORBIDDEN,
        DialError::Resolve { .. } | DialError::Connect { .. } => StatusCode::BAD_GATEWAY,
        DialError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
    };
    text(status, e.to_string())
}

/// A `text/plain` answer of the proxy's own: `spine sandbox proxy: <message>`.
fn text(status: StatusCode, message: String) -> Response<Body> {
    let body = format!("spine sandbox proxy: {message}\n");
    let mut response = Response::new(Either::Right(Full::new(Bytes::from(body))));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// Removes hop-by-hop headers: those `Connection` names, then the fixed list.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in [
        header::CONNECTION,
        HeaderName::from_static("keep-alive"),
        HeaderName::from_static("proxy-connection"),
        header::PROXY_AUTHORIZATION,
        header::PROXY_AUTHENTICATE,
        header::TE,
        header::TRAILER,
        header::TRANSFER_ENCODING,
        header::UPGRADE,
    ] {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_removed() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("connection", "keep-alive, X-Secret"),
            ("x-secret", "1"),
            ("keep-alive", "timeout=5"),
            ("proxy-authorization", "Basic eA=="),
            ("proxy-connection", "keep-alive"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "websocket"),
            ("te", "trailers"),
            ("accept", "*/*"),
        ] {
            headers.append(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        strip_hop_by_hop(&mut headers);
        let left: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
        assert_eq!(left, ["accept"]);
    }
}
