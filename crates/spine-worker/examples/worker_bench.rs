//! Worker benchmarks (run by `bench/worker.sh`, in release):
//!
//! - `throughput MAILBOX_URL ITEMS CONCURRENCY`: workers run in this process; a submitter puts
//!   ITEMS calculator assignments (the example item of docs/pipeline.md) in the mailbox as fast as it
//!   can — up to [`SUBMIT_WINDOW`] submissions awaiting their acknowledgement at once, as a
//!   pipelining producer (or several producers) would — while a follower reads the reports. Prints items/s from the first submit to the last
//!   `execution_complete`, then a paced run (at half that rate, at most 1,000 items) for
//!   p50/p99 submit → `execution_complete` latency, then the raw backend on a fresh mailbox
//!   (submit empty items with the same window; lease and ack them with the same concurrency)
//!   and the ratio.
//! - `memory INFLIGHT`: INFLIGHT concurrent `agent_run` assignments on the scripted model, each
//!   waiting in a 3 s `delay_ms` turn, on a SQLite mailbox; prints the RSS growth per in-flight
//!   run (peak RSS while all run, minus RSS after a warm-up run).
//!
//! Each result is also printed as one JSON line prefixed `RESULT `.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use serde_json::{Value, json};
use spine_protocol::report::ReportBody;
use spine_worker::mailbox::Mailbox;
use spine_worker::shutdown::{self, ShutdownTrigger};
use spine_worker::{Environment, MailboxUrl, ReportQuery, Worker, WorkerConfig, WorkerSummary};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Submissions in flight at once (each awaits the backend's acknowledgement: a JetStream
/// publish ack, a committed SQLite insert).
const SUBMIT_WINDOW: usize = 64;

/// Submits every body, up to [`SUBMIT_WINDOW`] at once, in order; `acked` is called with each
/// body's index as its acknowledgement arrives.
async fn submit_all(
    submitter: &Arc<dyn Mailbox>,
    bodies: Vec<Vec<u8>>,
    mut acked: impl FnMut(usize),
) -> Result<(), spine_worker::MailboxError> {
    let mut acks = futures_util::stream::iter(bodies.into_iter().enumerate())
        .map(|(i, body)| {
            let submitter = Arc::clone(submitter);
            async move { submitter.submit(&body).await.map(|_| i) }
        })
        .buffered(SUBMIT_WINDOW);
    while let Some(ack) = acks.next().await {
        acked(ack?);
    }
    Ok(())
}

fn example(item_id: &str) -> Value {
    spine_protocol::assignment::example_item(item_id)
}

struct Workers {
    trigger: ShutdownTrigger,
    handles: Vec<JoinHandle<Result<WorkerSummary, spine_worker::worker::WorkerError>>>,
}

async fn start_workers(
    url: &MailboxUrl,
    env: &Arc<Environment>,
    count: usize,
    concurrency: usize,
) -> Result<Workers, Error> {
    let (trigger, listener) = shutdown::channel();
    let mut handles = Vec::new();
    for _ in 0..count {
        let mailbox = url.open().await?;
        let mut config = WorkerConfig::new(url.lease());
        config.concurrency = concurrency;
        config.poll = Duration::from_millis(100);
        config.grace = Duration::from_secs(5);
        let worker = Worker::new(mailbox, Arc::clone(env), config);
        let listener = listener.clone();
        handles.push(tokio::spawn(async move { worker.run(listener).await }));
    }
    Ok(Workers { trigger, handles })
}

impl Workers {
    async fn stop(self) -> Result<(), Error> {
        self.trigger.fire();
        for h in self.handles {
            h.await??;
        }
        Ok(())
    }
}

/// Follows every report and sends `(item_id, when)` for each `execution_complete`.
async fn follow_completions(mailbox: Arc<dyn Mailbox>) -> Result<mpsc::UnboundedReceiver<(String, Instant)>, Error> {
    let mut stream = mailbox.reports(&ReportQuery { item_id: None, follow: true }).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(Ok(report)) = stream.next().await {
            if let ReportBody::ExecutionComplete { .. } = report.body
                && tx.send((report.mailbox_item_id, Instant::now())).is_err()
            {
                return;
            }
        }
    });
    Ok(rx)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A fresh mailbox URL: a new SQLite file, or a new NATS prefix.
