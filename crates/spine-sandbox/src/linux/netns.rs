//! A network namespace of the calling thread's own, with its loopback interface up.
//!
//! Contract: [`enter`] moves the calling thread (only it: namespaces are per thread) into a
//! new network namespace owned by the helper's user namespace, where only a loopback
//! interface exists. When asked (the command may use IP: local binding, the proxy bridge) it
//! brings `lo` up with one rtnetlink request, so `127.0.0.1` works inside; otherwise `lo`
//! stays down. Threads started earlier (the proxy bridge's connector) stay in the machine's
//! namespace.

use std::io;

use nix::sched::{CloneFlags, unshare};
use rustix::net::netlink::SocketAddrNetlink;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};

use crate::error::{Layer, SandboxError};
use crate::timing::Timing;

/// Enters a new network namespace and brings its loopback interface up.
pub(crate) fn enter(loopback: bool, timing: &mut Timing) -> Result<(), SandboxError> {
    unshare(CloneFlags::CLONE_NEWNET)
        .map_err(|e| SandboxError::os(Layer::NetworkNamespace, "cannot create a network namespace", e))?;
    timing.mark("netns.unshare");
    if loopback {
        loopback_up()
            .map_err(|e| SandboxError::os(Layer::NetworkNamespace, "cannot bring the loopback interface up", e))?;
        timing.mark("netns.loopback");
    }
    Ok(())
}

const RTM_NEWLINK: u16 = 16;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;
const IFF_UP: u32 = 1;
/// The loopback interface is the first one registered in every network namespace.
const LOOPBACK_INDEX: i32 = 1;

/// `RTM_NEWLINK` for interface 1 with `IFF_UP` set: a `nlmsghdr` then an `ifinfomsg`.
fn link_up_request(index: i32) -> [u8; 32] {
    let mut message = [0u8; 32];
    message[0..4].copy_from_slice(&32u32.to_ne_bytes()); // nlmsg_len
    message[4..6].copy_from_slice(&RTM_NEWLINK.to_ne_bytes()); // nlmsg_type
    message[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes()); // nlmsg_flags
    message[8..12].copy_from_slice(&1u32.to_ne_bytes()); // nlmsg_seq; nlmsg_pid stays 0
    // ifinfomsg: family AF_UNSPEC, pad, type 0, then index, flags, change.
    message[20..24].copy_from_slice(&index.to_ne_bytes());
    message[24..28].copy_from_slice(&IFF_UP.to_ne_bytes());
    message[28..32].copy_from_slice(&IFF_UP.to_ne_bytes());
    message
}

fn loopback_up() -> io::Result<()> {
    let socket = rustix::net::socket(AddressFamily::NETLINK, SocketType::RAW, None)?; // protocol 0: NETLINK_ROUTE
    let kernel = SocketAddrNetlink::new(0, 0);
    rustix::net::sendto(&socket, &link_up_request(LOOPBACK_INDEX), SendFlags::empty(), &kernel)?;
    let mut reply = [0u8; 256];
    let (read, _) = rustix::net::recv(&socket, &mut reply[..], RecvFlags::empty())?;
    ack_status(&reply[..read])
}

/// The error code of an `NLMSG_ERROR` acknowledgement (0 means success).
fn ack_status(reply: &[u8]) -> io::Result<()> {
    let field = |range: std::ops::Range<usize>| reply.get(range).ok_or_else(|| io::Error::other("short netlink reply"));
    let kind = u16::from_ne_bytes(field(4..6)?.try_into().map_err(io::Error::other)?);
    if kind != NLMSG_ERROR {
        return Err(io::Error::other(format!("unexpected netlink reply type {kind}")));
    }
    let code = i32::from_ne_bytes(field(16..20)?.try_into().map_err(io::Error::other)?);
    if code == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(-code)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_a_well_formed_link_up() {
        let request = link_up_request(1);
        assert_eq!(u32::from_ne_bytes(request[0..4].try_into().expect("4")), 32);
        assert_eq!(u16::from_ne_bytes(request[4..6].try_into().expect("2")), RTM_NEWLINK);
        assert_eq!(i32::from_ne_bytes(request[20..24].try_into().expect("4")), 1);
    }

    #[test]
    fn acknowledgements_are_read() {
        let mut ack = [0u8; 36];
        ack[4..6].copy_from_slice(&NLMSG_ERROR.to_ne_bytes());
        assert!(ack_status(&ack).is_ok());
        ack[16..20].copy_from_slice(&(-1i32).to_ne_bytes());
        assert_eq!(ack_status(&ack).expect_err("EPERM").raw_os_error(), Some(1));
        assert!(ack_status(&ack[..8]).is_err());
    }
}
