//! [`ClientError`]: why a model client could not be built (before any request is sent). Request
//! failures are [`spine_core::model::ModelError`]s instead. No variant ever holds a key.

use thiserror::Error;

use crate::scripted::ScriptError;

/// A model client that cannot be built.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The scripted model's file is missing or invalid.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// The provider's key variable is unset and the endpoint needs one.
    #[error(
        "{var} is not set: {endpoint} needs an API key (set {var}, or point {base_var} at a \
         server that needs none)"
    )]
    MissingApiKey {
        /// The key variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`).
        var: &'static str,
        /// The base-URL variable that would select another server.
        base_var: &'static str,
        /// The endpoint that needs the key.
        endpoint: String,
    },
    /// The base URL does not parse or is not http(s).
    #[error("invalid base URL `{url}`: {reason}")]
    InvalidBaseUrl {
        /// The URL as given (credentials and query removed when it parsed).
        url: String,
        /// Why.
        reason: String,
    },
    /// The key cannot be sent in an HTTP header (control characters, non-ASCII).
    #[error("the API key for {endpoint} contains characters that cannot be sent in an HTTP header")]
    InvalidApiKey {
        /// The endpoint the key was for.
        endpoint: String,
    },
    /// A line of `ANTHROPIC_CUSTOM_HEADERS` is not `Name: value`.
    #[error("ANTHROPIC_CUSTOM_HEADERS: `{line}` is not a `Name: value` header line")]
    InvalidCustomHeaders {
        /// The line as given.
        line: String,
    },
    /// A custom header's name or value cannot be sent in an HTTP header.
    #[error("ANTHROPIC_CUSTOM_HEADERS: header `{name}` has a name or value that cannot be sent in an HTTP header")]
    InvalidHeader {
        /// The header's name.
        name: String,
    },
    /// The HTTP client could not be built (TLS set-up).
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
}
