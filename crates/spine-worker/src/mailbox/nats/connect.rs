//! The first connection (retried with backoff for `connect_wait_ms`) and the streams and the
//! consumer, created when missing.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::consumer::pull;
use async_nats::jetstream::consumer::{AckPolicy, PullConsumer};
use async_nats::jetstream::stream::{self, RetentionPolicy, StorageType};
use tokio::sync::Mutex;

use super::{Inner, Names, NatsMailbox, NatsOptions};
use crate::mailbox::{ConnectRetry, MailboxError};

/// The first pause between connection attempts; it doubles up to [`MAX_CONNECT_BACKOFF`].
const FIRST_CONNECT_BACKOFF: Duration = Duration::from_millis(100);
/// The longest pause between connection attempts.
const MAX_CONNECT_BACKOFF: Duration = Duration::from_secs(2);

/// Connects to the server, retrying with backoff for `options.connect_wait`; `observe` hears of
/// every failed attempt that is followed by another.
async fn connect_with_retry(
    url: &str,
    options: &NatsOptions,
    observe: &(dyn Fn(&ConnectRetry) + Send + Sync),
) -> Result<async_nats::Client, MailboxError> {
    let wait = options.connect_wait.unwrap_or(Duration::ZERO);
    let started = tokio::time::Instant::now();
    let mut backoff = FIRST_CONNECT_BACKOFF;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let error = match async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(3))
            .name("spine-worker")
            .connect(url)
            .await
        {
            Ok(client) => return Ok(client),
            Err(e) => e.to_string(),
        };
        let remaining = wait.saturating_sub(started.elapsed());
        if remaining.is_zero() {
            let message = if wait.is_zero() {
                format!("cannot connect: {error}")
            } else {
                format!(
                    "cannot connect within connect_wait_ms={} ({attempt} attempts; last: {error})",
                    wait.as_millis()
                )
            };
            return Err(MailboxError::Nats { url: url.to_owned(), message });
        }
        let pause = backoff.min(remaining);
        observe(&ConnectRetry { url: url.to_owned(), attempt, error, retry_in: pause, remaining });
        tokio::time::sleep(pause).await;
        backoff = (backoff * 2).min(MAX_CONNECT_BACKOFF);
    }
}

impl NatsMailbox {
    /// Connects and creates the streams and the consumer when missing.
    pub async fn connect(url: &str, options: NatsOptions) -> Result<Self, MailboxError> {
        Self::connect_observed(url, options, &|_| {}).await
    }

    /// [`NatsMailbox::connect`], retrying the first connection for `options.connect_wait` and
    /// telling `observe` of each failed attempt before the next.
    pub async fn connect_observed(
        url: &str,
        options: NatsOptions,
        observe: &(dyn Fn(&ConnectRetry) + Send + Sync),
    ) -> Result<Self, MailboxError> {
        let err = |m: String| MailboxError::Nats { url: url.to_owned(), message: m };
        if options.prefix.is_empty()
            || !options.prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(err(format!("invalid prefix `{}` (use letters, digits, `-`, `_`)", options.prefix)));
        }
        let client = connect_with_retry(url, &options, observe).await?;
        let js = jetstream::ContextBuilder::new().max_ack_inflight(20_000).build(client.clone());
        let names = Names::new(&options.prefix);
        let create = |name: &str, subjects: Vec<String>, retention: RetentionPolicy, per_subject: i64| stream::Config {
            name: name.to_owned(),
            subjects,
            retention,
            storage: StorageType::File,
            max_messages_per_subject: per_subject,
            ..Default::default()
        };
        let items = js
            .get_or_create_stream(create(
                &names.items_stream,
                vec![names.items_subject.clone()],
                RetentionPolicy::WorkQueue,
                -1,
            ))
            .await
            .map_err(|e| err(format!("stream {}: {e}", names.items_stream)))?;
        let reports = js
            .get_or_create_stream(create(
                &names.reports_stream,
                vec![format!("{}.>", names.reports_prefix)],
                RetentionPolicy::Limits,
                -1,
            ))
            .await
            .map_err(|e| err(format!("stream {}: {e}", names.reports_stream)))?;
        let exec = js
            .get_or_create_stream(create(
                &names.exec_stream,
                vec![format!("{}.>", names.exec_prefix)],
                RetentionPolicy::Limits,
                8,
            ))
            .await
            .map_err(|e| err(format!("stream {}: {e}", names.exec_stream)))?;
        let dead = js
            .get_or_create_stream(create(
                &names.dead_stream,
                vec![format!("{}.>", names.dead_prefix)],
                RetentionPolicy::Limits,
                -1,
            ))
            .await
            .map_err(|e| err(format!("stream {}: {e}", names.dead_stream)))?;
        let consumer: PullConsumer = items
            .get_or_create_consumer(
                &names.consumer,
                pull::Config {
                    durable_name: Some(names.consumer.clone()),
                    ack_policy: AckPolicy::Explicit,
                    ack_wait: options.ack_wait,
                    max_deliver: i64::from(options.max_deliver) + 1,
                    max_ack_pending: 100_000,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| err(format!("consumer {}: {e}", names.consumer)))?;
        Ok(NatsMailbox {
            inner: Arc::new(Inner {
                url: url.to_owned(),
                options,
                names,
                client,
                js,
                consumer,
                reports,
                exec,
                dead,
                pull: Mutex::new(None),
            }),
        })
    }
}
