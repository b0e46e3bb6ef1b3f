//! Retries as a layer around one request attempt.
//!
//! [`with_retries`] runs an attempt and, when it fails, decides whether to run it again:
//!
//! - only when the error kind is [`ModelErrorKind::retryable`] (429, 408/409, 5xx incl. 529,
//!   connection errors, timeouts) — never on 400/401/403/404, invalid replies, refusals;
//! - only while the attempt delivered nothing ([`Progress::NothingDelivered`]): once streamed
//!   content has arrived, a retry could repeat text the user already saw, so the error stands;
//! - at most [`RetryPolicy::max_retries`] times;
//! - only within the total deadline (`Timeouts::total`, from the first attempt's start): an
//!   attempt running when it passes is dropped with a [`ModelErrorKind::Timeout`] error, and a
//!   retry whose wait would end past it is not made.
//!
//! Every attempt's end (success, retry with its wait, final failure) is reported to the
//! request's [`StreamSink::attempt`], which the runner turns into a trace entry and a `-v` line.
//!
//! Errors a server reports inside a stream (or in a 200 body) are classified once for both
//! providers by [`stream_error_kind`] over the [`STREAM_ERROR_TYPES`] table.
//!
//! The wait is the server's `retry-after-ms` / `retry-after` (seconds or HTTP-date) when it sent
//! one, capped at [`RetryPolicy::max_retry_after`]; otherwise exponential backoff with full
//! jitter: a uniform draw in `[0, min(max_delay, base_delay * 2^n)]`. Cancellation is the
//! caller's: it drops this future (waits included).

use std::future::Future;
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use spine_core::model::{AttemptOutcome, AttemptReport, ModelError, ModelErrorKind, StreamSink};
use tokio::time::Instant;

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
    /// What went wrong, classified (retryable or not).
    pub error: ModelError,
    /// How long the server asked us to wait, if it did.
    pub retry_after: Option<Duration>,
    /// Whether content was delivered before the failure.
    pub progress: Progress,
    /// Whether the failure is a stream that ended empty (see [`AttemptError::empty_stream`]).
    pub end: StreamEnd,
}

/// How a failed attempt's stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// Any failure but the one below.
    Failed,
    /// The stream ended without text, tool call or refusal: a server that cannot stream tool
    /// calls. The OpenAI client retries once without streaming.
    Empty,
}

impl AttemptError {
    /// A failure before any content arrived.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        AttemptError {
            error: ModelError::new(kind, message),
            retry_after: None,
            progress: Progress::NothingDelivered,
            end: StreamEnd::Failed,
        }
    }

    /// A stream that ended without text, tool call or refusal (a transport error: retried).
    pub fn empty_stream() -> Self {
        AttemptError {
            end: StreamEnd::Empty,
            ..AttemptError::new(ModelErrorKind::Transport, "the stream ended empty (no text and no tool call)")
        }
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
        AttemptError { error, retry_after: None, progress: Progress::NothingDelivered, end: StreamEnd::Failed }
    }
}

/// Runs `attempt` (given the 0-based attempt number) until it succeeds, fails for good, the
/// policy's retries are spent, or `total` has passed since the first attempt started (the total
/// deadline covers every attempt and every wait of the request: an attempt still running then is
/// dropped, and a retry whose wait would end past it is not made). Each attempt's end is
/// reported to `sink` ([`StreamSink::attempt`]). The final error says how many retries were
/// made.
pub async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    total: Duration,
    sink: &dyn StreamSink,
    mut attempt: F,
) -> Result<T, ModelError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, AttemptError>>,
{
    let deadline = Instant::now().checked_add(total);
    let mut retries = 0u32;
    loop {
        let started = Instant::now();
        let number = retries + 1;
        let result = match deadline {
            Some(at) => match tokio::time::timeout_at(at, attempt(retries)).await {
                Ok(result) => result,
                Err(_) => return Err(give_up(past_deadline(total), retries, started, sink)),
            },
            None => attempt(retries).await,
        };
        match result {
            Ok(value) => {
                sink.attempt(&report(number, started, AttemptOutcome::Succeeded));
                return Ok(value);
            }
            Err(failed) if failed.may_retry() && retries < policy.max_retries => {
                let wait = policy.delay(retries, failed.retry_after);
                if deadline.is_some_and(|at| Instant::now() + wait >= at) {
                    let mut failed = failed;
                    failed.error.message = format!(
                        "{} (not retried: the total deadline of {} s would pass first)",
                        failed.error.message,
                        total.as_secs_f64()
                    );
                    return Err(give_up(failed, retries, started, sink));
                }
                sink.attempt(&report(number, started, AttemptOutcome::Retrying { error: &failed.error, wait }));
                retries += 1;
                tracing::warn!(
                    error = %failed.error.message,
                    retry = retries,
                    wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    "model request failed; retrying"
                );
                tokio::time::sleep(wait).await;
            }
            Err(failed) => return Err(give_up(failed, retries, started, sink)),
        }
    }
}

