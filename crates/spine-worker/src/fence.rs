//! What guards one delivery while its item runs: a [`KeepAlive`] task that extends the lease,
//! and a [`ClaimWatch`] task that fences the claim.
//!
//! The keep-alive extends the lease every [`WorkerConfig::keep_alive`](crate::WorkerConfig).
//! When an extension comes too late anyway (a loaded machine), the message is redelivered and
//! its next delivery claims the execution with the next attempt (see
//! [`crate::mailbox`], "Fencing"). The claim watch notices: every
//! [`WorkerConfig::fence_check`](crate::WorkerConfig) it asks [`Executions::claim_status`], and
//! once the claim is [`ClaimStatus::Superseded`] it logs it and cancels this copy with
//! [`CancelReason::Superseded`] — the tools stop, the sink drops every further report, and the
//! worker leaves the delivery to the new claim. The watch never cancels for any other status:
//! a stored terminal report or a mailbox failure does not stop a running item.
//!
//! Dependencies: [`crate::mailbox`] and [`crate::running`].

use std::sync::Arc;
use std::time::Duration;

use crate::mailbox::{Claim, ClaimStatus, Executions, Lease, LeaseStatus};
use crate::running::{CancelReason, Cancellation};

/// Extends a lease periodically until dropped.
pub(crate) struct KeepAlive(tokio::task::JoinHandle<()>);

impl KeepAlive {
    /// Starts extending `lease` every `every`.
    pub(crate) fn start(lease: Arc<dyn Lease>, every: Duration, delivery_id: String) -> KeepAlive {
        KeepAlive(tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                match lease.keep_alive().await {
                    Ok(LeaseStatus::Held) => {}
                    Ok(LeaseStatus::Lost) => {
                        tracing::warn!("lease of {delivery_id} was lost (it expired and was redelivered)");
                        return;
                    }
                    Err(e) => tracing::warn!("keep-alive of {delivery_id}: {e}"),
                }
            }
        }))
    }
}

impl Drop for KeepAlive {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Cancels a running copy whose claim a later delivery superseded; stops when dropped.
pub(crate) struct ClaimWatch(tokio::task::JoinHandle<()>);

impl ClaimWatch {
    /// Checks `claim` every `every` until it is superseded (then cancels `cancellation`).
    pub(crate) fn start(
        executions: Arc<dyn Executions>,
        claim: Claim,
        every: Duration,
        cancellation: Cancellation,
    ) -> ClaimWatch {
        ClaimWatch(tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                match executions.claim_status(&claim).await {
                    Ok(ClaimStatus::Held | ClaimStatus::Released) => {}
                    Ok(ClaimStatus::Superseded { attempt_no }) => {
                        tracing::warn!(
                            "item {} attempt {} ({}): the lease expired and attempt {attempt_no} took the item \
                             over; canceling this copy, which publishes nothing more",
                            claim.item_id,
                            claim.attempt_no,
                            claim.delivery_id
                        );
                        cancellation.cancel(CancelReason::Superseded { attempt_no });
                        return;
                    }
                    Err(e) => tracing::warn!("claim check of {} ({}): {e}", claim.item_id, claim.delivery_id),
                }
            }
        }))
    }
}

impl Drop for ClaimWatch {
    fn drop(&mut self) {
        self.0.abort();
    }
}
