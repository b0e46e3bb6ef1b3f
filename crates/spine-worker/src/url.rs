//! Mailbox URLs: `sqlite:PATH` and
//! `nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT][,HOST[:PORT]…]` (or `tls://…`; several seed
//! servers separated by commas), each with optional query options.
//!
//! | option | backends | meaning | default |
//! | --- | --- | --- | --- |
//! | `lease_ms` (`ack_wait_ms`) | both | how long a delivery may stay unacknowledged (and without keep-alive) before it is redelivered | 30000 |
//! | `max_deliver` | both | deliveries before an item is dead-lettered | 5 |
//! | `prefix` | nats | prefix of subjects, streams and the consumer | `spine` |
//! | `connect_wait_ms` | nats | how long the first connection is retried, with backoff, while the server is unreachable | 0 (one attempt); `spine worker`: 30000 |
//! | `replicas` | nats | copies of every stream, 1–5 (3 for a fleet) | 1 |
//! | `storage` | nats | `file` or `memory` | `file` |
//! | `max_age` | nats | age limit of every stream's messages: `90s`, `30m`, `12h`, `7d` | none |
//! | `tags`, `cluster` | nats | placement: server tags (comma-separated), cluster name | none |
//! | `creds`, `nkey`, `token` | nats | credentials: a `.creds` file, an NKey seed file, a token (exclusive, also with `USER:PASSWORD@`) | none |
//! | `tls`, `tls_ca`, `tls_cert`, `tls_key` | nats | require TLS; trusted roots; client certificate and key (PEM files) | off |
//!
//! Example: `sqlite:./spine.db?lease_ms=2000`, `nats://127.0.0.1:4222?prefix=ci&max_deliver=3`,
//! `nats://a:4222,b:4222,c:4222?replicas=3&max_age=7d&creds=/etc/spine/worker.creds`.
//!
//! Errors name the option; no error, `Debug` or `Display` of a URL shows a password or a token
//! ([`redact`]).
//!
//! Dependencies: [`crate::mailbox`] (the backends it opens).

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

pub use crate::mailbox::ConnectRetry;
pub use crate::mailbox::redact;
use crate::mailbox::sqlite::{SqliteMailbox, SqliteOptions};
use crate::mailbox::{Mailbox, MailboxError};

/// A mailbox URL that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid mailbox URL `{url}`: {reason}")]
pub struct UrlError {
    /// As given on the command line.
    pub url: String,
    /// What is wrong with it, for the error line.
    pub reason: String,
}

/// A parsed mailbox URL.
// Parsed once per process; the NATS variant's settings are not worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailboxUrl {
    /// `sqlite:PATH`.
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The query's options (`lease_ms`, `max_deliveries`, …).
        options: SqliteOptions,
    },
    /// `nats://HOST:PORT`.
    #[cfg(feature = "nats")]
    Nats {
        /// The server URL, without the query.
        url: String,
        /// The query's options (`lease_ms`, `max_deliveries`, stream and subject names, …).
        options: crate::mailbox::nats::NatsOptions,
    },
}

impl MailboxUrl {
    /// Opens the mailbox (creating the file, or the streams, when missing).
    pub async fn open(&self) -> Result<Arc<dyn Mailbox>, MailboxError> {
        self.open_observed(&|_| {}).await
    }

    /// [`MailboxUrl::open`], telling `observe` of each failed connection attempt that is
    /// retried (NATS with `connect_wait_ms`; SQLite opens a file and never retries).
    pub async fn open_observed(
        &self,
        observe: &(dyn Fn(&ConnectRetry) + Send + Sync),
    ) -> Result<Arc<dyn Mailbox>, MailboxError> {
        #[cfg(not(feature = "nats"))]
        let _ = observe;
        match self {
            MailboxUrl::Sqlite { path, options } => {
                let (path, options) = (path.clone(), *options);
                let opened =
                    tokio::task::spawn_blocking(move || SqliteMailbox::open(&path, options)).await.map_err(|e| {
                        MailboxError::Sqlite { path: String::new(), message: format!("open task failed: {e}") }
                    })??;
                Ok(Arc::new(opened))
            }
            #[cfg(feature = "nats")]
            MailboxUrl::Nats { url, options } => {
                Ok(Arc::new(crate::mailbox::nats::NatsMailbox::connect_observed(url, options.clone(), observe).await?))
            }
        }
    }

