//! Reports of one delivery on their way to the mailbox.
//!
//! [`MailboxSink`] is the [`ReportSink`] the pipeline writes to (synchronously, from any
//! task); a [`Publisher`] task sends the reports to the mailbox in order, in batches: a
//! non-terminal report waits up to [`REPORT_LINGER`] for the ones after it, and the waiting
//! reports go out in one write ([`ReportLog::publish`](crate::mailbox::ReportLog::publish)). The first terminal report takes the
//! waiting ones with it through [`Executions::finish`](crate::mailbox::Executions::finish),
//! which stores it in the idempotency store and publishes it only while the claim holds — so a
//! worker that lost its claim cannot add a second terminal report — and, given the delivery's
//! [`SettleTicket`] (SQLite), acknowledges the delivery in the same transaction. A quick item
//! thus costs one write for all its reports and its settlement. Later terminal reports are
//! dropped.
//!
//! A duplicate delivery of a finished item sends the stored terminal report again: always for
//! a new message of the item (it was submitted again), only when the reports lack it for a
//! redelivery of the same message — so a crash or an expired lease never shows a completion
//! twice, and a worker that died between storing and publishing still gets it out.
//!
//! When the item was canceled for shutdown (it will be redelivered), the sink drops
//! `execution_canceled`: the redelivery reports the item, not the worker that gave it up.
//!
//! When the claim was superseded (the lease expired and a later delivery of the same message
//! took the item over, see [`crate::mailbox`]'s "Fencing"), the sink drops every report from
//! then on, progress reports included: the new attempt reports the item, and a stale attempt's
//! progress must not follow the item's terminal report. Reports still queued here are dropped
//! too; ones already handed to the mailbox when the supersession was noticed go out, with the
//! old `attempt_no`. A batch whose flush comes more than [`STALL`] late (the worker was
//! stopped or stalled past its lease) is published only after the claim is checked: a
//! superseded copy that resumes drops it instead of writing it after the new attempt's reports.
//!
//! A batch that fails to become durable (a stream leader dies, a cluster loses its quorum) is
//! published again ([`crate::mailbox::confirm`]) before anything after it goes out, so an
//! attempt's reports arrive whole and in order; the batch before a terminal report is durable
//! before the terminal report is published, and a batch published again never lands after the
//! item's terminal report ([`crate::mailbox::ReportLog::publish_again`]).
//!
//! Dependencies: [`crate::mailbox`] (where reports go) and [`crate::running`] (why an item was
//! canceled).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use spine_core::reports::{ReportSink, WorkIdentity};
use spine_protocol::report::{Report, ReportBody};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::mailbox::{Claim, ClaimStatus, Mailbox, MailboxError, PendingPublish, SettleTicket};
use crate::running::{CancelReason, Cancellation};

enum Msg {
    /// A new report.
    Report(Report),
    /// A stored terminal report, sent again (duplicate delivery).
    Republish(Report, Republish),
    /// No more reports.
    Close,
}

/// When a duplicate delivery of a finished item publishes its stored terminal report again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Republish {
    /// Always: a new message for the item (submitted again), whose submitter waits for a report.
    Always,
    /// Only when the item's reports lack it: the same message delivered again (its lease ran
    /// out, or its worker died after storing the report), whose report normally is out already.
    IfMissing,
}

/// The sink of one delivery's reports.
pub struct MailboxSink {
    tx: mpsc::UnboundedSender<Msg>,
    cancellation: Cancellation,
    identity: WorkIdentity,
    sequence: AtomicU64,
}

/// What happened to a delivery's reports.
#[derive(Debug, Default)]
pub struct Published {
    /// The terminal report that was stored and published (or re-published).
    pub terminal: Option<Report>,
    /// A terminal report was produced but another delivery owns the item now.
    pub lost_claim: bool,
    /// Reports published.
    pub count: usize,
    /// Failures (the delivery is redelivered so that the stored terminal is re-published).
    pub errors: Vec<MailboxError>,
    /// The delivery was acknowledged in the write that stored the terminal report (see
    /// [`Executions::finish`](crate::mailbox::Executions::finish)): there is nothing left to settle.
    pub settled: bool,
}

/// The publishing task of one delivery.
pub struct Publisher {
    sink: Arc<MailboxSink>,
    task: JoinHandle<Published>,
}

impl Publisher {
    /// Starts publishing for a claimed delivery; with `settle`, the delivery is acknowledged
    /// together with its terminal report where the backend can.
    pub fn start(
        mailbox: Arc<dyn Mailbox>,
        claim: Claim,
        identity: WorkIdentity,
        cancellation: Cancellation,
        settle: Option<SettleTicket>,
    ) -> Publisher {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = Arc::new(MailboxSink { tx, cancellation, identity, sequence: AtomicU64::new(0) });
        let task = tokio::spawn(publish_loop(mailbox, claim, rx, sink.cancellation.clone(), settle));
        Publisher { sink, task }
    }

