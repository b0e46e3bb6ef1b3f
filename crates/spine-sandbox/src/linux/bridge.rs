//! The proxy bridge: a loopback listener inside the sandbox whose connections are forwarded
//! to spine's proxy outside.
//!
//! Contract: [`Bridge::start`] must be called after the user namespace is entered (that
//! needs a single thread) and before the network namespace is: it starts the connector
//! thread, which stays in the machine's network namespace and outside Landlock and seccomp
//! (those apply to the thread that installs them and to what it starts later). Then
//! [`Bridge::listen`], called by the main thread inside the sandbox's network namespace,
//! binds `127.0.0.1:PORT` there and hands the listener to the connector, which accepts each
//! connection and pipes it to the upstream (TCP or unix socket) in both directions. The
//! command itself may only reach that loopback port: the namespace has nothing else.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;

use crate::error::{Layer, SandboxError};
use crate::policy::ProxyUpstream;

/// The connector thread, waiting for its listener.
pub(crate) struct Bridge {
    listener: mpsc::Sender<TcpListener>,
}

impl Bridge {
    /// Starts the connector thread for `upstream`, in the caller's network namespace.
    pub(crate) fn start(upstream: ProxyUpstream) -> Result<Self, SandboxError> {
        let (sender, receiver) = mpsc::channel::<TcpListener>();
        thread::Builder::new()
            .name("spine-sandbox-bridge".into())
            .spawn(move || {
                if let Ok(listener) = receiver.recv() {
                    serve(&listener, &upstream);
                }
            })
            .map_err(|e| SandboxError::os(Layer::ProxyBridge, "cannot start the bridge thread", e))?;
        Ok(Self { listener: sender })
    }

    /// Binds `127.0.0.1:port` in the caller's network namespace (port 0: any free port) and
    /// hands it to the connector; returns the port bound.
    pub(crate) fn listen(self, port: u16) -> Result<u16, SandboxError> {
        let fail = |e| SandboxError::os(Layer::ProxyBridge, format!("cannot listen on 127.0.0.1:{port}"), e);
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(fail)?;
        let bound = listener.local_addr().map_err(fail)?.port();
        self.listener.send(listener).map_err(|_| {
            SandboxError::os(Layer::ProxyBridge, "the bridge thread is gone", io::Error::other("closed"))
        })?;
        Ok(bound)
    }
}

fn serve(listener: &TcpListener, upstream: &ProxyUpstream) {
    static REPORTED: AtomicBool = AtomicBool::new(false);
    for incoming in listener.incoming() {
        let Ok(client) = incoming else { continue };
        let upstream = upstream.clone();
        let spawned =
            thread::Builder::new().name("spine-sandbox-pipe".into()).spawn(move || match Stream::connect(&upstream) {
                Ok(server) => pipe(Stream::Tcp(client), server),
                Err(e) => {
                    if !REPORTED.swap(true, Ordering::Relaxed) {
                        eprintln!("spine sandbox: cannot reach the proxy at {}: {e}", describe(&upstream));
                    }
                }
            });
        drop(spawned);
    }
}

fn describe(upstream: &ProxyUpstream) -> String {
    match upstream {
        ProxyUpstream::Tcp(address) => address.to_string(),
        ProxyUpstream::Unix(path) => path.display().to_string(),
    }
}

/// Copies both directions until each side closes, then closes the other's writing half.
fn pipe(client: Stream, server: Stream) {
    let (Ok(client_reader), Ok(server_reader)) = (client.try_clone(), server.try_clone()) else { return };
    let upward = thread::Builder::new().name("spine-sandbox-pipe".into()).spawn(move || copy(client_reader, server));
    copy(server_reader, client);
    if let Ok(upward) = upward {
        let _ = upward.join();
    }
}

fn copy(mut from: Stream, mut to: Stream) {
    let _ = io::copy(&mut from, &mut to);
    let _ = to.flush();
    to.shutdown_write();
}

/// One end of a forwarded connection.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn connect(upstream: &ProxyUpstream) -> io::Result<Self> {
        Ok(match upstream {
            ProxyUpstream::Tcp(address) => Self::Tcp(TcpStream::connect(address)?),
            ProxyUpstream::Unix(path) => Self::Unix(UnixStream::connect(path)?),
        })
    }

    fn try_clone(&self) -> io::Result<Self> {
        Ok(match self {
            Self::Tcp(stream) => Self::Tcp(stream.try_clone()?),
            Self::Unix(stream) => Self::Unix(stream.try_clone()?),
        })
    }

    fn shutdown_write(&self) {
        let _ = match self {
            Self::Tcp(stream) => stream.shutdown(Shutdown::Write),
            Self::Unix(stream) => stream.shutdown(Shutdown::Write),
        };
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(stream) => stream.read(buf),
            Self::Unix(stream) => stream.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(stream) => stream.write(buf),
            Self::Unix(stream) => stream.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Tcp(stream) => stream.flush(),
            Self::Unix(stream) => stream.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_is_piped_to_a_unix_upstream_and_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let socket = dir.path().join("proxy.sock");
        let upstream = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
        let echo = thread::spawn(move || {
            let (mut stream, _) = upstream.accept().expect("accept");
            let mut request = [0u8; 5];
            stream.read_exact(&mut request).expect("read");
            stream.write_all(&request).expect("write");
        });
        let port = Bridge::start(ProxyUpstream::Unix(socket)).and_then(|b| b.listen(0)).expect("bridge");
        let mut client = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connect");
        client.write_all(b"hello").expect("write");
        let mut reply = [0u8; 5];
        client.read_exact(&mut reply).expect("read");
        assert_eq!(&reply, b"hello");
        echo.join().expect("echo");
    }
}
