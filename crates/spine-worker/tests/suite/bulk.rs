//! Several workers on one mailbox: every item completes exactly once.

use std::collections::HashMap;

use crate::both_backends;
use crate::support::*;

both_backends!(three_workers_complete_500_items_exactly_once);

async fn three_workers_complete_500_items_exactly_once(backend: Backend) {
    const ITEMS: usize = 500;
    let h = Harness::with_options(backend, "lease_ms=5000").await;
    let ids: Vec<String> = (0..ITEMS).map(|i| format!("bulk-{i:04}")).collect();
    for id in &ids {
        h.submit(&example(id)).await;
    }
    let workers =
        [h.start(h.config(4, true)).await, h.start(h.config(4, true)).await, h.start(h.config(4, true)).await];
    let mut handled = 0;
    for w in workers {
        let summary = tokio::time::timeout(std::time::Duration::from_secs(120), w.handle)
            .await
            .expect("workers drain in time")
            .expect("joins");
        handled += summary.deliveries;
    }
    let reports = h.reports(None).await;
    let mut terminals: HashMap<&str, Vec<&str>> = HashMap::new();
    for r in reports.iter().filter(|r| r.body.is_terminal()) {
        terminals.entry(r.mailbox_item_id.as_str()).or_default().push(r.body.method_id());
    }
    for id in &ids {
        assert_eq!(terminals.get(id.as_str()).map(Vec::as_slice), Some(&["execution_complete"][..]), "{id}");
    }
    assert_eq!(terminals.len(), ITEMS);
    assert_eq!(handled, ITEMS as u64, "no item was delivered twice");
}