fn fresh(base: &str, tag: &str) -> Result<MailboxUrl, Error> {
    let nonce = &uuid::Uuid::new_v4().simple().to_string()[..10];
    let text = if let Some(dir) = base.strip_prefix("sqlite:") {
        format!("sqlite:{dir}/bench-{tag}-{nonce}.db")
    } else {
        format!("{base}?prefix=bench{tag}{nonce}")
    };
    Ok(text.parse()?)
}

async fn throughput(base: &str, items: usize, concurrency: usize) -> Result<(), Error> {
    let workdir = tempfile::tempdir()?;
    let env = Arc::new(Environment::new(workdir.path(), None, Default::default(), Vec::new())?);

    // Throughput: submit as fast as possible while the workers run.
    let url = fresh(base, "e2e")?;
    let submitter = url.open().await?;
    let mut completions = follow_completions(url.open().await?).await?;
    let workers = start_workers(&url, &env, 1, concurrency).await?;
    // Warm-up (BPE tables, connections).
    submitter.submit(example("warm-up").to_string().as_bytes()).await?;
    while completions.recv().await.map(|(id, _)| id != "warm-up").unwrap_or(false) {}
    let ids: Vec<String> = (0..items).map(|i| format!("item-{i}")).collect();
    let bodies: Vec<Vec<u8>> = ids.iter().map(|id| example(id).to_string().into_bytes()).collect();
    let started = Instant::now();
    let mut submitted: HashMap<String, Instant> = HashMap::with_capacity(items);
    submit_all(&submitter, bodies, |i| {
        submitted.insert(ids[i].clone(), Instant::now());
    })
    .await?;
    let submit_elapsed = started.elapsed();
    let mut done = 0;
    let mut last = started;
    while done < items {
        let (id, at) = completions.recv().await.ok_or("report follower ended")?;
        if submitted.contains_key(&id) {
            done += 1;
            last = at;
        }
    }
    let elapsed = last - started;
    let rate = items as f64 / elapsed.as_secs_f64();
    workers.stop().await?;

    // Latency: paced submissions at half the measured rate.
    let url = fresh(base, "lat")?;
    let submitter = url.open().await?;
    let mut completions = follow_completions(url.open().await?).await?;
    let workers = start_workers(&url, &env, 1, concurrency).await?;
    submitter.submit(example("warm-up").to_string().as_bytes()).await?;
    while completions.recv().await.map(|(id, _)| id != "warm-up").unwrap_or(false) {}
    let paced = items.min(1000);
    let interval = Duration::from_secs_f64(2.0 / rate.max(1.0));
    let (lat_tx, mut lat_rx) = mpsc::unbounded_channel::<(String, Instant)>();
    let pacer = {
        let submitter = Arc::clone(&submitter);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            for i in 0..paced {
                tick.tick().await;
                let id = format!("paced-{i}");
                let at = Instant::now();
                if submitter.submit(example(&id).to_string().as_bytes()).await.is_err() {
                    return;
                }
                let _ = lat_tx.send((id, at));
            }
        })
    };
    let mut sent: HashMap<String, Instant> = HashMap::new();
    let mut finished: HashMap<String, Instant> = HashMap::new();
    while finished.len() < paced {
        tokio::select! {
            Some((id, at)) = lat_rx.recv() => { sent.insert(id, at); }
            Some((id, at)) = completions.recv() => { if id.starts_with("paced-") { finished.insert(id, at); } }
        }
    }
    pacer.await?;
    while let Ok((id, at)) = lat_rx.try_recv() {
        sent.insert(id, at);
    }
    let mut latencies: Vec<Duration> = finished
        .iter()
        .filter_map(|(id, end)| sent.get(id).map(|start| end.saturating_duration_since(*start)))
        .collect();
    latencies.sort();
    workers.stop().await?;

    // The raw backend: enqueue empty items, lease and ack them.
    let url = fresh(base, "raw")?;
    let raw = url.open().await?;
    let empty = vec![b"{}".to_vec(); items];
    let raw_started = Instant::now();
    let producer = {
        let raw = Arc::clone(&raw);
        tokio::spawn(async move { submit_all(&raw, empty, |_| {}).await })
    };
    let mut acked = 0;
    let mut pending = Vec::new();
    while acked < items {
        let leased = match raw.lease(concurrency, Duration::from_millis(200)).await {
            Ok(leased) => leased,
            Err(e) => {
                eprintln!("raw lease: {e} (retrying)");
                continue;
            }
        };
        for d in leased {
            pending.push(tokio::spawn(async move { d.lease.ack().await }));
            acked += 1;
        }
        if pending.len() >= concurrency {
            for p in pending.drain(..) {
                p.await??;
            }
        }
    }
    for p in pending {
        p.await??;
    }
    producer.await??;
    let raw_rate = items as f64 / raw_started.elapsed().as_secs_f64();

    let backend = if base.starts_with("sqlite:") { "sqlite" } else { "nats" };
    let (p50, p99) = (percentile(&latencies, 50.0), percentile(&latencies, 99.0));
    println!(
        "{backend:6} concurrency {concurrency}: {rate:8.0} items/s end to end ({items} items, submits took {:.0} ms); \
         paced at {:.0}/s: p50 {:.2} ms, p99 {:.2} ms; raw backend {raw_rate:8.0} items/s; ratio {:.2}",
        ms(submit_elapsed),
        1.0 / interval.as_secs_f64(),
        ms(p50),
        ms(p99),
        rate / raw_rate
    );
    println!(
        "RESULT {}",
        json!({"bench": "throughput", "backend": backend, "concurrency": concurrency, "items": items,
               "items_per_s": rate.round(), "p50_ms": ms(p50), "p99_ms": ms(p99),
               "raw_items_per_s": raw_rate.round(), "ratio": rate / raw_rate})
    );
    Ok(())
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

