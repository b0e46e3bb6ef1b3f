//! Delivery guarantees: duplicates run once, expired leases come back with the next attempt,
//! exhausted items are dead-lettered and reported, shutdown hands items back.

use std::time::Duration;

use crate::both_backends;
use crate::support::*;

both_backends!(
    a_duplicate_delivery_republishes_the_terminal_report_and_runs_the_work_once,
    a_redelivery_after_the_terminal_report_was_stored_and_published_adds_no_second_one,
    an_expired_lease_is_redelivered_with_the_next_attempt_no,
    an_item_past_its_last_delivery_is_dead_lettered_and_reported,
    shutdown_cancels_in_flight_items_silently_and_they_are_redelivered,
    a_close_request_before_the_item_starts_cancels_it_on_delivery,
    malformed_item_ids_get_one_report_each_and_never_cost_their_neighbours,
);

async fn a_duplicate_delivery_republishes_the_terminal_report_and_runs_the_work_once(backend: Backend) {
    let h = Harness::new(backend).await;
    let counter = h.workspace().join("runs.txt");
    let item = bash("dup", &format!("echo ran >> {}", counter.display()));
    h.submit(&item).await;
    h.submit(&item).await;
    h.run_once(1).await;
    assert_eq!(std::fs::read_to_string(&counter).expect("counter"), "ran\n", "the tool ran once");
    let reports = h.reports(Some("dup")).await;
    let terminals: Vec<_> = reports.iter().filter(|r| r.body.is_terminal()).collect();
    assert_eq!(terminals.len(), 2, "the duplicate re-published the terminal report: {:?}", methods(&reports));
    assert_eq!(terminals[0], terminals[1], "the very same report, protocol_message_id included");
    assert_eq!(reports.iter().filter(|r| r.body.method_id() == "execution_started").count(), 1);
}

async fn a_redelivery_after_the_terminal_report_was_stored_and_published_adds_no_second_one(backend: Backend) {
    let h = Harness::with_options(backend, "lease_ms=400").await;
    // A terminal report to store: the one of an item run normally.
    h.submit(&example("template")).await;
    h.run_once(1).await;
    let template = h.reports(Some("template")).await.into_iter().find(|r| r.body.is_terminal()).expect("terminal");

    // A worker leases the item, stores and publishes its terminal report, and dies before
    // acknowledging the delivery.
    h.submit(&example("again")).await;
    let other = h.connect().await;
    let mut leased = other.lease(1, Duration::from_secs(5)).await.expect("lease");
    assert_eq!(leased.len(), 1);
    let delivery = leased.remove(0);
    let mut claim = spine_worker::mailbox::Claim {
        item_id: "again".into(),
        attempt_no: 1,
        delivery_id: delivery.delivery_id.clone(),
        worker_id: "dies-before-ack".into(),
        version: 0,
    };
    assert_eq!(other.begin(&mut claim).await.expect("begin"), spine_worker::mailbox::Begin::Run);
    let report = spine_protocol::report::Report { mailbox_item_id: "again".into(), ..template };
    let finished = other.finish(&claim, &[], &report, None).await.expect("finish").expect("the claim holds");
    finished.pending.await.expect("published");
    drop(delivery);
    drop(other);

    // The redelivery finds the item done and its report out: nothing more is published.
    h.run_once(1).await;
    let reports = h.reports(Some("again")).await;
    let terminals: Vec<_> = reports.iter().filter(|r| r.body.is_terminal()).collect();
    assert_eq!(terminals.len(), 1, "one terminal report: {:?}", methods(&reports));
    assert_eq!(terminals[0], &report);
}

async fn an_expired_lease_is_redelivered_with_the_next_attempt_no(backend: Backend) {
    let h = Harness::with_options(backend, "lease_ms=400").await;
    h.submit(&example("lost")).await;
    // A worker that leases the item and dies without a word.
    let other = h.connect().await;
    let leased = other.lease(1, Duration::from_secs(5)).await.expect("lease");
    assert_eq!(leased.len(), 1);
    assert_eq!(leased[0].delivery_count, 1);
    // It dies: the delivery is never settled, and its connection goes away with it.
    drop(leased);
    drop(other);
    h.run_once(1).await;
    let reports = h.reports(Some("lost")).await;
    assert_eq!(methods(&reports), ["execution_started", "execution_progress", "execution_complete"]);
    assert!(reports.iter().all(|r| r.attempt_no == 2), "{reports:#?}");
}

