//! The [`Queue`]: submitting items to `p.items`, leasing them from the shared pull consumer,
//! settling each delivery (ack, nak, in-progress ack, dead letter to `p.dead.<item>`), and
//! reading the dead letters of `P_DEAD` back.

use std::time::Duration;

use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::consumer::pull::OrderedConfig;
use async_nats::jetstream::{self, AckKind};
use async_trait::async_trait;
use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::stream::StreamExt;

use super::NatsMailbox;
use crate::mailbox::{DeadLetter, Delivery, Lease, LeaseStatus, MailboxError, Queue};

#[async_trait]
impl Queue for NatsMailbox {
    fn describe(&self) -> String {
        format!("{} (prefix {})", self.inner.url, self.inner.options.prefix)
    }

    async fn submit(&self, body: &[u8]) -> Result<String, MailboxError> {
        let ack = self
            .inner
            .js
            .publish(self.inner.names.items_subject.clone(), Bytes::copy_from_slice(body))
            .await
            .map_err(|e| self.error(format!("submit: {e}")))?
            .await
            .map_err(|e| self.error(format!("submit: {e}")))?;
        Ok(format!("nats-{}", ack.sequence))
    }

    async fn lease(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, MailboxError> {
        let mut guard = self.inner.pull.lock().await;
        if guard.is_none() {
            // The pull stream asks the server for about as many messages as one lease may take
            // (at least 2, so that the next one is on its way while one runs), so that a busy
            // worker does not sit on messages other workers could run.
            let messages = self
                .inner
                .consumer
                .stream()
                .max_messages_per_batch(max.max(2))
                .heartbeat(Duration::from_secs(5))
                .expires(Duration::from_secs(10))
                .messages()
                .await
                .map_err(|e| self.error(format!("pull: {e}")))?;
            *guard = Some(messages);
        }
        let Some(messages) = guard.as_mut() else { return Ok(Vec::new()) };
        let deadline = tokio::time::Instant::now() + wait;
        let mut out = Vec::new();
        while out.len() < max.max(1) {
            let next = if out.is_empty() {
                match tokio::time::timeout_at(deadline, messages.next()).await {
                    Err(_elapsed) => return Ok(out),
                    Ok(next) => next,
                }
            } else {
                match messages.next().now_or_never() {
                    Some(next) => next,
                    None => return Ok(out),
                }
            };
            match next {
                Some(Ok(message)) => out.push(self.delivery(message)?),
                // A missed heartbeat (also seen when a busy worker did not pull for a while) or
                // any other failure: start a new pull stream. Nothing is lost — a message
                // delivered to the old one and never leased is redelivered after the ack wait.
                Some(Err(e)) => {
                    *guard = None;
                    if out.is_empty() {
                        return Err(self.error(format!("pull: {e}")));
                    }
                    tracing::debug!("pull stream restarts: {e}");
                    return Ok(out);
                }
                None => {
                    *guard = None;
                    return Ok(out);
                }
            }
        }
        Ok(out)
    }

    async fn release(&self) {
        let Some(mut messages) = self.inner.pull.lock().await.take() else { return };
        while let Some(Some(Ok(message))) = messages.next().now_or_never() {
            if let Err(e) = message.ack_with(AckKind::Nak(None)).await {
                tracing::warn!("release: {e}");
            }
        }
    }

    async fn drained(&self) -> Result<bool, MailboxError> {
        let info = self.inner.consumer.get_info().await.map_err(|e| self.error(format!("consumer info: {e}")))?;
        Ok(info.num_pending == 0 && info.num_ack_pending == 0)
    }

    async fn pending(&self) -> Result<Option<u64>, MailboxError> {
        let info = self.inner.consumer.get_info().await.map_err(|e| self.error(format!("consumer info: {e}")))?;
        Ok(Some(info.num_pending))
    }

    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, MailboxError> {
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
}

impl NatsMailbox {
    fn delivery(&self, message: jetstream::Message) -> Result<Delivery, MailboxError> {
        let info = message.info().map_err(|e| self.error(format!("message info: {e}")))?;
        let delivery_id = format!("nats-{}", info.stream_sequence);
        let delivery_count = u32::try_from(info.delivered).unwrap_or(u32::MAX).max(1);
        Ok(Delivery {
            delivery_id,
            delivery_count,
            max_deliver: self.inner.options.max_deliver,
            body: message.payload.to_vec(),
            lease: Box::new(NatsLease { mailbox: self.clone(), message }),
        })
    }
}

/// The lease of one JetStream message.
struct NatsLease {
    mailbox: NatsMailbox,
    message: jetstream::Message,
}

#[async_trait]
impl Lease for NatsLease {
    async fn ack(&self) -> Result<(), MailboxError> {
        self.message.ack().await.map_err(|e| self.mailbox.error(format!("ack: {e}")))
    }

    async fn nack(&self, delay: Option<Duration>) -> Result<(), MailboxError> {
        self.message.ack_with(AckKind::Nak(delay)).await.map_err(|e| self.mailbox.error(format!("nak: {e}")))
    }

    async fn keep_alive(&self) -> Result<LeaseStatus, MailboxError> {
        self.message
            .ack_with(AckKind::Progress)
            .await
            .map(|()| LeaseStatus::Held)
            .map_err(|e| self.mailbox.error(format!("in-progress ack: {e}")))
    }

    async fn dead_letter(&self, reason: &str) -> Result<(), MailboxError> {
        let item = serde_json::from_slice::<serde_json::Value>(&self.message.payload)
            .ok()
            .and_then(|v| v.get("item_id").and_then(|i| i.as_str()).map(str::to_owned));
        let sequence = self.message.info().map(|i| i.stream_sequence).unwrap_or(0);
        let delivery_id = format!("nats-{sequence}");
        let subject = self.mailbox.dead_letter_subject(item.as_deref().unwrap_or(&delivery_id));
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Spine-Dead-Reason", reason.replace(['\r', '\n'], " ").as_str());
        headers.insert("Spine-Delivery-Id", delivery_id.as_str());
        self.mailbox
            .inner
            .js
            .publish_with_headers(subject, headers, self.message.payload.clone())
            .await
            .map_err(|e| self.mailbox.error(format!("dead letter: {e}")))?
            .await
            .map_err(|e| self.mailbox.error(format!("dead letter: {e}")))?;
        self.message.ack_with(AckKind::Term).await.map_err(|e| self.mailbox.error(format!("term: {e}")))
    }
}