/// The report of attempt `number`, started at `started`.
fn report(number: u32, started: Instant, outcome: AttemptOutcome<'_>) -> AttemptReport<'_> {
    AttemptReport { attempt: number, duration: started.elapsed(), outcome }
}

/// The final error of a request after `retries` retries (the last attempt started at
/// `started`): reported to the sink, saying how many retries were made.
fn give_up(failed: AttemptError, retries: u32, started: Instant, sink: &dyn StreamSink) -> ModelError {
    let mut error = failed.error;
    if retries > 0 {
        let plural = if retries == 1 { "retry" } else { "retries" };
        error.message = format!("{} (gave up after {retries} {plural})", error.message);
    }
    sink.attempt(&report(retries + 1, started, AttemptOutcome::Failed { error: &error }));
    error
}

/// The error of an attempt cut by the total deadline.
fn past_deadline(total: Duration) -> AttemptError {
    AttemptError::new(
        ModelErrorKind::Timeout,
        format!("no complete reply within {} s (total deadline)", total.as_secs_f64()),
    )
}

/// In-stream error types of both providers (Anthropic's `error.type`, OpenAI's `error.type` or
/// `error.code`) and the HTTP status each stands for: the status decides retries through
/// [`ModelErrorKind::retryable`], exactly as if the server had answered with it.
pub const STREAM_ERROR_TYPES: &[(&str, u16)] = &[
    ("invalid_request_error", 400),
    ("authentication_error", 401),
    ("invalid_api_key", 401),
    ("billing_error", 402),
    ("insufficient_quota", 402),
    ("permission_error", 403),
    ("not_found_error", 404),
    ("request_too_large", 413),
    ("rate_limit_error", 429),
    ("rate_limit_exceeded", 429),
    ("requests", 429),
    ("tokens", 429),
    ("api_error", 500),
    ("server_error", 500),
    ("service_unavailable", 503),
    ("timeout_error", 504),
    ("overloaded_error", 529),
];

/// The kind of an error a server reported inside a stream (or in a 200 body), for both
/// providers: a known `type` (then a known string `code`) maps through [`STREAM_ERROR_TYPES`];
/// else a numeric `code` between 100 and 599 is taken as the status; else it is a
/// [`ModelErrorKind::Transport`] error (retried: an unexplained server hiccup).
pub fn stream_error_kind(error_type: Option<&str>, code: Option<&serde_json::Value>) -> ModelErrorKind {
    let known = |name: &str| STREAM_ERROR_TYPES.iter().find(|(t, _)| *t == name).map(|(_, status)| *status);
    let status =
        error_type.and_then(known).or_else(|| code.and_then(serde_json::Value::as_str).and_then(known)).or_else(|| {
            code.and_then(serde_json::Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
                .filter(|c| (100..600).contains(c))
        });
    match status {
        Some(status) => ModelErrorKind::Http { status },
        None => ModelErrorKind::Transport,
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

/// Sends one provider request: runs `attempt` with the encoded `body` under the retry policy and
/// the `total` deadline (see [`with_retries`]), reporting attempts to `sink`, and returns
/// `Canceled` as soon as `cancel` fires (dropping the in-flight attempt). Each attempt gets the
/// same bytes (a reference-counted [`bytes::Bytes`]: no copy).
pub async fn send_request<T, F, Fut>(
    policy: &RetryPolicy,
    total: Duration,
    sink: &dyn StreamSink,
    body: bytes::Bytes,
    cancel: &spine_core::CancellationToken,
    attempt: F,
) -> Result<T, ModelError>
where
    F: Fn(bytes::Bytes) -> Fut,
    Fut: Future<Output = Result<T, AttemptError>>,
{
    let work = with_retries(policy, total, sink, |_| attempt(body.clone()));
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
    use spine_core::model::NoStream;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn stream_error_types_map_to_one_retry_class_for_both_providers() {
        let retried = |t: &str| stream_error_kind(Some(t), None).retryable();
        for t in ["invalid_request_error", "authentication_error", "permission_error", "not_found_error"] {
            assert!(!retried(t), "{t} must not be retried");
        }
        for t in ["billing_error", "insufficient_quota", "request_too_large", "invalid_api_key"] {
            assert!(!retried(t), "{t} must not be retried");
        }
        for t in ["overloaded_error", "rate_limit_error", "rate_limit_exceeded", "server_error", "api_error"] {
            assert!(retried(t), "{t} must be retried");
        }
        for t in ["timeout_error", "service_unavailable", "requests", "tokens"] {
            assert!(retried(t), "{t} must be retried");
        }
        for (t, status) in STREAM_ERROR_TYPES {
            assert_eq!(stream_error_kind(Some(t), None), ModelErrorKind::Http { status: *status });
        }
    }

    #[test]
    fn stream_error_codes_apply_when_the_type_is_unknown() {
        use serde_json::json;
        // OpenAI: the type wins over a string code that names something else.
        assert_eq!(
            stream_error_kind(Some("invalid_request_error"), Some(&json!("context_length_exceeded"))),
            ModelErrorKind::Http { status: 400 }
        );
        assert_eq!(stream_error_kind(None, Some(&json!("rate_limit_exceeded"))), ModelErrorKind::Http { status: 429 });
        assert_eq!(stream_error_kind(Some("odd"), Some(&json!(503))), ModelErrorKind::Http { status: 503 });
        assert_eq!(stream_error_kind(None, Some(&json!(42))), ModelErrorKind::Transport);
        assert_eq!(stream_error_kind(Some("odd"), None), ModelErrorKind::Transport);
        assert_eq!(stream_error_kind(None, None), ModelErrorKind::Transport);
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
        let err = with_retries(&policy, Duration::MAX, &NoStream, |_| {
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
        let err = with_retries(&policy, Duration::MAX, &NoStream, |_| {
            calls += 1;
            async { Err::<(), _>(AttemptError::new(ModelErrorKind::Http { status: 503 }, "busy")) }
        })
        .await
        .expect_err("fails");
        assert_eq!(calls, 4);
        assert_eq!(err.message, "busy (gave up after 3 retries)");
    }
}
