//! The [`ReportLog`]: the `reports` table, read in insertion order and optionally followed.

use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use futures_util::stream;
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use spine_protocol::report::Report;

use super::{SqliteMailbox, latest_terminal, parse_report, to_json};
use crate::mailbox::{MailboxError, PendingPublish, ReportLog, ReportQuery, ReportStream};

/// The longest pause of a report follower between two polls (it polls again at once while
/// reports keep coming, and backs off from 1 ms when they do not).
const MAX_FOLLOW_PAUSE: Duration = Duration::from_millis(2);

#[async_trait]
impl ReportLog for SqliteMailbox {
    async fn publish(&self, reports: &[Report]) -> Result<PendingPublish, MailboxError> {
        let rows = rows(reports)?;
        if !rows.is_empty() {
            self.call(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                insert(&tx, &rows)?;
                tx.commit()
            })
            .await?;
        }
        Ok(Box::pin(async { Ok(()) }))
    }

    /// In the transaction that finds no terminal report of the item (stored with its record,
    /// in `terminals`), the reports of the batch not stored yet.
    async fn publish_again(&self, reports: &[Report]) -> Result<bool, MailboxError> {
        let Some(item_id) = reports.first().map(|r| r.mailbox_item_id.clone()) else { return Ok(true) };
        let rows = rows(reports)?;
        self.call(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if latest_terminal(&tx, &item_id)?.is_some() {
                return Ok(false);
            }
            let mut missing = Vec::with_capacity(rows.len());
            {
                let mut stored = tx.prepare_cached("SELECT 1 FROM reports WHERE item_id = ?1 AND body = ?2")?;
                for (item, body) in rows {
                    if !stored.exists(params![item, body])? {
                        missing.push((item, body));
                    }
                }
            }
            insert(&tx, &missing)?;
            tx.commit()?;
            Ok(true)
        })
        .await
    }

    async fn republish_terminal(&self, report: &Report) -> Result<Option<PendingPublish>, MailboxError> {
        let text = to_json(report)?;
        let item = report.mailbox_item_id.clone();
        let inserted = self
            .call(move |c| {
                let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let present = tx
                    .prepare_cached("SELECT 1 FROM reports WHERE item_id = ?1 AND body = ?2")?
                    .query_row(params![item, text], |_| Ok(()))
                    .optional()?
                    .is_some();
                if !present {
                    tx.prepare_cached("INSERT INTO reports (item_id, body) VALUES (?1, ?2)")?
                        .execute(params![item, text])?;
                }
                tx.commit()?;
                Ok(!present)
            })
            .await?;
        Ok(inserted.then(|| Box::pin(async { Ok(()) }) as PendingPublish))
    }

    async fn reports(&self, query: &ReportQuery) -> Result<ReportStream, MailboxError> {
        let mailbox = self.clone();
        let query = query.clone();
        let batches = stream::unfold(Some((mailbox, 0_i64)), move |state| {
            let query = query.clone();
            async move {
                let (mailbox, last) = state?;
                let mut pause = Duration::from_millis(1);
                loop {
                    let item = query.item_id.clone();
                    let polled = mailbox
                        .call(move |c| {
                            let mut st = c.prepare_cached(
                                "SELECT seq, body FROM reports WHERE seq > ?1 AND (?2 IS NULL OR item_id = ?2) \
                                 ORDER BY seq LIMIT 1000",
                            )?;
                            let rows = st.query_map(params![last, item], |r| Ok((r.get(0)?, r.get(1)?)))?;
                            rows.collect::<rusqlite::Result<Vec<(i64, String)>>>()
                        })
                        .await;
                    match polled {
                        Err(e) => return Some((vec![Err(e)], None)),
                        Ok(rows) if rows.is_empty() => {
                            if !query.follow {
                                return None;
                            }
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(MAX_FOLLOW_PAUSE);
                        }
                        Ok(rows) => {
                            let next = rows.last().map_or(last, |(seq, _)| *seq);
                            let reports = rows.into_iter().map(|(_, body)| parse_report(&body)).collect();
                            return Some((reports, Some((mailbox, next))));
                        }
                    }
                }
            }
        });
        Ok(ReportStream::new(batches.flat_map(stream::iter).boxed()))
    }
}

/// Each report with its item, as the `reports` table stores them.
fn rows(reports: &[Report]) -> Result<Vec<(String, String)>, MailboxError> {
    reports.iter().map(|r| Ok((r.mailbox_item_id.clone(), to_json(r)?))).collect()
}

fn insert(tx: &rusqlite::Transaction<'_>, rows: &[(String, String)]) -> rusqlite::Result<()> {
    let mut insert = tx.prepare_cached("INSERT INTO reports (item_id, body) VALUES (?1, ?2)")?;
    for (item, body) in rows {
        insert.execute(params![item, body])?;
    }
    Ok(())
}
