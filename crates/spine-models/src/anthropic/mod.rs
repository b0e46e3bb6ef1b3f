//! Anthropic Messages API: `POST {base_url}/v1/messages`, streamed unless configured not to.
//!
//! [`AnthropicConfig`] is the shared [`ProviderConfig`] (model, base URL without `/v1` like
//! `ANTHROPIC_BASE_URL` in Claude Code, key, extra headers from `ANTHROPIC_CUSTOM_HEADERS`
//! (`Name: value` lines), timeouts, retries, `tool_choice`, `max_tokens` (8192 when unset: the
//! API requires one), `temperature`, price, context window) with [`AnthropicOptions`]: a bearer
//! token (`ANTHROPIC_AUTH_TOKEN`, sent as `Authorization: Bearer …` instead of the key, which is
//! otherwise sent as `x-api-key`), extended thinking ([`Thinking`]) and the effort (the
//! session's flags: [`reasoning`]), streaming (on
//! by default; `stream: false` reads one whole reply with [`stream::read_whole`]) and whether
//! requests carry prompt-cache breakpoints ([`cache`]). Every request carries
//! `anthropic-version: 2023-06-01`. [`AnthropicClient`] is the shared
//! [`crate::client::ProviderClient`] over this wire: the `wire` module builds the body,
//! [`stream::read_stream`] reads the reply.

pub mod cache;
pub mod reasoning;
pub mod stream;
mod wire;

pub use wire::Thinking;

pub use crate::config::Streaming;

use reqwest::header::{AUTHORIZATION, HeaderName};
use spine_core::model::{ModelReply, ModelRequest, StreamSink};

use self::cache::PromptCaching;
use crate::client::ProviderClient;
use crate::config::ProviderConfig;
use crate::error::ClientError;
use crate::http::{BodyStream, EnvNames, endpoint_from_vars};
use crate::provider::{Credential, Provider};
use crate::retry::AttemptError;
use crate::secret::Secret;

