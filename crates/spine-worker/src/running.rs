//! The items this worker runs right now, with what cancels them: a close request (from any
//! worker, through the mailbox's cancellation signals) or shutdown.
//!
//! Registration returns a guard that unregisters on drop. Canceling records the reason first
//! (the flow words its `execution_canceled` report with it; on shutdown the sink drops that
//! report since the item is redelivered; when the claim was superseded the sink drops every
//! report), then fires the item's [`CancellationToken`] — which the tools honour (Bash kills
//! its process group).
//!
//! One copy per delivery: registering a delivery of an item that already runs here under the
//! same delivery id (the message came back because its lease expired under this worker)
//! answers with that [`RunningCopy`] instead, so that the worker waits for it rather than
//! running the item twice. After a shutdown began, new registrations are canceled at once.
//!
//! Dependencies: none within the crate.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

/// Why an item was canceled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelReason {
    /// A `resource_close_request` (its item id).
    CloseRequest(String),
    /// The worker is shutting down; the item will be redelivered.
    Shutdown,
    /// The lease expired and a later delivery of the same message claimed the execution as
    /// `attempt_no`: this copy stops and reports nothing more.
    Superseded {
        /// The attempt that took over.
        attempt_no: u32,
    },
}

impl CancelReason {
    /// The summary of the canceled report.
    pub fn summary(&self) -> String {
        match self {
            CancelReason::CloseRequest(id) => format!("execution canceled by close request {id}"),
            CancelReason::Shutdown => "execution canceled: the worker shut down; the item will be redelivered".into(),
            CancelReason::Superseded { attempt_no } => {
                format!("execution canceled: its lease expired and attempt {attempt_no} took it over")
            }
        }
    }
}

/// The shared cancellation state of one running item.
#[derive(Clone, Default)]
pub struct Cancellation {
    /// Fired on cancellation.
    pub token: CancellationToken,
    reason: Arc<Mutex<Option<CancelReason>>>,
}

impl Cancellation {
    /// Why it was canceled (`None` while it was not).
    pub fn reason(&self) -> Option<CancelReason> {
        lock(&self.reason).clone()
    }

    /// The summary for the canceled report.
    pub fn summary(&self) -> String {
        self.reason().map_or_else(|| "execution canceled".to_owned(), |r| r.summary())
    }

