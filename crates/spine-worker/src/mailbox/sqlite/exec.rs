//! The [`Executions`]: the idempotency store (`executions`, `terminals`), claims and terminal
//! reports decided in `BEGIN IMMEDIATE` transactions; and the cancellation signals of
//! `cancels`, polled.

use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use spine_protocol::report::Report;

use super::{SqliteMailbox, latest_terminal, parse_report, sql_error, to_json};
use crate::mailbox::{
    Begin, CancelSignal, CancelState, Claim, ClaimStatus, Executions, Finished, MailboxError, SettleTicket, TicketKind,
};

/// How often workers poll for cancellation signals.
const POLL: Duration = Duration::from_millis(25);

#[async_trait]
impl Executions for SqliteMailbox {
    async fn begin(&self, claim: &mut Claim) -> Result<Begin, MailboxError> {
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

    /// One transaction: the claim check, the reports before the terminal one, the terminal
    /// report (stored and published), and — with a ticket — the deletion of the delivery's row
    /// while it still carries the ticket's lease token. Nothing is written when the claim no
    /// longer holds.
    async fn finish(
        &self,
        claim: &Claim,
        before: &[Report],
        report: &Report,
        settle: Option<&SettleTicket>,
    ) -> Result<Option<Finished>, MailboxError> {
        let c2 = claim.clone();
        let text = to_json(report)?;
        let earlier = before
            .iter()
            .map(|r| Ok((r.mailbox_item_id.clone(), to_json(r)?)))
            .collect::<Result<Vec<_>, MailboxError>>()?;
        let item = report.mailbox_item_id.clone();
        let ack = settle.map(|t| {
            let TicketKind::Sqlite { seq, token } = &t.0;
            (*seq, token.clone())
        });
        let stored = self
            .call(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                if latest_terminal(&tx, &c2.item_id)?.is_some() {
                    return Ok(None);
                }
                let holder: Option<(Option<String>, Option<u32>)> = tx
                    .prepare_cached("SELECT delivery_id, attempt_no FROM executions WHERE item_id = ?1")?
                    .query_row([&c2.item_id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?;
                if holder != Some((Some(c2.delivery_id.clone()), Some(c2.attempt_no))) {
                    return Ok(None);
                }
                {
                    let mut insert = tx.prepare_cached("INSERT INTO reports (item_id, body) VALUES (?1, ?2)")?;
                    for (id, body) in &earlier {
                        insert.execute(params![id, body])?;
                    }
                }
                tx.prepare_cached("INSERT INTO terminals (item_id, attempt_no, report) VALUES (?1, ?2, ?3)")?
                    .execute(params![c2.item_id, c2.attempt_no, text])?;
                tx.prepare_cached("INSERT INTO reports (item_id, body) VALUES (?1, ?2)")?
                    .execute(params![item, text])?;
                let settled = match &ack {
                    Some((seq, token)) => {
                        tx.prepare_cached("DELETE FROM items WHERE seq = ?1 AND lease_token = ?2")?
                            .execute(params![seq, token])?
                            == 1
                    }
                    None => false,
                };
                tx.commit()?;
                Ok(Some(settled))
            })
            .await?;
        Ok(stored.map(|settled| Finished { pending: Box::pin(async { Ok(()) }), settled }))
    }

    async fn claim_status(&self, claim: &Claim) -> Result<ClaimStatus, MailboxError> {
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

    async fn terminal(&self, item_id: &str) -> Result<Option<Report>, MailboxError> {
        let id = item_id.to_owned();
        let text = self.call(move |c| latest_terminal(c, &id)).await?;
        text.as_deref().map(parse_report).transpose()
    }

    async fn request_cancel(&self, item_id: &str, requested_by: &str) -> Result<CancelState, MailboxError> {
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

    async fn cancel_signals(&self) -> Result<BoxStream<'static, CancelSignal>, MailboxError> {
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::StreamExt;
    use spine_protocol::report::{Report, ReportBody};

    use crate::mailbox::sqlite::SqliteMailbox;
    use crate::mailbox::{Begin, Claim, Executions, Queue, ReportLog, ReportQuery};

    fn report(body: ReportBody) -> Report {
        Report {
            protocol_message_id: format!("m-{}", body.method_id()),
            mailbox_item_id: "i".into(),
            logical_work_id: "w".into(),
            attempt_no: 1,
            body,
        }
    }

    #[tokio::test]
    async fn a_claim_that_no_longer_holds_writes_none_of_the_reports_before_its_terminal_one() {
        let dir = tempfile::tempdir().expect("tmp");
        let mailbox = SqliteMailbox::open(&dir.path().join("m.db"), Default::default()).expect("mailbox");
        mailbox.submit(b"{}").await.expect("submit");
        let mut leased = mailbox.lease(1, Duration::from_secs(5)).await.expect("lease");
        let delivery = leased.pop().expect("a delivery");
        let claim = |worker: &str| Claim {
            item_id: "i".into(),
            attempt_no: 1,
            delivery_id: delivery.delivery_id.clone(),
            worker_id: worker.into(),
            version: 0,
        };
        let mut first = claim("first");
        assert_eq!(mailbox.begin(&mut first).await.expect("begin"), Begin::Run);
        let mut second = claim("second");
        assert_eq!(mailbox.begin(&mut second).await.expect("begin"), Begin::Run);

        let before = [report(ReportBody::ExecutionStarted { expected_duration_seconds: 1 })];
        let terminal = report(ReportBody::ExecutionCanceled {
            terminal_payload: spine_protocol::report::CanceledPayload {
                failure_kind: spine_protocol::report::FailureKind::Canceled,
                last_error_summary: "x".into(),
            },
        });
        let ticket = delivery.lease.settle_ticket();
        assert!(ticket.is_some(), "SQLite settles with the terminal report");
        let refused = mailbox.finish(&first, &before, &terminal, ticket.as_ref()).await.expect("finish");
        assert!(refused.is_none());
        let query = ReportQuery { item_id: Some("i".into()), follow: false };
        let reports: Vec<_> = mailbox.reports(&query).await.expect("reports").collect().await;
        assert!(reports.is_empty(), "{reports:?}");
        assert!(!mailbox.drained().await.expect("drained"), "the delivery is still leased");

        // The claim that holds stores everything and settles the delivery in one transaction.
        let held = mailbox.finish(&second, &before, &terminal, ticket.as_ref()).await.expect("finish");
        let finished = held.expect("the claim holds");
        assert!(finished.settled);
        finished.pending.await.expect("durable");
        let reports: Vec<_> = mailbox.reports(&query).await.expect("reports").collect().await;
        assert_eq!(reports.len(), 2);
        assert!(mailbox.drained().await.expect("drained"), "settled with the terminal report");
    }
}
