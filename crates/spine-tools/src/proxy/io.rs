//! The proxy's listeners and client streams: a unix socket or loopback TCP, and a stream that
//! gives back the byte read to tell SOCKS5 from HTTP.
//!
//! Contract: [`Listener::bind`] refuses a TCP address that is not loopback (the proxy is for
//! this machine's sandboxes only) and makes a unix socket readable and writable by its owner
//! only (the directory holding it should be private too). [`Prefixed`] yields its one byte,
//! then reads from the inner stream; writes pass straight through.

use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};

/// Where the proxy listens (the caller's choice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A unix socket at this path (which must not exist yet).
    Unix(PathBuf),
    /// A loopback TCP address (`127.0.0.1:0` picks a free port).
    Tcp(SocketAddr),
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// Not a loopback address.
    #[error("the sandbox proxy listens on loopback only; {0} is not a loopback address")]
    NotLoopback(SocketAddr),
    /// Started outside a tokio runtime.
    #[error("the sandbox proxy must be started within a tokio runtime")]
    NoRuntime,
    /// Binding failed.
    #[error("cannot listen on {listen:?}: {source}")]
    Bind {
        /// Where.
        listen: Listen,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// A bound listener.
pub(crate) enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

/// An accepted client.
pub(crate) enum Client {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Listener {
    /// Binds `listen`; must be called within a tokio runtime (checked by the caller).
    pub(crate) fn bind(listen: &Listen) -> Result<(Listener, Listen), ProxyError> {
        let fail = |source| ProxyError::Bind { listen: listen.clone(), source };
        match listen {
            Listen::Tcp(address) => {
                if !address.ip().is_loopback() {
                    return Err(ProxyError::NotLoopback(*address));
                }
                let listener = std::net::TcpListener::bind(address).map_err(fail)?;
                listener.set_nonblocking(true).map_err(fail)?;
                let listener = TcpListener::from_std(listener).map_err(fail)?;
                let bound = listener.local_addr().map_err(fail)?;
                Ok((Listener::Tcp(listener), Listen::Tcp(bound)))
            }
            Listen::Unix(path) => {
                let listener = UnixListener::bind(path).map_err(fail)?;
                if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
                    remove_socket(path);
                    return Err(fail(e));
                }
                Ok((Listener::Unix(listener), Listen::Unix(path.clone())))
            }
        }
    }

    pub(crate) async fn accept(&self) -> io::Result<Client> {
        match self {
            Listener::Unix(listener) => Ok(Client::Unix(listener.accept().await?.0)),
            Listener::Tcp(listener) => {
                let (stream, _) = listener.accept().await?;
                let _ = stream.set_nodelay(true);
                Ok(Client::Tcp(stream))
            }
        }
    }
}

/// Removes the proxy's socket file (best effort: it may be gone already).
pub(crate) fn remove_socket(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// A stream whose first byte was read already and is given back first.
pub(crate) struct Prefixed<S> {
    first: Option<u8>,
    inner: S,
}

impl<S> Prefixed<S> {
    pub(crate) fn new(first: u8, inner: S) -> Self {
        Prefixed { first: Some(first), inner }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if buf.remaining() > 0
            && let Some(byte) = self.first.take()
        {
            buf.put_slice(&[byte]);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
