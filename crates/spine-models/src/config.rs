//! [`ProviderConfig`]: the one set of options every HTTP provider client has, with the
//! provider's own options in its `provider` field ([`crate::AnthropicConfig`] is
//! `ProviderConfig<AnthropicOptions>`, and so on).
//!
//! - `model`, `base_url` (the provider's [`Provider::PATH`] is appended) and `api_key` (sent as
//!   the provider's [`Provider::credential`]);
//! - `custom_headers`, sent on every request, in order;
//! - `timeouts` (connect, first byte, idle, total) and the `retry` policy;
//! - the optional request fields `tool_choice`, `max_tokens` and `temperature` (a provider
//!   that requires an output limit uses its own default when `max_tokens` is unset);
//! - `price` (from the built-in table by default) and `context_window` (the provider's
//!   [`Provider::context_window`] by default).
//!
//! [`Streaming`] (streamed replies or whole ones) is shared by the providers that offer both.

use spine_core::model::ToolChoice;

use crate::error::ClientError;
use crate::http::Timeouts;
use crate::pricing::{Price, PriceTable};
use crate::provider::Provider;
use crate::retry::RetryPolicy;
use crate::secret::Secret;

/// The configuration of a provider client: the shared options, and `P`, the provider's own.
#[derive(Debug, Clone)]
pub struct ProviderConfig<P> {
    /// The model id sent as `model`.
    pub model: String,
    /// The base URL; the provider's path is appended.
    pub base_url: String,
    /// The key, sent as the provider's credential header when present.
    pub api_key: Option<Secret>,
    /// Extra request headers (`ANTHROPIC_CUSTOM_HEADERS`), in order.
    pub custom_headers: Vec<(String, String)>,
    /// Connect, first-byte, idle and total timeouts.
    pub timeouts: Timeouts,
    /// Retries on 429, 5xx, overloaded streams and connection failures.
    pub retry: RetryPolicy,
    /// The context window reported by `ModelClient::context_window`.
    pub context_window: Option<u64>,
    /// `tool_choice`, sent with the tools when set.
    pub tool_choice: Option<ToolChoice>,
    /// The output limit, sent when set (a provider that requires one has a default).
    pub max_tokens: Option<u32>,
    /// `temperature`, sent when set.
    pub temperature: Option<f64>,
    /// The model's price (from the built-in table by default), for `ModelClient::cost_usd`.
    pub price: Option<Price>,
    /// The provider's own options.
    pub provider: P,
}

/// Whether replies are streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Streaming {
    /// `stream: true`; text reaches the sink as it arrives.
    #[default]
    On,
    /// `stream: false`; the text reaches the sink in one piece.
    Off,
}

impl<P: Provider> ProviderConfig<P> {
    /// A configuration for `model` at `base_url`, without a key, with default settings.
    pub fn new(model: impl Into<String>, base_url: impl Into<String>) -> Self {
        let model = model.into();
        ProviderConfig {
            context_window: P::context_window(&model),
            price: PriceTable::builtin().price(&model),
            model,
            base_url: base_url.into(),
            api_key: None,
            custom_headers: Vec::new(),
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            tool_choice: None,
            max_tokens: None,
            temperature: None,
            provider: P::default(),
        }
    }

    /// Sets the key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(Secret::new(key));
        self
    }

    /// From the provider's environment variables ([`Provider::from_vars`]).
    pub fn from_env(model: &str) -> Result<Self, ClientError> {
        Self::from_vars(model, |name| std::env::var(name).ok())
    }

    /// As [`from_env`](Self::from_env), reading variables through `var`. An empty variable
    /// counts as unset.
    pub fn from_vars(model: &str, var: impl Fn(&str) -> Option<String>) -> Result<Self, ClientError> {
        P::from_vars(model, &var)
    }
}
