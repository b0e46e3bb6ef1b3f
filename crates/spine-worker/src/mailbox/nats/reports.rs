//! The [`ReportLog`]: reports on `p.reports.<item>`, published, read back in order, optionally
//! followed.

use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::consumer::pull::OrderedConfig;
use async_nats::jetstream::message::PublishMessage;
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::StreamExt;
use futures_util::{FutureExt, TryFutureExt};
use spine_protocol::report::Report;

use super::{NatsMailbox, subject_token};
use crate::mailbox::{MailboxError, PendingPublish, ReportLog, ReportQuery, ReportStream, join_pending};

impl NatsMailbox {
    /// Publishes an item's terminal report with a message id derived from the item
    /// (`Nats-Msg-Id`), so that the server drops a second copy within its duplicate window —
    /// the copy a redelivery re-publishes while the first one is still on its way.
    pub(super) async fn publish_terminal_report(&self, report: &Report) -> Result<PendingPublish, MailboxError> {
        let id = format!("terminal.{}", subject_token(&report.mailbox_item_id));
        self.publish_with(report, Some(&id)).await
    }

    /// Whether the item's reports hold a terminal report — anywhere among them, not only last:
    /// reports of a superseded claim may follow it.
    pub(super) async fn terminal_published(&self, item_id: &str) -> Result<bool, MailboxError> {
        let query = ReportQuery { item_id: Some(item_id.to_owned()), follow: false };
        let mut existing = self.reports(&query).await?;
        while let Some(next) = existing.next().await {
            if next?.body.is_terminal() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn publish_with(&self, report: &Report, message_id: Option<&str>) -> Result<PendingPublish, MailboxError> {
        let payload =
            serde_json::to_vec(report).map_err(|e| MailboxError::Corrupt(format!("report does not serialize: {e}")))?;
        let subject = format!("{}.{}", self.inner.names.reports_prefix, subject_token(&report.mailbox_item_id));
        let mut publish = PublishMessage::build().payload(Bytes::from(payload));
        if let Some(id) = message_id {
            publish = publish.message_id(id);
        }
        let ack = self.inner.js.send_publish(subject, publish).await.map_err(|e| self.error(format!("report: {e}")))?;
        let url = self.inner.url.clone();
        Ok(ack
            .into_future()
            .map_ok(drop)
            .map_err(move |e| MailboxError::Nats { url, message: format!("report: {e}") })
            .boxed())
    }
}

#[async_trait]
impl ReportLog for NatsMailbox {
    /// The publishes go out back to back; the returned future awaits their acks together.
    /// Each carries its item, attempt and report id as `Nats-Msg-Id`, so a batch published
    /// again after a failed write ([`crate::mailbox::confirm`]) stores no second copy.
    async fn publish(&self, reports: &[Report]) -> Result<PendingPublish, MailboxError> {
        let mut pending = Vec::with_capacity(reports.len());
        for report in reports {
            let id = format!(
                "report.{}.a{}.{}",
                subject_token(&report.mailbox_item_id),
                report.attempt_no,
                report.protocol_message_id
            );
            pending.push(self.publish_with(report, Some(&id)).await?);
        }
        Ok(join_pending(pending))
    }

    async fn republish_terminal(&self, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        if self.terminal_published(&report.mailbox_item_id).await? {
            return Ok(None);
        }
        self.publish_terminal_report(report).await.map(Some)
    }

    async fn reports(&self, query: &ReportQuery) -> Result<ReportStream, MailboxError> {
        let filter = match &query.item_id {
            Some(id) => format!("{}.{}", self.inner.names.reports_prefix, subject_token(id)),
            None => format!("{}.>", self.inner.names.reports_prefix),
        };
        let consumer = self
            .inner
            .reports
            .create_consumer(OrderedConfig {
                filter_subject: filter,
                deliver_policy: DeliverPolicy::All,
                ..Default::default()
            })
            .await
            .map_err(|e| self.error(format!("reports: {e}")))?;
        if !query.follow && consumer.cached_info().num_pending == 0 {
            return Ok(ReportStream::new(futures_util::stream::empty().boxed()));
        }
        let messages = consumer.messages().await.map_err(|e| self.error(format!("reports: {e}")))?;
        let follow = query.follow;
        let url = self.inner.url.clone();
        let out = futures_util::stream::unfold(Some(messages), move |state| {
            let url = url.clone();
            async move {
                let mut messages = state?;
                let next = messages.next().await?;
                let message = match next {
                    Ok(m) => m,
                    Err(e) => return Some((Err(MailboxError::Nats { url, message: format!("reports: {e}") }), None)),
                };
                let last = !follow && message.info().map(|i| i.pending == 0).unwrap_or(false);
                let report = serde_json::from_slice::<Report>(&message.payload)
                    .map_err(|e| MailboxError::Corrupt(format!("report: {e}")));
                Some((report, if last { None } else { Some(messages) }))
            }
        });
        Ok(ReportStream::new(out.boxed()))
    }
}
