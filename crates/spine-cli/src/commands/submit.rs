//! `spine submit`: put an item in a mailbox and print its item id. The item is decoded as the
//! worker will decode it; an invalid or unsupported one is refused (exit 2, naming the
//! problem) unless `--no-validate`, which enqueues the bytes as they are (the worker then
//! answers with a `validation_error` or `unsupported_request_kind` report). Items without an
//! id print the mailbox's delivery id, under which their reports appear.

use std::io::Read;

use spine_protocol::assignment::check_item_id;
use spine_worker::MailboxUrl;
use spine_worker::decode::decode;

use crate::cli::SubmitArgs;
use crate::error::{config, exit};
use crate::out;

/// Runs `spine submit`.
pub async fn submit(args: SubmitArgs) -> anyhow::Result<u8> {
    let url: MailboxUrl = args.mailbox.parse().map_err(|e: spine_worker::url::UrlError| config(e.to_string()))?;
    let name = args.item.display().to_string();
    let body = if name == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map_err(|e| config(format!("cannot read the item from stdin: {e}")))?;
        buf
    } else {
        std::fs::read(&args.item).map_err(|e| config(format!("{name}: {e}")))?
    };
    let decoded = decode(&body, "");
    // Even an unvalidated item must carry an id every mailbox can hold.
    if !decoded.identity.item_id.is_empty()
        && let Err(e) = check_item_id(&decoded.identity.item_id)
    {
        return Err(config(format!("{name}: item_id: {e}")));
    }
    if let Err(rejection) = &decoded.item
        && !args.no_validate
    {
        return Err(config(format!("{name}: {rejection} (use --no-validate to submit it anyway)")));
    }
    let mailbox = url.open().await.map_err(|e| anyhow::anyhow!("cannot open the mailbox: {e}"))?;
    let delivery_id = mailbox.submit(&body).await.map_err(|e| anyhow::anyhow!("submit: {e}"))?;
    let item_id = decoded.identity.item_id;
    let _ = out::line(if item_id.is_empty() { delivery_id } else { item_id });
    Ok(exit::OK)
}
