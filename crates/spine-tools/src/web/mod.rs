//! Web: `WebFetch {url, prompt?}` and `WebSearch {query, allowed_domains?, blocked_domains?}`
//! (Claude Code's names and input shapes; effect network).
//!
//! Rules shared by both:
//! - HTTP with reqwest on rustls with the **ring** provider (installed once, process-wide; never
//!   aws-lc), built lazily on first use: a client that cannot be built is a `runtime_error` of
//!   the call, not of registration.
//! - Only `http` and `https` URLs; anything else is a `validation_error`.
//! - Redirects are followed by hand (`get_following`), at most [`WebOptions::max_redirects`]
//!   (default 5; more is a `runtime_error`). Every hop is checked before it is requested: the
//!   scheme (http/https), no userinfo (WebFetch also refuses userinfo in the URL it is called
//!   with, before any connection), the private-network rule below, and — for WebFetch in a
//!   run — the run's permission policy through the context's [`UrlGate`]. A refused hop is a
//!   `permission_denied` error naming both URLs; the refused URL is never requested.
//! - Private networks ([`address`]): unless [`WebOptions::private_networks`] is
//!   [`PrivateNetworks::Allow`] (settings `web.allow_private_networks: true`), loopback,
//!   private, link-local and similar addresses are refused as `permission_denied`: IP literals
//!   before the request, names by the client's DNS resolver, which drops non-public addresses
//!   (race-free against DNS rebinding). Proxies from the environment are then not used: the
//!   client must connect to the addresses it checked.
//! - Time: one limit per request, body included ([`WebOptions::timeout`], default 30 s; each
//!   redirect hop is its own request); past it the call fails with `timeout`.
//! - Size: the body is read up to [`WebOptions::max_bytes`] (default 10 MiB) and then **cut**,
//!   not refused: the model gets the first 10 MiB (converted, then capped to
//!   [`WebOptions::text_chars`] characters) and `truncated: true`. A 50 MB page therefore costs
//!   10 MiB of download and memory, no more, and still answers.
//! - Text: HTML becomes readable, Markdown-like text with `html2text` (`#` headings,
//!   `**bold**`, `*` lists, links as numbered footnotes; scripts and styles dropped); `text/*`,
//!   JSON, XML and JavaScript pass through; other types (images, PDFs, archives) are reported
//!   by type and size without content. Bodies are decoded as UTF-8 (invalid bytes become
//!   U+FFFD): other charsets are rare on today's web and not converted.
//!
//! See [`fetch`] and [`search`] for each tool's response and projection.

pub mod address;
#[cfg(feature = "web")]
pub mod fetch;
#[cfg(feature = "web")]
pub mod search;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use spine_core::tool::Tool;
#[cfg(feature = "web")]
use spine_core::tool::UrlGate;
#[cfg(feature = "web")]
use spine_protocol::tool::{ErrorCode, ToolError};

pub use address::{PrivateAddress, PrivateNetworks};
#[cfg(feature = "web")]
pub use fetch::WebFetchTool;
#[cfg(feature = "web")]
pub use search::WebSearchTool;

/// Limits of the web tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebOptions {
    /// Body bytes read at most (default 10 MiB); the rest is cut.
    pub max_bytes: usize,
    /// Characters of text given to the model at most (default 100 000).
    pub text_chars: usize,
    /// Time limit of one request, body included (default 30 s).
    pub timeout: Duration,
    /// Redirects followed at most (default 5).
    pub max_redirects: usize,
    /// The `User-Agent` header (default `spine/<version> (+WebFetch)`).
    pub user_agent: String,
    /// Whether loopback, private and link-local addresses may be reached (default: refused;
    /// settings `web.allow_private_networks`).
    pub private_networks: PrivateNetworks,
}

