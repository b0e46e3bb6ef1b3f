//! Operating `spine worker` as a process: `--listen 127.0.0.1:0` (the bound address read from
//! its stderr line `spine worker: listening on ADDR`), `/metrics` after items ran,
//! `/healthz` and `/readyz`, and the drain on SIGTERM — readiness 503 while held items finish,
//! and an item unfinished at `--drain-timeout` handed back at once, so that a second worker
//! runs it without waiting for its lease to expire. SQLite and NATS mailboxes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use spine_testkit::files::wait_for_file_blocking;

use crate::both_backends;
use crate::support::*;
use crate::worker::{Backend, example, is_terminal, mailbox_url, spawn_worker};

both_backends!(
    metrics_count_what_ran_and_health_and_readiness_answer_200,
    during_a_drain_readiness_is_503_liveness_200_and_the_held_item_completes,
    an_item_unfinished_at_the_drain_timeout_is_released_and_a_second_worker_runs_it_before_its_lease_expires,
);

/// A worker is given this long to get somewhere (a deadline for a failing test, never a bound
/// a passing one is measured against).
const PATIENCE: Duration = Duration::from_secs(60);

/// A worker process started with `--listen 127.0.0.1:0`, its stderr collected.
struct Listening {
    child: Child,
    addr: String,
    stderr: Arc<Mutex<String>>,
}