async fn memory(inflight: usize) -> Result<(), Error> {
    let dir = tempfile::tempdir()?;
    let script = dir.path().join("slow.json");
    std::fs::write(&script, json!({"turns": [{"text": "done", "delay_ms": 3000}]}).to_string())?;
    let quick = dir.path().join("quick.json");
    std::fs::write(&quick, json!({"turns": [{"text": "done"}]}).to_string())?;
    let env = Arc::new(Environment::new(dir.path(), None, Default::default(), Vec::new())?);
    let url: MailboxUrl = format!("sqlite:{}", dir.path().join("mem.db").display()).parse()?;
    let submitter = url.open().await?;
    let mut reports = submitter.reports(&ReportQuery { item_id: None, follow: true }).await?;
    let workers = start_workers(&url, &env, 1, inflight + 1).await?;
    let item = |id: &str, model: &std::path::Path| {
        let mut v = example(id);
        v["payload"]["task_payload"] =
            json!({"mode": "agent_run", "prompt": "wait", "model": format!("scripted:{}", model.display())});
        v.to_string()
    };
    // Warm-up: a few quick runs load everything a run needs once.
    for i in 0..inflight.min(16) {
        submitter.submit(item(&format!("warm-{i}"), &quick).as_bytes()).await?;
    }
    let mut warm = 0;
    while warm < inflight.min(16) {
        if let Some(Ok(r)) = reports.next().await
            && r.body.is_terminal()
        {
            warm += 1;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib();
    for i in 0..inflight {
        submitter.submit(item(&format!("slow-{i}"), &script).as_bytes()).await?;
    }
    let mut started = 0;
    let mut peak = before;
    let deadline = Instant::now() + Duration::from_secs(30);
    while started < inflight && Instant::now() < deadline {
        if let Ok(Some(Ok(r))) = tokio::time::timeout(Duration::from_millis(50), reports.next()).await
            && r.body.method_id() == "execution_started"
        {
            started += 1;
        }
        peak = peak.max(rss_kib());
    }
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        peak = peak.max(rss_kib());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let per_run = (peak.saturating_sub(before)) as f64 / started.max(1) as f64;
    workers.stop().await?;
    println!(
        "agent_run memory: {started} in flight on the scripted model: RSS {before} KiB -> {peak} KiB, \
         {per_run:.1} KiB per in-flight run"
    );
    println!(
        "RESULT {}",
        json!({"bench": "agent_run_memory", "inflight": started, "rss_before_kib": before, "rss_peak_kib": peak,
               "kib_per_run": per_run})
    );
    Ok(())
}

fn usage() -> Error {
    "usage: worker_bench throughput MAILBOX ITEMS CONCURRENCY | worker_bench memory INFLIGHT\n\
     (MAILBOX: sqlite:DIR for files in DIR, or nats://HOST:PORT)"
        .into()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Error> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SPINE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter).init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["throughput", base, items, concurrency] => throughput(base, items.parse()?, concurrency.parse()?).await,
        ["memory", inflight] => memory(inflight.parse()?).await,
        _ => Err(usage()),
    }
}