/// The public endpoint, used when `ANTHROPIC_BASE_URL` is unset.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version header value.
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` sent when the caller sets none (the Messages API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The context window of Claude models (200k tokens), reported for `claude-*` model ids.
pub const CLAUDE_CONTEXT_WINDOW: u64 = 200_000;

/// The context window of the Claude models with a 1M-token window (platform.claude.com's model
/// pages, checked 2026-12-01).
pub const CLAUDE_LONG_CONTEXT_WINDOW: u64 = 1_000_000;

/// Model-id prefixes of the Claude models whose window is [`CLAUDE_LONG_CONTEXT_WINDOW`]; other
/// `claude-*` models have [`CLAUDE_CONTEXT_WINDOW`].
const LONG_CONTEXT_MODELS: &[&str] = &[
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-opus-5",
    "claude-sonnet-4-6",
    "claude-sonnet-5",
    "claude-fable-",
    "claude-haiku-5",
];

/// The context window of a Claude model id, `None` for other ids.
pub fn claude_context_window(model: &str) -> Option<u64> {
    if LONG_CONTEXT_MODELS.iter().any(|p| model.starts_with(p)) {
        Some(CLAUDE_LONG_CONTEXT_WINDOW)
    } else {
        model.starts_with("claude-").then_some(CLAUDE_CONTEXT_WINDOW)
    }
}

/// The configuration of an [`AnthropicClient`].
pub type AnthropicConfig = ProviderConfig<AnthropicOptions>;

/// An Anthropic Messages API client.
pub type AnthropicClient = ProviderClient<AnthropicOptions>;

/// What only the Messages API has.
#[derive(Debug, Clone, Default)]
pub struct AnthropicOptions {
    /// A bearer token (`ANTHROPIC_AUTH_TOKEN`), sent as `Authorization: Bearer …` instead of
    /// the key.
    pub auth_token: Option<Secret>,
    /// Extended thinking (`model_options.thinking_budget_tokens`, or the session's flags:
    /// [`reasoning`]); not sent when `None`.
    pub thinking: Option<Thinking>,
    /// `output_config.effort` (the session's `--effort`, for the model: [`reasoning`]); not
    /// sent when `None`.
    pub effort: Option<spine_core::model_reasoning::EffortLevel>,
    /// Whether requests carry `cache_control` breakpoints (default on).
    pub prompt_caching: PromptCaching,
    /// Streamed replies (the default) or one whole reply.
    pub streaming: Streaming,
}

/// `ANTHROPIC_CUSTOM_HEADERS`: one `Name: value` header per line (blank lines skipped), as in
/// Claude Code. A line without a colon or with an empty name is an error naming the line.
pub fn parse_custom_headers(text: &str) -> Result<Vec<(String, String)>, ClientError> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_owned(), value.trim().to_owned())),
            Some(_) | None => Err(ClientError::InvalidCustomHeaders { line: line.to_owned() }),
        })
        .collect()
}

impl Provider for AnthropicOptions {
    const CLIENT: &'static str = "AnthropicClient";
    const REQUEST: &'static str = "messages";
    const PATH: &'static str = "/v1/messages";
    const ENV: EnvNames =
        EnvNames { base_url: "ANTHROPIC_BASE_URL", api_key: "ANTHROPIC_API_KEY", default_base_url: DEFAULT_BASE_URL };
    const HEADERS: &'static [(&'static str, &'static str)] = &[("anthropic-version", API_VERSION)];

    /// `ANTHROPIC_BASE_URL` (default [`DEFAULT_BASE_URL`]), `ANTHROPIC_API_KEY`,
    /// `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_CUSTOM_HEADERS` and `DISABLE_PROMPT_CACHING` (set and
    /// not `0`: no cache breakpoints). A credential (key or bearer token) is required only for
    /// the public endpoint.
    fn from_vars(model: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<AnthropicConfig, ClientError> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let auth_token = set("ANTHROPIC_AUTH_TOKEN").map(|t| Secret::new(t.trim()));
        let (base_url, api_key) = match &auth_token {
            Some(_) => (
                set(Self::ENV.base_url).unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
                set(Self::ENV.api_key).map(|k| Secret::new(k.trim())),
            ),
            None => endpoint_from_vars(Self::ENV, var)?,
        };
        let mut config = AnthropicConfig { api_key, ..AnthropicConfig::new(model, base_url) };
        config.provider.auth_token = auth_token;
        if let Some(text) = set("ANTHROPIC_CUSTOM_HEADERS") {
            config.custom_headers = parse_custom_headers(&text)?;
        }
        if set("DISABLE_PROMPT_CACHING").is_some_and(|v| v.trim() != "0") {
            config.provider.prompt_caching = PromptCaching::Off;
        }
        Ok(config)
    }

    fn context_window(model: &str) -> Option<u64> {
        claude_context_window(model)
    }

    /// The bearer token when set, else the key as `x-api-key`.
    fn credential(config: &AnthropicConfig) -> Option<Credential<'_>> {
        match (&config.provider.auth_token, &config.api_key) {
            (Some(token), _) => {
                Some(Credential { header: AUTHORIZATION, value: format!("Bearer {}", token.expose()), secret: token })
            }
            (None, Some(key)) => Some(Credential {
                header: HeaderName::from_static("x-api-key"),
                value: key.expose().to_owned(),
                secret: key,
            }),
            (None, None) => None,
        }
    }

    /// `ANTHROPIC_AUTH_TOKEN` when the bearer token is used, else the key's variable.
    fn key_source(config: &AnthropicConfig) -> &'static str {
        match (&config.provider.auth_token, &config.api_key) {
            (Some(_), _) => "ANTHROPIC_AUTH_TOKEN",
            (None, Some(_)) => Self::ENV.api_key,
            (None, None) => "none",
        }
    }

    fn streams(&self) -> bool {
        self.streaming == Streaming::On
    }

    /// Thinking and effort as [`reasoning`] says for `model`.
    fn with_reasoning_flags(&self, model: &str, flags: &spine_core::model_reasoning::ReasoningFlags) -> Option<Self> {
        self.with_flags(model, flags)
    }

    fn body(config: &AnthropicConfig, request: ModelRequest<'_>, stream: bool) -> serde_json::Result<Vec<u8>> {
        let options = wire::Options {
            max_tokens: config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            tool_choice: config.tool_choice.as_ref(),
            temperature: config.temperature,
            thinking: config.provider.thinking,
            effort: config.provider.effort,
            stream,
        };
        let mut body = wire::request(&config.model, options, request);
        if config.provider.prompt_caching == PromptCaching::On {
            cache::mark(&mut body, request.stable_prefix);
        }
        serde_json::to_vec(&body)
    }

    async fn read_stream(body: BodyStream, sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
        stream::read_stream(body, sink).await
    }

    fn read_whole(body: &[u8], sink: &dyn StreamSink) -> Result<ModelReply, AttemptError> {
        stream::read_whole(body, sink)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_claude_models_have_a_1m_window_older_ones_200k_and_others_none() {
        for (model, window) in [
            ("claude-opus-4-8", Some(1_000_000)),
            ("claude-opus-5-5", Some(1_000_000)),
            ("claude-sonnet-5", Some(1_000_000)),
            ("claude-fable-5-1", Some(1_000_000)),
            ("claude-opus-4-5-20251101", Some(200_000)),
            ("claude-sonnet-4-5", Some(200_000)),
            ("claude-haiku-4-5", Some(200_000)),
            ("my-proxy-model", None),
        ] {
            assert_eq!(claude_context_window(model), window, "{model}");
            assert_eq!(AnthropicConfig::new(model, "http://127.0.0.1:1").context_window, window, "{model}");
        }
    }
}
