//! Fencing: when a lease expires under a live worker (its keep-alives stopped or came late),
//! the message is redelivered while the first copy still runs. Exactly one terminal report per
//! item still results: the superseded claim cannot finish, its worker stops the item and
//! publishes nothing more, a redelivery of a finished item adds no terminal report, and a
//! redelivery of an item running on the same worker does not start a second copy there.
//!
//! Leases are short (`lease_ms`) and keep-alives are switched off where a lease must lapse;
//! every wait is a liveness bound, never a timing threshold.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use spine_protocol::report::Report;
use spine_worker::mailbox::{Begin, Claim, ClaimStatus, Delivery, Mailbox};

use crate::both_backends;
use crate::support::*;

both_backends!(
    a_superseded_claim_cannot_finish_and_a_redelivery_of_the_finished_item_adds_no_terminal,
    a_worker_whose_claim_was_superseded_stops_the_item_and_publishes_nothing_more,
    a_redelivery_of_an_item_running_here_does_not_start_a_second_copy,
    a_batch_published_again_stores_what_is_missing_and_never_lands_after_the_terminal_report,
);

/// How long any wait of these tests may last (a liveness bound).
const LIVENESS: Duration = Duration::from_secs(60);

/// Keep-alive period of a worker whose leases must lapse.
const NEVER: Duration = Duration::from_secs(3600);

/// What one (simulated) worker holds after leasing the item and claiming its execution.
struct Taken {
    mailbox: Arc<dyn Mailbox>,
    delivery: Delivery,
    claim: Claim,
    begin: Begin,
}

/// Leases the only item on a new connection (waiting for its lease to lapse elsewhere) and
/// claims it as `worker`; the connection fetches nothing more afterwards.
async fn take(h: &Harness, worker: &str) -> Taken {
    let mailbox = h.connect().await;
    let deadline = tokio::time::Instant::now() + LIVENESS;
    loop {
        let mut leased = mailbox.lease(1, Duration::from_millis(500)).await.expect("lease");
        if let Some(delivery) = leased.pop() {
            mailbox.release().await;
            let mut claim = Claim {
                item_id: "fenced".into(),
                attempt_no: delivery.delivery_count,
                delivery_id: delivery.delivery_id.clone(),
                worker_id: worker.into(),
                version: 0,
            };
            let begin = mailbox.begin(&mut claim).await.expect("begin");
            return Taken { mailbox, delivery, claim, begin };
        }
        assert!(tokio::time::Instant::now() < deadline, "{worker}: no delivery within {LIVENESS:?}");
    }
}

/// A template report of a normal run, for the item `fenced` at `attempt_no`.
fn as_fenced(template: &Report, attempt_no: u32) -> Report {
    Report {
        mailbox_item_id: "fenced".into(),
        attempt_no,
        protocol_message_id: format!("{}-fenced-a{attempt_no}", template.protocol_message_id),
        ..template.clone()
    }
}

/// A progress and the terminal report of an item run normally.
async fn templates(h: &Harness) -> (Report, Report) {
    h.submit(&example("template")).await;
    h.run_once(1).await;
    let reports = h.reports(Some("template")).await;
    let progress = reports.iter().find(|r| r.body.method_id() == "execution_progress").expect("progress").clone();
    let terminal = reports.iter().find(|r| r.body.is_terminal()).expect("terminal").clone();
    (progress, terminal)
}

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + LIVENESS;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "not within {LIVENESS:?}: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// How many times the mailbox handed out its (only) queued message so far, read from the
/// backend itself: the `deliveries` column of SQLite's `items`, or the consumer's delivered
/// sequence in JetStream.
async fn deliveries(h: &Harness) -> u64 {
    match h.backend {
        Backend::Sqlite => {
            let db = rusqlite::Connection::open(h.dir.path().join("mailbox.db")).expect("open the db");
            db.query_row("SELECT COALESCE(MAX(deliveries), 0) FROM items", [], |r| r.get::<_, i64>(0))
                .map(|n| u64::try_from(n).expect("a count"))
                .expect("deliveries")
        }
        Backend::Nats => {
            let prefix = h.url.split("prefix=").nth(1).and_then(|p| p.split('&').next()).expect("prefix");
            let client = async_nats::connect(spine_testkit::nats::nats_url()).await.expect("connect");
            let js = async_nats::jetstream::new(client);
            let stream = js.get_stream(format!("{}_ITEMS", prefix.to_ascii_uppercase())).await.expect("stream");
            let mut consumer = stream
                .get_consumer::<async_nats::jetstream::consumer::pull::Config>(&format!("{prefix}-workers"))
                .await
                .expect("consumer");
            consumer.info().await.expect("consumer info").delivered.consumer_sequence
        }
    }
}