impl Default for WebOptions {
    fn default() -> Self {
        WebOptions {
            max_bytes: 10 * 1024 * 1024,
            text_chars: 100_000,
            timeout: Duration::from_secs(30),
            max_redirects: 5,
            user_agent: format!("spine/{} (+WebFetch)", env!("CARGO_PKG_VERSION")),
            private_networks: PrivateNetworks::default(),
        }
    }
}

/// `WebFetch` and `WebSearch`; `search_url` is the SearXNG-compatible endpoint of WebSearch
/// (settings `web.search_url`), `None` when not configured. None without the `web` feature.
pub fn web_tools(search_url: Option<String>, options: WebOptions) -> Vec<Arc<dyn Tool>> {
    #[cfg(feature = "web")]
    return vec![Arc::new(WebFetchTool::new(options.clone())), Arc::new(WebSearchTool::new(search_url, options))];
    #[cfg(not(feature = "web"))]
    {
        let _ = (search_url, options);
        Vec::new()
    }
}

/// Installs rustls' ring provider as the process default, once. Safe to call any number of
/// times, and harmless when the program installed a provider itself.
pub fn install_crypto_provider() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A lazily built HTTP client.
#[cfg(feature = "web")]
#[derive(Debug)]
pub(crate) struct LazyClient {
    options: WebOptions,
    client: OnceLock<Result<reqwest::Client, String>>,
}

#[cfg(feature = "web")]
impl LazyClient {
    pub(crate) fn new(options: WebOptions) -> Self {
        LazyClient { options, client: OnceLock::new() }
    }

    pub(crate) fn options(&self) -> &WebOptions {
        &self.options
    }

    /// The client, built on first use.
    pub(crate) fn get(&self) -> Result<&reqwest::Client, ToolError> {
        let built = self.client.get_or_init(|| {
            install_crypto_provider();
            let builder = reqwest::Client::builder()
                .user_agent(self.options.user_agent.clone())
                .timeout(self.options.timeout)
                .connect_timeout(self.options.timeout.min(Duration::from_secs(10)))
                .redirect(reqwest::redirect::Policy::none());
            let builder = match self.options.private_networks {
                PrivateNetworks::Refuse => builder.no_proxy().dns_resolver(address::PublicResolver),
                PrivateNetworks::Allow => builder,
            };
            builder.build().map_err(|e| e.to_string())
        });
        built
            .as_ref()
            .map_err(|e| ToolError::new(ErrorCode::RuntimeError, format!("cannot build the HTTP client: {e}")))
    }
}

/// Parses a URL and accepts only `http` and `https`.
#[cfg(feature = "web")]
pub(crate) fn http_url(text: &str) -> Result<reqwest::Url, ToolError> {
    let url = reqwest::Url::parse(text.trim())
        .map_err(|e| ToolError::new(ErrorCode::ValidationError, format!("{text:?} is not a valid URL: {e}")))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(ToolError::new(
            ErrorCode::ValidationError,
            format!("only http and https URLs can be fetched; {text:?} is a {other} URL"),
        )),
    }
}

/// Refuses a URL with userinfo (`user@`, `user:password@`): WebFetch's URL and every redirect
/// hop. The host such a URL reaches is easy to misread, and no permission rule matches it.
#[cfg(feature = "web")]
pub(crate) fn refuse_userinfo(url: &reqwest::Url) -> Result<(), ToolError> {
    if spine_core::permission::web::has_userinfo(url) {
        return Err(ToolError::new(
            ErrorCode::PermissionDenied,
            format!("{url} carries a user name or password; URLs with credentials are refused"),
        ));
    }
    Ok(())
}

/// Checks a URL the tools are about to request (the first one or a redirect hop): http/https
/// and no non-public IP literal unless private networks are allowed.
#[cfg(feature = "web")]
pub(crate) fn check_target(url: &reqwest::Url, options: &WebOptions) -> Result<(), ToolError> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(ToolError::new(
                ErrorCode::PermissionDenied,
                format!("only http and https URLs can be fetched; {url} is a {other} URL"),
            ));
        }
    }
    address::check_host(url, options.private_networks)
        .map_err(|e| ToolError::new(ErrorCode::PermissionDenied, format!("GET {url} refused: {e}")))
}