    /// Where the item's flow emits its reports; this publisher drains it.
    pub fn sink(&self) -> &Arc<MailboxSink> {
        &self.sink
    }

    /// Closes the sink and waits until every report is durable.
    pub async fn finish(self) -> Published {
        let _ = self.sink.tx.send(Msg::Close);
        match self.task.await {
            Ok(p) => p,
            Err(e) => Published {
                errors: vec![MailboxError::Corrupt(format!("report publisher failed: {e}"))],
                ..Published::default()
            },
        }
    }
}

impl MailboxSink {
    /// The identity of the reports.
    pub fn identity(&self) -> &WorkIdentity {
        &self.identity
    }

    /// Sends a stored terminal report again, as `when` says.
    pub fn republish(&self, report: Report, when: Republish) {
        let _ = self.tx.send(Msg::Republish(report, when));
    }

    /// Publishes a report the collector does not build (agent-program answers, close reports),
    /// with this delivery's identity.
    pub fn emit(&self, body: ReportBody) {
        let n = self.sequence.fetch_add(1, Ordering::Relaxed) + 1;
        let report = Report {
            protocol_message_id: format!(
                "spine-{}-{}-a{}-{n}",
                body.method_id(),
                self.identity.mailbox_item_id,
                self.identity.attempt_no
            ),
            mailbox_item_id: self.identity.mailbox_item_id.clone(),
            logical_work_id: self.identity.logical_work_id.clone(),
            attempt_no: self.identity.attempt_no,
            body,
        };
        self.publish(&report);
    }
}

impl ReportSink for MailboxSink {
    fn publish(&self, report: &Report) {
        match self.cancellation.reason() {
            Some(CancelReason::Superseded { .. }) => return,
            Some(CancelReason::Shutdown) if matches!(report.body, ReportBody::ExecutionCanceled { .. }) => return,
            Some(CancelReason::Shutdown | CancelReason::CloseRequest(_)) | None => {}
        }
        let _ = self.tx.send(Msg::Report(report.clone()));
    }
}

/// How long the publisher holds a non-terminal report for the reports that follow it: a quick
/// item's reports then reach the mailbox in one write together with its terminal report, and a
/// long item's progress is late by at most this much.
pub const REPORT_LINGER: Duration = Duration::from_millis(2);

/// The publishing task: reports are sent in order, in batches. Non-terminal reports wait up to
/// [`REPORT_LINGER`] for the next ones (one [`ReportLog::publish`](crate::mailbox::ReportLog::publish)); the first terminal report
/// takes the waiting ones with it ([`Executions::finish`](crate::mailbox::Executions::finish))
/// and, with a `settle` ticket and no failure so far, the delivery's acknowledgement too.
async fn publish_loop(
    mailbox: Arc<dyn Mailbox>,
    claim: Claim,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    cancellation: Cancellation,
    mut settle: Option<SettleTicket>,
) -> Published {
    let mut outbox = Outbox::new(&*mailbox, &claim, &cancellation);
    let mut terminal_seen = false;
    let mut flush_at: Option<Instant> = None;
    loop {
        let next = match flush_at {
            None => rx.recv().await,
            Some(at) => match tokio::time::timeout_at(at, rx.recv()).await {
                Ok(next) => next,
                Err(_elapsed) => {
                    outbox.flush_checked(flush_at.take()).await;
                    continue;
                }
            },
        };
        let Some(msg) = next else { break };
        match msg {
            Msg::Close => break,
            Msg::Report(_) if outbox.fence.superseded() => {}
            Msg::Report(report) if report.body.is_terminal() => {
                if terminal_seen {
                    continue;
                }
                terminal_seen = true;
                flush_at = None;
                outbox.store_terminal(report, &mut settle).await;
            }
            Msg::Report(report) => {
                if outbox.waiting.is_empty() {
                    flush_at = Some(Instant::now() + REPORT_LINGER);
                }
                outbox.waiting.push(report);
            }
            Msg::Republish(report, when) => {
                outbox.flush_checked(flush_at.take()).await;
                outbox.confirm_last().await;
                terminal_seen = true;
                outbox.republish(report, when).await;
            }
        }
    }
    outbox.flush_checked(flush_at).await;
    outbox.confirm_last().await;
    outbox.close().await
}

/// How late a batch's flush may be before the claim is checked first: far above the linger
/// and a loaded machine's scheduling delays, below any lease (which a supersession needs to
/// expire).
pub const STALL: Duration = Duration::from_secs(1);

/// A published batch of non-terminal reports whose write is not confirmed yet.
struct Batch {
    reports: Vec<Report>,
    pending: PendingPublish,
}

