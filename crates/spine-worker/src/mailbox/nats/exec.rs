//! The [`Executions`]: the idempotency store, one record per item on `p.exec.<item>` (claim,
//! cancel flag, terminal report), each write a compare-and-set on the subject's last sequence;
//! and the cancellation signals on `p.cancel`.

use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream;
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, StreamExt};
use serde::{Deserialize, Serialize};
use spine_protocol::report::Report;

use super::{CAS_TRIES, NatsMailbox, subject_token};
use crate::mailbox::{
    Begin, CancelSignal, CancelState, Claim, ClaimStatus, Executions, Finished, MailboxError, ReportLog, SettleTicket,
};

/// A record of the executions stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum ExecRecord {
    /// A delivery runs the item.
    Claimed { delivery_id: String, attempt_no: u32, worker_id: String, cancel_requested: bool },
    /// A close request came before any delivery.
    CancelRequested,
    /// The item finished, with its terminal report (stored once per item) and the delivery
    /// that stored it (absent in records written before it was kept).
    Terminal {
        attempt_no: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delivery_id: Option<String>,
        report: Box<Report>,
    },
}

impl NatsMailbox {
    fn exec_subject(&self, item_id: &str) -> String {
        format!("{}.{}", self.inner.names.exec_prefix, subject_token(item_id))
    }

    async fn last_exec(&self, item_id: &str) -> Result<Option<(u64, ExecRecord)>, MailboxError> {
        match self.inner.exec.get_last_raw_message_by_subject(&self.exec_subject(item_id)).await {
            Ok(m) => {
                let record = serde_json::from_slice(&m.payload)
                    .map_err(|e| MailboxError::Corrupt(format!("execution record of {item_id}: {e}")))?;
                Ok(Some((m.sequence, record)))
            }
            Err(e) => match e.kind() {
                stream::LastRawMessageErrorKind::NoMessageFound => Ok(None),
                stream::LastRawMessageErrorKind::InvalidSubject
                | stream::LastRawMessageErrorKind::JetStream(_)
                | stream::LastRawMessageErrorKind::Other => Err(self.error(format!("execution record: {e}"))),
            },
        }
    }

    /// Writes a record if the item's last record is still `expected` (0: none); `None` when
    /// someone wrote first.
    async fn put_exec(&self, item_id: &str, record: &ExecRecord, expected: u64) -> Result<Option<u64>, MailboxError> {
        let payload = serde_json::to_vec(record)
            .map_err(|e| MailboxError::Corrupt(format!("execution record does not serialize: {e}")))?;
        let publish = PublishMessage::build().payload(Bytes::from(payload)).expected_last_subject_sequence(expected);
        let ack = self
            .inner
            .js
            .send_publish(self.exec_subject(item_id), publish)
            .await
            .map_err(|e| self.error(format!("execution record: {e}")))?;
        match ack.await {
            Ok(a) => Ok(Some(a.sequence)),
            Err(e) => match e.kind() {
                PublishErrorKind::WrongLastSequence => Ok(None),
                PublishErrorKind::StreamNotFound
                | PublishErrorKind::WrongLastMessageId
                | PublishErrorKind::TimedOut
                | PublishErrorKind::BrokenPipe
                | PublishErrorKind::MaxAckPending
                | PublishErrorKind::MaxPayloadExceeded
                | PublishErrorKind::Other => Err(self.error(format!("execution record: {e}"))),
            },
        }
    }

    fn contended(&self, item_id: &str) -> MailboxError {
        self.error(format!("execution record of {item_id} kept changing ({CAS_TRIES} tries)"))
    }
}

#[async_trait]
impl Executions for NatsMailbox {
    async fn begin(&self, claim: &mut Claim) -> Result<Begin, MailboxError> {
        let mine = |claim: &Claim, cancel_requested: bool| ExecRecord::Claimed {
            delivery_id: claim.delivery_id.clone(),
            attempt_no: claim.attempt_no,
            worker_id: claim.worker_id.clone(),
            cancel_requested,
        };
        // Fast path: nothing recorded yet.
        if let Some(v) = self.put_exec(&claim.item_id, &mine(claim, false), 0).await? {
            claim.version = v;
            return Ok(Begin::Run);
        }
        for _ in 0..CAS_TRIES {
            let (seq, record) = match self.last_exec(&claim.item_id).await? {
                Some(last) => last,
                None => match self.put_exec(&claim.item_id, &mine(claim, false), 0).await? {
                    Some(v) => {
                        claim.version = v;
                        return Ok(Begin::Run);
                    }
                    None => continue,
                },
            };
            let cancel = match record {
                ExecRecord::Terminal { report, delivery_id: Some(d), .. } if d == claim.delivery_id => {
                    return Ok(Begin::Redelivered(report));
                }
                ExecRecord::Terminal { report, .. } => return Ok(Begin::Done(report)),
                ExecRecord::Claimed { delivery_id, attempt_no, .. }
                    if delivery_id == claim.delivery_id && attempt_no > claim.attempt_no =>
                {
                    return Ok(Begin::Stale { attempt_no });
                }
                ExecRecord::Claimed { delivery_id, cancel_requested, attempt_no, .. }
                    if delivery_id == claim.delivery_id =>
                {
                    if attempt_no >= claim.attempt_no {
                        claim.attempt_no = attempt_no.saturating_add(1);
                    }
                    cancel_requested
                }
                ExecRecord::Claimed { .. } => return Ok(Begin::Busy),
                ExecRecord::CancelRequested => true,
            };
            if let Some(v) = self.put_exec(&claim.item_id, &mine(claim, cancel), seq).await? {
                claim.version = v;
                return Ok(if cancel { Begin::CancelRequested } else { Begin::Run });
            }
        }
        Err(self.contended(&claim.item_id))
    }

