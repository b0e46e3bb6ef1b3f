//! Reports on `p.reports.<item>` (published, read back in order, optionally followed) and
//! the dead letters of `P_DEAD`.

use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::consumer::pull::OrderedConfig;
use async_nats::jetstream::message::PublishMessage;
use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use futures_util::{FutureExt, TryFutureExt};
use spine_protocol::report::Report;

use super::{NatsMailbox, subject_token};
use crate::mailbox::{DeadLetter, MailboxError, PendingPublish, ReportQuery};

impl NatsMailbox {
    pub(super) async fn publish_report(&self, report: &Report) -> Result<PendingPublish, MailboxError> {
        self.publish_with(report, None).await
    }

    /// Publishes an item's terminal report with a message id derived from the item
    /// (`Nats-Msg-Id`), so that the server drops a second copy within its duplicate window —
    /// the copy a redelivery re-publishes while the first one is still on its way.
    pub(super) async fn publish_terminal_report(&self, report: &Report) -> Result<PendingPublish, MailboxError> {
        let id = format!("terminal.{}", subject_token(&report.mailbox_item_id));
        self.publish_with(report, Some(&id)).await
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

    pub(super) async fn republish_unless_present(
        &self,
        report: &Report,
    ) -> Result<Option<PendingPublish>, MailboxError> {
        // Any terminal report among the item's counts, not only the last one: reports of a
        // superseded claim may follow it.
        let query = ReportQuery { item_id: Some(report.mailbox_item_id.clone()), follow: false };
        let mut existing = self.read_reports(&query).await?;
        while let Some(next) = existing.next().await {
            if next?.body.is_terminal() {
                return Ok(None);
            }
        }
        self.publish_terminal_report(report).await.map(Some)
    }

    pub(super) async fn read_dead_letters(&self) -> Result<Vec<DeadLetter>, MailboxError> {
        let consumer = self
            .inner
            .dead
            .create_consumer(OrderedConfig { deliver_policy: DeliverPolicy::All, ..Default::default() })
            .await
            .map_err(|e| self.error(format!("dead letters: {e}")))?;
        let mut out = Vec::new();
        if consumer.cached_info().num_pending == 0 {
            return Ok(out);
        }
        let mut messages = consumer.messages().await.map_err(|e| self.error(format!("dead letters: {e}")))?;
        while let Some(next) = messages.next().await {
            let message = next.map_err(|e| self.error(format!("dead letters: {e}")))?;
            let header = |name: &str| {
                message.headers.as_ref().and_then(|h| h.get(name)).map(|v| v.as_str().to_owned()).unwrap_or_default()
            };
            let last = message.info().map(|i| i.pending == 0).unwrap_or(true);
            out.push(DeadLetter {
                delivery_id: header("Spine-Delivery-Id"),
                reason: header("Spine-Dead-Reason"),
                body: message.payload.to_vec(),
            });
            if last {
                break;
            }
        }
        Ok(out)
    }

    pub(super) async fn read_reports(
        &self,
        query: &ReportQuery,
    ) -> Result<BoxStream<'static, Result<Report, MailboxError>>, MailboxError> {
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
            return Ok(futures_util::stream::empty().boxed());
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
        Ok(out.boxed())
    }
}
