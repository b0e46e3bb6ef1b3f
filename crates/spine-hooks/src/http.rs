//! HTTP hooks: one POST per event.
//!
//! Contract of [`HttpHook`] (docs/hooks.md, "HTTP hooks"; Claude Code's HTTP hooks):
//! - POST of the same event JSON a command hook reads, `Content-Type: application/json`, with
//!   the configured headers, their values interpolated per [`crate::env::interpolate`].
//! - 2xx + a JSON object body: parsed like a command's stdout; 2xx + empty body: no opinion;
//!   any other status, a 2xx body that is not a JSON object, a body over [`BODY_CAP`] bytes, a
//!   connection error: a failure ([`HookError::failed`]) — status codes never block.
//! - Redirects are never followed: a 3xx answer is a failure naming its `Location`, so the
//!   event and the configured (often secret) headers go to the configured URL and nowhere else.
//! - The time limit covers the whole exchange: [`HookError::timeout`]. A canceled run aborts it.
//! - A hook that managed settings' `allowedHttpHookUrls` blocks ([`HttpConfig::blocked`])
//!   sends nothing: each firing is a launch error ([`HookError::launch`]), so its `onFailure`
//!   decides.
//! - TLS uses rustls with the ring provider, installed once ([`install_crypto_provider`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use spine_core::hooks::{Hook, HookContext, HookError};
use spine_protocol::hook::HookOutput;

use crate::config::HttpConfig;
use crate::env::interpolate;
use crate::record::{HookMeta, Raw};
use crate::wire::decide;
use crate::wire::{WireEvent, input};

/// Bytes of response body read at most.
pub const BODY_CAP: usize = 1 << 20;

/// Installs rustls' ring provider as the process default (once; "already installed" is fine).
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A client for HTTP hooks: it never follows a redirect.
pub fn client() -> Result<reqwest::Client, reqwest::Error> {
    install_crypto_provider();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()
}

/// An HTTP hook.
pub struct HttpHook {
    config: HttpConfig,
    timeout: Duration,
    client: reqwest::Client,
    meta: Arc<HookMeta>,
}

impl HttpHook {
    /// A hook posting to `config.url` with a time limit.
    pub fn new(config: HttpConfig, timeout: Duration, client: reqwest::Client, meta: Arc<HookMeta>) -> Self {
        HttpHook { config, timeout, client, meta }
    }

    async fn exchange(&self, body: Vec<u8>) -> Result<(u16, String), HookError> {
        let mut request =
            self.client.post(&self.config.url).header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
        for (name, value) in &self.config.headers {
            request = request.header(name.as_str(), interpolate(value, &self.config.allowed_env_vars));
        }
        let mut response =
            request.send().await.map_err(|e| HookError::failed(format!("POST {} failed: {e}", self.config.url)))?;
        let status = response.status().as_u16();
        if response.status().is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned())
                .unwrap_or_else(|| "(no Location)".to_owned());
            return Err(HookError::failed(format!(
                "HTTP {status} redirect to {location} not followed: HTTP hooks never follow redirects"
            )));
        }
        let mut body = Vec::new();
        while let Some(chunk) =
            response.chunk().await.map_err(|e| HookError::failed(format!("reading the response failed: {e}")))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > BODY_CAP {
                return Err(HookError::failed(format!("HTTP {status} body went over {BODY_CAP} bytes")));
            }
        }
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    }
}

#[async_trait]
impl<E: WireEvent> Hook<E> for HttpHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        let started = Instant::now();
        if let Some(why) = &self.config.blocked {
            let result = Err(HookError::launch(format!("HTTP hook not sent: {why}")));
            self.meta.report::<E>(|| Raw::None, &result, started.elapsed());
            return result;
        }
        let body = input::encode::<E>(ctx, input);
        let exchanged = tokio::select! {
            r = tokio::time::timeout(self.timeout, self.exchange(body)) => match r {
                Ok(r) => r,
                Err(_) => Err(HookError::timeout(format!(
                    "no response from {} within {:.1} s",
                    self.config.url,
                    self.timeout.as_secs_f64()
                ))),
            },
            () = ctx.cancel.cancelled() => Err(HookError::failed("the run was canceled")),
        };
        let (raw, result) = match exchanged {
            Ok((status, body)) => {
                let result = decide::from_http::<E>(status, &body);
                (Raw::Http { status, body }, result)
            }
            Err(e) => (Raw::None, Err(e)),
        };
        self.meta.report::<E>(|| raw, &result, started.elapsed());
        result
    }
}
