//! `spine reports`: print a mailbox's reports as JSONL (one report per line, in order), all or
//! one item's (`--item ID`); `--follow` keeps streaming new ones until interrupted. A closed
//! stdout (`| head`) ends it quietly.

use spine_worker::{MailboxUrl, ReportQuery};

use crate::cli::ReportsArgs;
use crate::error::{config, exit};
use crate::out;

/// Runs `spine reports`.
pub async fn reports(args: ReportsArgs) -> anyhow::Result<u8> {
    let url: MailboxUrl = args.mailbox.parse().map_err(|e: spine_worker::url::UrlError| config(e.to_string()))?;
    let mailbox = url.open().await.map_err(|e| anyhow::anyhow!("cannot open the mailbox: {e}"))?;
    let query = ReportQuery { item_id: args.item, follow: args.follow };
    let mut stream = mailbox.reports(&query).await.map_err(|e| anyhow::anyhow!("reports: {e}"))?;
    while let Some(next) = stream.next().await {
        let report = next.map_err(|e| anyhow::anyhow!("reports: {e}"))?;
        if out::line(serde_json::to_string(&report)?) == out::Stdout::Closed {
            break;
        }
    }
    Ok(exit::OK)
}
