//! [`ProviderClient`]: the one client of every HTTP provider, around the provider's wire format
//! ([`Provider`]).
//!
//! Building it checks the URL and the headers and sends nothing: the provider's fixed headers,
//! then the custom ones, then the credential (marked sensitive), on one reqwest client
//! ([`crate::http`]) kept for the client's life, so connections are pooled across requests.
//! Each [`ModelClient::complete`] call encodes the provider's body once and sends it through
//! the shared layers: cancellation, [`crate::retry`] (backoff, the total deadline, attempt
//! reports), [`crate::http`] (timeouts, error statuses), then the provider's reader — the
//! stream, or the whole reply when streaming is off (or, for
//! [`Provider::JSON_ANSWERS_WHOLE`] providers, when the server answered with JSON). Every error
//! text an attempt produces is scrubbed of the key and prefixed with the endpoint.
//!
//! A streamed attempt that ends empty ([`StreamEnd::Empty`]: servers such as
//! llama-cpp-python's cannot stream a tool call) is retried at once, one time, without
//! streaming; every later attempt of the request stays non-streaming. The switch is an attempt
//! report like any retry, so it shows in the trace and with `-v`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use spine_core::CancellationToken;
use spine_core::model::{ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink};
use spine_core::model_reasoning::ReasoningFlags;
use spine_protocol::message::ReasoningEffort;
use spine_protocol::run::Usage;

use crate::config::ProviderConfig;
use crate::error::ClientError;
use crate::http::{Endpoint, MAX_REPLY_BODY};
use crate::provider::Provider;
use crate::retry::{AttemptError, StreamEnd, send_request};
use crate::secret::Secret;

/// A model client over provider `P`'s wire.
pub struct ProviderClient<P> {
    config: ProviderConfig<P>,
    endpoint: Endpoint,
}

impl<P: Provider> std::fmt::Debug for ProviderClient<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(P::CLIENT)
            .field("model", &self.config.model)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl<P: Provider> ProviderClient<P> {
    /// Builds the client (checks the URL and the headers; sends nothing).
    pub fn new(config: ProviderConfig<P>) -> Result<Self, ClientError> {
        let (headers, secret) = headers(&config)?;
        let endpoint = Endpoint::new(&config.base_url, P::PATH, headers, config.timeouts, secret)?;
        Ok(ProviderClient { config, endpoint })
    }

    /// Builds the client behind an `Arc<dyn ModelClient>`.
    pub fn shared(config: ProviderConfig<P>) -> Result<Arc<dyn ModelClient>, ClientError> {
        Ok(Arc::new(Self::new(config)?))
    }

    /// The configuration.
    pub fn config(&self) -> &ProviderConfig<P> {
        &self.config
    }

    /// One request; every error text it produces, streamed or not, is scrubbed of the key.
    async fn attempt(&self, body: Bytes, sink: &dyn StreamSink, streamed: bool) -> Result<ModelReply, AttemptError> {
        self.attempt_unscrubbed(body, sink, streamed).await.map_err(|e| self.endpoint.scrub_error(e))
    }

    async fn attempt_unscrubbed(
        &self,
        body: Bytes,
        sink: &dyn StreamSink,
        streamed: bool,
    ) -> Result<ModelReply, AttemptError> {
        let response = self.endpoint.post(body).await?;
        let shown = self.endpoint.shown();
        if streamed && !(P::JSON_ANSWERS_WHOLE && is_json(response.headers())) {
            return P::read_stream(self.endpoint.body_stream(response), sink).await.map_err(|e| e.context(shown));
        }
        let body = self.endpoint.read_body(response, MAX_REPLY_BODY).await?;
        P::read_whole(&body, sink).map_err(|e| e.context(shown))
    }
}

/// The provider's fixed headers, the custom headers, then the credential; and the secret to
/// scrub from server text.
fn headers<P: Provider>(config: &ProviderConfig<P>) -> Result<(HeaderMap, Option<Secret>), ClientError> {
    let mut headers = HeaderMap::new();
    for (name, value) in P::HEADERS {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    for (name, value) in &config.custom_headers {
        let bad = || ClientError::InvalidHeader { name: name.clone() };
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let value = HeaderValue::from_str(value).map_err(|_| bad())?;
        headers.append(name, value);
    }
    let secret = match P::credential(config) {
        Some(credential) => {
            headers.insert(credential.header, Endpoint::sensitive_header(credential.value, &config.base_url)?);
            Some(credential.secret.clone())
        }
        None => None,
    };
    Ok((headers, secret))
}

fn is_json(headers: &HeaderMap) -> bool {
    headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("application/json"))
}

/// The request body, or the error of a request that cannot be encoded.
fn encode<P: Provider>(
    config: &ProviderConfig<P>,
    request: ModelRequest<'_>,
    stream: bool,
) -> Result<Bytes, ModelError> {
    P::body(config, request, stream)
        .map(Bytes::from)
        .map_err(|e| ModelError::new(ModelErrorKind::Config, format!("cannot encode the request: {e}")))
}

#[async_trait]
impl<P: Provider> ModelClient for ProviderClient<P> {
    fn model(&self) -> &str {
        &self.config.model
    }

    fn context_window(&self) -> Option<u64> {
        self.config.context_window
    }

    fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        self.config.price.map(|p| p.cost(usage))
    }

    fn api_key_source(&self) -> &str {
        P::key_source(&self.config)
    }

    /// The same client (and connection pool) with the provider's options for `effort`.
    fn with_reasoning_effort(&self, effort: ReasoningEffort) -> Option<Arc<dyn ModelClient>> {
        let provider = self.config.provider.with_reasoning_effort(effort)?;
        let config = ProviderConfig { provider, ..self.config.clone() };
        Some(Arc::new(ProviderClient { config, endpoint: self.endpoint.clone() }))
    }

    /// The same client (and connection pool) with the provider's options for `flags`.
    fn with_reasoning_flags(&self, flags: &ReasoningFlags) -> Option<Arc<dyn ModelClient>> {
        let provider = self.config.provider.with_reasoning_flags(&self.config.model, flags)?;
        let config = ProviderConfig { provider, ..self.config.clone() };
        Some(Arc::new(ProviderClient { config, endpoint: self.endpoint.clone() }))
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        stream: &dyn StreamSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        tracing::debug!(
            endpoint = self.endpoint.shown(),
            model = %self.config.model,
            messages = request.messages.len(),
            tools = request.tools.len(),
            "{} request",
            P::REQUEST
        );
        let streamed = self.config.provider.streams();
        let body = encode(&self.config, request, streamed)?;
        // Set once a streamed attempt ended empty: the rest of the request does not stream.
        let unstreamed = AtomicBool::new(false);
        let unstreamed = &unstreamed;
        send_request(&self.config.retry, self.config.timeouts.total, stream, body, cancel, |body| async move {
            if unstreamed.load(Ordering::SeqCst) {
                let whole = encode(&self.config, request, false)?;
                return self.attempt(whole, stream, false).await;
            }
            match self.attempt(body, stream, streamed).await {
                Err(mut e) if e.end == StreamEnd::Empty && streamed => {
                    unstreamed.store(true, Ordering::SeqCst);
                    e.error.message = format!("{}; the next attempt does not stream", e.error.message);
                    e.retry_after = Some(Duration::ZERO);
                    Err(e)
                }
                other => other,
            }
        })
        .await
    }
}
