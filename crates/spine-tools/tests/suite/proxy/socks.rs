//! SOCKS5 on the proxy's one listener (the first byte `0x05` tells it from HTTP): CONNECT by
//! domain, IPv4 and IPv6 under the same gate as HTTP; BIND and UDP ASSOCIATE refused.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use spine_tools::proxy::{DenyReason, Outcome, PrivateNetworks, Protocol};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{allowing, assert_echoes, echo_server, start};

const NOT_ALLOWED: u8 = 0x02;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;

/// The destination of a SOCKS5 request.
enum To<'a> {
    Domain(&'a str),
    V4(Ipv4Addr),
    V6(Ipv6Addr),
}

/// Greets with "no authentication" and sends `command` to `to:port`; returns the stream and
/// the reply code.
async fn socks(proxy: SocketAddr, command: u8, to: To<'_>, port: u16) -> (TcpStream, u8) {
    let mut stream = TcpStream::connect(proxy).await.expect("connect to proxy");
    stream.write_all(&[0x05, 0x01, 0x00]).await.expect("greeting");
    let mut choice = [0; 2];
    stream.read_exact(&mut choice).await.expect("method");
    assert_eq!(choice, [0x05, 0x00], "no authentication is chosen");
    let mut request = vec![0x05, command, 0x00];
    match to {
        To::Domain(name) => {
            request.push(0x03);
            request.push(u8::try_from(name.len()).expect("short name"));
            request.extend_from_slice(name.as_bytes());
        }
        To::V4(ip) => {
            request.push(0x01);
            request.extend_from_slice(&ip.octets());
        }
        To::V6(ip) => {
            request.push(0x04);
            request.extend_from_slice(&ip.octets());
        }
    }
    request.extend_from_slice(&port.to_be_bytes());
    stream.write_all(&request).await.expect("request");
    let mut head = [0; 4];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut head)).await.expect("reply").expect("read");
    assert_eq!([head[0], head[2]], [0x05, 0x00], "version and reserved byte");
    let address_len = match head[3] {
        0x01 => 4,
        0x04 => 16,
        other => panic!("unexpected bound address type {other}"),
    };
    let mut bound = vec![0; address_len + 2];
    stream.read_exact(&mut bound).await.expect("bound address");
    (stream, head[1])
}

#[tokio::test]
async fn socks5_connect_by_domain_tunnels_to_allowed_names_and_refuses_others() {
    let echo = echo_server().await;
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    let (mut tunnel, code) = socks(proxy.addr, 0x01, To::Domain("allowed.test"), echo).await;
    assert_eq!(code, 0x00);
    assert_echoes(&mut tunnel).await;
    let (_, code) = socks(proxy.addr, 0x01, To::Domain("other.test"), echo).await;
    assert_eq!(code, NOT_ALLOWED, "connection not allowed by ruleset");
    let events = proxy.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|e| e.protocol == Protocol::Socks5));
    assert!(matches!(events[0].outcome, Outcome::Allowed { .. }), "{events:?}");
    assert_eq!(events[1].outcome, Outcome::Denied(DenyReason::NotAllowed { host: "other.test".into() }));
    assert_eq!(proxy.resolved(), ["allowed.test"], "only the allowed name is resolved");
}

#[tokio::test]
async fn socks5_connect_by_ipv4_is_checked_as_an_address() {
    let echo = echo_server().await;
    let proxy = start(allowing(&["127.0.0.1"]), PrivateNetworks::Allow).await;
    let (mut tunnel, code) = socks(proxy.addr, 0x01, To::V4(Ipv4Addr::LOCALHOST), echo).await;
    assert_eq!(code, 0x00);
    assert_echoes(&mut tunnel).await;
    let (_, code) = socks(proxy.addr, 0x01, To::V4(Ipv4Addr::new(127, 0, 0, 2)), echo).await;
    assert_eq!(code, NOT_ALLOWED, "another address is not listed");
    assert!(proxy.resolved().is_empty(), "addresses are never resolved");

    // The default refuses the private address even though the list names it.
    let strict = start(allowing(&["127.0.0.1", "[::1]"]), PrivateNetworks::Refuse).await;
    let (_, code) = socks(strict.addr, 0x01, To::V4(Ipv4Addr::LOCALHOST), echo).await;
    assert_eq!(code, NOT_ALLOWED);
    let (_, code) = socks(strict.addr, 0x01, To::V6(Ipv6Addr::LOCALHOST), echo).await;
    assert_eq!(code, NOT_ALLOWED);
    // A domain that is an address in disguise is the address.
    let (_, code) = socks(strict.addr, 0x01, To::Domain("127.0.0.1"), echo).await;
    assert_eq!(code, NOT_ALLOWED);
    let events = strict.events();
    assert!(
        events.iter().all(|e| matches!(e.outcome, Outcome::Denied(DenyReason::PrivateAddress { .. }))),
        "{events:?}"
    );
}

#[tokio::test]
async fn socks5_bind_and_udp_associate_are_refused_as_unsupported_commands() {
    let echo = echo_server().await;
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    for command in [0x02, 0x03] {
        let (_, code) = socks(proxy.addr, command, To::Domain("allowed.test"), echo).await;
        assert_eq!(code, COMMAND_NOT_SUPPORTED, "command {command}");
    }
    assert!(proxy.events().is_empty(), "no destination was decided");
}

#[tokio::test]
async fn socks5_clients_offering_only_authentication_are_refused() {
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    let mut stream = TcpStream::connect(proxy.addr).await.expect("connect");
    stream.write_all(&[0x05, 0x01, 0x02]).await.expect("greeting with user/password only");
    let mut reply = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply)).await.expect("eof").expect("read");
    assert_eq!(reply, [0x05, 0xFF], "no acceptable method, then closed");
}

#[tokio::test]
async fn socks5_unparsable_domains_are_refused_as_invalid_targets() {
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    let (_, code) = socks(proxy.addr, 0x01, To::Domain("allowed.test/x@y"), 80).await;
    assert_eq!(code, NOT_ALLOWED);
    let events = proxy.events();
    assert!(matches!(&events[..], [e] if matches!(e.outcome, Outcome::Denied(DenyReason::InvalidTarget { .. }))));
}
