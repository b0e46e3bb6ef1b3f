//! Network off, the proxy bridge, and socket families.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};
use std::thread;

use spine_sandbox::{Network, Policy, ProxyUpstream};

use crate::common::{Fixture, describe, python};

/// A python one-liner connecting to 127.0.0.1:PORT.
fn connect_script(python: &str, port: u16) -> String {
    format!("{python} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\"")
}

#[test]
fn network_off_refuses_a_loopback_server_outside() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    let server = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = server.local_addr().expect("addr").port();
    f.denied_then_allowed(&f.policy(), &connect_script(python, port), "PermissionError");
}

#[test]
fn network_off_with_local_binding_has_only_a_private_loopback() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    let server = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = server.local_addr().expect("addr").port();
    let policy = spine_sandbox::Policy { allow_local_binding: true, ..f.policy() };
    // The machine's loopback is not there: the connection is refused.
    f.denied_then_allowed(&policy, &connect_script(python, port), "ConnectionRefusedError");
    // Its own loopback works.
    let own = format!(
        "{python} -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); \
         socket.create_connection(s.getsockname(), timeout=5).close()\""
    );
    let out = f.sh(Some(&policy), &own);
    assert!(out.status.success(), "{}", describe(&out));
}

#[test]
fn udp_socket_is_denied_with_network_off() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    let script = format!(
        "{python} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 9))\""
    );
    f.denied_then_allowed(&f.policy(), &script, "PermissionError");
}

#[test]
fn raw_socket_is_denied_even_with_full_network() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: raw sockets need root for the bare run");
        return;
    }
    let script =
        format!("{python} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)\"");
    let policy = spine_sandbox::Policy { network: Network::Full, ..f.policy() };
    f.denied_then_allowed(&policy, &script, "PermissionError");
}

#[test]
fn unix_socket_is_denied_unless_allowed() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    let path = f.tmp.join("agent.sock");
    let listener = UnixListener::bind(&path).expect("bind");
    let script =
        format!("{python} -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}')\"", path.display());
    f.denied_then_allowed(&f.policy(), &script, "PermissionError");
    let all = spine_sandbox::Policy { allow_all_unix_sockets: true, ..f.policy() };
    let out = f.sh(Some(&all), &script);
    assert!(out.status.success(), "{}", describe(&out));
    drop(listener);
}

/// Whether Landlock scopes abstract unix sockets here (ABI 6): then a command with the
/// network off and no socket allowed gets no network namespace.
fn scoped() -> bool {
    spine_sandbox::probe().landlock_abi >= 6
}

#[test]
fn a_network_namespace_is_made_only_when_seccomp_alone_cannot_isolate() {
    let f = Fixture::new();
    let namespace = |policy: Option<&Policy>| {
        let out = f.sh(policy, "readlink /proc/self/ns/net");
        assert!(out.status.success(), "{}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let machine = namespace(None);
    assert_eq!(namespace(Some(&f.policy())) == machine, scoped(), "network off, no socket allowed");
    let needing = [
        Policy { allow_local_binding: true, ..f.policy() },
        Policy { allow_all_unix_sockets: true, ..f.policy() },
        Policy { allow_unix_sockets: vec![f.tmp.join("x.sock")], best_effort: true, ..f.policy() },
    ];
    for policy in &needing {
        assert_ne!(namespace(Some(policy)), machine, "{policy:?}");
    }
    let full = Policy { network: Network::Full, ..f.policy() };
    assert_eq!(namespace(Some(&full)), machine);
}

#[test]
fn network_off_reaches_no_abstract_unix_socket_of_the_machine() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    let name = format!("spine-sandbox-test-{}", std::process::id());
    let address = SocketAddr::from_abstract_name(name.as_bytes()).expect("name");
    let _machine = UnixDatagram::bind_addr(&address).expect("bind");
    let pair = format!("{python} -c \"import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); ");
    // Landlock's scope refuses the send (EPERM); without it, the namespace hides the name.
    let send = format!("{pair}a.sendto(b'x', chr(0) + '{name}')\"");
    f.denied_then_allowed(&f.policy(), &send, "Error");
    if !scoped() {
        eprintln!("skipped: without Landlock scopes the command has a network namespace of its own");
        return;
    }
    // Without a namespace of its own, the command may not take a name of the machine's
    // (a pair's socket could, then receive what is sent to it) nor read its interfaces.
    let squat = format!("{pair}a.bind(chr(0) + '{name}-taken')\"");
    f.denied_then_allowed(&f.policy(), &squat, "PermissionError");
    let netlink = format!("{python} -c \"import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\"");
    f.denied_then_allowed(&f.policy(), &netlink, "PermissionError");
    // A pair of sockets still works: pipes between a command's own processes.
    let talk = format!("{pair}a.send(b'ok'); print(b.recv(2).decode())\"");
    let out = f.sh(Some(&f.policy()), &talk);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n", "{}", describe(&out));
}

/// Serves one canned HTTP response per connection on `listener`.
fn serve_unix(listener: UnixListener) {
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nproxied");
        }
    });
}

fn fetch_through_proxy_script(python: &str) -> String {
    format!(
        "{python} -c \"import os, urllib.parse, socket; u=urllib.parse.urlparse(os.environ['HTTPS_PROXY']); \
         s=socket.create_connection((u.hostname, u.port), timeout=5); \
         s.sendall(b'GET http://example.com/ HTTP/1.0\\r\\n\\r\\n'); print(s.recv(1024).decode())\""
    )
}

#[test]
fn proxy_network_reaches_only_the_proxy_through_a_unix_socket() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    let socket = f.tmp.join("proxy.sock");
    serve_unix(UnixListener::bind(&socket).expect("bind"));
    let policy = spine_sandbox::Policy {
        network: Network::Proxy { http: ProxyUpstream::Unix(socket), port: 3128 },
        ..f.policy()
    };
    let out = f.sh(Some(&policy), &fetch_through_proxy_script(python));
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("200 OK") && stdout.contains("proxied"), "{}", describe(&out));

    // Any other port: Landlock refuses the connection before the namespace could (where
    // nothing listens anyway).
    let direct = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = direct.local_addr().expect("addr").port();
    f.denied_then_allowed(&policy, &connect_script(python, port), "PermissionError");
}

#[test]
fn proxy_network_reaches_a_tcp_proxy_outside() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    let upstream = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = upstream.local_addr().expect("addr");
    thread::spawn(move || {
        for stream in upstream.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(b"HTTP/1.0 200 OK\r\n\r\nvia-tcp");
        }
    });
    let policy = spine_sandbox::Policy {
        network: Network::Proxy { http: ProxyUpstream::Tcp(address), port: 8080 },
        ..f.policy()
    };
    let out = f.sh(Some(&policy), &fetch_through_proxy_script(python));
    assert!(out.status.success(), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("via-tcp"), "{}", describe(&out));
}