    /// Sets how long the first connection is retried when the URL does not say
    /// (`connect_wait_ms`); SQLite URLs are unchanged.
    pub fn with_default_connect_wait(self, wait: Duration) -> Self {
        match self {
            MailboxUrl::Sqlite { .. } => self,
            #[cfg(feature = "nats")]
            MailboxUrl::Nats { url, mut options } => {
                options.connect_wait = options.connect_wait.or(Some(wait));
                MailboxUrl::Nats { url, options }
            }
        }
    }

    /// The lease time (SQLite lease, JetStream ack wait).
    pub fn lease(&self) -> Duration {
        match self {
            MailboxUrl::Sqlite { options, .. } => options.lease,
            #[cfg(feature = "nats")]
            MailboxUrl::Nats { options, .. } => options.ack_wait,
        }
    }
}

impl FromStr for MailboxUrl {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |reason: String| UrlError { url: shown(text), reason };
        let (base, query) = match text.split_once('?') {
            Some((b, q)) => (b, q),
            None => (text, ""),
        };
        let mut lease = None;
        let mut max_deliver = None;
        let mut prefix = None;
        let mut connect_wait = None;
        // NATS-only options, read once the scheme is known.
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').ok_or_else(|| fail(format!("option `{pair}` has no value")))?;
            match key {
                "lease_ms" | "ack_wait_ms" => {
                    let ms: u64 = value.parse().map_err(|_| fail(format!("{key} must be a number, got `{value}`")))?;
                    if ms == 0 {
                        return Err(fail(format!("{key} must be positive")));
                    }
                    lease = Some(Duration::from_millis(ms));
                }
                "max_deliver" => {
                    let n: u32 =
                        value.parse().map_err(|_| fail(format!("max_deliver must be a number, got `{value}`")))?;
                    if n == 0 {
                        return Err(fail("max_deliver must be at least 1".into()));
                    }
                    max_deliver = Some(n);
                }
                "prefix" => prefix = Some(value.to_owned()),
                "connect_wait_ms" => {
                    let ms: u64 =
                        value.parse().map_err(|_| fail(format!("connect_wait_ms must be a number, got `{value}`")))?;
                    connect_wait = Some(Duration::from_millis(ms));
                }
                other if NATS_OPTIONS.contains(&other) => rest.push((key, value)),
                other => {
                    return Err(fail(format!(
                        "unknown option `{other}` (lease_ms, max_deliver, prefix, connect_wait_ms, {})",
                        NATS_OPTIONS.join(", ")
                    )));
                }
            }
        }
        if let Some(path) = base.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err(fail("no database path (sqlite:./spine.db)".into()));
            }
            let nats_only = prefix.as_ref().map(|_| "prefix").or(connect_wait.map(|_| "connect_wait_ms"));
            if let Some(key) = nats_only.or(rest.first().map(|(k, _)| *k)) {
                return Err(fail(format!("`{key}` applies to nats:// mailboxes only")));
            }
            let defaults = SqliteOptions::default();
            return Ok(MailboxUrl::Sqlite {
                path: PathBuf::from(path),
                options: SqliteOptions {
                    lease: lease.unwrap_or(defaults.lease),
                    max_deliver: max_deliver.unwrap_or(defaults.max_deliver),
                },
            });
        }
        if base.starts_with("nats://") || base.starts_with("tls://") {
            #[cfg(feature = "nats")]
            {
                use crate::mailbox::nats::settings::{NatsSettings, Servers};
                let (servers, auth, tls) = Servers::parse(base).map_err(&fail)?;
                let mut settings = NatsSettings::default();
                for (key, value) in rest {
                    settings.apply(key, value).map_err(&fail)?;
                }
                settings.finish(tls, auth).map_err(&fail)?;
                let defaults = crate::mailbox::nats::NatsOptions::default();
                return Ok(MailboxUrl::Nats {
                    url: servers.to_string(),
                    options: crate::mailbox::nats::NatsOptions {
                        prefix: prefix.unwrap_or(defaults.prefix),
                        ack_wait: lease.unwrap_or(defaults.ack_wait),
                        max_deliver: max_deliver.unwrap_or(defaults.max_deliver),
                        connect_wait,
                        stream: settings.stream,
                        connection: settings.connection,
                    },
                });
            }
            #[cfg(not(feature = "nats"))]
            return Err(fail("this build has no NATS support (cargo feature `nats`)".into()));
        }
        Err(fail("expected sqlite:PATH or nats://HOST:PORT[,HOST:PORT…]".into()))
    }
}