    /// Whether it was canceled.
    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Records `reason` (unless canceled already) and fires the token.
    pub(crate) fn cancel(&self, reason: CancelReason) {
        {
            let mut slot = lock(&self.reason);
            if slot.is_none() {
                *slot = Some(reason);
            }
        }
        self.token.cancel();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

struct Entry {
    id: u64,
    delivery_id: String,
    cancellation: Cancellation,
    ended: CancellationToken,
    /// Its flow ended; its terminal report and settlement are on their way.
    settling: bool,
}

/// The registry of running items.
#[derive(Default)]
pub struct RunningItems {
    map: Mutex<HashMap<String, Vec<Entry>>>,
    next: AtomicU64,
    shutting_down: AtomicBool,
}

/// Unregisters an item when dropped.
pub struct RunningGuard {
    items: Arc<RunningItems>,
    item_id: String,
    id: u64,
    ended: CancellationToken,
}

/// A copy of an item that already runs here under the same delivery.
#[derive(Debug, Clone)]
pub struct RunningCopy {
    ended: CancellationToken,
}

impl RunningCopy {
    /// Resolves when that copy is unregistered (it ended).
    pub async fn ended(&self) {
        self.ended.cancelled().await;
    }
}

impl RunningItems {
    /// Registers a running item; `Err` with the running copy when the same delivery of the
    /// item already runs here (do not start a second one: wait for it).
    pub fn register(
        self: &Arc<Self>,
        item_id: &str,
        delivery_id: &str,
        cancellation: Cancellation,
    ) -> Result<RunningGuard, RunningCopy> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let ended = CancellationToken::new();
        {
            let mut map = lock(&self.map);
            let entries = map.entry(item_id.to_owned()).or_default();
            if let Some(copy) = entries.iter().find(|e| e.delivery_id == delivery_id) {
                return Err(RunningCopy { ended: copy.ended.clone() });
            }
            if self.shutting_down.load(Ordering::SeqCst) {
                cancellation.cancel(CancelReason::Shutdown);
            }
            entries.push(Entry {
                id,
                delivery_id: delivery_id.to_owned(),
                cancellation,
                ended: ended.clone(),
                settling: false,
            });
        }
        Ok(RunningGuard { items: Arc::clone(self), item_id: item_id.to_owned(), id, ended })
    }

    /// The copies of `item_id` from other deliveries whose flow ended here and which are
    /// settling (see [`RunningGuard::settling`]): a duplicate delivery waits for them, then finds
    /// the item finished, instead of being handed back as busy.
    pub fn settling_copies(&self, item_id: &str, delivery_id: &str) -> Vec<RunningCopy> {
        let map = lock(&self.map);
        let Some(entries) = map.get(item_id) else { return Vec::new() };
        entries
            .iter()
            .filter(|e| e.settling && e.delivery_id != delivery_id)
            .map(|e| RunningCopy { ended: e.ended.clone() })
            .collect()
    }

    /// Cancels an item; `false` when it does not run here.
    pub fn cancel(&self, item_id: &str, reason: CancelReason) -> bool {
        let map = lock(&self.map);
        let Some(entries) = map.get(item_id) else { return false };
        for e in entries {
            e.cancellation.cancel(reason.clone());
        }
        !entries.is_empty()
    }

    /// Cancels everything for shutdown.
    pub fn cancel_all_for_shutdown(&self) -> usize {
        let map = lock(&self.map);
        self.shutting_down.store(true, Ordering::SeqCst);
        let mut n = 0;
        for e in map.values().flatten() {
            e.cancellation.cancel(CancelReason::Shutdown);
            n += 1;
        }
        n
    }

    /// How many items run.
    pub fn len(&self) -> usize {
        lock(&self.map).values().map(Vec::len).sum()
    }

    /// Whether nothing runs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RunningGuard {
    /// Marks the item as settling: its flow ended (see [`RunningItems::settling_copies`]).
    pub fn settling(&self) {
        let mut map = lock(&self.items.map);
        if let Some(entry) = map.get_mut(&self.item_id).and_then(|es| es.iter_mut().find(|e| e.id == self.id)) {
            entry.settling = true;
        }
    }
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        let mut map = lock(&self.items.map);
        if let Some(entries) = map.get_mut(&self.item_id) {
            entries.retain(|e| e.id != self.id);
            if entries.is_empty() {
                map.remove(&self.item_id);
            }
        }
        drop(map);
        self.ended.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_registration_of_the_same_delivery_gets_the_running_copy_until_it_ends() {
        let items = Arc::new(RunningItems::default());
        let first = items.register("item", "d-1", Cancellation::default()).expect("registers");
        let Err(copy) = items.register("item", "d-1", Cancellation::default()) else {
            panic!("the same delivery registered twice")
        };
        // Another message of the same item is not the same copy.
        let other = items.register("item", "d-2", Cancellation::default()).expect("registers");
        assert_eq!(items.len(), 2);
        drop(first);
        tokio::time::timeout(std::time::Duration::from_secs(10), copy.ended()).await.expect("the copy ended");
        assert!(items.register("item", "d-1", Cancellation::default()).is_ok(), "registers once it ended");
        drop(other);
    }

    #[tokio::test]
    async fn a_duplicate_waits_only_for_copies_of_other_deliveries_that_are_settling() {
        let items = Arc::new(RunningItems::default());
        let first = items.register("item", "d-1", Cancellation::default()).expect("registers");
        assert!(items.settling_copies("item", "d-2").is_empty(), "a copy still running is not waited for");
        first.settling();
        assert!(items.settling_copies("item", "d-1").is_empty(), "the same delivery is not a duplicate");
        let copies = items.settling_copies("item", "d-2");
        assert_eq!(copies.len(), 1);
        drop(first);
        for copy in copies {
            tokio::time::timeout(std::time::Duration::from_secs(10), copy.ended()).await.expect("the copy ended");
        }
        assert!(items.settling_copies("item", "d-2").is_empty());
    }

    #[test]
    fn registrations_after_a_shutdown_began_are_canceled_for_shutdown() {
        let items = Arc::new(RunningItems::default());
        assert_eq!(items.cancel_all_for_shutdown(), 0);
        let cancellation = Cancellation::default();
        let _guard = items.register("item", "d-1", cancellation.clone()).expect("registers");
        assert!(cancellation.is_cancelled());
        assert_eq!(cancellation.reason(), Some(CancelReason::Shutdown));
    }

    #[test]
    fn a_superseded_copy_keeps_the_first_reason_and_says_which_attempt_took_over() {
        let cancellation = Cancellation::default();
        cancellation.cancel(CancelReason::Superseded { attempt_no: 3 });
        cancellation.cancel(CancelReason::Shutdown);
        assert_eq!(cancellation.reason(), Some(CancelReason::Superseded { attempt_no: 3 }));
        assert!(cancellation.summary().contains("attempt 3"), "{}", cancellation.summary());
    }
}