async fn an_item_past_its_last_delivery_is_dead_lettered_and_reported(backend: Backend) {
    let h = Harness::with_options(backend, "lease_ms=300&max_deliver=1").await;
    let delivery_id = h.submit(&example("poison")).await;
    let other = h.connect().await;
    let leased = other.lease(1, Duration::from_secs(5)).await.expect("lease");
    assert_eq!(leased.len(), 1);
    drop(leased);
    drop(other);
    h.run_once(1).await;
    let reports = h.reports(Some("poison")).await;
    assert_eq!(methods(&reports), ["execution_fail"]);
    let payload = &json_of(&reports[0])["terminal_payload"];
    assert_eq!(payload["failure_kind"], "runtime_error");
    assert_eq!(reports[0].attempt_no, 2);
    assert!(payload["last_error_summary"].as_str().is_some_and(|s| s.contains("dead-letter")));
    let dead = h.mailbox.dead_letters().await.expect("dead letters");
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].delivery_id, delivery_id);
    let body: serde_json::Value = serde_json::from_slice(&dead[0].body).expect("body");
    assert_eq!(body["item_id"], "poison");
    assert!(h.mailbox.drained().await.expect("drained"), "a dead letter is no longer queued");
}

async fn shutdown_cancels_in_flight_items_silently_and_they_are_redelivered(backend: Backend) {
    let h = Harness::new(backend).await;
    let marker = h.workspace().join("first-run");
    let command = format!("if [ -f {m} ]; then echo second run; else touch {m}; sleep 30; fi", m = marker.display());
    h.submit(&bash("handed-back", &command)).await;
    let mut config = h.config(1, false);
    config.grace = Duration::from_millis(200);
    let first = h.start(config).await;
    wait_for_file(&marker, Duration::from_secs(20)).await;
    let summary = first.stop().await;
    assert_eq!(summary.canceled_at_shutdown, 1);
    let reports = h.reports(Some("handed-back")).await;
    assert!(
        !reports.iter().any(|r| r.body.is_terminal()),
        "no terminal report from the worker that gave up: {:?}",
        methods(&reports)
    );

    h.run_once(1).await;
    let reports = h.reports(Some("handed-back")).await;
    let last = reports.last().expect("reports");
    assert_eq!(last.body.method_id(), "execution_complete");
    assert_eq!(
        last.attempt_no,
        2,
        "{:#?}",
        reports.iter().map(|r| (r.body.method_id(), r.attempt_no)).collect::<Vec<_>>()
    );
    assert_eq!(reports.iter().filter(|r| r.body.is_terminal()).count(), 1);
}

async fn a_close_request_before_the_item_starts_cancels_it_on_delivery(backend: Backend) {
    let h = Harness::new(backend).await;
    h.submit(&close("close-early", "later")).await;
    h.run_once(1).await;
    let closed = h.reports(Some("close-early")).await;
    assert_eq!(methods(&closed), ["resource_close_acknowledged", "resource_closed"]);
    assert_eq!(json_of(&closed[1])["close_outcome_kind"], "canceled_before_start");
    h.submit(&example("later")).await;
    h.run_once(1).await;
    let target = h.reports(Some("later")).await;
    assert_eq!(methods(&target), ["execution_canceled"]);
}

async fn malformed_item_ids_get_one_report_each_and_never_cost_their_neighbours(backend: Backend) {
    let h = Harness::new(backend).await;
    let long = "L".repeat(10_000);
    let newlines = "bad\nid\nwith\nnewlines";
    let neighbours: Vec<String> = (0..10).map(|i| format!("neighbour-{i}")).collect();
    // Straight into the mailbox, as a writer that skips `spine submit`'s checks would.
    for (i, id) in neighbours.iter().enumerate() {
        h.submit(&example(id)).await;
        if i == 3 {
            h.submit(&example(&long)).await;
        }
        if i == 6 {
            h.submit(&example(newlines)).await;
        }
    }
    h.run_once(4).await;

    for id in &neighbours {
        let reports = h.reports(Some(id)).await;
        let terminals: Vec<_> = reports.iter().filter(|r| r.body.is_terminal()).collect();
        assert_eq!(terminals.len(), 1, "{id}: {:?}", methods(&reports));
        assert_eq!(terminals[0].body.method_id(), "execution_complete", "{id}");
    }
    for id in [long.as_str(), newlines] {
        let reports = h.reports(Some(id)).await;
        assert_eq!(methods(&reports), ["execution_fail"], "{}…", &id[..12.min(id.len())]);
        let payload = &json_of(&reports[0])["terminal_payload"];
        assert_eq!(payload["failure_kind"], "validation_error");
        assert!(payload["last_error_summary"].as_str().is_some_and(|s| s.contains("item_id")), "{payload}");
        assert_eq!(reports[0].mailbox_item_id, id, "reported under the item's own id");
    }
    let all = h.reports(None).await;
    assert_eq!(all.iter().filter(|r| r.body.is_terminal()).count(), 12, "one terminal report per item");
}
