//! The idempotency store (`executions`, `terminals`): claims and terminal reports decided in
//! `BEGIN IMMEDIATE` transactions; and the cancellation signals of `cancels`, polled.

use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use spine_protocol::report::Report;

use super::{SqliteMailbox, latest_terminal, parse_report, sql_error, to_json};
use crate::mailbox::{Begin, CancelSignal, CancelState, Claim, ClaimStatus, MailboxError, PendingPublish};

/// How often workers poll for cancellation signals.
const POLL: Duration = Duration::from_millis(25);

impl SqliteMailbox {
    pub(super) async fn begin_execution(&self, claim: &mut Claim) -> Result<Begin, MailboxError> {
        let mut c2 = claim.clone();
        let path = self.inner.path.clone();
        self.try_call(move |c| {
            let err = |e| sql_error(&path, e);
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
            if let Some(text) = latest_terminal(&tx, &c2.item_id).map_err(err)? {
                // The row keeps the delivery that stored the terminal report.
                let holder: Option<Option<String>> = tx
                    .prepare_cached("SELECT delivery_id FROM executions WHERE item_id = ?1")
                    .and_then(|mut st| st.query_row([&c2.item_id], |r| r.get(0)).optional())
                    .map_err(err)?;
                tx.commit().map_err(err)?;
                let report = Box::new(parse_report(&text)?);
                let begin = if holder.flatten().as_deref() == Some(c2.delivery_id.as_str()) {
                    Begin::Redelivered(report)
                } else {
                    Begin::Done(report)
                };
                return Ok((begin, c2.attempt_no));
            }
            let row: Option<(Option<String>, i64, Option<u32>)> = tx
                .prepare_cached("SELECT delivery_id, cancel_requested, attempt_no FROM executions WHERE item_id = ?1")
                .and_then(|mut st| st.query_row([&c2.item_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional())
                .map_err(err)?;
            let outcome = match row {
                None => {
                    tx.prepare_cached(
                        "INSERT INTO executions (item_id, delivery_id, attempt_no, worker) VALUES (?1, ?2, ?3, ?4)",
                    )
                    .and_then(|mut st| st.execute(params![c2.item_id, c2.delivery_id, c2.attempt_no, c2.worker_id]))
                    .map_err(err)?;
                    Begin::Run
                }
                Some((Some(holder), _, Some(previous))) if holder == c2.delivery_id && previous > c2.attempt_no => {
                    Begin::Stale { attempt_no: previous }
                }
                Some((holder, cancel, previous))
                    if holder.is_none() || holder.as_deref() == Some(c2.delivery_id.as_str()) =>
                {
                    if let Some(previous) = previous.filter(|p| *p >= c2.attempt_no) {
                        c2.attempt_no = previous.saturating_add(1);
                    }
                    tx.execute(
                        "UPDATE executions SET delivery_id = ?2, attempt_no = ?3, worker = ?4 WHERE item_id = ?1",
                        params![c2.item_id, c2.delivery_id, c2.attempt_no, c2.worker_id],
                    )
                    .map_err(err)?;
                    if cancel != 0 { Begin::CancelRequested } else { Begin::Run }
                }
                Some(_) => Begin::Busy,
            };
            tx.commit().map_err(err)?;
            Ok((outcome, c2.attempt_no))
        })
        .await
        .map(|(outcome, attempt_no)| {
            claim.attempt_no = attempt_no;
            outcome
        })
    }

    pub(super) async fn finish_execution(
        &self,
        claim: &Claim,
        report: &Report,
    ) -> Result<Option<PendingPublish>, MailboxError> {
        let c2 = claim.clone();
        let text = to_json(report)?;
        let item = report.mailbox_item_id.clone();
        let stored = self
            .call(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                if latest_terminal(&tx, &c2.item_id)?.is_some() {
                    return Ok(false);
                }
                let holder: Option<(Option<String>, Option<u32>)> = tx
                    .prepare_cached("SELECT delivery_id, attempt_no FROM executions WHERE item_id = ?1")?
                    .query_row([&c2.item_id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?;
                if holder != Some((Some(c2.delivery_id.clone()), Some(c2.attempt_no))) {
                    return Ok(false);
                }
                tx.prepare_cached("INSERT INTO terminals (item_id, attempt_no, report) VALUES (?1, ?2, ?3)")?
                    .execute(params![c2.item_id, c2.attempt_no, text])?;
                tx.prepare_cached("INSERT INTO reports (item_id, body) VALUES (?1, ?2)")?
                    .execute(params![item, text])?;
                tx.commit()?;
                Ok(true)
            })
            .await?;
        Ok(stored.then(|| Box::pin(async { Ok(()) }) as PendingPublish))
    }

    pub(super) async fn fence_status(&self, claim: &Claim) -> Result<ClaimStatus, MailboxError> {
        let c2 = claim.clone();
        self.call(move |c| {
            let holder: Option<(Option<String>, Option<u32>)> = c
                .prepare_cached("SELECT delivery_id, attempt_no FROM executions WHERE item_id = ?1")?
                .query_row([&c2.item_id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let Some((Some(delivery_id), Some(attempt_no))) = holder else { return Ok(ClaimStatus::Released) };
            if delivery_id != c2.delivery_id {
                return Ok(ClaimStatus::Released);
            }
            if attempt_no != c2.attempt_no {
                return Ok(ClaimStatus::Superseded { attempt_no });
            }
            // The row keeps its holder after the terminal report is stored.
            Ok(if latest_terminal(c, &c2.item_id)?.is_some() { ClaimStatus::Released } else { ClaimStatus::Held })
        })
        .await
    }

    pub(super) async fn stored_terminal(&self, item_id: &str) -> Result<Option<Report>, MailboxError> {
        let id = item_id.to_owned();
        let text = self.call(move |c| latest_terminal(c, &id)).await?;
        text.as_deref().map(parse_report).transpose()
    }

    pub(super) async fn flag_cancel(&self, item_id: &str, requested_by: &str) -> Result<CancelState, MailboxError> {
        let id = item_id.to_owned();
        let by = requested_by.to_owned();
        let path = self.inner.path.clone();
        self.try_call(move |c| {
            let err = |e| sql_error(&path, e);
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
            if let Some(text) = latest_terminal(&tx, &id).map_err(err)? {
                tx.commit().map_err(err)?;
                return Ok(CancelState::Finished(Box::new(parse_report(&text)?)));
            }
            let holder: Option<Option<String>> = tx
                .query_row("SELECT delivery_id FROM executions WHERE item_id = ?1", [&id], |r| r.get(0))
                .optional()
                .map_err(err)?;
            let state = match holder {
                None => {
                    tx.execute("INSERT INTO executions (item_id, cancel_requested) VALUES (?1, 1)", [&id])
                        .map_err(err)?;
                    CancelState::NotStarted
                }
                Some(None) => CancelState::NotStarted,
                Some(Some(_)) => {
                    tx.execute("UPDATE executions SET cancel_requested = 1 WHERE item_id = ?1", [&id]).map_err(err)?;
                    tx.execute("INSERT INTO cancels (item_id, requested_by) VALUES (?1, ?2)", [&id, &by])
                        .map_err(err)?;
                    CancelState::Running
                }
            };
            tx.commit().map_err(err)?;
            Ok(state)
        })
        .await
    }

    pub(super) async fn poll_cancels(&self) -> Result<BoxStream<'static, CancelSignal>, MailboxError> {
        let start: i64 =
            self.call(|c| c.query_row("SELECT COALESCE(MAX(seq), 0) FROM cancels", [], |r| r.get(0))).await?;
        let mailbox = self.clone();
        let batches = stream::unfold((mailbox, start), |(mailbox, last)| async move {
            loop {
                let polled = mailbox
                    .call(move |c| {
                        let mut st = c.prepare_cached(
                            "SELECT seq, item_id, requested_by FROM cancels WHERE seq > ?1 ORDER BY seq",
                        )?;
                        let rows = st.query_map([last], |r| {
                            Ok((r.get::<_, i64>(0)?, CancelSignal { item_id: r.get(1)?, requested_by: r.get(2)? }))
                        })?;
                        rows.collect::<rusqlite::Result<Vec<_>>>()
                    })
                    .await;
                match polled {
                    Ok(rows) if !rows.is_empty() => {
                        let next = rows.last().map_or(last, |(seq, _)| *seq);
                        let ids: Vec<CancelSignal> = rows.into_iter().map(|(_, s)| s).collect();
                        return Some((stream::iter(ids), (mailbox, next)));
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!("cancel signals: {e}"),
                }
                tokio::time::sleep(POLL).await;
            }
        });
        Ok(batches.flatten().boxed())
    }
}
