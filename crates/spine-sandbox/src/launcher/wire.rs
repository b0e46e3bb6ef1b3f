//! The launcher's messages, one per `SOCK_SEQPACKET` datagram, with the command's three
//! standard descriptors passed alongside a spawn request (`SCM_RIGHTS`).
//!
//! Contract: a spawn request is `spawn`, its id, the working directory, the number of
//! arguments, the program, the arguments and the environment entries (`NAME=VALUE`), each
//! field ended by a NUL byte — no field of a command line, an environment or a path can hold
//! one, so the encoding is exact. The launcher answers `ready` once confined, then per request
//! `pid ID PID` (started), `failed ID CODE` (not started: its line was written to the
//! command's stderr) and, for a started one, `exit ID RAW` (the wait status) when it ends. A
//! message that does not decode is an error naming what is wrong; a truncated one is refused.

use std::ffi::{OsStr, OsString};
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags, SendAncillaryBuffer, SendAncillaryMessage,
    SendFlags,
};

/// The largest message (a command line and its environment).
pub(crate) const MAX_MESSAGE: usize = 1 << 20;

/// One command to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    /// The caller's id for the request, repeated in the answers.
    pub id: u64,
    /// The working directory.
    pub cwd: OsString,
    /// The program (found on the `PATH` of `env` when it has no slash).
    pub program: OsString,
    /// The arguments after the program.
    pub args: Vec<OsString>,
    /// The whole environment of the command.
    pub env: Vec<(OsString, OsString)>,
}

impl SpawnRequest {
    /// The request's bytes; `None` when a field holds a NUL byte (it cannot reach a program).
    pub(crate) fn encode(&self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut field = |bytes: &[u8]| -> Option<()> {
            if bytes.contains(&0) {
                return None;
            }
            out.extend_from_slice(bytes);
            out.push(0);
            Some(())
        };
        field(b"spawn")?;
        field(self.id.to_string().as_bytes())?;
        field(self.cwd.as_bytes())?;
        field(self.args.len().to_string().as_bytes())?;
        field(self.program.as_bytes())?;
        for arg in &self.args {
            field(arg.as_bytes())?;
        }
        for (name, value) in &self.env {
            if name.is_empty() || name.as_bytes().contains(&b'=') {
                return None;
            }
            field(&[name.as_bytes(), b"=", value.as_bytes()].concat())?;
        }
        Some(out)
    }

    /// Reads a request from its bytes.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, String> {
        let body = bytes.strip_suffix(&[0]).ok_or("a spawn request must end with a NUL byte")?;
        let mut fields = body.split(|b| *b == 0);
        if fields.next() != Some(b"spawn".as_slice()) {
            return Err("not a spawn request".to_owned());
        }
        let id = number(fields.next(), "id")?;
        let cwd = OsString::from_vec(fields.next().ok_or("missing the working directory")?.to_vec());
        let count = usize::try_from(number(fields.next(), "argument count")?).map_err(|e| e.to_string())?;
        let program = OsString::from_vec(fields.next().ok_or("missing the program")?.to_vec());
        let mut args = Vec::new();
        for _ in 0..count {
            args.push(OsString::from_vec(fields.next().ok_or("fewer arguments than announced")?.to_vec()));
        }
        let mut env = Vec::new();
        for entry in fields {
            let at = entry.iter().position(|b| *b == b'=').ok_or("an environment entry without `=`")?;
            env.push((OsStr::from_bytes(&entry[..at]).to_owned(), OsStr::from_bytes(&entry[at + 1..]).to_owned()));
        }
        Ok(SpawnRequest { id, cwd, program, args, env })
    }
}

fn number(field: Option<&[u8]>, what: &str) -> Result<u64, String> {
    let text = std::str::from_utf8(field.ok_or(format!("missing the {what}"))?).map_err(|e| e.to_string())?;
    text.parse().map_err(|e| format!("bad {what} {text:?}: {e}"))
}

/// An answer of the launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Confined, waiting for requests.
    Ready,
    /// Request `id` started as process `pid`.
    Started { id: u64, pid: u32 },
    /// Request `id` did not start; the command's status is `code`.
    Failed { id: u64, code: i32 },
    /// The command of request `id` ended with the wait status `raw`.
    Exited { id: u64, raw: i32 },
}

