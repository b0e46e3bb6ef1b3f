//! The one decision every destination goes through, and what the proxy reports about it.
//!
//! Contract:
//! - [`Gate::decide`] is asked once per destination (one CONNECT, one forwarded request, one
//!   SOCKS5 CONNECT) with the host as [`url::Host`] parsed it (lowercase, IDN as punycode, IP
//!   literals as addresses) and the port. It answers [`Decision::Allow`], [`Decision::Deny`]
//!   with a [`DenyReason`], or [`Decision::Ask`] with the pending answer of the caller's
//!   approver, which the proxy awaits (no time limit: a person may be answering).
//! - The gate decides about names only. Addresses are the proxy's business afterwards: an
//!   allowed name is resolved once, outside the sandbox, and private addresses are refused
//!   unless the proxy's configuration allows them (see the `dial` module). A gate that allows
//!   everything therefore still never reaches a private network by default.
//! - [`ProxyEvent`]: every decision is reported to the caller's observer, once asked
//!   ([`Outcome::Asked`]) and once final ([`Outcome::Allowed`] with the address connected to,
//!   [`Outcome::Denied`] with the reason, or [`Outcome::Failed`] when an allowed destination
//!   could not be reached).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use url::Host;

/// What the gate says about a destination.
pub enum Decision {
    /// Connect (after the address checks).
    Allow,
    /// Refuse, for this reason (named to the client and reported).
    Deny(DenyReason),
    /// Put it to the caller's approver; the proxy reports [`Outcome::Asked`] and awaits this.
    Ask(BoxFuture<'static, Answer>),
}

impl fmt::Debug for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Allow => f.write_str("Allow"),
            Decision::Deny(reason) => f.debug_tuple("Deny").field(reason).finish(),
            Decision::Ask(_) => f.write_str("Ask(..)"),
        }
    }
}

/// An approver's answer to [`Decision::Ask`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allow this connection (the approver remembers "always" itself, e.g. with
    /// [`super::DomainGate::allow`]).
    Allow,
    /// Refuse it; the text says why (e.g. `declined by the user`).
    Deny(String),
}

/// Why a destination is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyReason {
    /// The host matches no allowed domain.
    NotAllowed {
        /// The host.
        host: String,
    },
    /// The host matches a denied domain.
    DeniedDomain {
        /// The host.
        host: String,
        /// The deny pattern it matches.
        pattern: String,
    },
    /// The host is, or resolves only to, addresses that are not public.
    PrivateAddress {
        /// The host.
        host: String,
        /// The addresses it is or resolved to.
        addresses: Vec<IpAddr>,
        /// Whether the host is an IP literal (rather than a name that resolved).
        literal: bool,
    },
    /// The approver said no.
    Declined {
        /// The host.
        host: String,
        /// The approver's words.
        why: String,
    },
    /// The request does not name a destination the proxy can check.
    InvalidTarget {
        /// The target as the client wrote it.
        target: String,
    },
    /// A caller's own gate refused, in its own words.
    Other(String),
}

impl DenyReason {
    /// A stable code for traces and spans (`not_allowed`, `denied_domain`,
    /// `private_address`, `declined`, `invalid_target`, `other`).
    pub fn code(&self) -> &'static str {
        match self {
            DenyReason::NotAllowed { .. } => "not_allowed",
            DenyReason::DeniedDomain { .. } => "denied_domain",
            DenyReason::PrivateAddress { .. } => "private_address",
            DenyReason::Declined { .. } => "declined",
            DenyReason::InvalidTarget { .. } => "invalid_target",
            DenyReason::Other(_) => "other",
        }
    }
}

impl fmt::Display for DenyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DenyReason::NotAllowed { host } => write!(f, "{host} is not an allowed domain"),
            DenyReason::DeniedDomain { host, pattern } => write!(f, "{host} is a denied domain ({pattern})"),
            DenyReason::PrivateAddress { host, literal: true, .. } => {
                write!(f, "{host} is a private network address")
            }
            DenyReason::PrivateAddress { host, addresses, literal: false } => {
                let listed: Vec<String> = addresses.iter().map(IpAddr::to_string).collect();
                write!(f, "{host} resolves only to private network addresses ({})", listed.join(", "))
            }
            DenyReason::Declined { host, why } => write!(f, "{host} was not approved: {why}"),
            DenyReason::InvalidTarget { target } => write!(f, "{target:?} is not a destination the proxy can check"),
            DenyReason::Other(text) => f.write_str(text),
        }
    }
}

/// The caller's decision about destinations.
pub trait Gate: Send + Sync {
    /// Decides about `host:port`.
    fn decide<'a>(&'a self, host: &'a Host<String>, port: u16) -> BoxFuture<'a, Decision>;
}

/// The caller's interactive approver, used by [`super::DomainGate`] for unlisted domains.
pub trait Approver: Send + Sync {
    /// Puts `host:port` to whoever approves; the future resolves with their answer.
    fn ask(&self, host: &Host<String>, port: u16) -> BoxFuture<'static, Answer>;
}

/// How the client reached the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP `CONNECT host:port` (a tunnel, normally for HTTPS).
    HttpConnect,
    /// An absolute-form HTTP request (`GET http://host/path`), forwarded.
    HttpForward,
    /// SOCKS5 `CONNECT`.
    Socks5,
}

impl Protocol {
    /// `http_connect`, `http_forward` or `socks5`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpConnect => "http_connect",
            Protocol::HttpForward => "http_forward",
            Protocol::Socks5 => "socks5",
        }
    }
}

/// One step of a decision, for the caller's trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The gate asked the approver; the final outcome follows.
    Asked,
    /// Allowed and connected to this address.
    Allowed {
        /// The upstream address connected to.
        address: SocketAddr,
        /// Whether an approver allowed it (rather than the gate itself).
        approved: bool,
    },
    /// Refused.
    Denied(DenyReason),
    /// Allowed, but it could not be resolved or connected to.
    Failed {
        /// What went wrong.
        error: String,
    },
}

/// A decision the proxy reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyEvent {
    /// How the client asked.
    pub protocol: Protocol,
    /// The process id of the client, when it came through the unix socket (`SO_PEERCRED`, in
    /// the proxy's own PID namespace): the sandbox helper whose bridge carried it.
    pub peer_pid: Option<u32>,
    /// The destination host (as parsed when it parsed, as written when it did not).
    pub host: String,
    /// The destination port.
    pub port: u16,
    /// What happened.
    pub outcome: Outcome,
}

/// The caller's observer of [`ProxyEvent`]s (called on the proxy's tasks: keep it quick, e.g.
/// send into a channel).
pub type Observer = Arc<dyn Fn(&ProxyEvent) + Send + Sync>;
