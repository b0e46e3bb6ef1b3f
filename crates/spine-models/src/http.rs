//! HTTP plumbing shared by the providers.
//!
//! An `Endpoint` is one POST URL with one `reqwest` client carrying the provider's fixed
//! headers (the key marked sensitive). It owns the per-attempt timeouts of [`Timeouts`]:
//!
//! - **connect** (reqwest's connect timeout),
//! - **first byte**: from sending the request until the response headers arrive,
//! - **idle**: between two body chunks ([`IdleTimeout`]), for streams and plain bodies alike.
//!
//! The fourth, **total**, bounds the whole request across retries and is applied by
//! [`crate::retry::with_retries`].
//!
//! Every timeout becomes [`ModelErrorKind::Timeout`]. An error status becomes
//! [`ModelErrorKind::Http`] with a message naming the endpoint (scheme, host, port and path only:
//! never credentials or a query), the status, and the server's text ([`server_error_text`]),
//! with the key scrubbed from it. TLS uses rustls with the ring provider, installed once per
//! process ([`install_crypto_provider`]), and the platform's root certificates; a client that
//! cannot meet TLS (an `http://` endpoint without a TLS proxy) does not load them. One reqwest
//! client per endpoint, kept for the client's life: connections are pooled (keep-alive).

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};
use spine_core::model::ModelErrorKind;
use thiserror::Error;
use tokio::time::{Instant, Sleep};

use crate::error::ClientError;
use crate::retry::{AttemptError, retry_after};
use crate::secret::Secret;

/// The timeouts of one endpoint (settings `model_options.timeouts`: `connect_ms`,
/// `first_byte_ms`, `idle_ms`, `total_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the connection (TCP and TLS), per attempt. Default 10 s.
    pub connect: Duration,
    /// From sending the request to the response headers, per attempt. Default 60 s.
    pub first_byte: Duration,
    /// Between two chunks of the response body, per attempt. Default 60 s.
    pub idle: Duration,
    /// The whole request: every attempt and every wait between attempts
    /// ([`crate::retry::with_retries`]). Default 10 min.
    pub total: Duration,
}

/// [`Timeouts::connect`]'s default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// [`Timeouts::first_byte`]'s default.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(60);
/// [`Timeouts::idle`]'s default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// [`Timeouts::total`]'s default.
pub const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(600);

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: DEFAULT_CONNECT_TIMEOUT,
            first_byte: DEFAULT_FIRST_BYTE_TIMEOUT,
            idle: DEFAULT_IDLE_TIMEOUT,
            total: DEFAULT_TOTAL_TIMEOUT,
        }
    }
}

/// Installs rustls' ring crypto provider once per process; a provider installed by someone
/// else is kept.
pub fn install_crypto_provider() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        // Err means another provider is already the default: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A failure while reading a response body.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BodyError {
    /// No chunk arrived within the idle timeout.
    #[error("no data for {} s", .0.as_secs_f64())]
    Idle(Duration),
    /// The connection failed or closed early.
    #[error("{0}")]
    Transport(String),
}

impl BodyError {
    /// The model error for a body that failed before the reply was complete.
    pub fn into_attempt_error(self) -> AttemptError {
        match self {
            BodyError::Idle(d) => AttemptError::new(
                ModelErrorKind::Timeout,
                format!("the stream stalled: no data for {} s (idle timeout)", d.as_secs_f64()),
            ),
            BodyError::Transport(cause) => AttemptError::new(
                ModelErrorKind::Transport,
                format!("stream ended before the reply was complete: {cause}"),
            ),
        }
    }
}

/// A response body as chunks, each within the idle timeout of the previous one.
pub type BodyStream = IdleTimeout<Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>>;

