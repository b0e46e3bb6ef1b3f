//! Scale-out benchmark helpers (run by `bench/scale-out.sh`, in release):
//!
//! - `submit MAILBOX_URL ITEMS`: puts ITEMS calculator assignments (the example item of
//!   docs/pipeline.md) in the mailbox, 64 submissions awaiting their ack at once.
//! - `wait MAILBOX_URL ITEMS`: follows the mailbox's reports until ITEMS items have a terminal
//!   report; prints `RESULT {"items":…,"seconds":…,"items_per_s":…}`, timed from its own
//!   start (the script starts it with the workers).
//! - `floor NATS_URL ITEMS CONCURRENCY REPLICAS`: the same JetStream work per item without
//!   spine, with async-nats only: fresh streams (items, reports, executions; REPLICAS
//!   replicas), ITEMS items published first, then a pull consumer with CONCURRENCY items in
//!   flight doing per item what the worker's mailbox does — publish a claim record and await
//!   its ack, publish `execution_started` and `execution_progress`, the terminal record and
//!   the terminal report, await those acks, then ack the item. Prints the same RESULT line,
//!   timed from the first fetch to the last ack.
//!
//! NATS URLs may be seed lists (`nats://a:1,b:2`).

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, consumer::pull, stream};
use futures_util::StreamExt as _;
use spine_worker::{MailboxUrl, ReportQuery};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn result(items: usize, seconds: f64) {
    let rate = items as f64 / seconds;
    println!("RESULT {}", serde_json::json!({"items": items, "seconds": seconds, "items_per_s": rate}));
}

async fn submit(url: &str, items: usize) -> Result<(), Error> {
    let mailbox = url.parse::<MailboxUrl>()?.open().await?;
    let bodies: Vec<Vec<u8>> = (0..items)
        .map(|i| spine_protocol::assignment::example_item(&format!("so-{i:07}")).to_string().into_bytes())
        .collect();
    let mut acks = futures_util::stream::iter(bodies)
        .map(|body| {
            let mailbox = Arc::clone(&mailbox);
            async move { mailbox.submit(&body).await }
        })
        .buffer_unordered(64);
    while let Some(ack) = acks.next().await {
        ack?;
    }
    Ok(())
}

async fn wait(url: &str, items: usize) -> Result<(), Error> {
    let started = Instant::now();
    let mailbox = url.parse::<MailboxUrl>()?.open().await?;
    let mut done = HashSet::new();
    let query = ReportQuery { item_id: None, follow: true };
    let mut reports = mailbox.reports(&query).await?;
    while done.len() < items {
        let Some(report) = reports.next().await else { return Err("the report stream ended".into()) };
        let report = report?;
        if report.body.is_terminal() {
            done.insert(report.mailbox_item_id);
        }
    }
    result(items, started.elapsed().as_secs_f64());
    Ok(())
}

async fn floor(url: &str, items: usize, concurrency: usize, replicas: usize) -> Result<(), Error> {
    let seeds: Vec<async_nats::ServerAddr> = url
        .trim_start_matches("nats://")
        .split(',')
        .map(|s| format!("nats://{s}").parse())
        .collect::<Result<_, _>>()?;
    let js = jetstream::new(async_nats::connect(seeds).await?);
    let tag = uuid::Uuid::new_v4().simple().to_string()[..8].to_ascii_uppercase();
    let name = |s: &str| format!("FLOOR{tag}_{s}");
    let subject = |s: &str| format!("floor{tag}.{s}");
    for s in ["ITEMS", "REPORTS", "EXEC"] {
        js.get_or_create_stream(stream::Config {
            name: name(s),
            subjects: vec![format!("{}.>", subject(&s.to_ascii_lowercase()))],
            num_replicas: replicas,
            ..Default::default()
        })
        .await?;
    }
    let body = spine_protocol::assignment::example_item("floor").to_string();
    let mut acks = futures_util::stream::iter(0..items)
        .map(|i| {
            let js = js.clone();
            let subject = format!("{}.{i}", subject("items"));
            let body = body.clone();
            async move { js.publish(subject, body.into()).await?.await.map(drop).map_err(Error::from) }
        })
        .buffer_unordered(64);
    while let Some(ack) = acks.next().await {
        ack?;
    }
    let consumer = js
        .get_stream(name("ITEMS"))
        .await?
        .create_consumer(pull::Config {
            durable_name: Some("workers".into()),
            ack_wait: Duration::from_secs(30),
            max_ack_pending: 100_000,
            ..Default::default()
        })
        .await?;
    let started = Instant::now();
    let messages = consumer.stream().max_messages_per_batch(concurrency).messages().await?;
    let report = serde_json::json!({"method_id": "execution_progress", "attempt_no": 1, "payload": body}).to_string();
    let handled = messages
        .take(items)
        .map(|message| {
            let js = js.clone();
            let (reports, exec) = (subject("reports"), subject("exec"));
            let report = report.clone();
            async move {
                let message = message?;
                let id = message.subject.split('.').next_back().unwrap_or_default().to_owned();
                js.publish(format!("{exec}.{id}"), report.clone().into()).await?.await?;
                let mut pending = Vec::new();
                for subject in [format!("{reports}.{id}"), format!("{reports}.{id}"), format!("{exec}.{id}")] {
                    pending.push(js.publish(subject, report.clone().into()).await?);
                }
                pending.push(js.publish(format!("{reports}.{id}"), report.into()).await?);
                for p in pending {
                    p.await?;
                }
                message.ack().await.map_err(|e| Error::from(e.to_string()))
            }
        })
        .buffer_unordered(concurrency);
    futures_util::pin_mut!(handled);
    while let Some(done) = handled.next().await {
        done?;
    }
    result(items, started.elapsed().as_secs_f64());
    for s in ["ITEMS", "REPORTS", "EXEC"] {
        let _ = js.delete_stream(name(s)).await;
    }
    Ok(())
}

fn usage() -> Error {
    "usage: scale_out submit URL ITEMS | wait URL ITEMS | floor NATS_URL ITEMS CONCURRENCY REPLICAS".into()
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |s: &str| s.parse::<usize>().map_err(|_| usage());
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["submit", url, items] => submit(url, num(items)?).await,
        ["wait", url, items] => wait(url, num(items)?).await,
        ["floor", url, items, concurrency, replicas] => {
            floor(url, num(items)?, num(concurrency)?, num(replicas)?).await
        }
        _ => Err(usage()),
    }
}