/// Where a delivery's reports go and what fences them: the claim and the run's cancellation.
#[derive(Clone, Copy)]
struct Fence<'a> {
    mailbox: &'a dyn Mailbox,
    claim: &'a Claim,
    cancellation: &'a Cancellation,
}

impl Fence<'_> {
    /// Whether a later delivery took the item over.
    fn superseded(self) -> bool {
        matches!(self.cancellation.reason(), Some(CancelReason::Superseded { .. }))
    }

    /// Whether the claim still holds after a stall. A supersession found here cancels the run,
    /// as the keep-alive's would; when the mailbox cannot say, the batch goes out as before
    /// (the terminal report is fenced whatever happens).
    async fn claim_holds(self) -> bool {
        match self.mailbox.claim_status(self.claim).await {
            Ok(ClaimStatus::Held) | Err(_) => true,
            Ok(ClaimStatus::Superseded { attempt_no }) => {
                self.cancellation.cancel(CancelReason::Superseded { attempt_no });
                false
            }
            Ok(ClaimStatus::Released) => false,
        }
    }
}

/// The publishing task's state: its [`Fence`], the reports waiting for their batch, the last
/// batch (until it is durable), the terminal reports' writes still pending, and what happened
/// so far.
struct Outbox<'a> {
    fence: Fence<'a>,
    waiting: Vec<Report>,
    last_batch: Option<Batch>,
    pending: Vec<PendingPublish>,
    out: Published,
}

impl<'a> Outbox<'a> {
    fn new(mailbox: &'a dyn Mailbox, claim: &'a Claim, cancellation: &'a Cancellation) -> Self {
        Outbox {
            fence: Fence { mailbox, claim, cancellation },
            waiting: Vec::new(),
            last_batch: None,
            pending: Vec::new(),
            out: Published::default(),
        }
    }

    /// [`Outbox::flush`], after checking the claim when the batch was due more than [`STALL`]
    /// ago (the process was stopped, the machine stalled: a later delivery may have taken the
    /// item over meanwhile); a claim that no longer holds drops the batch.
    async fn flush_checked(&mut self, due: Option<Instant>) {
        let late = due.is_some_and(|due| due.elapsed() > STALL);
        if late && !self.waiting.is_empty() && !self.fence.claim_holds().await {
            self.waiting.clear();
            return;
        }
        self.flush().await;
    }

    /// Publishes the waiting non-terminal reports in one write — none once the claim was
    /// superseded — after the batch before them is durable.
    async fn flush(&mut self) {
        let batch = std::mem::take(&mut self.waiting);
        if batch.is_empty() || self.fence.superseded() {
            return;
        }
        self.confirm_last().await;
        let pending = match self.fence.mailbox.publish(&batch).await {
            Ok(pending) => pending,
            // Not sent at all: [`Outbox::confirm_last`] sends it again.
            Err(e) => Box::pin(std::future::ready(Err(e))),
        };
        self.out.count += batch.len();
        self.last_batch = Some(Batch { reports: batch, pending });
    }

    /// Waits until the last batch is durable, publishing it again while its write fails — not
    /// once the claim no longer holds (checked before each new try: a copy stopped past its
    /// lease must not add its reports after a later attempt's); a batch that never became
    /// durable is an error of the delivery.
    async fn confirm_last(&mut self) {
        let Some(Batch { reports, pending }) = self.last_batch.take() else { return };
        let fence = self.fence;
        let give_up =
            || -> BoxFuture<'_, bool> { Box::pin(async move { fence.superseded() || !fence.claim_holds().await }) };
        let confirmed = crate::mailbox::confirm(fence.mailbox, &reports, pending, give_up).await;
        if let Err(e) = confirmed {
            self.out.errors.push(e);
        }
    }

    /// Stores and publishes the first terminal report with the waiting reports, once the batch
    /// before them is durable; with no failure so far, `settle` goes along (and is used up).
    async fn store_terminal(&mut self, report: Report, settle: &mut Option<SettleTicket>) {
        let before = std::mem::take(&mut self.waiting);
        self.confirm_last().await;
        let ticket = if self.out.errors.is_empty() { settle.take() } else { None };
        match self.fence.mailbox.finish(self.fence.claim, &before, &report, ticket.as_ref()).await {
            Ok(Some(finished)) => {
                self.out.terminal = Some(report);
                self.out.count += before.len() + 1;
                self.out.settled = finished.settled;
                self.pending.push(finished.pending);
            }
            Ok(None) => self.out.lost_claim = true,
            Err(e) => self.out.errors.push(e),
        }
    }

