//! From a destination to a connected upstream socket, through the gate and the address
//! checks; every step reported.
//!
//! Contract of [`Dialer::dial`], in order:
//! 1. An IP literal that is not public is refused before anything else (unless private
//!    networks are allowed): no approver is asked about an address that would be refused.
//! 2. The [`Gate`] decides about the host; [`Decision::Ask`] is reported as
//!    [`Outcome::Asked`] and awaited. A name is never resolved before it is allowed (a DNS
//!    query for a refused name would itself leak data).
//! 3. An allowed name is resolved **once**, with the [`Resolver`] (outside the sandbox, within
//!    the connect time limit). With [`PrivateNetworks::Refuse`] only its public addresses are
//!    kept ([`crate::web::address::is_public`], the rule WebFetch follows); none left is
//!    [`DenyReason::PrivateAddress`]. The kept addresses are the only ones connected to —
//!    nothing is resolved again, so DNS rebinding cannot swap in another address.
//! 4. The addresses are tried in order until one connects, all within the connect time limit.
//!    The final outcome is reported: allowed with the address, denied with the reason, or
//!    failed with the error.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use thiserror::Error;
use tokio::net::TcpStream;
use url::Host;

use super::gate::{Answer, Decision, DenyReason, Gate, Observer, Outcome, Protocol, ProxyEvent};

/// How one client reached the proxy: the protocol it spoke and, on a unix socket, the process
/// id of its peer (`SO_PEERCRED`), which the observer uses to tell whose connection it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Via {
    pub(crate) protocol: Protocol,
    pub(crate) peer: Option<u32>,
}
use crate::web::address::{PrivateNetworks, is_public};

/// Resolves host names to addresses (the proxy runs outside the sandbox, which has no DNS).
pub trait Resolver: Send + Sync {
    /// The addresses of `name` (a domain, never an IP literal), with `port`.
    fn resolve<'a>(&'a self, name: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>>;
}

/// The system resolver, through tokio (`getaddrinfo` on a blocking thread).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve<'a>(&'a self, name: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        Box::pin(async move { Ok(tokio::net::lookup_host((name, port)).await?.collect()) })
    }
}

/// Why no upstream connection was made.
#[derive(Debug, Error)]
pub(crate) enum DialError {
    /// Refused by the gate, the approver or the address checks.
    #[error("{0}")]
    Denied(DenyReason),
    /// The name did not resolve.
    #[error("cannot resolve {host}: {source}")]
    Resolve {
        /// The host.
        host: String,
        /// The resolver's error.
        #[source]
        source: io::Error,
    },
    /// No address accepted the connection.
    #[error("cannot connect to {host}: {source}")]
    Connect {
        /// The host.
        host: String,
        /// The last connection error.
        #[source]
        source: io::Error,
    },
    /// Resolution and connection took longer than the connect time limit.
    #[error("connecting to {host} timed out after {limit:?}")]
    Timeout {
        /// The host.
        host: String,
        /// The limit.
        limit: Duration,
    },
}

/// What the proxy's connections share to reach upstreams.
pub(crate) struct Dialer {
    pub(crate) gate: Arc<dyn Gate>,
    pub(crate) resolver: Arc<dyn Resolver>,
    pub(crate) observer: Option<Observer>,
    pub(crate) private_networks: PrivateNetworks,
    pub(crate) connect_timeout: Duration,
}

impl Dialer {
    /// Reports an event to the observer, if there is one.
    pub(crate) fn report(&self, via: Via, host: String, port: u16, outcome: Outcome) {
        if let Some(observer) = &self.observer {
            observer(&ProxyEvent { protocol: via.protocol, peer_pid: via.peer, host, port, outcome });
        }
    }

    /// Decides about `host:port` and connects to it (see the module contract).
    pub(crate) async fn dial(&self, via: Via, host: &Host<String>, port: u16) -> Result<TcpStream, DialError> {
        let shown = host.to_string();
        let result = self.decide_and_connect(via, host, port).await;
        let outcome = match &result {
            Ok((stream, approved)) => match stream.peer_addr() {
                Ok(address) => Outcome::Allowed { address, approved: *approved },
                Err(e) => Outcome::Failed { error: format!("connected, but the socket has no peer: {e}") },
            },
            Err(DialError::Denied(reason)) => Outcome::Denied(reason.clone()),
            Err(e) => Outcome::Failed { error: e.to_string() },
        };
        self.report(via, shown, port, outcome);
        result.map(|(stream, _)| stream)
    }

