//! The [`Queue`]: the `items` table. One `UPDATE … RETURNING` claims ready rows (queued, or
//! leased with an expired lease); every settlement checks the lease token; a dead letter is a
//! row in state `dead`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::params;

use super::{SqliteMailbox, delivery_id};
use crate::mailbox::{
    DeadLetter, Delivery, Lease, LeaseStatus, MailboxError, Queue, SettleTicket, TicketKind, millis, now_ms,
};

/// The longest pause between two claims while the queue is empty…
const MAX_IDLE_PAUSE: Duration = Duration::from_millis(2);
/// …and once it has been empty for [`LONG_IDLE`] (polling costs CPU; the first item after a
/// quiet spell waits up to this long).
const MAX_LONG_IDLE_PAUSE: Duration = Duration::from_millis(20);
/// How long the queue must stay empty before the longer pause applies.
const LONG_IDLE: Duration = Duration::from_secs(1);

impl SqliteMailbox {
    fn lease_for(&self, seq: i64, token: &str) -> SqliteLease {
        SqliteLease { mailbox: self.clone(), seq, token: token.to_owned() }
    }

    async fn claim(&self, max: usize) -> Result<Vec<Delivery>, MailboxError> {
        let n = self.inner.leases.fetch_add(1, Ordering::Relaxed);
        let token = format!("{}-{n}", self.inner.nonce);
        let lease_ms = millis(self.inner.options.lease);
        let max_deliver = self.inner.options.max_deliver;
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        let t = token.clone();
        let rows = self
            .call(move |c| {
                let now = now_ms();
                let mut st = c.prepare_cached(
                    "UPDATE items SET state = 'leased', deliveries = deliveries + 1, lease_token = ?1, \
                     lease_expires_at = ?2 + ?3 \
                     WHERE seq IN (SELECT seq FROM items \
                        WHERE (state = 'queued' AND available_at <= ?2) \
                           OR (state = 'leased' AND lease_expires_at <= ?2) \
                        ORDER BY seq LIMIT ?4) \
                     RETURNING seq, body, deliveries",
                )?;
                let rows = st.query_map(params![t, now, lease_ms, limit], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?, r.get::<_, u32>(2)?))
                })?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })
            .await?;
        let mut rows = rows;
        rows.sort_by_key(|(seq, _, _)| *seq);
        let deliveries: Vec<Delivery> = rows
            .into_iter()
            .map(|(seq, body, count)| Delivery {
                delivery_id: delivery_id(seq),
                delivery_count: count,
                max_deliver,
                body,
                lease: Box::new(self.lease_for(seq, &token)),
            })
            .collect();
        Ok(deliveries)
    }
}

#[async_trait]
impl Queue for SqliteMailbox {
    fn describe(&self) -> String {
        format!("sqlite:{}", self.inner.path.display())
    }

    async fn submit(&self, body: &[u8]) -> Result<String, MailboxError> {
        let body = body.to_vec();
        let seq = self
            .call(move |c| {
                let now = now_ms();
                c.prepare_cached("INSERT INTO items (body, available_at, submitted_at) VALUES (?1, ?2, ?2)")?
                    .execute(params![body, now])?;
                Ok(c.last_insert_rowid())
            })
            .await?;
        Ok(delivery_id(seq))
    }

    async fn lease(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, MailboxError> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut pause = Duration::from_millis(1);
        loop {
            let got = self.claim(max.max(1)).await?;
            if !got.is_empty() {
                self.inner.last_hit_ms.store(now_ms(), Ordering::Relaxed);
                return Ok(got);
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(got);
            }
            let idle = now_ms().saturating_sub(self.inner.last_hit_ms.load(Ordering::Relaxed));
            let cap = if idle > millis(LONG_IDLE) { MAX_LONG_IDLE_PAUSE } else { MAX_IDLE_PAUSE };
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(cap);
        }
    }

    async fn drained(&self) -> Result<bool, MailboxError> {
        self.call(|c| {
            c.query_row("SELECT COUNT(*) FROM items WHERE state IN ('queued', 'leased')", [], |r| r.get::<_, i64>(0))
        })
        .await
        .map(|n| n == 0)
    }

    async fn pending(&self) -> Result<Option<u64>, MailboxError> {
        self.call(|c| c.query_row("SELECT COUNT(*) FROM items WHERE state = 'queued'", [], |r| r.get::<_, i64>(0)))
            .await
            .map(|n| Some(u64::try_from(n).unwrap_or(0)))
    }

    async fn dead_letters(&self) -> Result<Vec<DeadLetter>, MailboxError> {
        self.call(|c| {
            let mut st =
                c.prepare("SELECT seq, COALESCE(dead_reason, ''), body FROM items WHERE state = 'dead' ORDER BY seq")?;
            let rows = st.query_map([], |r| {
                Ok(DeadLetter { delivery_id: delivery_id(r.get(0)?), reason: r.get(1)?, body: r.get(2)? })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })
        .await
    }
}

/// The lease of one SQLite row: every settlement checks the token, so a worker whose lease
/// expired (and was re-leased) changes nothing.
struct SqliteLease {
    mailbox: SqliteMailbox,
    seq: i64,
    token: String,
}

#[async_trait]
impl Lease for SqliteLease {
    async fn ack(&self) -> Result<(), MailboxError> {
        let (seq, token) = (self.seq, self.token.clone());
        self.mailbox
            .call(move |c| {
                c.prepare_cached("DELETE FROM items WHERE seq = ?1 AND lease_token = ?2")?.execute(params![seq, token])
            })
            .await
            .map(drop)
    }

    async fn nack(&self, delay: Option<Duration>) -> Result<(), MailboxError> {
        let (seq, token) = (self.seq, self.token.clone());
        let delay = delay.map_or(0, millis);
        self.mailbox
            .call(move |c| {
                c.prepare_cached(
                    "UPDATE items SET state = 'queued', available_at = ?3, lease_token = NULL, lease_expires_at = NULL \
                     WHERE seq = ?1 AND lease_token = ?2",
                )?
                .execute(params![seq, token, now_ms().saturating_add(delay)])
            })
            .await
            .map(drop)
    }

    async fn keep_alive(&self) -> Result<LeaseStatus, MailboxError> {
        let (seq, token) = (self.seq, self.token.clone());
        let lease = millis(self.mailbox.inner.options.lease);
        let n = self
            .mailbox
            .call(move |c| {
                c.prepare_cached(
                    "UPDATE items SET lease_expires_at = ?3 WHERE seq = ?1 AND lease_token = ?2 AND state = 'leased'",
                )?
                .execute(params![seq, token, now_ms().saturating_add(lease)])
            })
            .await?;
        Ok(if n == 1 { LeaseStatus::Held } else { LeaseStatus::Lost })
    }

    fn settle_ticket(&self) -> Option<SettleTicket> {
        Some(SettleTicket(TicketKind::Sqlite { seq: self.seq, token: self.token.clone() }))
    }

    async fn dead_letter(&self, reason: &str) -> Result<(), MailboxError> {
        let (seq, token, reason) = (self.seq, self.token.clone(), reason.to_owned());
        self.mailbox
            .call(move |c| {
                c.prepare_cached(
                    "UPDATE items SET state = 'dead', dead_reason = ?3, lease_token = NULL, lease_expires_at = NULL \
                     WHERE seq = ?1 AND lease_token = ?2",
                )?
                .execute(params![seq, token, reason])
            })
            .await
            .map(drop)
    }
}