impl Listening {
    fn start(sandbox: &Sandbox, url: &str, extra: &[&str]) -> Listening {
        let mut args = vec!["--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = spawn_worker(sandbox, url, &args);
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().expect("stderr piped");
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("spine worker: listening on ") {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_owned());
                }
                kept.lock().expect("lock").push_str(&format!("{line}\n"));
            }
        });
        let addr = rx.recv_timeout(PATIENCE).expect("the worker prints the address it listens on");
        Listening { child, addr, stderr }
    }

    /// `GET path`: the status code and the body.
    fn get(&self, path: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.addr).expect("connect to the worker's endpoint");
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.addr).expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        let status = response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).expect("a status line");
        let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
        (status, body)
    }

    /// The value of an unlabelled sample of `/metrics`.
    fn metric(&self, name: &str) -> f64 {
        let (status, body) = self.get("/metrics");
        assert_eq!(status, 200, "{body}");
        sample(&body, name).unwrap_or_else(|| panic!("no sample {name} in\n{body}"))
    }

    /// Polls until `check` holds.
    fn until(&self, what: &str, check: impl Fn(&Listening) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !check(self) {
            assert!(Instant::now() < deadline, "{what}: not within {PATIENCE:?}; stderr:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn sigterm(&self) {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("pid"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    }

    /// Waits for the exit; its code.
    fn exit_code(mut self) -> Option<i32> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the worker did not exit; stderr:\n{}", self.stderr());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().expect("lock").clone()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of the sample `name` (no labels) in a text exposition.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.split_whitespace().next()?.parse().ok())
}

fn submit(sandbox: &Sandbox, url: &str, item: &serde_json::Value, extra: &[&str]) {
    let path = sandbox.dir.path().join(format!("{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, item.to_string()).expect("item file");
    let out = sandbox.spine().args(["submit", "--mailbox", url]).args(extra).arg(&path).output().expect("submit");
    assert!(out.status.success(), "submit failed: {}", stderr(&out));
}

fn terminal(sandbox: &Sandbox, url: &str, item: &str) -> serde_json::Value {
    let out = sandbox.spine().args(["reports", "--mailbox", url, "--item", item]).output().expect("spine reports");
    assert!(out.status.success(), "{}", stderr(&out));
    let reports: Vec<serde_json::Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).expect("JSON report")).collect();
    let terminals: Vec<_> = reports.into_iter().filter(is_terminal).collect();
    assert_eq!(terminals.len(), 1, "one terminal report for {item}");
    terminals.into_iter().next().expect("one")
}

/// An item whose Bash call runs `command`.
fn bash_item(id: &str, command: &str) -> serde_json::Value {
    let mut item = example(id);
    item["payload"]["task_payload"] = json!({"mode": "deterministic_tool_call", "tool_call": {"tool_name": "Bash", "arguments": {"command": command}}});
    item["payload"]["allowed_tool_names"] = json!(["Bash"]);
    item
}

/// A worker has nobody to answer `ask`: its settings must allow the Bash call.
const ALLOW_BASH: &str = r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#;

fn metrics_count_what_ran_and_health_and_readiness_answer_200(backend: Backend) {
    let sandbox = Sandbox::new();
    let url = mailbox_url(&sandbox, backend, "lease_ms=5000");
    submit(&sandbox, &url, &example("ok-1"), &[]);
    submit(&sandbox, &url, &example("ok-2"), &[]);
    submit(&sandbox, &url, &json!({"item_id": "bad-1"}), &["--no-validate"]);

    let worker = Listening::start(&sandbox, &url, &[]);
    worker.until("three items ended", |w| {
        w.metric("spine_worker_items_completed_total") + w.metric("spine_worker_items_failed_total") >= 3.0
    });
    assert_eq!(worker.get("/healthz").0, 200);
    assert_eq!(worker.get("/readyz"), (200, "ok\n".to_owned()));
    let (_, text) = worker.get("/metrics");
    let value = |name: &str| sample(&text, name).unwrap_or_else(|| panic!("no {name} in\n{text}"));
    assert_eq!(value("spine_worker_items_leased_total"), 3.0, "{text}");
    assert_eq!(value("spine_worker_items_completed_total"), 2.0, "{text}");
    assert_eq!(value("spine_worker_items_failed_total"), 1.0, "{text}");
    assert_eq!(value("spine_worker_items_redelivered_total"), 0.0, "{text}");
    assert_eq!(value("spine_worker_items_released_total"), 0.0, "{text}");
    assert_eq!(value("spine_worker_mailbox_pending"), 0.0, "{text}");
    assert_eq!(value("spine_worker_draining"), 0.0, "{text}");
    // The example's calculator call, once per valid item; no model request.
    assert_eq!(value("spine_worker_tool_call_duration_seconds_count"), 2.0, "{text}");
    assert_eq!(value("spine_worker_model_request_duration_seconds_count"), 0.0, "{text}");
    assert!(text.contains("# TYPE spine_worker_items_in_flight gauge"), "{text}");
    assert!(text.contains("# TYPE spine_worker_oldest_lease_age_seconds gauge"), "{text}");
    assert_eq!(terminal(&sandbox, &url, "bad-1")["method_id"], "execution_fail");
    worker.sigterm();
    assert_eq!(worker.exit_code(), Some(0));
}

fn during_a_drain_readiness_is_503_liveness_200_and_the_held_item_completes(backend: Backend) {
    let sandbox = Sandbox::new();
    let url = mailbox_url(&sandbox, backend, "lease_ms=5000");
    let started = sandbox.project().join("started");
    let go = sandbox.project().join("go");
    let command = format!(
        "touch {s}; while [ ! -f {g} ]; do sleep 0.05; done; echo finished",
        s = started.display(),
        g = go.display()
    );
    submit(&sandbox, &url, &bash_item("held-1", &command), &[]);
    let worker = Listening::start(&sandbox, &url, &["--settings", ALLOW_BASH, "--drain-timeout", "10m"]);
    wait_for_file_blocking(&started, PATIENCE);
    assert_eq!(worker.get("/readyz").0, 200);

    worker.sigterm();
    worker.until("readiness turned 503", |w| w.get("/readyz").0 == 503);
    let (status, reason) = worker.get("/readyz");
    assert_eq!(status, 503);
    assert!(reason.contains("draining"), "{reason}");
    assert_eq!(reason.lines().count(), 1, "one line: {reason}");
    assert_eq!(worker.get("/healthz").0, 200, "alive while it drains");
    assert_eq!(worker.metric("spine_worker_draining"), 1.0);
    assert_eq!(worker.metric("spine_worker_items_in_flight"), 1.0);
    assert!(worker.metric("spine_worker_oldest_lease_age_seconds") > 0.0);

    std::fs::write(&go, "").expect("let the item finish");
    assert_eq!(worker.exit_code(), Some(0));
    let report = terminal(&sandbox, &url, "held-1");
    assert_eq!(report["method_id"], "execution_complete");
    assert_eq!(report["attempt_no"], 1);
}

fn an_item_unfinished_at_the_drain_timeout_is_released_and_a_second_worker_runs_it_before_its_lease_expires(
    backend: Backend,
) {
    let sandbox = Sandbox::new();
    // A lease far longer than the test may take: only a release hands the item over.
    let url = mailbox_url(&sandbox, backend, "lease_ms=3600000");
    let marker = sandbox.project().join("first-attempt");
    let command =
        format!("if [ -f {m} ]; then echo second attempt; else touch {m}; sleep 600; fi", m = marker.display());
    submit(&sandbox, &url, &bash_item("slow-1", &command), &[]);
    let first = Listening::start(&sandbox, &url, &["--settings", ALLOW_BASH, "--drain-timeout", "200ms"]);
    wait_for_file_blocking(&marker, PATIENCE);
    first.sigterm();
    assert_eq!(first.exit_code(), Some(0), "a drain exits 0");

    let second = sandbox
        .spine()
        .args(["worker", "--mailbox", &url, "--once", "--settings", ALLOW_BASH])
        .timeout(PATIENCE)
        .output()
        .expect("second worker");
    assert!(second.status.success(), "the item came back at once: {}", stderr(&second));
    let report = terminal(&sandbox, &url, "slow-1");
    assert_eq!(report["method_id"], "execution_complete");
    assert_eq!(report["attempt_no"], 2);
    assert_eq!(report["terminal_payload"]["tool_invocations"][0]["response_payload"]["exit_status"], 0);
}
