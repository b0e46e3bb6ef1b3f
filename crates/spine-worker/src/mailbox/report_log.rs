//! The report log's contract: reports appended in order, read back (and followed).
//!
//! A write that fails (a stream leader dies, a cluster loses its quorum) is tried again by
//! [`confirm`] for up to [`REPUBLISH_FOR`]: the backend keeps one copy of a report published
//! twice (JetStream drops a second message with the same `Nats-Msg-Id` within its duplicate
//! window; a failed SQLite transaction stored nothing).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::Stream;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use spine_protocol::report::Report;

use super::MailboxError;

/// The reports of every item, in the order they were published. See the module documentation
/// of [`crate::mailbox`].
#[async_trait]
pub trait ReportLog: Send + Sync {
    /// Appends reports in order, as one write where the backend can (SQLite: one transaction;
    /// JetStream: the publishes go out back to back). The returned future resolves when they
    /// are durable; reports of one item keep the order of the `publish` calls.
    async fn publish(&self, reports: &[Report]) -> Result<PendingPublish, MailboxError>;

    /// Publishes an item's stored terminal report again — a duplicate delivery of a finished
    /// item, whose first worker may have died between storing and publishing it — unless the
    /// item's reports already hold a terminal report (anywhere among them: reports of a
    /// superseded claim may have followed it), so that every item keeps exactly one terminal
    /// report. `None` when it was already there.
    async fn republish_terminal(&self, report: &Report) -> Result<Option<PendingPublish>, MailboxError>;

    /// Publishes one item's batch again after its write failed, and waits until it is durable
    /// — unless the item's reports already hold a terminal report: the check and the write are
    /// one step (SQLite: one transaction; JetStream: each publish expects the subject's last
    /// sequence, read before the check), so a batch never lands after a terminal report that
    /// another delivery published meanwhile. Reports of the batch already stored are not
    /// stored again. `false` when a terminal report was there and nothing was published.
    async fn publish_again(&self, reports: &[Report]) -> Result<bool, MailboxError>;

    /// Reads reports in order; the stream ends after the last one unless `query.follow`.
    async fn reports(&self, query: &ReportQuery) -> Result<ReportStream, MailboxError>;
}

/// Which reports to read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReportQuery {
    /// Only this item's.
    pub item_id: Option<String>,
    /// Keep streaming new reports after the existing ones.
    pub follow: bool,
}

/// Reports read from a mailbox ([`ReportLog::reports`]): a [`Stream`],
/// with [`ReportStream::next`] for callers that do not use `futures` themselves.
pub struct ReportStream(BoxStream<'static, Result<Report, MailboxError>>);

impl ReportStream {
    /// Wraps a backend's stream.
    pub fn new(stream: BoxStream<'static, Result<Report, MailboxError>>) -> Self {
        ReportStream(stream)
    }

    /// The next report; `None` at the end (never, when following).
    pub async fn next(&mut self) -> Option<Result<Report, MailboxError>> {
        futures_util::StreamExt::next(&mut self.0).await
    }
}

impl Stream for ReportStream {
    type Item = Result<Report, MailboxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().0.as_mut().poll_next(cx)
    }
}

/// A report's durable write, awaited later so that publishing does not wait for each one.
pub type PendingPublish = BoxFuture<'static, Result<(), MailboxError>>;

