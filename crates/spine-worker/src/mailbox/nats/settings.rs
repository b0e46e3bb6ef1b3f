//! The NATS mailbox's URL settings: the seed servers, the credentials and TLS of the connection,
//! and the stream settings (replicas, storage, age limit, placement) applied to every stream.
//!
//! Contract:
//!
//! - [`Servers::parse`] reads `nats://[USER:PASSWORD@|TOKEN@]HOST[:PORT][,HOST[:PORT]…]` (scheme
//!   `nats` or `tls`; a seed after a comma may repeat the scheme). Credentials in the user part
//!   move into [`Connection`]; the seeds keep no credentials, so that printing them is safe.
//! - [`NatsSettings::apply`] reads one query option and answers `Ok(false)` when the option is
//!   not one of its own; every error names the option.
//! - Secrets (passwords, tokens) live in [`Secret`] ([`spine_protocol::secret`]), whose `Debug`
//!   prints `Secret([REDACTED])`; `redact` (`crate::mailbox::redact`) removes them from any URL
//!   text before it is shown.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use spine_protocol::secret::Secret;

/// Where a stream keeps its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Storage {
    /// On disk (`storage=file`, the default).
    #[default]
    File,
    /// In memory (`storage=memory`): lost when the server restarts.
    Memory,
}

impl fmt::Display for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Storage::File => "file",
            Storage::Memory => "memory",
        })
    }
}

/// Settings of every stream the mailbox creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamSettings {
    /// Copies of each stream in a cluster (1–5; 3 for a fleet).
    pub replicas: usize,
    /// File or memory storage.
    pub storage: Storage,
    /// Messages older than this are removed; `None`: kept until consumed (items) or forever.
    pub max_age: Option<Duration>,
    /// Placement: the server tags a stream's servers must have.
    pub tags: Vec<String>,
    /// Placement: the cluster the streams live in.
    pub cluster: Option<String>,
}

impl Default for StreamSettings {
    fn default() -> Self {
        StreamSettings { replicas: 1, storage: Storage::File, max_age: None, tags: Vec::new(), cluster: None }
    }
}

/// TLS of the connection.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tls {
    /// TLS is required (`tls=true` or the `tls://` scheme).
    pub required: bool,
    /// A PEM file of root certificates to trust (`tls_ca`).
    pub ca: Option<PathBuf>,
    /// A client certificate and its key (`tls_cert`, `tls_key`), PEM files.
    pub client: Option<(PathBuf, PathBuf)>,
}

/// How the connection authenticates (at most one way).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Auth {
    /// No credentials.
    #[default]
    None,
    /// `nats://USER:PASSWORD@HOST`.
    UserPassword {
        /// The user.
        user: String,
        /// The password.
        password: Secret,
    },
    /// `nats://TOKEN@HOST` or `token=…`.
    Token(Secret),
    /// `creds=FILE`: a `.creds` file (JWT and NKey seed).
    Creds(PathBuf),
    /// `nkey=FILE`: a file holding an NKey seed (`SU…`).
    NkeySeedFile(PathBuf),
}

/// The connection's settings besides the seeds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Connection {
    /// Credentials.
    pub auth: Auth,
    /// TLS.
    pub tls: Tls,
}

/// The seed servers of a URL, without credentials (`nats://a:4222,nats://b:4222`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Servers(pub Vec<String>);

impl fmt::Display for Servers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join(","))
    }
}

impl Servers {
    /// Parses the part of a mailbox URL before `?`; credentials found in user parts are returned
    /// beside the seeds (`Auth::None` when there are none). Errors are safe to print.
    pub fn parse(base: &str) -> Result<(Servers, Auth, bool), String> {
        let (scheme, rest) = base
            .split_once("://")
            .filter(|(s, _)| *s == "nats" || *s == "tls")
            .ok_or_else(|| "expected nats://HOST:PORT or tls://HOST:PORT".to_owned())?;
        let mut seeds = Vec::new();
        let mut auth = Auth::None;
        let mut tls = scheme == "tls";
        for (n, seed) in rest.split(',').enumerate() {
            let seed = seed.trim();
            let (seed_scheme, hostport) = match seed.split_once("://") {
                Some((s, h)) if s == "nats" || s == "tls" => (s, h),
                Some((s, _)) => return Err(format!("seed {} has scheme `{s}` (use nats:// or tls://)", n + 1)),
                None => (scheme, seed),
            };
            tls |= seed_scheme == "tls";
            let hostport = match hostport.rsplit_once('@') {
                Some((userinfo, host)) => {
                    let found = match userinfo.split_once(':') {
                        Some((user, password)) => {
                            Auth::UserPassword { user: user.to_owned(), password: Secret::new(password) }
                        }
                        None => Auth::Token(Secret::new(userinfo)),
                    };
                    if auth != Auth::None && auth != found {
                        return Err("the seeds carry different credentials (give them once)".into());
                    }
                    auth = found;
                    host
                }
                None => hostport,
            };
            let hostport = hostport.trim_end_matches('/');
            if hostport.is_empty() {
                return Err(format!("seed {} has no host", n + 1));
            }
            let (host, port) = match hostport.rsplit_once(':') {
                Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => (h, Some(p)),
                _ => (hostport, None),
            };
            if host.is_empty() || host.contains('/') {
                return Err(format!("seed {} `{hostport}` is not HOST:PORT", n + 1));
            }
            if let Some(port) = port
                && port.parse::<u16>().is_err()
            {
                return Err(format!("seed {} `{hostport}` has an invalid port", n + 1));
            }
            seeds.push(format!("{seed_scheme}://{hostport}"));
        }
        Ok((Servers(seeds), auth, tls))
    }
}