    async fn decide_and_connect(
        &self,
        via: Via,
        host: &Host<String>,
        port: u16,
    ) -> Result<(TcpStream, bool), DialError> {
        let shown = host.to_string();
        let literal = literal_ip(host);
        if let Some(ip) = literal {
            self.check_literal(&shown, ip)?;
        }
        let approved = match self.gate.decide(host, port).await {
            Decision::Allow => false,
            Decision::Deny(reason) => return Err(DialError::Denied(reason)),
            Decision::Ask(answer) => {
                self.report(via, shown.clone(), port, Outcome::Asked);
                match answer.await {
                    Answer::Allow => true,
                    Answer::Deny(why) => return Err(DialError::Denied(DenyReason::Declined { host: shown, why })),
                }
            }
        };
        let limit = self.connect_timeout;
        let connecting = async {
            let addresses = match (literal, host) {
                (Some(ip), _) => vec![SocketAddr::new(ip, port)],
                (None, Host::Domain(name)) => self.resolve_public(name, port).await?,
                (None, Host::Ipv4(_) | Host::Ipv6(_)) => Vec::new(),
            };
            connect_any(&shown, &addresses).await
        };
        match tokio::time::timeout(limit, connecting).await {
            Ok(result) => result.map(|stream| (stream, approved)),
            Err(_) => Err(DialError::Timeout { host: shown.clone(), limit }),
        }
    }

    fn check_literal(&self, shown: &str, ip: IpAddr) -> Result<(), DialError> {
        match self.private_networks {
            PrivateNetworks::Refuse if !is_public(ip) => Err(DialError::Denied(DenyReason::PrivateAddress {
                host: shown.to_owned(),
                addresses: vec![ip],
                literal: true,
            })),
            PrivateNetworks::Refuse | PrivateNetworks::Allow => Ok(()),
        }
    }

    /// Resolves once; keeps the public addresses unless private networks are allowed.
    async fn resolve_public(&self, name: &str, port: u16) -> Result<Vec<SocketAddr>, DialError> {
        let all = self
            .resolver
            .resolve(name, port)
            .await
            .map_err(|source| DialError::Resolve { host: name.to_owned(), source })?;
        if all.is_empty() {
            let source = io::Error::new(io::ErrorKind::NotFound, "no address");
            return Err(DialError::Resolve { host: name.to_owned(), source });
        }
        // The resolver's port is not trusted either: the client's port is the one checked.
        let all: Vec<SocketAddr> = all.into_iter().map(|a| SocketAddr::new(a.ip(), port)).collect();
        match self.private_networks {
            PrivateNetworks::Allow => Ok(all),
            PrivateNetworks::Refuse => {
                let public: Vec<SocketAddr> = all.iter().copied().filter(|a| is_public(a.ip())).collect();
                if public.is_empty() {
                    return Err(DialError::Denied(DenyReason::PrivateAddress {
                        host: name.to_owned(),
                        addresses: all.iter().map(SocketAddr::ip).collect(),
                        literal: false,
                    }));
                }
                Ok(public)
            }
        }
    }
}

/// The address of an IP-literal host.
fn literal_ip(host: &Host<String>) -> Option<IpAddr> {
    match host {
        Host::Ipv4(ip) => Some(IpAddr::V4(*ip)),
        Host::Ipv6(ip) => Some(IpAddr::V6(*ip)),
        Host::Domain(_) => None,
    }
}

/// Connects to the first address that accepts.
async fn connect_any(shown: &str, addresses: &[SocketAddr]) -> Result<TcpStream, DialError> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address to connect to");
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => {
                // Tunnels carry interactive protocols too; a failed setting only costs latency.
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => last = e,
        }
    }
    Err(DialError::Connect { host: shown.to_owned(), source: last })
}