/// One POST endpoint. Clones share the reqwest client and its connection pool.
#[derive(Clone)]
pub(crate) struct Endpoint {
    client: reqwest::Client,
    url: Url,
    shown: String,
    timeouts: Timeouts,
    secret: Option<Secret>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("url", &self.shown).field("timeouts", &self.timeouts).finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint at `base` + `path`, sending `headers` (plus JSON content type and a user
    /// agent) on every request. `secret` is only used to scrub server text.
    pub(crate) fn new(
        base: &str,
        path: &str,
        headers: HeaderMap,
        timeouts: Timeouts,
        secret: Option<Secret>,
    ) -> Result<Self, ClientError> {
        let url = join_url(base, path)?;
        let shown = format!("POST {}", redacted_url(&url));
        let mut headers = headers;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, HeaderValue::from_static(concat!("spine/", env!("CARGO_PKG_VERSION"))));
        install_crypto_provider();
        let builder = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .default_headers(headers)
            // A redirect could carry `x-api-key` to another host (reqwest only strips
            // `authorization`); APIs do not redirect POSTs, so a 3xx is reported as is.
            .redirect(reqwest::redirect::Policy::none());
        // Loading the platform's root certificates reads and parses every file of the system
        // store (about 5 ms): only for a client that can meet TLS.
        let builder = if may_use_tls(&url, |name| std::env::var(name).ok()) {
            builder
        } else {
            builder.tls_certs_only(std::iter::empty())
        };
        let client = builder.build().map_err(|e| ClientError::HttpClient(error_chain(&e.without_url())))?;
        Ok(Endpoint { client, url, shown, timeouts, secret })
    }

    /// `POST <url>` without credentials or query, for messages.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The key header value, marked sensitive so no reqwest/hyper debug output shows it.
    pub(crate) fn sensitive_header(value: String, base_url: &str) -> Result<HeaderValue, ClientError> {
        let mut value = HeaderValue::from_str(&value).map_err(|_| ClientError::InvalidApiKey {
            endpoint: Url::parse(base_url.trim()).map_or_else(|_| base_url.to_owned(), |u| redacted_url(&u)),
        })?;
        value.set_sensitive(true);
        Ok(value)
    }