/// Waits for every write of `pending`; the first failure wins.
pub fn join_pending(pending: Vec<PendingPublish>) -> PendingPublish {
    Box::pin(async move {
        let mut first = Ok(());
        for p in futures_util::future::join_all(pending).await {
            if let Err(e) = p
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    })
}

/// How long [`confirm`] keeps publishing a failed batch again: an election takes seconds, a
/// lost quorum as long as its nodes are down; far below JetStream's duplicate window (two
/// minutes), so a copy that did land is still recognised.
pub const REPUBLISH_FOR: Duration = Duration::from_secs(30);

/// The first pause before publishing a failed batch again; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_secs(2);

/// Waits for `pending`, the write of one item's `reports`; while it fails, publishes them again
/// with [`ReportLog::publish_again`] (after a pause that grows) until a write succeeds, the
/// item's terminal report is found in the log, `give_up()` (asked before each new try) says to
/// stop, or [`REPUBLISH_FOR`] has passed — then the last failure. Reports of a batch whose
/// first write partly landed keep their order unless a later report landed and an earlier one
/// did not.
pub async fn confirm<'a>(
    log: &dyn ReportLog,
    reports: &[Report],
    pending: PendingPublish,
    give_up: impl Fn() -> BoxFuture<'a, bool>,
) -> Result<(), MailboxError> {
    let deadline = tokio::time::Instant::now() + REPUBLISH_FOR;
    let mut pause = FIRST_PAUSE;
    let mut result = pending.await;
    while let Err(e) = result {
        if tokio::time::Instant::now() + pause > deadline {
            return Err(e);
        }
        tracing::debug!(
            "reports of {}: {e}; publishing them again",
            reports.first().map_or("", |r| &r.mailbox_item_id)
        );
        tokio::time::sleep(pause).await;
        if give_up().await {
            return Err(e);
        }
        pause = (pause * 2).min(MAX_PAUSE);
        result = match log.publish_again(reports).await {
            Ok(true) => Ok(()),
            Ok(false) => return Err(e),
            Err(e) => Err(e),
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use spine_protocol::report::ReportBody;

    use super::*;

    /// A log whose first `failures` writes fail after the fact (the ack), and that records
    /// every report it stored; `terminal` says another delivery published the terminal report.
    struct Flaky {
        failures: Mutex<usize>,
        stored: Mutex<Vec<String>>,
        terminal: bool,
    }

    impl Flaky {
        fn new(failures: usize, terminal: bool) -> Self {
            Flaky { failures: Mutex::new(failures), stored: Mutex::new(Vec::new()), terminal }
        }
    }

    #[async_trait]
    impl ReportLog for Flaky {
        async fn publish(&self, reports: &[Report]) -> Result<PendingPublish, MailboxError> {
            let fail = {
                let mut left = self.failures.lock().map_err(|_| MailboxError::Corrupt("lock".into()))?;
                let fail = *left > 0;
                *left = left.saturating_sub(1);
                fail
            };
            if fail {
                return Ok(Box::pin(std::future::ready(Err(MailboxError::Corrupt("no leader".into())))));
            }
            let mut stored = self.stored.lock().map_err(|_| MailboxError::Corrupt("lock".into()))?;
            stored.extend(reports.iter().map(|r| r.protocol_message_id.clone()));
            Ok(Box::pin(std::future::ready(Ok(()))))
        }
        async fn republish_terminal(&self, _: &Report) -> Result<Option<PendingPublish>, MailboxError> {
            Ok(None)
        }
        async fn publish_again(&self, reports: &[Report]) -> Result<bool, MailboxError> {
            if self.terminal {
                return Ok(false);
            }
            self.publish(reports).await?.await.map(|()| true)
        }
        async fn reports(&self, _: &ReportQuery) -> Result<ReportStream, MailboxError> {
            Ok(ReportStream::new(Box::pin(futures_util::stream::empty())))
        }
    }

    fn reports() -> Vec<Report> {
        (1..=2)
            .map(|n| Report {
                protocol_message_id: format!("r{n}"),
                mailbox_item_id: "item".into(),
                logical_work_id: "item".into(),
                attempt_no: 1,
                body: ReportBody::ExecutionStarted { expected_duration_seconds: 1 },
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_whose_write_failed_is_published_again_until_it_is_durable() {
        let log = Flaky::new(3, false);
        let batch = reports();
        let first = log.publish(&batch).await.expect("sent");
        confirm(&log, &batch, first, || Box::pin(async { false })).await.expect("durable in the end");
        assert_eq!(*log.stored.lock().expect("lock"), ["r1", "r2"], "stored once, in order");
    }

    #[tokio::test(start_paused = true)]
    async fn confirm_stops_when_told_to_give_up_or_after_the_republish_time() {
        let log = Flaky::new(usize::MAX, false);
        let batch = reports();
        let first = log.publish(&batch).await.expect("sent");
        assert!(confirm(&log, &batch, first, || Box::pin(async { true })).await.is_err(), "gave up at once");
        let start = tokio::time::Instant::now();
        let first = log.publish(&batch).await.expect("sent");
        assert!(confirm(&log, &batch, first, || Box::pin(async { false })).await.is_err(), "never durable");
        assert!(start.elapsed() <= REPUBLISH_FOR, "within the republish time: {:?}", start.elapsed());
        assert!(log.stored.lock().expect("lock").is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn confirm_publishes_nothing_again_once_the_items_terminal_report_is_in_the_log() {
        let log = Flaky::new(1, true);
        let batch = reports();
        let first = log.publish(&batch).await.expect("sent");
        assert!(confirm(&log, &batch, first, || Box::pin(async { false })).await.is_err(), "not durable");
        assert!(log.stored.lock().expect("lock").is_empty(), "nothing after the terminal report");
    }
}