/// The options only NATS URLs take (stream settings, credentials, TLS).
const NATS_OPTIONS: &[&str] = &[
    "replicas", "storage", "max_age", "tags", "cluster", "creds", "nkey", "token", "tls", "tls_ca", "tls_cert",
    "tls_key",
];

/// A URL's text as errors show it: without passwords and tokens.
fn shown(text: &str) -> String {
    if text.starts_with("sqlite:") { text.to_owned() } else { redact(text) }
}

impl std::fmt::Display for MailboxUrl {
    /// The mailbox without secrets: `sqlite:PATH`, or the seeds and the prefix.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MailboxUrl::Sqlite { path, .. } => write!(f, "sqlite:{}", path.display()),
            #[cfg(feature = "nats")]
            MailboxUrl::Nats { url, options } => write!(f, "{url}?prefix={}", options.prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_take_a_path_and_options() {
        let url: MailboxUrl = "sqlite:./spine.db?lease_ms=500&max_deliver=3".parse().expect("parses");
        assert_eq!(
            url,
            MailboxUrl::Sqlite {
                path: "./spine.db".into(),
                options: SqliteOptions { lease: Duration::from_millis(500), max_deliver: 3 }
            }
        );
        assert!("sqlite:".parse::<MailboxUrl>().is_err());
        assert!("sqlite:x.db?bogus=1".parse::<MailboxUrl>().is_err());
        assert!("redis://x".parse::<MailboxUrl>().is_err());
    }

    #[cfg(feature = "nats")]
    #[test]
    fn nats_urls_keep_the_server_and_read_the_prefix() {
        let url: MailboxUrl = "nats://127.0.0.1:4222?prefix=t1&ack_wait_ms=700".parse().expect("parses");
        let MailboxUrl::Nats { url, options } = url else { panic!("nats") };
        assert_eq!(url, "nats://127.0.0.1:4222");
        assert_eq!(options.prefix, "t1");
        assert_eq!(options.ack_wait, Duration::from_millis(700));
        assert_eq!(options.max_deliver, 5);
        assert_eq!(options.connect_wait, None);
    }

    #[cfg(feature = "nats")]
    #[test]
    fn connect_wait_is_a_nats_option_and_the_url_wins_over_a_default() {
        let url: MailboxUrl = "nats://127.0.0.1:4222?connect_wait_ms=2500".parse().expect("parses");
        let MailboxUrl::Nats { options, .. } = url.with_default_connect_wait(Duration::from_secs(30)) else {
            panic!("nats")
        };
        assert_eq!(options.connect_wait, Some(Duration::from_millis(2500)));
        let url: MailboxUrl = "nats://127.0.0.1:4222".parse().expect("parses");
        let MailboxUrl::Nats { options, .. } = url.with_default_connect_wait(Duration::from_secs(30)) else {
            panic!("nats")
        };
        assert_eq!(options.connect_wait, Some(Duration::from_secs(30)));
        assert!("sqlite:x.db?connect_wait_ms=10".parse::<MailboxUrl>().is_err());
        assert!("nats://h:1?connect_wait_ms=soon".parse::<MailboxUrl>().is_err());
    }
}
