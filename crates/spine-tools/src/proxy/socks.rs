//! SOCKS5 (RFC 1928), the `CONNECT` command only.
//!
//! Contract (the version byte `0x05` was read by the listener's sniffer):
//! - Method negotiation: "no authentication" (`0x00`) when the client offers it, else
//!   `0xFF` (no acceptable method) and the connection closes.
//! - Request: `CONNECT` to an IPv4 (`0x01`), domain (`0x03`) or IPv6 (`0x04`) address.
//!   `BIND` and `UDP ASSOCIATE` are answered `0x07` (command not supported), other address
//!   types `0x08` (address type not supported), and the connection closes.
//! - Greeting and request must arrive within the head time limit; the decision that follows
//!   (which may wait for an approver) has none.
//! - A domain is parsed as [`url::Host`] parses hosts (so `127.0.0.1` sent as a domain is an
//!   IPv4 address); one that does not parse is refused as an invalid target.
//! - Replies: `0x00` with the upstream socket's local address once connected; `0x02`
//!   (connection not allowed by ruleset) when refused — the reason goes to the observer, the
//!   protocol has no room for it; `0x04` (host unreachable) when the name does not resolve or
//!   the connection times out, `0x05` when refused by the upstream, `0x03` when its network is
//!   unreachable, `0x01` otherwise. Then bytes are copied both ways until both sides close.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use url::Host;

use super::Shared;
use super::dial::{DialError, Via};
use super::gate::{DenyReason, Outcome, Protocol};

const VERSION: u8 = 0x05;
const NO_AUTH: u8 = 0x00;
const NO_ACCEPTABLE_METHOD: u8 = 0xFF;
const CMD_CONNECT: u8 = 0x01;
const ATYP_IPV4: u8 = 0x01;
const ATYP_DOMAIN: u8 = 0x03;
const ATYP_IPV6: u8 = 0x04;

/// Reply codes (RFC 1928 §6).
const SUCCEEDED: u8 = 0x00;
const GENERAL_FAILURE: u8 = 0x01;
const NOT_ALLOWED: u8 = 0x02;
const NETWORK_UNREACHABLE: u8 = 0x03;
const HOST_UNREACHABLE: u8 = 0x04;
const CONNECTION_REFUSED: u8 = 0x05;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 0x08;

/// The destination of a request, as sent.
enum Target {
    Ip(IpAddr),
    Domain(Vec<u8>),
}

/// A request read to its end.
enum Request {
    Connect(Target, u16),
    /// Answered with this reply code, then closed.
    Refuse(u8),
}

/// Serves one SOCKS5 client whose version byte was read.
pub(crate) async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut client: S,
    shared: &Shared,
    peer: Option<u32>,
) -> io::Result<()> {
    let via = Via { protocol: Protocol::Socks5, peer };
    let request = match tokio::time::timeout(shared.head_timeout, handshake(&mut client)).await {
        Ok(Ok(Some(request))) => request,
        Ok(Ok(None)) | Err(_) => return Ok(()),
        Ok(Err(e)) => return Err(e),
    };
    let (target, port) = match request {
        Request::Connect(target, port) => (target, port),
        Request::Refuse(code) => return send_reply(&mut client, code, None).await,
    };
    let host = match target {
        Target::Ip(IpAddr::V4(ip)) => Host::Ipv4(ip),
        Target::Ip(IpAddr::V6(ip)) => Host::Ipv6(ip),
        Target::Domain(bytes) => match std::str::from_utf8(&bytes).ok().and_then(|text| Host::parse(text).ok()) {
            Some(host) => host,
            None => {
                let target = String::from_utf8_lossy(&bytes).into_owned();
                let reason = DenyReason::InvalidTarget { target: target.clone() };
                shared.dialer.report(via, target, port, Outcome::Denied(reason));
                return send_reply(&mut client, NOT_ALLOWED, None).await;
            }
        },
    };
    let mut upstream = match shared.dialer.dial(via, &host, port).await {
        Ok(upstream) => upstream,
        Err(e) => return send_reply(&mut client, failure_code(&e), None).await,
    };
    send_reply(&mut client, SUCCEEDED, upstream.local_addr().ok()).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await.map(drop)
}

/// Method negotiation and the request; `None` when the client goes away or offers no
/// acceptable method (answered already).
async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(client: &mut S) -> io::Result<Option<Request>> {
    let count = client.read_u8().await?;
    let mut methods = vec![0; usize::from(count)];
    client.read_exact(&mut methods).await?;
    if !methods.contains(&NO_AUTH) {
        client.write_all(&[VERSION, NO_ACCEPTABLE_METHOD]).await?;
        return Ok(None);
    }
    client.write_all(&[VERSION, NO_AUTH]).await?;
    let mut head = [0; 4];
    client.read_exact(&mut head).await?;
    let [version, command, _reserved, address_type] = head;
    if version != VERSION {
        return Ok(None);
    }
    let target = match address_type {
        ATYP_IPV4 => {
            let mut octets = [0; 4];
            client.read_exact(&mut octets).await?;
            Target::Ip(IpAddr::V4(Ipv4Addr::from(octets)))
        }
        ATYP_IPV6 => {
            let mut octets = [0; 16];
            client.read_exact(&mut octets).await?;
            Target::Ip(IpAddr::V6(Ipv6Addr::from(octets)))
        }
        ATYP_DOMAIN => {
            let len = client.read_u8().await?;
            let mut name = vec![0; usize::from(len)];
            client.read_exact(&mut name).await?;
            Target::Domain(name)
        }
        _ => return Ok(Some(Request::Refuse(ADDRESS_TYPE_NOT_SUPPORTED))),
    };
    let port = client.read_u16().await?;
    if command != CMD_CONNECT {
        return Ok(Some(Request::Refuse(COMMAND_NOT_SUPPORTED)));
    }
    Ok(Some(Request::Connect(target, port)))
}

/// The reply code for a failed dial.
fn failure_code(e: &DialError) -> u8 {
    match e {
        DialError::Denied(_) => NOT_ALLOWED,
        DialError::Resolve { .. } | DialError::Timeout { .. } => HOST_UNREACHABLE,
        DialError::Connect { source, .. } => match source.kind() {
            io::ErrorKind::ConnectionRefused => CONNECTION_REFUSED,
            io::ErrorKind::NetworkUnreachable => NETWORK_UNREACHABLE,
            io::ErrorKind::HostUnreachable => HOST_UNREACHABLE,
            _ => GENERAL_FAILURE,
        },
    }
}

/// Sends a reply: `VER REP RSV ATYP BND.ADDR BND.PORT` (`0.0.0.0:0` when there is no bound
/// address).
async fn send_reply<S: AsyncWrite + Unpin>(client: &mut S, code: u8, bound: Option<SocketAddr>) -> io::Result<()> {
    let bound = bound.unwrap_or_else(|| SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)));
    let mut reply = vec![VERSION, code, 0x00];
    match bound.ip() {
        IpAddr::V4(ip) => {
            reply.push(ATYP_IPV4);
            reply.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            reply.push(ATYP_IPV6);
            reply.extend_from_slice(&ip.octets());
        }
    }
    reply.extend_from_slice(&bound.port().to_be_bytes());
    client.write_all(&reply).await?;
    client.flush().await
}
