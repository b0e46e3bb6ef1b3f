//! One write per quick item: the reports before the terminal one travel with it
//! (`Executions::finish`), the delivery is settled with it where the backend can (SQLite),
//! and a claim that no longer holds still stores no terminal report and settles nothing.

use std::time::Duration;

use spine_protocol::report::Report;
use spine_worker::mailbox::{Begin, Claim, Delivery, Mailbox};

use crate::both_backends;
use crate::support::*;

both_backends!(
    a_terminal_report_finished_with_its_earlier_reports_keeps_their_order_and_settles_the_delivery,
    finishing_with_a_claim_that_no_longer_holds_stores_no_terminal_and_settles_nothing,
    a_worker_settles_each_quick_item_once_with_its_reports_in_order,
);

/// The reports of an item run normally: started, progress, terminal.
async fn template(h: &Harness) -> Vec<Report> {
    h.submit(&example("template")).await;
    h.run_once(1).await;
    let reports = h.reports(Some("template")).await;
    assert_eq!(methods(&reports), ["execution_started", "execution_progress", "execution_complete"]);
    reports
}

fn renamed(reports: &[Report], item: &str, attempt_no: u32) -> Vec<Report> {
    reports.iter().map(|r| Report { mailbox_item_id: item.into(), attempt_no, ..r.clone() }).collect()
}

async fn lease_one(mailbox: &dyn Mailbox) -> Delivery {
    let mut leased = mailbox.lease(1, Duration::from_secs(10)).await.expect("lease");
    assert_eq!(leased.len(), 1);
    leased.remove(0)
}

async fn a_terminal_report_finished_with_its_earlier_reports_keeps_their_order_and_settles_the_delivery(
    backend: Backend,
) {
    let h = Harness::new(backend).await;
    let reports = renamed(&template(&h).await, "batched", 1);
    h.submit(&example("batched")).await;
    let delivery = lease_one(h.mailbox.as_ref()).await;
    let mut claim = Claim {
        item_id: "batched".into(),
        attempt_no: 1,
        delivery_id: delivery.delivery_id.clone(),
        worker_id: "w".into(),
        version: 0,
    };
    assert_eq!(h.mailbox.begin(&mut claim).await.expect("begin"), Begin::Run);
    let ticket = delivery.lease.settle_ticket();
    let finished = h
        .mailbox
        .finish(&claim, &reports[..2], &reports[2], ticket.as_ref())
        .await
        .expect("finish")
        .expect("the claim holds");
    finished.pending.await.expect("durable");
    assert_eq!(finished.settled, ticket.is_some(), "settled in the same write exactly when the backend can");
    if !finished.settled {
        delivery.lease.ack().await.expect("ack");
    }
    assert_eq!(h.reports(Some("batched")).await, reports);
    assert_eq!(h.mailbox.terminal("batched").await.expect("terminal").as_ref(), Some(&reports[2]));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !h.mailbox.drained().await.expect("drained") {
        assert!(tokio::time::Instant::now() < deadline, "the settled delivery left the queue");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn finishing_with_a_claim_that_no_longer_holds_stores_no_terminal_and_settles_nothing(backend: Backend) {
    let h = Harness::with_options(backend, "lease_ms=60000").await;
    let reports = renamed(&template(&h).await, "taken-over", 1);
    h.submit(&example("taken-over")).await;
    let delivery = lease_one(h.mailbox.as_ref()).await;
    let claim = |worker: &str| Claim {
        item_id: "taken-over".into(),
        attempt_no: 1,
        delivery_id: delivery.delivery_id.clone(),
        worker_id: worker.into(),
        version: 0,
    };
    let mut first = claim("first");
    assert_eq!(h.mailbox.begin(&mut first).await.expect("begin"), Begin::Run);
    // The same delivery claimed again (as its redelivery would): the first claim is superseded.
    let mut second = claim("second");
    assert_eq!(h.mailbox.begin(&mut second).await.expect("begin"), Begin::Run);
    assert!(second.attempt_no > first.attempt_no);

    let ticket = delivery.lease.settle_ticket();
    let refused = h.mailbox.finish(&first, &reports[..2], &reports[2], ticket.as_ref()).await.expect("finish");
    assert!(refused.is_none(), "a superseded claim cannot finish");
    assert_eq!(h.mailbox.terminal("taken-over").await.expect("terminal"), None);
    let reports_now = h.reports(Some("taken-over")).await;
    assert!(!reports_now.iter().any(|r| r.body.is_terminal()), "{:?}", methods(&reports_now));
    assert!(!h.mailbox.drained().await.expect("drained"), "the delivery is still leased, not settled");
}

async fn a_worker_settles_each_quick_item_once_with_its_reports_in_order(backend: Backend) {
    let h = Harness::new(backend).await;
    let ids: Vec<String> = (0..20).map(|i| format!("quick-{i}")).collect();
    for id in &ids {
        h.submit(&example(id)).await;
    }
    let summary = h.run_once(1).await;
    assert_eq!(summary.deliveries, 20, "every item delivered once");
    for id in &ids {
        let reports = h.reports(Some(id)).await;
        assert_eq!(methods(&reports), ["execution_started", "execution_progress", "execution_complete"], "{id}");
        assert!(reports.iter().all(|r| r.attempt_no == 1), "{id}");
    }
    assert!(h.mailbox.drained().await.expect("drained"));
}