async fn a_superseded_claim_cannot_finish_and_a_redelivery_of_the_finished_item_adds_no_terminal(backend: Backend) {
    let h = Harness::with_options(backend, "lease_ms=300&max_deliver=20").await;
    let (progress, terminal) = templates(&h).await;
    h.submit(&example("fenced")).await;

    // The first worker claims the item; then its keep-alives stop and the lease lapses.
    let first = take(&h, "first").await;
    assert_eq!(first.begin, Begin::Run);
    // The redelivery of the same message claims it as the next attempt.
    let second = take(&h, "second").await;
    assert_eq!(second.delivery.delivery_id, first.delivery.delivery_id, "the same message");
    assert_eq!(second.begin, Begin::Run);
    assert!(second.claim.attempt_no > first.claim.attempt_no, "{:?} {:?}", first.claim, second.claim);
    let superseded = ClaimStatus::Superseded { attempt_no: second.claim.attempt_no };
    assert_eq!(first.mailbox.claim_status(&first.claim).await.expect("status"), superseded);
    assert_eq!(second.mailbox.claim_status(&second.claim).await.expect("status"), ClaimStatus::Held);

    // The superseded claim stores and publishes nothing.
    let first_terminal = as_fenced(&terminal, first.claim.attempt_no);
    assert!(first.mailbox.finish(&first.claim, &[], &first_terminal, None).await.expect("finish").is_none());
    // A delivery older than the one holding the claim does not take it over.
    let mut stale = Claim { version: 0, ..first.claim.clone() };
    let begin = first.mailbox.begin(&mut stale).await.expect("begin");
    assert_eq!(begin, Begin::Stale { attempt_no: second.claim.attempt_no });
    assert_eq!(second.mailbox.claim_status(&second.claim).await.expect("status"), ClaimStatus::Held);

    let second_terminal = as_fenced(&terminal, second.claim.attempt_no);
    let stored = second.mailbox.finish(&second.claim, &[], &second_terminal, None).await.expect("finish");
    stored.expect("the claim holds").pending.await.expect("published");
    // A progress report of the superseded copy, on its way when it was stopped, lands after
    // the terminal report.
    let late = first.mailbox.publish(&[as_fenced(&progress, first.claim.attempt_no)]).await.expect("publish");
    late.await.expect("published");

    // The first delivery, still waiting in a prefetch buffer (its counter says 1), finds the
    // item done by its own message: it re-publishes only what is missing.
    let mut stale = Claim { version: 0, ..first.claim.clone() };
    let begin = first.mailbox.begin(&mut stale).await.expect("begin");
    assert_eq!(begin, Begin::Redelivered(Box::new(second_terminal.clone())));

    // The second worker dies before acknowledging: the next delivery finds the item done and
    // adds no second terminal report, however the reports end.
    let third = take(&h, "third").await;
    assert_eq!(third.begin, Begin::Redelivered(Box::new(second_terminal.clone())));
    assert!(third.mailbox.republish_terminal(&second_terminal).await.expect("republish").is_none());
    third.delivery.lease.ack().await.expect("ack");

    let reports = h.reports(Some("fenced")).await;
    let terminals: Vec<&Report> = reports.iter().filter(|r| r.body.is_terminal()).collect();
    assert_eq!(terminals, [&second_terminal], "one terminal report: {:?}", methods(&reports));
    eventually("the mailbox drains", async || h.mailbox.drained().await.expect("drained")).await;
}

