//! Retries as a layer around one request attempt.
//!
//! [`with_retries`] runs an attempt and, when it fails, decides whether to run it again:
//!
//! - only when the error kind is [`ModelErrorKind::retryable`] (429, 408/409, 5xx incl. 529,
//!   connection errors, timeouts) — never on 400/401/403/404, invalid replies, refusals;
//! - only while the attempt delivered nothing ([`Progress::NothingDelivered`]): once streamed
//!   content has arrived, a retry could repeat text the user already saw, so the error stands;
//! - at most [`RetryPolicy::max_retries`] times.
//!
//! The wait is the server's `retry-after-ms` / `retry-after` (seconds or HTTP-date) when it sent
//! one, capped at [`RetryPolicy::max_retry_after`]; otherwise exponential backoff with full
//! jitter: a uniform draw in `[0, min(max_delay, base_delay * 2^n)]`. Cancellation is the
//! caller's: it drops this future (waits included).

use std::future::Future;
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use spine_core::model::{ModelError, ModelErrorKind};

/// How often and how long to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 3, so at most 4 requests).
    pub max_retries: u32,
    /// The backoff base: the n-th retry waits up to `base_delay * 2^n` (default 500 ms).
    pub base_delay: Duration,
    /// The backoff ceiling (default 8 s).
    pub max_delay: Duration,
    /// The longest server-requested wait honoured (default 60 s); longer requests are cut to it.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy { max_retries: 0, ..RetryPolicy::default() }
    }

    /// The wait before retry number `retry` (0-based): the server's wish when it gave one
    /// (capped), else full-jitter exponential backoff.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wish) = retry_after {
            return wish.min(self.max_retry_after);
        }
        let factor = 1u32.checked_shl(retry.min(30)).unwrap_or(u32::MAX);
        let ceiling = self.base_delay.checked_mul(factor).unwrap_or(self.max_delay).min(self.max_delay);
        ceiling.mul_f64(fastrand::f64())
    }
}

/// Whether a failed attempt had already delivered content (streamed text or tool-call data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Nothing reached the caller: the attempt may be repeated.
    NothingDelivered,
    /// Content was delivered: the attempt must not be repeated.
    ContentDelivered,
}

/// One failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptError {
    /// The error.
    pub error: ModelError,
    /// How long the server asked us to wait, if it did.
    pub retry_after: Option<Duration>,
    /// Whether content was delivered before the failure.
    pub progress: Progress,
}

impl AttemptError {
    /// A failure before any content arrived.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        AttemptError { error: ModelError::new(kind, message), retry_after: None, progress: Progress::NothingDelivered }
    }

    /// Prefixes the message (with the endpoint).
    pub fn context(mut self, prefix: &str) -> Self {
        self.error.message = format!("{prefix}: {}", self.error.message);
        self
    }

    fn may_retry(&self) -> bool {
        self.error.kind.retryable() && self.progress == Progress::NothingDelivered
    }
}

impl From<ModelError> for AttemptError {
    fn from(error: ModelError) -> Self {
        AttemptError { error, retry_after: None, progress: Progress::NothingDelivered }
    }
}

/// Runs `attempt` (given the 0-based attempt number) until it succeeds, fails for good, or the
/// policy's retries are spent. The final error says how many retries were made.
pub async fn with_retries<T, F, Fut>(policy: &RetryPolicy, mut attempt: F) -> Result<T, ModelError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, AttemptError>>,
{
    let mut retries = 0u32;
    loop {
        match attempt(retries).await {
            Ok(value) => return Ok(value),
            Err(failed) if failed.may_retry() && retries < policy.max_retries => {
                let wait = policy.delay(retries, failed.retry_after);
                retries += 1;
                tracing::warn!(
                    error = %failed.error.message,
                    retry = retries,
                    wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    "model request failed; retrying"
                );
                tokio::time::sleep(wait).await;
            }
            Err(failed) => {
                let mut error = failed.error;
                if retries > 0 {
                    let plural = if retries == 1 { "retry" } else { "retries" };
                    error.message = format!("{} (gave up after {retries} {plural})", error.message);
                }
                return Err(error);
            }
        }
    }
}

/// The wait a server asked for: `retry-after-ms` (milliseconds, as OpenAI sends), else
/// `retry-after` as delta-seconds or an HTTP-date (relative to `now`; a past date means 0).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(parse_seconds) {
        return Some(ms / 1000);
    }
    let value = text("retry-after")?;
    if let Some(secs) = parse_seconds(value) {
        return Some(secs);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A non-negative decimal number as a duration in seconds.
fn parse_seconds(value: &str) -> Option<Duration> {
    let n: f64 = value.parse().ok()?;
    if n.is_finite() && n >= 0.0 { Duration::try_from_secs_f64(n).ok() } else { None }
}

/// Sends one provider request: encodes `body` once, runs `attempt` with it under the retry
/// policy, and returns `Canceled` as soon as `cancel` fires (dropping the in-flight attempt).
pub async fn send_request<T, F, Fut>(
    policy: &RetryPolicy,
    body: &impl serde::Serialize,
    cancel: &spine_core::CancellationToken,
    attempt: F,
) -> Result<T, ModelError>
where
    F: Fn(bytes::Bytes) -> Fut,
    Fut: Future<Output = Result<T, AttemptError>>,
{
    let body = serde_json::to_vec(body)
        .map(bytes::Bytes::from)
        .map_err(|e| ModelError::new(ModelErrorKind::Config, format!("cannot encode the request: {e}")))?;
    let work = with_retries(policy, |_| attempt(body.clone()));
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ModelError::new(ModelErrorKind::Canceled, "canceled")),
        result = work => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn retry_after_accepts_seconds_milliseconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        assert_eq!(retry_after(&headers(&[("retry-after", "2")]), now), Some(Duration::from_secs(2)));
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "250"), ("retry-after", "9")]), now),
            Some(Duration::from_millis(250))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(retry_after(&headers(&[("retry-after", &later)]), now), Some(Duration::from_secs(30)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(retry_after(&headers(&[("retry-after", &past)]), now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn server_waits_are_capped_and_backoff_stays_under_its_exponential_ceiling() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(0, Some(Duration::from_secs(3600))), Duration::from_secs(60));
        for retry in 0..40 {
            let ceiling = (p.base_delay * 2u32.saturating_pow(retry.min(20))).min(p.max_delay);
            assert!(p.delay(retry, None) <= ceiling);
        }
    }

    #[tokio::test]
    async fn content_delivered_is_never_retried_and_exhaustion_says_how_often() {
        let policy = RetryPolicy { base_delay: Duration::from_millis(1), ..RetryPolicy::default() };
        let mut calls = 0;
        let err = with_retries(&policy, |_| {
            calls += 1;
            async {
                Err::<(), _>(AttemptError {
                    progress: Progress::ContentDelivered,
                    ..AttemptError::new(ModelErrorKind::Transport, "cut")
                })
            }
        })
        .await
        .expect_err("fails");
        assert_eq!((calls, err.message.as_str()), (1, "cut"));

        let mut calls = 0;
        let err = with_retries(&policy, |_| {
            calls += 1;
            async { Err::<(), _>(AttemptError::new(ModelErrorKind::Http { status: 503 }, "busy")) }
        })
        .await
        .expect_err("fails");
        assert_eq!(calls, 4);
        assert_eq!(err.message, "busy (gave up after 3 retries)");
    }
}
