//! The signals that cancel a `spine run`: SIGINT (Ctrl-C), SIGTERM (`timeout`, systemd,
//! `docker stop`, CI cancellation) and SIGHUP (a closed terminal). Each arrival yields the exit
//! status the run ends with: 128 + the signal's number (130, 143, 129).

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Listens for the cancelling signals.
pub struct Cancellers {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Cancellers {
    /// Installs the handlers (from then on these signals no longer kill the process).
    pub fn install() -> std::io::Result<Self> {
        Ok(Cancellers {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal's exit status, or `None` when no more signals can arrive.
    pub async fn next(&mut self) -> Option<u8> {
        tokio::select! {
            s = self.interrupt.recv() => s.map(|()| 130),
            s = self.terminate.recv() => s.map(|()| 143),
            s = self.hangup.recv() => s.map(|()| 129),
        }
    }
}
