//! The worker's HTTP endpoints (`spine worker --listen ADDR`), HTTP/1.1 on hyper:
//!
//! - `GET /healthz`: 200 `ok` while the worker's loop runs (draining included), else 503 with
//!   a one-line reason.
//! - `GET /readyz`: 200 `ok` while the mailbox answers and the worker is not draining, else
//!   503 with a one-line reason.
//! - `GET /metrics`: the Prometheus text format (OpenMetrics 1.0), the moment gauges refreshed
//!   first.
//!
//! Anything else is 404. Contract: [`serve`] never fails the worker: a connection error ends
//! that connection only; it runs until its task is aborted.

use std::convert::Infallible;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::CONTENT_TYPE;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::Ops;

/// The content type of `/metrics`.
const METRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Serves the endpoints on `listener` until aborted.
pub async fn serve(listener: TcpListener, ops: Arc<Ops>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!("ops endpoint: accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let ops = Arc::clone(&ops);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let ops = Arc::clone(&ops);
                async move { Ok::<_, Infallible>(respond(&ops, &request).await) }
            });
            if let Err(e) =
                hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await
            {
                tracing::debug!("ops endpoint: connection: {e}");
            }
        });
    }
}

/// The answer to one request.
async fn respond(ops: &Ops, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET\n".to_owned());
    }
    match request.uri().path() {
        "/healthz" => check(ops.liveness()),
        "/readyz" => check(ops.readiness()),
        "/metrics" => match ops.render().await {
            Ok(body) => {
                let mut response = Response::new(Full::new(Bytes::from(body)));
                response.headers_mut().insert(CONTENT_TYPE, hyper::header::HeaderValue::from_static(METRICS_TYPE));
                response
            }
            Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot encode the metrics: {e}\n")),
        },
        _ => text(StatusCode::NOT_FOUND, "not found: /healthz, /readyz, /metrics\n".to_owned()),
    }
}

fn check(state: Result<(), String>) -> Response<Full<Bytes>> {
    match state {
        Ok(()) => text(StatusCode::OK, "ok\n".to_owned()),
        Err(reason) => text(StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}
