//! Workers under crashes and an absent broker, as real processes.
//!
//! The crash test submits N Bash items (each appends its id to a file of the workspace), runs
//! three `spine worker` processes and SIGKILLs two of them, chosen at random, while they run
//! items (a replacement starts after each kill); then every item must have exactly one terminal
//! report, `execution_complete`, and its side effect must have happened at least once. N is
//! `SPINE_CRASH_ITEMS` (default 60, for CI); `bench/crash.sh` runs it with 1,000 and prints the
//! counts. The broker tests start their own `nats-server` on a free port.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::json;
use spine_protocol::report::Report;
use spine_testkit::http::free_port;
use spine_worker::{MailboxUrl, ReportQuery};

use super::worker::{Backend, example, mailbox_url, spawn_worker};
use crate::support::*;

crate::both_backends!(killing_two_workers_mid_run_loses_no_item_and_completes_none_twice);

/// Worker settings that allow the Bash items (a worker has nobody to answer `ask`).
const ALLOW_BASH: &str = r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime")
}

/// Every report of the mailbox so far.
async fn all_reports(url: &MailboxUrl) -> Vec<Report> {
    let mailbox = url.open().await.expect("open the mailbox");
    let query = ReportQuery { item_id: None, follow: false };
    let mut stream = mailbox.reports(&query).await.expect("reports");
    let mut out = Vec::new();
    while let Some(r) = stream.next().await {
        out.push(r.expect("a report"));
    }
    out
}