    /// `before` is published first, without waiting for its acks; the delivery is never settled
    /// here (JetStream acknowledges it apart from the reports' stream).
    async fn finish(
        &self,
        claim: &Claim,
        before: &[Report],
        report: &Report,
        _settle: Option<&SettleTicket>,
    ) -> Result<Option<Finished>, MailboxError> {
        let earlier = self.publish(before).await?;
        let record = ExecRecord::Terminal {
            attempt_no: claim.attempt_no,
            delivery_id: Some(claim.delivery_id.clone()),
            report: Box::new(report.clone()),
        };
        let mut expected = claim.version;
        for _ in 0..CAS_TRIES {
            if self.put_exec(&claim.item_id, &record, expected).await?.is_some() {
                // The reports before it are durable before the terminal report goes out (their
                // acks came back during the record's write), published again if they failed —
                // unless the terminal report is out meanwhile (this worker stalled past its
                // lease and a redelivery re-published it): they would follow it, which
                // `publish_again` checks and refuses in one step.
                let never = || -> BoxFuture<'_, bool> { Box::pin(std::future::ready(false)) };
                crate::mailbox::confirm(self, before, earlier, never).await?;
                let terminal = self.publish_terminal_report(report).await?;
                return Ok(Some(Finished { pending: terminal, settled: false }));
            }
            // A close request may have flagged our claim meanwhile: still ours, try again.
            match self.last_exec(&claim.item_id).await? {
                Some((seq, ExecRecord::Claimed { delivery_id, attempt_no, .. }))
                    if delivery_id == claim.delivery_id && attempt_no == claim.attempt_no =>
                {
                    expected = seq;
                }
                Some((_, ExecRecord::Claimed { .. } | ExecRecord::Terminal { .. } | ExecRecord::CancelRequested))
                | None => return Ok(None),
            }
        }
        Err(self.contended(&claim.item_id))
    }

    async fn claim_status(&self, claim: &Claim) -> Result<ClaimStatus, MailboxError> {
        Ok(match self.last_exec(&claim.item_id).await? {
            Some((_, ExecRecord::Claimed { delivery_id, attempt_no, .. }))
            | Some((_, ExecRecord::Terminal { delivery_id: Some(delivery_id), attempt_no, .. }))
                if delivery_id == claim.delivery_id && attempt_no != claim.attempt_no =>
            {
                ClaimStatus::Superseded { attempt_no }
            }
            Some((_, ExecRecord::Claimed { delivery_id, .. })) if delivery_id == claim.delivery_id => ClaimStatus::Held,
            Some((_, ExecRecord::Claimed { .. } | ExecRecord::Terminal { .. } | ExecRecord::CancelRequested))
            | None => ClaimStatus::Released,
        })
    }

    async fn terminal(&self, item_id: &str) -> Result<Option<Report>, MailboxError> {
        Ok(match self.last_exec(item_id).await? {
            Some((_, ExecRecord::Terminal { report, .. })) => Some(*report),
            Some((_, ExecRecord::Claimed { .. } | ExecRecord::CancelRequested)) | None => None,
        })
    }

    async fn request_cancel(&self, item_id: &str, requested_by: &str) -> Result<CancelState, MailboxError> {
        for _ in 0..CAS_TRIES {
            match self.last_exec(item_id).await? {
                None => {
                    if self.put_exec(item_id, &ExecRecord::CancelRequested, 0).await?.is_some() {
                        return Ok(CancelState::NotStarted);
                    }
                }
                Some((_, ExecRecord::Terminal { report, .. })) => return Ok(CancelState::Finished(report)),
                Some((_, ExecRecord::CancelRequested)) => return Ok(CancelState::NotStarted),
                Some((seq, ExecRecord::Claimed { delivery_id, attempt_no, worker_id, .. })) => {
                    let flagged = ExecRecord::Claimed { delivery_id, attempt_no, worker_id, cancel_requested: true };
                    if self.put_exec(item_id, &flagged, seq).await?.is_some() {
                        let signal =
                            CancelSignal { item_id: item_id.to_owned(), requested_by: requested_by.to_owned() };
                        let payload = serde_json::to_vec(&signal)
                            .map_err(|e| MailboxError::Corrupt(format!("cancel signal: {e}")))?;
                        self.inner
                            .client
                            .publish(self.inner.names.cancel_subject.clone(), Bytes::from(payload))
                            .await
                            .map_err(|e| self.error(format!("cancel signal: {e}")))?;
                        self.inner.client.flush().await.map_err(|e| self.error(format!("cancel signal: {e}")))?;
                        return Ok(CancelState::Running);
                    }
                }
            }
        }
        Err(self.contended(item_id))
    }

    async fn cancel_signals(&self) -> Result<BoxStream<'static, CancelSignal>, MailboxError> {
        let sub = self
            .inner
            .client
            .subscribe(self.inner.names.cancel_subject.clone())
            .await
            .map_err(|e| self.error(format!("cancel signals: {e}")))?;
        // Make sure the server knows the subscription before anyone relies on it.
        self.inner.client.flush().await.map_err(|e| self.error(format!("cancel signals: {e}")))?;
        Ok(sub.filter_map(|m| async move { serde_json::from_slice::<CancelSignal>(&m.payload).ok() }).boxed())
    }
}
