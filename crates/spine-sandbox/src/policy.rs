//! What a confined command may do: [`Policy`], and its one-string encoding for the helper's
//! command line.
//!
//! Contract: a policy is plain data. Paths are taken as given (the caller makes them
//! absolute); the helper canonicalises them when it applies them. [`Policy::encode`] gives
//! one ASCII string with no shell metacharacters (`v1.` then unpadded URL-safe base64 of the
//! JSON), and [`Policy::decode`] accepts exactly that, failing with a [`PolicyError`] that
//! says which step failed. Unknown JSON fields are refused, so a helper older than the spine
//! that encoded the policy fails loudly instead of silently dropping a rule.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

/// The prefix of an encoded policy; the number changes when the format does.
const ENCODING_PREFIX: &str = "v1.";

/// The device files every confined command may open for writing, so that shells, terminals
/// and ptys keep working. `/dev/pts` is a directory: everything beneath it is included.
pub const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"];

/// The loopback port of the proxy bridge inside the sandbox when the caller picks none.
pub const DEFAULT_PROXY_PORT: u16 = 3128;

/// What a confined command may read, write and reach.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    /// Paths the command may not read (directories are hidden behind an empty, unreadable
    /// directory, files behind an unopenable device). Everything else is readable.
    pub read_deny: Vec<PathBuf>,
    /// The only places the command may write: workspace roots, the session's private temp
    /// directory, configured extra paths (each with everything beneath it).
    /// [`WRITABLE_DEVICES`] are always added.
    pub write_allow: Vec<PathBuf>,
    /// Protected paths inside writable roots that stay read-only. Existing ones are mounted
    /// read-only; ones that do not exist yet are removed again if the command creates them
    /// (see the crate documentation for why and for the limit).
    pub write_deny: Vec<PathBuf>,
    /// What network the command gets.
    pub network: Network,
    /// Pathname unix sockets the command may connect to (needs Landlock ABI 9 to be
    /// enforced per path; below that, allowing any of them allows all of them).
    pub allow_unix_sockets: Vec<PathBuf>,
    /// The command may create unix sockets and connect to any of them.
    pub allow_all_unix_sockets: bool,
    /// The command may bind and listen on its own (namespace-private) loopback.
    pub allow_local_binding: bool,
    /// A layer the kernel lacks is reported in [`Applied`](crate::Applied) instead of
    /// failing [`confine`](crate::confine).
    pub best_effort: bool,
    /// The caller undoes the protected paths the command created, outside the sandbox and
    /// knowing what it wrote there itself; the helper does not undo them first.
    pub caller_undoes: bool,
}

/// The network a confined command gets.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Network {
    /// No network: seccomp refuses the command's IP sockets, and it gets a network namespace
    /// of its own with only a loopback interface — unless it may open no socket at all (no
    /// local binding, no unix socket) and Landlock scopes abstract unix sockets, where seccomp
    /// alone keeps it off the network (see the crate documentation).
    #[default]
    Off,
    /// Only spine's filtering proxy: a network namespace of its own, in which the helper
    /// listens on `127.0.0.1:port` and forwards each connection to `http` outside.
    Proxy {
        /// Where spine's proxy listens, outside the sandbox.
        http: ProxyUpstream,
        /// The loopback port inside the sandbox (`HTTP_PROXY=http://127.0.0.1:PORT`); any
        /// port works since the namespace is private. [`DEFAULT_PROXY_PORT`] is customary.
        port: u16,
    },
    /// The machine's network, unrestricted.
    Full,
}

/// Where spine's filtering proxy listens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ProxyUpstream {
    /// A TCP address, normally on the host's loopback.
    Tcp(SocketAddr),
    /// A unix socket path.
    Unix(PathBuf),
}