    /// Sends `body` and waits for a success status. Errors carry the endpoint in their message.
    pub(crate) async fn post(&self, body: Bytes) -> Result<reqwest::Response, AttemptError> {
        let send = self.client.post(self.url.clone()).body(body).send();
        let response = match tokio::time::timeout(self.timeouts.first_byte, send).await {
            Err(_) => {
                return Err(AttemptError::new(
                    ModelErrorKind::Timeout,
                    format!("no response within {} s (first-byte timeout)", self.timeouts.first_byte.as_secs_f64()),
                )
                .context(&self.shown));
            }
            Ok(Err(e)) => return Err(self.send_error(e)),
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let wait = retry_after(response.headers(), SystemTime::now());
        let text = match self.collect(response, MAX_ERROR_BODY).await {
            Ok(bytes) => server_error_text(&bytes),
            Err(e) => format!("(the error body could not be read: {e})"),
        };
        let text = self.scrub(&text);
        Err(AttemptError {
            retry_after: wait,
            ..AttemptError::new(
                ModelErrorKind::Http { status: status.as_u16() },
                format!("{} returned {status}: {text}", self.shown),
            )
        })
    }

    /// The body as a chunk stream under the idle timeout.
    pub(crate) fn body_stream(&self, response: reqwest::Response) -> BodyStream {
        IdleTimeout::new(Box::pin(response.bytes_stream()), self.timeouts.idle)
    }

    /// The body (its first `limit` bytes at most), each chunk within the idle timeout.
    pub(crate) async fn read_body(&self, response: reqwest::Response, limit: usize) -> Result<Bytes, AttemptError> {
        self.collect(response, limit).await.map_err(|e| e.into_attempt_error().context(&self.shown))
    }

    async fn collect(&self, response: reqwest::Response, limit: usize) -> Result<Bytes, BodyError> {
        let mut body = self.body_stream(response);
        let mut all = BytesMut::new();
        while let Some(chunk) = body.next().await {
            let chunk = chunk?;
            let room = limit.saturating_sub(all.len());
            all.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if all.len() >= limit {
                break;
            }
        }
        Ok(all.freeze())
    }

    /// `text` with the key removed.
    /// The error with the key scrubbed from its message: every error of an attempt (HTTP
    /// status bodies, streamed `error` events, malformed replies, transport failures) passes
    /// through here before it leaves the client.
    pub(crate) fn scrub_error(&self, mut error: AttemptError) -> AttemptError {
        error.error.message = self.scrub(&error.error.message);
        error
    }

    pub(crate) fn scrub(&self, text: &str) -> String {
        match &self.secret {
            Some(s) => crate::secret::scrub(s, text),
            None => text.to_owned(),
        }
    }

    fn send_error(&self, e: reqwest::Error) -> AttemptError {
        let e = e.without_url();
        let (kind, what) = if e.is_timeout() {
            (
                ModelErrorKind::Timeout,
                format!("could not connect within {} s (connect timeout)", self.timeouts.connect.as_secs_f64()),
            )
        } else {
            (ModelErrorKind::Transport, format!("connection failed: {}", error_chain(&e)))
        };
        AttemptError::new(kind, self.scrub(&what)).context(&self.shown)
    }
}

/// The proxy variables reqwest reads for an `http://` URL.
const HTTP_PROXY_VARS: &[&str] = &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/// Whether requests to `url` can need TLS: an `https://` URL, or an `http://` one sent through a
/// proxy (from the environment, read through `var`) that is not itself a plain `http://` one.
/// Redirects are not followed, so nothing else can lead to TLS.
fn may_use_tls(url: &Url, var: impl Fn(&str) -> Option<String>) -> bool {
    url.scheme() != "http"
        || HTTP_PROXY_VARS.iter().filter_map(|name| var(name)).any(|proxy| {
            let proxy = proxy.trim().to_ascii_lowercase();
            !proxy.is_empty() && !proxy.starts_with("http://")
        })
}

/// `base` with `path` appended to its path (trailing slashes ignored; a query on the base,
/// as some gateways require, is kept), checked to be an http(s) URL.
fn join_url(base: &str, path: &str) -> Result<Url, ClientError> {
    let mut url = Url::parse(base.trim())
        .map_err(|e| ClientError::InvalidBaseUrl { url: base.to_owned(), reason: e.to_string() })?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(ClientError::InvalidBaseUrl {
                url: redacted_url(&url),
                reason: format!("unsupported scheme `{other}` (expected http or https)"),
            });
        }
    }
    let joined = format!("{}{path}", url.path().trim_end_matches('/'));
    url.set_path(&joined);
    Ok(url)
}

/// The URL without user, password, query or fragment.
pub(crate) fn redacted_url(url: &Url) -> String {
    let mut shown = url.clone();
    // Both fail only for URLs that cannot have credentials, which then have none to hide.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

/// An error and its sources, joined by `: `.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// The longest server text quoted in an error message, in characters.
const MAX_ERROR_TEXT: usize = 500;

/// The most of an error body that is read, in bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The most of a whole (non-streamed) reply that is read, in bytes.
pub(crate) const MAX_REPLY_BODY: usize = 64 * 1024 * 1024;

/// What the server said in an error body: `error.message` (OpenAI, Anthropic), a string
/// `error`, `message` or `detail` when the body is JSON of another shape, else the raw body
/// (truncated to 500 characters), or `(empty body)`.
pub fn server_error_text(body: &[u8]) -> String {
    if let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) {
        let pick = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).map(str::to_owned);
        let found = pick(json.pointer("/error/message"))
            .or_else(|| pick(json.get("error")))
            .or_else(|| pick(json.get("message")))
            .or_else(|| pick(json.get("detail")));
        if let Some(message) = found {
            return truncate(message.trim());
        }
    }
    let raw = String::from_utf8_lossy(body);
    let raw = raw.trim();
    if raw.is_empty() { "(empty body)".to_owned() } else { truncate(raw) }
}

fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_ERROR_TEXT) {
        Some((cut, _)) => format!("{}… (truncated)", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A byte stream whose chunks must each arrive within `idle` of the previous one (or of the
/// stream's creation). After the timeout it yields [`BodyError::Idle`] once, then ends.
pub struct IdleTimeout<S> {
    inner: S,
    idle: Duration,
    sleep: Pin<Box<Sleep>>,
    done: bool,
}

impl<S> IdleTimeout<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, idle: Duration) -> Self {
        IdleTimeout { inner, idle, sleep: Box::pin(tokio::time::sleep(idle)), done: false }
    }
}

impl<S> Stream for IdleTimeout<S>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    type Item = Result<Bytes, BodyError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                let deadline = Instant::now() + this.idle;
                this.sleep.as_mut().reset(deadline);
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.done = true;
                let cause = error_chain(&e.without_url());
                Poll::Ready(Some(Err(BodyError::Transport(cause))))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => match this.sleep.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.done = true;
                    Poll::Ready(Some(Err(BodyError::Idle(this.idle))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_prefers_json_message_and_truncates_raw_bodies() {
        assert_eq!(server_error_text(br#"{"error":{"message":"bad key","type":"x"}}"#), "bad key");
        assert_eq!(server_error_text(br#"{"error":"model not found"}"#), "model not found");
        assert_eq!(server_error_text(br#"{"detail":"nope"}"#), "nope");
        assert_eq!(server_error_text(b"  "), "(empty body)");
        let long = "x".repeat(2000);
        let text = server_error_text(long.as_bytes());
        assert!(text.starts_with(&"x".repeat(500)));
        assert!(text.ends_with("… (truncated)"));
        assert_eq!(text.chars().count(), 500 + "… (truncated)".chars().count());
    }

    #[test]
    fn shown_urls_drop_credentials_and_queries() {
        let url = join_url("https://user:pw@example.com/v1/?key=s3cret", "/chat/completions").expect("url");
        assert_eq!(url.query(), Some("key=s3cret"));
        assert_eq!(redacted_url(&url), "https://example.com/v1/chat/completions");
        let url = join_url("http://127.0.0.1:8080", "/v1/messages").expect("url");
        assert_eq!(url.as_str(), "http://127.0.0.1:8080/v1/messages");
        assert!(join_url("ftp://example.com", "/x").is_err());
        assert!(join_url("not a url", "/x").is_err());
    }

    #[test]
    fn only_https_urls_and_http_ones_behind_a_tls_proxy_load_root_certificates() {
        let url = |u: &str| Url::parse(u).expect("url");
        let none = |_: &str| None;
        assert!(may_use_tls(&url("https://api.anthropic.com"), none));
        assert!(!may_use_tls(&url("http://127.0.0.1:8080/v1"), none));
        let proxy = |value: &'static str| move |name: &str| (name == "HTTP_PROXY").then(|| value.to_owned());
        assert!(!may_use_tls(&url("http://127.0.0.1:8080"), proxy("http://proxy:3128")));
        assert!(may_use_tls(&url("http://127.0.0.1:8080"), proxy("https://proxy:3128")));
        assert!(
            may_use_tls(&url("http://127.0.0.1:8080"), proxy("proxy:3128")),
            "a form not known to be plain keeps them"
        );
    }
}

/// The environment variables of one provider.
#[derive(Debug, Clone, Copy)]
pub struct EnvNames {
    /// The base-URL variable (`OPENAI_BASE_URL`).
    pub base_url: &'static str,
    /// The key variable (`OPENAI_API_KEY`).
    pub api_key: &'static str,
    /// The public endpoint, used when the base URL is unset.
    pub default_base_url: &'static str,
}

/// Reads a provider's base URL and key through `var` (an empty variable counts as unset). The
/// key is required only for the public endpoint; local servers need none.
pub fn endpoint_from_vars(
    names: EnvNames,
    var: impl Fn(&str) -> Option<String>,
) -> Result<(String, Option<Secret>), ClientError> {
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let base_url = var(names.base_url).unwrap_or_else(|| names.default_base_url.to_owned());
    let api_key = var(names.api_key).map(|k| Secret::new(k.trim()));
    if api_key.is_none() && base_url.trim_end_matches('/') == names.default_base_url {
        return Err(ClientError::MissingApiKey {
            var: names.api_key,
            base_var: names.base_url,
            endpoint: names.default_base_url.to_owned(),
        });
    }
    Ok((base_url, api_key))
}
