//! The first connection (retried with backoff for `connect_wait_ms`) to one of the seed
//! servers, with the URL's credentials and TLS, and the streams and the consumer, created when
//! missing and brought to the URL's settings (see `streams`).
//!
//! The `url` given to [`NatsMailbox::connect`] is the seeds' text (`nats://a:4222,b:4222`);
//! credentials in it are moved to the options and never kept in the text that errors print.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::consumer::pull;
use async_nats::jetstream::consumer::{AckPolicy, PullConsumer};
use async_nats::jetstream::stream::RetentionPolicy;
use async_nats::{ConnectErrorKind, ConnectOptions, ServerAddr};
use tokio::sync::Mutex;

use super::settings::{Auth, Connection, Servers};
use super::streams::{ensure_consumer, ensure_stream, stream_config};
use super::{Inner, Names, NatsMailbox, NatsOptions};
use crate::mailbox::{ConnectRetry, MailboxError};

/// The first pause between connection attempts; it doubles up to [`MAX_CONNECT_BACKOFF`].
const FIRST_CONNECT_BACKOFF: Duration = Duration::from_millis(100);
/// The longest pause between connection attempts.
const MAX_CONNECT_BACKOFF: Duration = Duration::from_secs(2);

/// Connects to the server, retrying with backoff for `options.connect_wait`; `observe` hears of
/// every failed attempt that is followed by another. Refused credentials and the client's TLS
/// setup errors are not retried (a handshake the client refuses, e.g. an untrusted server
/// certificate, comes as an I/O error and is).
async fn connect_with_retry(
    url: &str,
    seeds: &[ServerAddr],
    options: &NatsOptions,
    observe: &(dyn Fn(&ConnectRetry) + Send + Sync),
) -> Result<async_nats::Client, MailboxError> {
    let wait = options.connect_wait.unwrap_or(Duration::ZERO);
    let started = tokio::time::Instant::now();
    let mut backoff = FIRST_CONNECT_BACKOFF;
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let client_options = client_options(url, &options.connection).await?;
        let error = match client_options.connect(seeds.to_vec()).await {
            Ok(client) => return Ok(client),
            // Waiting does not mend refused credentials or a bad TLS setup: fail at once.
            Err(e)
                if matches!(
                    e.kind(),
                    ConnectErrorKind::Authentication
                        | ConnectErrorKind::AuthorizationViolation
                        | ConnectErrorKind::Tls
                        | ConnectErrorKind::ServerParse
                ) =>
            {
                return Err(MailboxError::Nats { url: url.to_owned(), message: format!("cannot connect: {e}") });
            }
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

/// The client's options: name, timeout, credentials, TLS. Reads the credentials files (an
/// error names the file, never its content).
async fn client_options(url: &str, connection: &Connection) -> Result<ConnectOptions, MailboxError> {
    let err = |m: String| MailboxError::Nats { url: url.to_owned(), message: m };
    let base = ConnectOptions::new().connection_timeout(Duration::from_secs(3)).name("spine-worker");
    let mut options = match &connection.auth {
        Auth::None => base,
        Auth::UserPassword { user, password } => base.user_and_password(user.clone(), password.expose().to_owned()),
        Auth::Token(token) => base.token(token.expose().to_owned()),
        Auth::Creds(path) => base
            .credentials_file(path)
            .await
            .map_err(|e| err(format!("creds file {}: {}", path.display(), e.kind())))?,
        Auth::NkeySeedFile(path) => {
            let text =
                tokio::fs::read_to_string(path).await.map_err(|e| err(format!("nkey file {}: {e}", path.display())))?;
            // A seed file, or an `.nk`/`.creds`-like file: the first line that is a user seed.
            let seed = text.lines().map(str::trim).find(|l| l.starts_with("SU")).ok_or_else(|| {
                err(format!("nkey file {}: no user NKey seed (a line starting `SU`)", path.display()))
            })?;
            base.nkey(seed.to_owned())
        }
    };
    let tls = &connection.tls;
    if tls.required {
        options = options.require_tls(true);
    }
    if let Some(ca) = &tls.ca {
        options = options.add_root_certificates(ca.clone());
    }
    if let Some((cert, key)) = &tls.client {
        options = options.add_client_certificate(cert.clone(), key.clone());
    }
    Ok(options)
}

/// The seeds of `url` as the client takes them, and the options with any credentials found in
/// the URL's user part (when the options have none).
fn seeds(url: &str, options: &mut NatsOptions) -> Result<(String, Vec<ServerAddr>), MailboxError> {
    let (servers, auth, tls) =
        Servers::parse(url).map_err(|m| MailboxError::Nats { url: crate::mailbox::redact(url), message: m })?;
    let shown = servers.to_string();
    if auth != Auth::None && options.connection.auth == Auth::None {
        options.connection.auth = auth;
    }
    options.connection.tls.required |= tls;
    let addrs = servers
        .0
        .iter()
        .map(|s| s.parse::<ServerAddr>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| MailboxError::Nats { url: shown.clone(), message: format!("invalid server address: {e}") })?;
    Ok((shown, addrs))
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
        mut options: NatsOptions,
        observe: &(dyn Fn(&ConnectRetry) + Send + Sync),
    ) -> Result<Self, MailboxError> {
        let (url, seeds) = seeds(url, &mut options)?;
        let url = url.as_str();
        let err = |m: String| MailboxError::Nats { url: url.to_owned(), message: m };
        if options.prefix.is_empty()
            || !options.prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(err(format!("invalid prefix `{}` (use letters, digits, `-`, `_`)", options.prefix)));
        }
        let client = connect_with_retry(url, &seeds, &options, observe).await?;
        let version = client.server_info().version;
        if options.stream.replicas > 1 && !serialises_subject_writes(&version) {
            tracing::warn!(
                "{url}: nats-server {version} may accept two compare-and-set writes on one subject of a replicated \
                 stream (fixed in 2.11): the mailbox's fencing relies on them, so an item could complete twice \
                 after a failover; upgrade the servers"
            );
        }
        let js = jetstream::ContextBuilder::new().max_ack_inflight(20_000).build(client.clone());
        let names = Names::new(&options.prefix);
        let create = |name: &str, subjects: Vec<String>, retention: RetentionPolicy, per_subject: i64| {
            stream_config(name, subjects, retention, per_subject, &options.stream)
        };
        let items = ensure_stream(
            &js,
            create(&names.items_stream, vec![names.items_subject.clone()], RetentionPolicy::WorkQueue, -1),
            err,
        )
        .await?;
        let reports = ensure_stream(
            &js,
            create(&names.reports_stream, vec![format!("{}.>", names.reports_prefix)], RetentionPolicy::Limits, -1),
            err,
        )
        .await?;
        let exec = ensure_stream(
            &js,
            create(&names.exec_stream, vec![format!("{}.>", names.exec_prefix)], RetentionPolicy::Limits, 8),
            err,
        )
        .await?;
        let dead = ensure_stream(
            &js,
            create(&names.dead_stream, vec![format!("{}.>", names.dead_prefix)], RetentionPolicy::Limits, -1),
            err,
        )
        .await?;
        let consumer: PullConsumer = ensure_consumer(
            &items,
            pull::Config {
                durable_name: Some(names.consumer.clone()),
                ack_policy: AckPolicy::Explicit,
                ack_wait: options.ack_wait,
                max_deliver: i64::from(options.max_deliver) + 1,
                max_ack_pending: 100_000,
                ..Default::default()
            },
            err,
        )
        .await?;
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

/// Whether a server of `version` checks `Nats-Expected-Last-Subject-Sequence` as part of a
/// replicated write (2.11 and later): older ones checked it on the leader before proposing,
/// so two writes in flight at once, one expecting "no message" on a subject, or one arriving
/// while a new leader still applied its log, could all be stored (nats-server issues 4320,
/// 5644, 6194). An unreadable version counts as a new one.
fn serialises_subject_writes(version: &str) -> bool {
    let mut parts = version.trim_start_matches('v').split(['.', '-']).map(|p| p.parse::<u64>());
    match (parts.next(), parts.next()) {
        (Some(Ok(major)), Some(Ok(minor))) => (major, minor) >= (2, 11),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::serialises_subject_writes;

    #[test]
    fn servers_before_2_11_are_known_not_to_serialise_compare_and_set_writes_on_a_subject() {
        for old in ["2.9.10", "v2.10.26", "1.4.0"] {
            assert!(!serialises_subject_writes(old), "{old}");
        }
        for new in ["2.11.0", "2.15.1", "v3.0.0-beta.1", "unknown"] {
            assert!(serialises_subject_writes(new), "{new}");
        }
    }
}