/// Why an encoded policy could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The string does not start with the expected version prefix.
    #[error("not a spine sandbox policy: expected it to start with `{ENCODING_PREFIX}`")]
    Prefix,
    /// The part after the prefix is not URL-safe base64.
    #[error("sandbox policy is not valid base64")]
    Base64(#[source] base64::DecodeError),
    /// The decoded bytes are not a policy.
    #[error("sandbox policy is not a valid policy document")]
    Json(#[source] serde_json::Error),
}

impl Policy {
    /// A policy allowing writes to `roots` only, no network, nothing hidden.
    pub fn workspace_write(roots: impl IntoIterator<Item = PathBuf>) -> Self {
        Self { write_allow: roots.into_iter().collect(), ..Self::default() }
    }

    /// The policy as one command-line-safe string.
    pub fn encode(&self) -> String {
        // Serialising plain data with string keys cannot fail; fall back to an empty document
        // (which decodes to the strictest policy) rather than panic if it ever did.
        let json = serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec());
        format!("{ENCODING_PREFIX}{}", URL_SAFE_NO_PAD.encode(json))
    }

    /// The policy [`encode`](Self::encode) produced.
    pub fn decode(encoded: &str) -> Result<Self, PolicyError> {
        let body = encoded.trim().strip_prefix(ENCODING_PREFIX).ok_or(PolicyError::Prefix)?;
        let json = URL_SAFE_NO_PAD.decode(body).map_err(PolicyError::Base64)?;
        serde_json::from_slice(&json).map_err(PolicyError::Json)
    }

    /// `workspace-write` when something is writable, else `read-only`: the first word of
    /// [`Applied::profile`](crate::Applied::profile).
    pub fn fs_mode(&self) -> &'static str {
        if self.write_allow.is_empty() { "read-only" } else { "workspace-write" }
    }

    /// Whether the command is restricted in which unix sockets it may use.
    pub(crate) fn restricts_unix_sockets(&self) -> bool {
        !self.allow_all_unix_sockets
    }

    /// Whether `path` is one of the writable roots or beneath one (lexically).
    pub(crate) fn is_writable(&self, path: &Path) -> bool {
        self.write_allow.iter().any(|root| path.starts_with(root))
            || WRITABLE_DEVICES.iter().any(|device| path.starts_with(device))
    }
}

impl Network {
    /// `off`, `proxy` or `full`, for the profile string.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Proxy { .. } => "proxy",
            Self::Full => "full",
        }
    }

    /// Whether the command is kept off the machine's network.
    pub fn is_restricted(&self) -> bool {
        !matches!(self, Self::Full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Policy {
        Policy {
            read_deny: vec!["/home/u/.ssh".into(), "/home/u/.netrc".into()],
            write_allow: vec!["/work/repo".into(), "/tmp/spine-1".into()],
            write_deny: vec!["/work/repo/.git/hooks".into(), "/work/repo/.mcp.json".into()],
            network: Network::Proxy { http: ProxyUpstream::Unix("/run/spine/proxy.sock".into()), port: 3128 },
            allow_unix_sockets: vec!["/run/user/1/bus".into()],
            allow_all_unix_sockets: false,
            allow_local_binding: true,
            best_effort: true,
            caller_undoes: true,
        }
    }

    #[test]
    fn encode_then_decode_gives_the_same_policy() {
        for policy in [sample(), Policy::default(), Policy { network: Network::Full, ..sample() }] {
            let encoded = policy.encode();
            assert!(encoded.starts_with("v1."), "{encoded}");
            assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)), "{encoded}");
            assert_eq!(Policy::decode(&encoded).expect("decodes"), policy);
        }
        let tcp = Policy {
            network: Network::Proxy { http: ProxyUpstream::Tcp("127.0.0.1:8080".parse().expect("addr")), port: 1 },
            ..Policy::default()
        };
        assert_eq!(Policy::decode(&tcp.encode()).expect("decodes"), tcp);
    }

    #[test]
    fn decode_errors_name_the_failing_step() {
        let prefix = Policy::decode("eyJ9").expect_err("no prefix");
        assert_eq!(prefix.to_string(), "not a spine sandbox policy: expected it to start with `v1.`");
        let base64 = Policy::decode("v1.***").expect_err("bad base64");
        assert_eq!(base64.to_string(), "sandbox policy is not valid base64");
        assert!(std::error::Error::source(&base64).is_some());
        let json = Policy::decode(&format!("v1.{}", URL_SAFE_NO_PAD.encode(b"{\"read_deny\": 3}"))).expect_err("bad");
        assert_eq!(json.to_string(), "sandbox policy is not a valid policy document");
        let source = std::error::Error::source(&json).map(ToString::to_string).unwrap_or_default();
        assert!(source.contains("invalid type"), "{source}");
        let unknown = Policy::decode(&format!("v1.{}", URL_SAFE_NO_PAD.encode(b"{\"write_everything\": true}")));
        assert!(unknown.is_err(), "unknown fields are refused");
    }

    #[test]
    fn missing_fields_take_the_strict_defaults() {
        let policy = Policy::decode(&format!("v1.{}", URL_SAFE_NO_PAD.encode(b"{}"))).expect("decodes");
        assert_eq!(policy, Policy::default());
        assert_eq!(policy.network, Network::Off);
        assert_eq!(policy.fs_mode(), "read-only");
        assert!(!policy.best_effort);
    }
}