impl Answer {
    pub(crate) fn encode(&self) -> Vec<u8> {
        match self {
            Answer::Ready => "ready".to_owned(),
            Answer::Started { id, pid } => format!("pid {id} {pid}"),
            Answer::Failed { id, code } => format!("failed {id} {code}"),
            Answer::Exited { id, raw } => format!("exit {id} {raw}"),
        }
        .into_bytes()
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("an answer that is not UTF-8: {e}"))?;
        let words: Vec<&str> = text.split(' ').collect();
        let int = |i: usize| -> Result<i64, String> {
            words
                .get(i)
                .ok_or(format!("{text:?}: missing a field"))?
                .parse::<i64>()
                .map_err(|e| format!("{text:?}: {e}"))
        };
        let id = || int(1).and_then(|n| u64::try_from(n).map_err(|e| e.to_string()));
        let small = |i: usize| int(i).and_then(|n| i32::try_from(n).map_err(|e| e.to_string()));
        match words.first().copied() {
            Some("ready") if words.len() == 1 => Ok(Answer::Ready),
            Some("pid") => Ok(Answer::Started { id: id()?, pid: u32::try_from(int(2)?).map_err(|e| e.to_string())? }),
            Some("failed") => Ok(Answer::Failed { id: id()?, code: small(2)? }),
            Some("exit") => Ok(Answer::Exited { id: id()?, raw: small(2)? }),
            _ => Err(format!("unknown answer {text:?}")),
        }
    }
}

/// Sends one message with `fds` attached.
pub(crate) fn send(socket: BorrowedFd<'_>, bytes: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::other("too many descriptors for one message"));
    }
    let sent = rustix::net::sendmsg(socket, &[IoSlice::new(bytes)], &mut control, SendFlags::NOSIGNAL)?;
    match sent == bytes.len() {
        true => Ok(()),
        false => Err(io::Error::other("the message was sent in part")),
    }
}

/// Receives one message and the descriptors attached to it into `buffer` (at least
/// [`MAX_MESSAGE`] long); `None` once the other end is closed.
pub(crate) fn recv(socket: BorrowedFd<'_>, buffer: &mut [u8]) -> io::Result<Option<(usize, Vec<OwnedFd>)>> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let received = loop {
        match rustix::net::recvmsg(socket, &mut [IoSliceMut::new(buffer)], &mut control, RecvFlags::CMSG_CLOEXEC) {
            Err(rustix::io::Errno::INTR) => continue,
            other => break other?,
        }
    };
    let fds: Vec<OwnedFd> = control
        .drain()
        .filter_map(|message| match message {
            RecvAncillaryMessage::ScmRights(fds) => Some(fds),
            _ => None,
        })
        .flatten()
        .collect();
    if received.flags.intersects(ReturnFlags::TRUNC | ReturnFlags::CTRUNC) {
        return Err(io::Error::other("a message was truncated"));
    }
    if received.bytes == 0 && fds.is_empty() {
        return Ok(None);
    }
    Ok(Some((received.bytes, fds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SpawnRequest {
        SpawnRequest {
            id: 7,
            cwd: "/work/repo".into(),
            program: "bash".into(),
            args: vec!["-c".into(), "echo a=b; printf '%s' \"$HOME\"".into(), "".into()],
            env: vec![
                ("PATH".into(), "/usr/bin:/bin".into()),
                ("EMPTY".into(), "".into()),
                ("EQ".into(), "a=b".into()),
            ],
        }
    }

    #[test]
    fn a_spawn_request_round_trips_with_empty_fields_and_equals_signs() {
        let bytes = sample().encode().expect("encodes");
        assert_eq!(SpawnRequest::decode(&bytes), Ok(sample()));
        let none = SpawnRequest { args: Vec::new(), env: Vec::new(), ..sample() };
        assert_eq!(SpawnRequest::decode(&none.encode().expect("encodes")), Ok(none));
    }

    #[test]
    fn a_field_with_a_nul_byte_or_a_name_with_equals_is_not_encoded() {
        assert_eq!(SpawnRequest { args: vec!["a\0b".into()], ..sample() }.encode(), None);
        assert_eq!(SpawnRequest { env: vec![("A=B".into(), "c".into())], ..sample() }.encode(), None);
    }

    #[test]
    fn malformed_requests_and_answers_are_errors_that_say_why() {
        let bytes = sample().encode().expect("encodes");
        assert!(SpawnRequest::decode(&bytes[..bytes.len() - 1]).expect_err("an error").contains("NUL"));
        let short = b"spawn\x001\x00/\x003\x00bash\x00-c\x00".to_vec();
        assert!(SpawnRequest::decode(&short).expect_err("an error").contains("fewer arguments"));
        assert!(SpawnRequest::decode(b"spawn\x00x\x00").expect_err("an error").contains("bad id"));
        assert!(Answer::decode(b"pid 1").is_err());
        assert!(Answer::decode(b"bogus").expect_err("an error").contains("unknown answer"));
    }

    #[test]
    fn answers_round_trip() {
        for answer in [
            Answer::Ready,
            Answer::Started { id: 3, pid: 4242 },
            Answer::Failed { id: 3, code: 127 },
            Answer::Exited { id: 3, raw: 9 },
        ] {
            assert_eq!(Answer::decode(&answer.encode()), Ok(answer));
        }
    }
}