async fn a_worker_whose_claim_was_superseded_stops_the_item_and_publishes_nothing_more(backend: Backend) {
    let h = Harness::with_options(backend, "lease_ms=500&max_deliver=20").await;
    let (_, terminal) = templates(&h).await;
    let pids = h.workspace().join("pids");
    let finished = h.workspace().join("finished");
    let go = h.workspace().join("go");
    let command = format!(
        "echo $$ >> {pids}; while [ ! -f {go} ]; do sleep 0.05; done; echo done >> {finished}",
        pids = pids.display(),
        go = go.display(),
        finished = finished.display()
    );
    h.submit(&bash("fenced", &command)).await;

    // A worker whose keep-alives never come: its lease lapses while the item runs.
    let mut config = h.config(1, false);
    config.keep_alive = NEVER;
    config.fence_check = Duration::from_millis(50);
    let worker = h.start(config).await;
    eventually("the first copy starts", async || !lines(&pids).is_empty()).await;
    let first_pid: u32 = lines(&pids)[0].parse().expect("pid");

    // Another worker gets the redelivery and claims the item.
    let other = take(&h, "other").await;
    assert_eq!(other.begin, Begin::Run);
    // The first worker notices and stops its copy (the tool's process goes away).
    eventually("the superseded copy is stopped", async || dead(first_pid)).await;
    std::fs::write(&go, "").expect("go");

    let other_terminal = as_fenced(&terminal, other.claim.attempt_no);
    let stored = other.mailbox.finish(&other.claim, &[], &other_terminal, None).await.expect("finish");
    stored.expect("the claim holds").pending.await.expect("published");
    other.delivery.lease.ack().await.expect("ack");
    eventually("the mailbox drains", async || h.mailbox.drained().await.expect("drained")).await;
    worker.stop().await;

    assert!(!finished.exists(), "the superseded copy did not run to its end");
    let reports = h.reports(Some("fenced")).await;
    let terminals: Vec<&Report> = reports.iter().filter(|r| r.body.is_terminal()).collect();
    assert_eq!(terminals, [&other_terminal], "one terminal report: {:?}", methods(&reports));
    let last_of_first = reports.iter().rposition(|r| r.attempt_no < other.claim.attempt_no);
    let terminal_at = reports.iter().position(|r| r.body.is_terminal());
    assert!(last_of_first < terminal_at, "nothing of the superseded copy after the terminal: {reports:#?}");
}

async fn a_redelivery_of_an_item_running_here_does_not_start_a_second_copy(backend: Backend) {
    let h = Harness::with_options(backend, "lease_ms=400&max_deliver=20").await;
    let pids = h.workspace().join("pids");
    let go = h.workspace().join("go");
    let command = format!(
        "echo $$ >> {pids}; while [ ! -f {go} ]; do sleep 0.05; done; echo finished",
        pids = pids.display(),
        go = go.display()
    );
    h.submit(&bash("fenced", &command)).await;

    // Free slots and no keep-alives: the message comes back to this worker while it runs.
    let mut config = h.config(3, false);
    config.keep_alive = NEVER;
    let worker = h.start(config).await;
    eventually("the item starts", async || !lines(&pids).is_empty()).await;
    eventually("the message is delivered twice more", async || deliveries(&h).await >= 3).await;
    std::fs::write(&go, "").expect("go");

    h.wait_terminal("fenced", LIVENESS).await;
    eventually("the mailbox drains", async || h.mailbox.drained().await.expect("drained")).await;
    worker.stop().await;
    assert_eq!(lines(&pids).len(), 1, "one copy ran: {:?}", lines(&pids));
    let reports = h.reports(Some("fenced")).await;
    let terminals: Vec<&Report> = reports.iter().filter(|r| r.body.is_terminal()).collect();
    assert_eq!(terminals.len(), 1, "{:?}", methods(&reports));
    assert_eq!(terminals[0].body.method_id(), "execution_complete");
    assert_eq!(terminals[0].attempt_no, 1, "the first delivery's attempt completed it");
    assert!(reports.iter().all(|r| r.attempt_no == 1), "{:?}", methods(&reports));
}

async fn a_batch_published_again_stores_what_is_missing_and_never_lands_after_the_terminal_report(backend: Backend) {
    let h = Harness::with_options(backend, "lease_ms=30000").await;
    let (progress, terminal) = templates(&h).await;
    h.submit(&example("fenced")).await;
    let worker = take(&h, "worker").await;
    assert_eq!(worker.begin, Begin::Run);
    let attempt = worker.claim.attempt_no;
    let nth = |n: u32| Report { protocol_message_id: format!("p{n}"), ..as_fenced(&progress, attempt) };

    // A batch whose first write stored only its first report: the rest goes in, once each.
    worker.mailbox.publish(&[nth(1)]).await.expect("publish").await.expect("published");
    assert!(worker.mailbox.publish_again(&[nth(1), nth(2)]).await.expect("again"), "published");
    let ids = |rs: &[Report]| rs.iter().map(|r| r.protocol_message_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&h.reports(Some("fenced")).await), ["p1", "p2"]);

    // Once the item's terminal report is out, a batch published again is refused whole.
    let done = as_fenced(&terminal, attempt);
    let finished = worker.mailbox.finish(&worker.claim, &[], &done, None).await.expect("finish");
    finished.expect("the claim holds").pending.await.expect("published");
    assert!(!worker.mailbox.publish_again(&[nth(3)]).await.expect("again"), "refused");
    let reports = h.reports(Some("fenced")).await;
    assert_eq!(ids(&reports), ["p1", "p2", done.protocol_message_id.as_str()], "{:?}", methods(&reports));
    worker.delivery.lease.ack().await.expect("ack");
}