fn lines_of(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// A random index below `n` (no `rand` in the workspace: UUIDv4 bits are random).
fn random_below(n: usize) -> usize {
    (uuid::Uuid::new_v4().as_u128() % n as u128) as usize
}

/// A `spine worker` (concurrency 2) that may run the Bash items; its stderr goes to a file of
/// the sandbox (a pipe nobody reads would block it).
fn start_worker(sandbox: &Sandbox, url: &str, n: usize) -> Child {
    let log = std::fs::File::create(sandbox.dir.path().join(format!("worker-{n}.log"))).expect("worker log");
    Command::new(assert_cmd::cargo::cargo_bin("spine"))
        .args(["worker", "--mailbox", url, "--concurrency", "2", "--grace-ms", "5000", "--settings", ALLOW_BASH])
        .current_dir(sandbox.project())
        .env("SPINE_HOME", sandbox.home())
        .env("HOME", sandbox.dir.path())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("spawn spine worker")
}

fn killing_two_workers_mid_run_loses_no_item_and_completes_none_twice(backend: Backend) {
    let items: usize =
        std::env::var("SPINE_CRASH_ITEMS").ok().and_then(|v| v.parse().ok()).filter(|n| *n > 0).unwrap_or(60);
    let sandbox = Sandbox::new();
    let url = mailbox_url(&sandbox, backend, "lease_ms=1000");
    let parsed: MailboxUrl = url.parse().expect("mailbox URL");
    let log = sandbox.project().join("done.log");
    let rt = runtime();
    let ids: Vec<String> = (0..items).map(|i| format!("crash-{i:05}")).collect();
    rt.block_on(async {
        let mailbox = parsed.open().await.expect("open the mailbox");
        for id in &ids {
            let mut item = example(id);
            let command = format!("sleep 0.2; echo {id} >> {}", log.display());
            item["payload"]["task_payload"] = json!({"mode": "deterministic_tool_call",
                "tool_call": {"tool_name": "Bash", "arguments": {"command": command}}});
            item["payload"]["allowed_tool_names"] = json!(["Bash"]);
            mailbox.submit(item.to_string().as_bytes()).await.expect("submit");
        }
    });

    let started = Instant::now();
    let mut workers: Vec<Child> = (0..3).map(|n| start_worker(&sandbox, &url, n)).collect();
    let deadline = started + Duration::from_secs(60) + Duration::from_millis(500) * items as u32;
    let mut kills = 0;
    for fraction in [3, 2] {
        // Kill when a third, then half, of the items are done: the workers are busy.
        while lines_of(&log) < items / fraction {
            assert!(Instant::now() < deadline, "only {} of {items} items ran", lines_of(&log));
            std::thread::sleep(Duration::from_millis(20));
        }
        let victim = random_below(workers.len());
        workers[victim].kill().expect("SIGKILL a worker");
        let _ = workers[victim].wait();
        kills += 1;
        workers[victim] = start_worker(&sandbox, &url, 3 + kills);
    }

    // Wait until every item has a terminal report.
    let reports = loop {
        let reports = rt.block_on(all_reports(&parsed));
        let finished: std::collections::HashSet<&str> =
            reports.iter().filter(|r| r.body.is_terminal()).map(|r| r.mailbox_item_id.as_str()).collect();
        if finished.len() >= items {
            break reports;
        }
        assert!(Instant::now() < deadline, "{} of {items} items finished", finished.len());
        std::thread::sleep(Duration::from_millis(500));
    };
    let wall = started.elapsed();
    for w in &mut workers {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(w.id()).expect("pid")),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    for mut w in workers {
        let _ = w.wait();
    }

    let mut terminals: HashMap<&str, Vec<(&str, u32)>> = HashMap::new();
    for r in reports.iter().filter(|r| r.body.is_terminal()) {
        terminals.entry(r.mailbox_item_id.as_str()).or_default().push((r.body.method_id(), r.attempt_no));
    }
    let effects = std::fs::read_to_string(&log).expect("the items' log");
    let mut runs: HashMap<&str, usize> = HashMap::new();
    for line in effects.lines() {
        *runs.entry(line.trim()).or_default() += 1;
    }
    let lost: Vec<&String> = ids.iter().filter(|id| !terminals.contains_key(id.as_str())).collect();
    let duplicated: Vec<(&&str, &Vec<(&str, u32)>)> = terminals.iter().filter(|(_, t)| t.len() > 1).collect();
    let not_complete: Vec<(&&str, &Vec<(&str, u32)>)> =
        terminals.iter().filter(|(_, t)| t.iter().any(|(m, _)| *m != "execution_complete")).collect();
    let no_effect: Vec<&String> = ids.iter().filter(|id| !runs.contains_key(id.as_str())).collect();
    let redelivered = terminals.values().filter(|t| t.iter().any(|(_, attempt)| *attempt > 1)).count();
    let rerun = runs.values().filter(|n| **n > 1).count();
    println!(
        "crash test ({backend:?}): {items} items, {kills} workers SIGKILLed, {} lost, {} completed twice, \
         {redelivered} finished on a later attempt, {rerun} side effects repeated, wall {:.1} s",
        lost.len(),
        duplicated.len(),
        wall.as_secs_f64()
    );
    assert!(lost.is_empty(), "items without a terminal report: {lost:?}");
    assert!(duplicated.is_empty(), "items with several terminal reports: {duplicated:?}");
    assert!(not_complete.is_empty(), "items that did not complete: {not_complete:?}");
    assert!(no_effect.is_empty(), "items whose work never happened: {no_effect:?}");
    assert_eq!(terminals.len(), items, "reports of unknown items");
    assert!(redelivered > 0, "the kills hit no running item");
}

/// Forwards a child's stderr lines to a channel.
fn stderr_lines(child: &mut Child) -> Receiver<String> {
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Stops a process this test started.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_nats_worker_started_before_its_broker_connects_once_the_broker_is_up() {
    let sandbox = Sandbox::new();
    let port = free_port();
    let url = format!("nats://127.0.0.1:{port}?prefix=late&lease_ms=5000&connect_wait_ms=60000");
    let mut worker = Reap(spawn_worker(&sandbox, &url, &["-v"]));
    let lines = stderr_lines(&mut worker.0);
    // The worker waits, one line per failed attempt.
    let mut retries = 0;
    let until = Instant::now() + Duration::from_secs(30);
    while retries < 2 {
        let line = lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("the worker logs its connection attempts (exited: {:?})", worker.0.try_wait()));
        if line.contains("cannot connect to nats://127.0.0.1") && line.contains("retrying in") {
            retries += 1;
        }
    }
    assert!(worker.0.try_wait().expect("status").is_none(), "the worker is still waiting");

    let store = tempfile::tempdir().expect("store dir");
    let _broker = Reap(
        Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nats-server"),
    );
    // `spine submit` waits for the broker too, by the same URL option.
    let path = sandbox.dir.path().join("item.json");
    std::fs::write(&path, example("late-1").to_string()).expect("item file");
    let out = sandbox.spine().args(["submit", "--mailbox", &url]).arg(&path).output().expect("spine submit");
    assert!(out.status.success(), "submit failed: {}", stderr(&out));

    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let out =
            sandbox.spine().args(["reports", "--mailbox", &url, "--item", "late-1"]).output().expect("spine reports");
        if stdout(&out).contains("\"execution_complete\"") {
            break;
        }
        assert!(Instant::now() < until, "the item did not complete: {}{}", stdout(&out), stderr(&out));
        std::thread::sleep(Duration::from_millis(200));
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(worker.0.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM the worker");
    let status = worker.0.wait().expect("the worker exits");
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_nats_worker_whose_broker_never_comes_fails_when_the_connect_wait_is_over() {
    let sandbox = Sandbox::new();
    let url = format!("nats://127.0.0.1:{}?connect_wait_ms=700", free_port());
    let out = sandbox
        .spine()
        .args(["worker", "--mailbox", &url, "-v"])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("spine worker");
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("retrying in"), "one line per failed attempt with -v: {err}");
    assert!(err.contains("cannot connect within connect_wait_ms=700"), "{err}");
}
