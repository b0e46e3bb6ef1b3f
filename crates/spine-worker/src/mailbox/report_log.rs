//! The report log's contract: reports appended in order, read back (and followed).

use std::pin::Pin;
use std::task::{Context, Poll};

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