/// The NATS options of a URL's query besides the mailbox's own.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NatsSettings {
    /// The streams' settings.
    pub stream: StreamSettings,
    /// The connection's settings.
    pub connection: Connection,
}

impl NatsSettings {
    /// Reads one query option; `Ok(false)` when it is not a stream, credential or TLS option. Errors name the
    /// option and never repeat a secret.
    pub fn apply(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let path = || {
            if value.is_empty() { Err(format!("{key} needs a file path")) } else { Ok(PathBuf::from(value)) }
        };
        match key {
            "replicas" => {
                self.stream.replicas = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=5).contains(n))
                    .ok_or_else(|| format!("replicas must be 1 to 5 (3 for a cluster), got `{value}`"))?;
            }
            "storage" => {
                self.stream.storage = match value {
                    "file" => Storage::File,
                    "memory" => Storage::Memory,
                    _ => return Err(format!("storage must be `file` or `memory`, got `{value}`")),
                };
            }
            "max_age" => {
                let age = parse_duration(value)
                    .ok_or_else(|| format!("max_age must be a duration like 90s, 30m, 12h or 7d, got `{value}`"))?;
                self.stream.max_age = Some(age);
            }
            "tags" => {
                let tags: Vec<String> = value.split(',').map(str::trim).map(str::to_owned).collect();
                if tags.iter().any(String::is_empty) {
                    return Err(format!("tags must be comma-separated names, got `{value}`"));
                }
                self.stream.tags = tags;
            }
            "cluster" => {
                if value.is_empty() {
                    return Err("cluster needs a cluster name".into());
                }
                self.stream.cluster = Some(value.to_owned());
            }
            "creds" => self.set_auth(key, Auth::Creds(path()?))?,
            "nkey" => self.set_auth(key, Auth::NkeySeedFile(path()?))?,
            "token" => {
                if value.is_empty() {
                    return Err("token is empty".into());
                }
                self.set_auth(key, Auth::Token(Secret::new(value)))?;
            }
            "tls" => {
                self.connection.tls.required = match value {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return Err(format!("tls must be `true` or `false`, got `{value}`")),
                };
            }
            "tls_ca" => self.connection.tls.ca = Some(path()?),
            "tls_cert" => {
                let key_file = self.connection.tls.client.take().map(|(_, k)| k).unwrap_or_default();
                self.connection.tls.client = Some((path()?, key_file));
            }
            "tls_key" => {
                let cert = self.connection.tls.client.take().map(|(c, _)| c).unwrap_or_default();
                self.connection.tls.client = Some((cert, path()?));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Checks what only the whole query can tell (a certificate without its key).
    pub fn finish(&mut self, tls_scheme: bool, url_auth: Auth) -> Result<(), String> {
        if let Some((cert, key)) = &self.connection.tls.client
            && (cert.as_os_str().is_empty() || key.as_os_str().is_empty())
        {
            return Err("tls_cert and tls_key go together (a client certificate and its key)".into());
        }
        if url_auth != Auth::None {
            if self.connection.auth != Auth::None {
                return Err("credentials both in the URL's user part and in the query (give them once)".into());
            }
            self.connection.auth = url_auth;
        }
        self.connection.tls.required |= tls_scheme;
        let tls = &mut self.connection.tls;
        tls.required |= tls.ca.is_some() || tls.client.is_some();
        Ok(())
    }

    fn set_auth(&mut self, key: &str, auth: Auth) -> Result<(), String> {
        if self.connection.auth != Auth::None {
            return Err(format!("{key}: creds, nkey, token and user/password exclude each other (give one)"));
        }
        self.connection.auth = auth;
        Ok(())
    }
}

/// Parses `90s`, `30m`, `12h`, `7d`, `500ms` (a positive whole number and a unit).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().ok().filter(|n| *n > 0)?;
    let seconds = match unit {
        "ms" => return Some(Duration::from_millis(n)),
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    n.checked_mul(seconds).map(Duration::from_secs)
}
