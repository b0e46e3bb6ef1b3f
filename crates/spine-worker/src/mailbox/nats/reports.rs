//! The [`ReportLog`]: reports on `p.reports.<item>`, published, read back in order, optionally
//! followed.

use std::collections::HashSet;

use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::consumer::pull::OrderedConfig;
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::LastRawMessageErrorKind;
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::StreamExt;
use futures_util::{FutureExt, TryFutureExt};
use spine_protocol::report::Report;

use super::{CAS_TRIES, NatsMailbox, subject_token};
use crate::mailbox::{MailboxError, PendingPublish, ReportLog, ReportQuery, ReportStream, join_pending};

impl NatsMailbox {
    /// Publishes an item's terminal report with a message id derived from the item
    /// (`Nats-Msg-Id`), so that the server drops a second copy within its duplicate window —
    /// the copy a redelivery re-publishes while the first one is still on its way.
    pub(super) async fn publish_terminal_report(&self, report: &Report) -> Result<PendingPublish, MailboxError> {
        let id = format!("terminal.{}", subject_token(&report.mailbox_item_id));
        self.publish_with(report, &id).await
    }

    /// The item's reports as (attempt, report id), or `None` when they hold a terminal report —
    /// anywhere among them, not only last: reports of a superseded claim may follow it.
    async fn stored_reports(&self, item_id: &str) -> Result<Option<HashSet<(u32, String)>>, MailboxError> {
        let query = ReportQuery { item_id: Some(item_id.to_owned()), follow: false };
        let mut existing = self.reports(&query).await?;
        let mut stored = HashSet::new();
        while let Some(next) = existing.next().await {
            let next = next?;
            if next.body.is_terminal() {
                return Ok(None);
            }
            stored.insert((next.attempt_no, next.protocol_message_id));
        }
        Ok(Some(stored))
    }

    fn reports_subject(&self, item_id: &str) -> String {
        format!("{}.{}", self.inner.names.reports_prefix, subject_token(item_id))
    }

    /// The report's `Nats-Msg-Id` in a batch: its item, attempt and id.
    fn batch_message_id(report: &Report) -> String {
        format!(
            "report.{}.a{}.{}",
            subject_token(&report.mailbox_item_id),
            report.attempt_no,
            report.protocol_message_id
        )
    }

    fn message(&self, report: &Report, message_id: &str) -> Result<PublishMessage, MailboxError> {
        let payload =
            serde_json::to_vec(report).map_err(|e| MailboxError::Corrupt(format!("report does not serialize: {e}")))?;
        Ok(PublishMessage::build().payload(Bytes::from(payload)).message_id(message_id))
    }

    /// The sequence of the last message on the item's reports subject (0: none).
    async fn last_report_sequence(&self, item_id: &str) -> Result<u64, MailboxError> {
        match self.inner.reports.get_last_raw_message_by_subject(&self.reports_subject(item_id)).await {
            Ok(m) => Ok(m.sequence),
            Err(e) => match e.kind() {
                LastRawMessageErrorKind::NoMessageFound => Ok(0),
                LastRawMessageErrorKind::InvalidSubject
                | LastRawMessageErrorKind::JetStream(_)
                | LastRawMessageErrorKind::Other => Err(self.error(format!("reports: {e}"))),
            },
        }
    }

    /// One try of [`ReportLog::publish_again`]: `None` when the subject changed between the
    /// read and a write (read again), else whether the batch was published.
    async fn publish_again_once(&self, reports: &[Report], item_id: &str) -> Result<Option<bool>, MailboxError> {
        // The sequence first, then the log: whatever is stored after that sequence is either
        // in the read below or makes the first guarded publish fail.
        let mut expected = self.last_report_sequence(item_id).await?;
        let Some(stored) = self.stored_reports(item_id).await? else { return Ok(Some(false)) };
        for report in reports {
            if stored.contains(&(report.attempt_no, report.protocol_message_id.clone())) {
                continue;
            }
            let publish =
                self.message(report, &Self::batch_message_id(report))?.expected_last_subject_sequence(expected);
            let subject = self.reports_subject(item_id);
            let ack =
                self.inner.js.send_publish(subject, publish).await.map_err(|e| self.error(format!("report: {e}")))?;
            match ack.await {
                // A duplicate was stored after the read: its sequence is not the last one.
                Ok(a) if a.duplicate => return Ok(None),
                Ok(a) => expected = a.sequence,
                Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => return Ok(None),
                Err(e) => return Err(self.error(format!("report: {e}"))),
            }
        }
        Ok(Some(true))
    }

    async fn publish_with(&self, report: &Report, message_id: &str) -> Result<PendingPublish, MailboxError> {
        let subject = self.reports_subject(&report.mailbox_item_id);
        let publish = self.message(report, message_id)?;
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
            pending.push(self.publish_with(report, &Self::batch_message_id(report)).await?);
        }
        Ok(join_pending(pending))
    }

    async fn publish_again(&self, reports: &[Report]) -> Result<bool, MailboxError> {
        let Some(item_id) = reports.first().map(|r| r.mailbox_item_id.as_str()) else { return Ok(true) };
        if reports.iter().any(|r| r.mailbox_item_id != item_id) {
            return Err(MailboxError::Corrupt("a batch published again holds reports of several items".into()));
        }
        for _ in 0..CAS_TRIES {
            if let Some(published) = self.publish_again_once(reports, item_id).await? {
                return Ok(published);
            }
        }
        Err(self.error(format!("reports of {item_id} kept changing ({CAS_TRIES} tries)")))
    }

    async fn republish_terminal(&self, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        if self.stored_reports(&report.mailbox_item_id).await?.is_none() {
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