    /// Publishes a stored terminal report again, as `when` says.
    async fn republish(&mut self, report: Report, when: Republish) {
        let sent = match when {
            Republish::Always => self.fence.mailbox.publish(std::slice::from_ref(&report)).await.map(Some),
            Republish::IfMissing => self.fence.mailbox.republish_terminal(&report).await,
        };
        match sent {
            Ok(Some(p)) => {
                self.out.count += 1;
                self.pending.push(p);
            }
            Ok(None) => {}
            Err(e) => self.out.errors.push(e),
        }
        self.out.terminal = Some(report);
    }

    /// Waits for the terminal reports' writes; what happened to the delivery's reports.
    async fn close(self) -> Published {
        let Outbox { pending, mut out, .. } = self;
        for p in pending {
            if let Err(e) = p.await {
                out.errors.push(e);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mailbox::sqlite::SqliteMailbox;
    use crate::mailbox::{Begin, ReportQuery};
    use futures_util::StreamExt;
    use spine_protocol::report::{CanceledPayload, FailureKind};

    #[tokio::test(start_paused = true)]
    async fn a_batch_flushed_after_a_stall_is_dropped_when_a_later_delivery_took_the_item_over() {
        let dir = tempfile::tempdir().expect("tmp");
        let mailbox: Arc<dyn Mailbox> =
            Arc::new(SqliteMailbox::open(&dir.path().join("m.db"), Default::default()).expect("mailbox"));
        let claim = |attempt_no| Claim {
            item_id: "i".into(),
            attempt_no,
            delivery_id: "sqlite-1".into(),
            worker_id: "w".into(),
            version: 0,
        };
        let mut first = claim(1);
        assert_eq!(mailbox.begin(&mut first).await.expect("claim"), Begin::Run);
        let identity = WorkIdentity { mailbox_item_id: "i".into(), attempt_no: 1, ..WorkIdentity::default() };
        let cancellation = Cancellation::default();
        let publisher = Publisher::start(Arc::clone(&mailbox), first, identity, cancellation.clone(), None);
        // The lease ran out while this copy was stopped: the same delivery, claimed again.
        let mut second = claim(1);
        assert_eq!(mailbox.begin(&mut second).await.expect("claim"), Begin::Run);
        publisher.sink().emit(ReportBody::ExecutionStarted { expected_duration_seconds: 1 });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        // The copy resumes long after its batch was due.
        tokio::time::advance(STALL * 5).await;
        let published = publisher.finish().await;
        assert!(published.errors.is_empty(), "{:?}", published.errors);
        assert_eq!(published.count, 0, "the stale batch was not written");
        assert_eq!(cancellation.reason(), Some(CancelReason::Superseded { attempt_no: second.attempt_no }));
    }

    #[tokio::test]
    async fn a_superseded_copy_publishes_nothing_after_it_was_superseded() {
        let dir = tempfile::tempdir().expect("tmp");
        let mailbox: Arc<dyn Mailbox> =
            Arc::new(SqliteMailbox::open(&dir.path().join("m.db"), Default::default()).expect("mailbox"));
        let mut claim = Claim {
            item_id: "i".into(),
            attempt_no: 1,
            delivery_id: "sqlite-1".into(),
            worker_id: "w".into(),
            version: 0,
        };
        assert_eq!(mailbox.begin(&mut claim).await.expect("claim"), Begin::Run);
        let identity = WorkIdentity { mailbox_item_id: "i".into(), attempt_no: 1, ..WorkIdentity::default() };
        let cancellation = Cancellation::default();
        let publisher = Publisher::start(Arc::clone(&mailbox), claim, identity, cancellation.clone(), None);
        publisher.sink().emit(ReportBody::ExecutionStarted { expected_duration_seconds: 1 });
        let query = ReportQuery { item_id: Some("i".into()), follow: false };
        let read = || async {
            let stream = mailbox.reports(&query).await.expect("reports");
            stream.map(|r| r.expect("report")).collect::<Vec<Report>>().await
        };
        for _ in 0..1000 {
            if !read().await.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        cancellation.cancel(CancelReason::Superseded { attempt_no: 2 });
        publisher
            .sink()
            .emit(ReportBody::ResourceCloseAcknowledged { close_request_id: "c".into(), resource_id: "r".into() });
        publisher.sink().emit(ReportBody::ExecutionCanceled {
            terminal_payload: CanceledPayload {
                failure_kind: FailureKind::Canceled,
                last_error_summary: cancellation.summary(),
            },
        });
        let published = publisher.finish().await;
        assert!(published.errors.is_empty(), "{:?}", published.errors);
        assert_eq!(published.terminal, None);
        let reports = read().await;
        let methods: Vec<&str> = reports.iter().map(|r| r.body.method_id()).collect();
        assert_eq!(methods, ["execution_started"], "only what came before the supersession");
        assert_eq!(mailbox.terminal("i").await.expect("terminal"), None);
    }
}
