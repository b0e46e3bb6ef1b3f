//! The proxy's bounds: head time and size limits, the connection limit, loopback-only TCP.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use spine_tools::proxy::{Listen, PrivateNetworks, Proxy, ProxyConfig, ProxyError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{allowing, assert_echoes, connect, echo_server, read_head, start_with};

#[tokio::test]
async fn a_client_that_sends_no_request_head_in_time_is_disconnected() {
    let proxy = start_with(allowing(&["allowed.test"]), PrivateNetworks::Allow, |c| {
        c.head_timeout = Duration::from_millis(300);
    })
    .await;
    for partial in [&b""[..], b"CONNECT allowed.test:1 HTTP/1.1\r\n", &[0x05]] {
        let mut stream = TcpStream::connect(proxy.addr).await.expect("connect");
        stream.write_all(partial).await.expect("send");
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "{partial:?}: closed by the proxy");
    }
    assert!(proxy.events().is_empty());
}

#[tokio::test]
async fn a_request_head_over_the_size_limit_is_refused_with_431() {
    let proxy = start_with(allowing(&["allowed.test"]), PrivateNetworks::Allow, |c| c.max_head_bytes = 16 * 1024).await;
    let mut stream = TcpStream::connect(proxy.addr).await.expect("connect");
    let filler = "a".repeat(1000);
    let mut head = "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n".to_owned();
    for i in 0..40 {
        head.push_str(&format!("X-Filler-{i}: {filler}\r\n"));
    }
    head.push_str("\r\n");
    // The proxy may stop reading before the whole head is written.
    let _ = stream.write_all(head.as_bytes()).await;
    let status = read_head(&mut stream).await;
    assert!(status.starts_with("HTTP/1.1 431"), "{status}");
    assert!(proxy.events().is_empty(), "nothing was decided");
}

#[tokio::test]
async fn clients_beyond_the_connection_limit_wait_for_a_free_slot() {
    let echo = echo_server().await;
    let proxy = start_with(allowing(&["allowed.test"]), PrivateNetworks::Allow, |c| c.max_connections = 1).await;
    let target = format!("allowed.test:{echo}");
    let (mut first, head) = connect(proxy.addr, &target).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");

    let mut second = TcpStream::connect(proxy.addr).await.expect("the backlog accepts");
    second.write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes()).await.expect("send");
    let waiting = tokio::time::timeout(Duration::from_millis(300), second.read_u8()).await;
    assert!(waiting.is_err(), "the second client waits while the tunnel holds the only slot");

    assert_echoes(&mut first).await;
    drop(first);
    let head = read_head(&mut second).await;
    assert!(head.starts_with("HTTP/1.1 200"), "served once the tunnel closed: {head}");
    assert_echoes(&mut second).await;
}

#[tokio::test]
async fn tcp_listeners_must_be_on_loopback() {
    let config = ProxyConfig::new(Listen::Tcp(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0))));
    let refused = Proxy::new(config, allowing(&[])).start().await.expect_err("0.0.0.0 is refused");
    assert!(matches!(refused, ProxyError::NotLoopback(_)), "{refused}");
}

#[tokio::test]
async fn dropping_the_handle_stops_the_proxy() {
    let proxy = start_with(allowing(&[]), PrivateNetworks::Refuse, |_| {}).await;
    let addr = proxy.addr;
    drop(proxy);
    // The accept loop ends on its next turn; the port then refuses connections.
    let mut refused = false;
    for _ in 0..100 {
        if TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the proxy stopped listening");
}
