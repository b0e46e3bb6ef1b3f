//! The shutdown signal (mini-redis style): one [`ShutdownTrigger`] fires it, any number of
//! [`Shutdown`] listeners observe it. The CLI fires it on SIGTERM or Ctrl-C; tests fire it by
//! hand.
//!
//! Dependencies: none within the crate.

use tokio::sync::watch;

/// Fires the shutdown.
#[derive(Debug, Clone)]
pub struct ShutdownTrigger(watch::Sender<bool>);

/// Observes the shutdown.
#[derive(Debug, Clone)]
pub struct Shutdown(watch::Receiver<bool>);

/// A new trigger and its listener.
pub fn channel() -> (ShutdownTrigger, Shutdown) {
    let (tx, rx) = watch::channel(false);
    (ShutdownTrigger(tx), Shutdown(rx))
}

impl ShutdownTrigger {
    /// Fires the shutdown (idempotent).
    pub fn fire(&self) {
        self.0.send_replace(true);
    }

    /// A listener.
    pub fn subscribe(&self) -> Shutdown {
        Shutdown(self.0.subscribe())
    }
}

impl Shutdown {
    /// Whether the shutdown fired.
    pub fn is_fired(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until the shutdown fires (forever when every trigger is gone without firing).
    pub async fn fired(&mut self) {
        if self.0.wait_for(|fired| *fired).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
