//! Pseudo-terminals for command runs started with `pty: true`.
//!
//! Contract:
//! - [`open`] makes a pty pair (120×40) whose slave is set for a program talking to a model, not
//!   a person: canonical mode stays on (line editing; `^D` at the start of a line is end of
//!   input), **echo is off** (the model knows what it wrote) and **output newlines are not
//!   translated** (`\n` stays `\n`, no `\r\n`). The slave becomes the child's stdin, stdout and
//!   stderr, so both output streams arrive as one (counted as stdout).
//! - The master is non-blocking and registered with tokio as a reader and a writer
//!   ([`Pty::reader`], [`Pty::writer`]); reading ends with an `EIO` error once the child and
//!   everything it started are gone, which the reader treats as end of output.
//! - No controlling terminal is set up: that needs `setsid` in the child before `exec`, which
//!   conflicts with the child leading its own process group (how runs are killed) and needs
//!   `unsafe` code. Programs see a terminal on their standard streams (`isatty` is true) but
//!   `/dev/tty` is not theirs, and `^C` written to the master sends no signal: stop a run with
//!   `command_run_terminate`.

use std::io;
use std::os::fd::OwnedFd;

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::pty::{Winsize, openpty};
use nix::sys::termios::{LocalFlags, OutputFlags, SetArg, Termios, tcgetattr, tcsetattr};
use tokio::net::unix::pipe;

/// A fresh pty: the slave for the child, the master (as a reader and a writer) for us.
pub(crate) struct Pty {
    /// The child's end.
    pub slave: OwnedFd,
    /// Our end, for reading what the child writes. Linux reports `EIO` once every holder of
    /// the slave is gone: the end of output.
    pub reader: pipe::Receiver,
    /// Our end (a duplicate), for writing the child's input.
    pub writer: pipe::Sender,
}

/// Opens a pty pair configured as described in the module documentation. Must run inside a
/// tokio runtime (the master is registered with its reactor).
pub(crate) fn open() -> io::Result<Pty> {
    let size = Winsize { ws_row: 40, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0 };
    let pair = openpty(&size, None::<&Termios>).map_err(io::Error::from)?;
    let mut termios = tcgetattr(&pair.slave).map_err(io::Error::from)?;
    termios.local_flags.remove(LocalFlags::ECHO | LocalFlags::ECHOE | LocalFlags::ECHOK | LocalFlags::ECHONL);
    termios.output_flags.remove(OutputFlags::ONLCR);
    tcsetattr(&pair.slave, SetArg::TCSANOW, &termios).map_err(io::Error::from)?;
    let flags = fcntl(&pair.master, FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(&pair.master, FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    let write_end = pair.master.try_clone()?;
    // tokio's pipe halves work on any non-blocking descriptor that polls like a pipe; a pty
    // master does.
    Ok(Pty {
        slave: pair.slave,
        reader: pipe::Receiver::from_owned_fd_unchecked(pair.master)?,
        writer: pipe::Sender::from_owned_fd_unchecked(write_end)?,
    })
}