/// GETs `url`, following redirects by hand: each hop is checked ([`check_target`], then the
/// gate when there is one) before it is requested. Returns the final response and its URL.
#[cfg(feature = "web")]
pub(crate) async fn get_following(
    client: &reqwest::Client,
    url: &reqwest::Url,
    accept: &str,
    options: &WebOptions,
    gate: Option<&dyn UrlGate>,
) -> Result<(reqwest::Response, reqwest::Url), ToolError> {
    let mut current = url.clone();
    let mut hops = 0;
    loop {
        check_target(&current, options)?;
        let response = client
            .get(current.clone())
            .header(reqwest::header::ACCEPT, accept)
            .send()
            .await
            .map_err(|e| request_error(&current, &e, options))?;
        let location = response.headers().get(reqwest::header::LOCATION);
        let (true, Some(location)) = (response.status().is_redirection(), location) else {
            return Ok((response, current));
        };
        let location = location.to_str().map_err(|_| {
            ToolError::new(ErrorCode::RuntimeError, format!("GET {current} redirected to a Location that is not text"))
        })?;
        let next = current.join(location).map_err(|e| {
            ToolError::new(
                ErrorCode::RuntimeError,
                format!("GET {current} redirected to an invalid URL {location:?}: {e}"),
            )
        })?;
        hops += 1;
        if hops > options.max_redirects {
            return Err(ToolError::new(
                ErrorCode::RuntimeError,
                format!("GET {url} was redirected more than {} times", options.max_redirects),
            ));
        }
        let refused = |why: String| {
            ToolError::new(ErrorCode::PermissionDenied, format!("redirect from {current} to {next} refused: {why}"))
        };
        refuse_userinfo(&next).map_err(|e| refused(e.message))?;
        check_target(&next, options).map_err(|e| refused(e.message))?;
        if let Some(gate) = gate {
            gate.check(&next).map_err(refused)?;
        }
        current = next;
    }
}

/// Maps a transport error to a tool error: a private address found by the resolver is
/// `permission_denied`, time-outs are `timeout`, everything else `runtime_error`.
#[cfg(feature = "web")]
pub(crate) fn request_error(url: &reqwest::Url, e: &reqwest::Error, options: &WebOptions) -> ToolError {
    if let Some(private) = private_address(e) {
        ToolError::new(ErrorCode::PermissionDenied, format!("GET {url} refused: {private}"))
    } else if e.is_timeout() {
        ToolError::new(ErrorCode::Timeout, format!("GET {url} timed out after {} s", options.timeout.as_secs_f32()))
    } else {
        ToolError::new(ErrorCode::RuntimeError, format!("GET {url} failed: {}", error_chain(e)))
    }
}

/// The resolver's refusal, if it is in the error's source chain.
#[cfg(feature = "web")]
fn private_address<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a PrivateAddress> {
    let mut source: Option<&'a (dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(private) = s.downcast_ref::<PrivateAddress>() {
            return Some(private);
        }
        source = s.source();
    }
    None
}

/// An error and its sources, joined with `: `.
#[cfg(feature = "web")]
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// Reads a response body up to `max` bytes; returns the bytes and whether it was cut.
#[cfg(feature = "web")]
pub(crate) async fn read_capped(
    url: &reqwest::Url,
    mut response: reqwest::Response,
    max: usize,
    options: &WebOptions,
) -> Result<(Vec<u8>, bool), ToolError> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = max - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    return Ok((body, true));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok((body, false)),
            Err(e) => return Err(request_error(url, &e, options)),
        }
    }
}

/// Cuts text to `max` characters; returns whether it was cut.
#[cfg(feature = "web")]
pub(crate) fn cap_chars(text: &mut String, max: usize) -> bool {
    match text.char_indices().nth(max) {
        Some((cut, _)) => {
            text.truncate(cut);
            true
        }
        None => false,
    }
}
