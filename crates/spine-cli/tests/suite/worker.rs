//! `spine worker`, `spine submit`, `spine reports` as processes, against a SQLite file and a
//! NATS JetStream server (`SPINE_TEST_NATS_URL`, default `nats://127.0.0.1:4222`; a missing
//! server fails the `nats` tests).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use spine_testkit::files::wait_for_file_blocking;

use crate::support::*;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Backend {
    Sqlite,
    Nats,
}

#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[test]
                fn sqlite() {
                    super::$name(super::Backend::Sqlite)
                }
                #[test]
                fn nats() {
                    super::$name(super::Backend::Nats)
                }
            }
        )*
    };
}

both_backends!(
    submit_then_worker_once_then_reports_prints_the_example_reports,
    reports_follow_streams_reports_as_they_are_published,
    a_worker_killed_mid_item_loses_nothing_the_item_completes_on_attempt_2,
    submit_refuses_an_over_long_or_multi_line_item_id_even_unvalidated,
);

pub(crate) fn mailbox_url(sandbox: &Sandbox, backend: Backend, options: &str) -> String {
    match backend {
        Backend::Sqlite => format!("sqlite:{}?{options}", sandbox.dir.path().join("mailbox.db").display()),
        Backend::Nats => {
            let url = spine_testkit::nats::nats_url();
            let prefix = spine_testkit::nats::unique_prefix("cli");
            format!("{url}?prefix={prefix}&{options}")
        }
    }
}

pub(crate) fn example(item_id: &str) -> Value {
    spine_protocol::assignment::example_item(item_id)
}

fn submit(sandbox: &Sandbox, url: &str, item: &Value) -> String {
    let path = sandbox.dir.path().join(format!("{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, item.to_string()).expect("item file");
    let out = sandbox.spine().args(["submit", "--mailbox", url]).arg(&path).output().expect("spine submit");
    assert!(out.status.success(), "submit failed: {}", stderr(&out));
    stdout(&out).trim().to_owned()
}

fn reports(sandbox: &Sandbox, url: &str, item: &str) -> Vec<Value> {
    let out = sandbox.spine().args(["reports", "--mailbox", url, "--item", item]).output().expect("spine reports");
    assert!(out.status.success(), "reports failed: {}", stderr(&out));
    stdout(&out).lines().map(|l| serde_json::from_str(l).expect("one JSON report per line")).collect()
}

fn methods(reports: &[Value]) -> Vec<&str> {
    reports.iter().filter_map(|r| r["method_id"].as_str()).collect()
}

pub(crate) fn is_terminal(r: &Value) -> bool {
    matches!(
        r["method_id"].as_str(),
        Some(
            "execution_complete"
                | "execution_fail"
                | "execution_canceled"
                | "agent_program_completed"
                | "agent_program_failed"
                | "resource_closed"
        )
    )
}

/// A `spine worker` process.
pub(crate) fn spawn_worker(sandbox: &Sandbox, url: &str, extra: &[&str]) -> Child {
    let bin = assert_cmd::cargo::cargo_bin("spine");
    Command::new(bin)
        .args(["worker", "--mailbox", url, "--concurrency", "2"])
        .args(extra)
        .current_dir(sandbox.project())
        .env("SPINE_HOME", sandbox.home())
        .env("HOME", sandbox.dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn spine worker")
}

fn submit_then_worker_once_then_reports_prints_the_example_reports(backend: Backend) {
    let sandbox = Sandbox::new();
    let url = mailbox_url(&sandbox, backend, "lease_ms=5000");
    assert_eq!(submit(&sandbox, &url, &example("item-0001")), "item-0001");
    let out = sandbox.spine().args(["worker", "--mailbox", &url, "--once"]).output().expect("spine worker");
    assert!(out.status.success(), "worker --once failed: {}", stderr(&out));
    let lines = reports(&sandbox, &url, "item-0001");
    assert_eq!(methods(&lines), ["execution_started", "execution_progress", "execution_complete"]);
    assert_eq!(lines[1]["progress_payload"]["stage"], "tool_reviewed");
    assert_eq!(lines[2]["terminal_payload"]["output"], "The calculator returned 4.");
    assert!(lines.iter().all(|r| r["attempt_no"] == 1 && r["mailbox_item_id"] == "item-0001"));

    // An item the worker would reject is refused at the door (exit 2), unless asked for.
    let mut broken = example("broken");
    broken["payload"]["protocol_version"] = json!("v0");
    let path = sandbox.dir.path().join("broken.json");
    std::fs::write(&path, broken.to_string()).expect("write");
    let refused = sandbox.spine().args(["submit", "--mailbox", &url]).arg(&path).output().expect("submit");
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("unknown protocol version `v0`"), "{}", stderr(&refused));
    let forced =
        sandbox.spine().args(["submit", "--no-validate", "--mailbox", &url]).arg(&path).output().expect("submit");
    assert!(forced.status.success());
    let out = sandbox.spine().args(["worker", "--mailbox", &url, "--once"]).output().expect("spine worker");
    assert!(out.status.success());
    let lines = reports(&sandbox, &url, "broken");
    assert_eq!(methods(&lines), ["execution_fail"]);
    assert_eq!(lines[0]["terminal_payload"]["failure_kind"], "validation_error");
}

fn reports_follow_streams_reports_as_they_are_published(backend: Backend) {
    let sandbox = Sandbox::new();
    let url = mailbox_url(&sandbox, backend, "lease_ms=5000");
    // Create the mailbox first, so that the follower has something to open.
    submit(&sandbox, &url, &example("first"));
    let bin = assert_cmd::cargo::cargo_bin("spine");
    let mut follower = Command::new(bin)
        .args(["reports", "--mailbox", &url, "--follow"])
        .current_dir(sandbox.project())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn reports --follow");
    let stdout = follower.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    submit(&sandbox, &url, &example("second"));
    let out = sandbox.spine().args(["worker", "--mailbox", &url, "--once"]).output().expect("worker");
    assert!(out.status.success(), "{}", stderr(&out));
    let mut seen: Vec<Value> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seen.iter().filter(|r| is_terminal(r)).count() < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx.recv_timeout(left).expect("the follower prints both items' reports");
        seen.push(serde_json::from_str(&line).expect("JSON line"));
    }
    let _ = follower.kill();
    let _ = follower.wait();
    let items: Vec<&str> =
        seen.iter().filter(|r| is_terminal(r)).filter_map(|r| r["mailbox_item_id"].as_str()).collect();
    assert_eq!(items.len(), 2);
    assert!(items.contains(&"first") && items.contains(&"second"), "{items:?}");
}

fn a_worker_killed_mid_item_loses_nothing_the_item_completes_on_attempt_2(backend: Backend) {
    let sandbox = Sandbox::new();
    // Long enough that a loaded machine's heartbeats keep the first worker's lease.
    let url = mailbox_url(&sandbox, backend, "lease_ms=3000");
    let marker = sandbox.project().join("first-attempt");
    let pid_file = sandbox.project().join("orphan.pid");
    let command = format!(
        "if [ -f {m} ]; then echo second attempt; else echo $$ > {p}; touch {m}; sleep 30; fi",
        m = marker.display(),
        p = pid_file.display()
    );
    let mut item = example("crash-1");
    item["payload"]["task_payload"] = json!({"mode": "deterministic_tool_call", "tool_call": {"tool_name": "Bash", "arguments": {"command": command}}});
    item["payload"]["allowed_tool_names"] = json!(["Bash"]);
    submit(&sandbox, &url, &item);

    // A worker has nobody to answer `ask`: its settings must allow the Bash call.
    let allow_bash = r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#;
    let mut first = spawn_worker(&sandbox, &url, &["--settings", allow_bash]);
    wait_for_file_blocking(&marker, Duration::from_secs(30));
    // Reports are published in the background: kill once `tool_reviewed` is out, so that the
    // check below is about what survives the kill, not about publishing speed.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !methods(&reports(&sandbox, &url, "crash-1")).contains(&"execution_progress") {
        assert!(Instant::now() < deadline, "tool_reviewed was not published within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    first.kill().expect("SIGKILL the worker");
    let _ = first.wait();
    // The Bash tool's process group outlives its SIGKILLed worker; clean it up.
    if let Some(pgid) = std::fs::read_to_string(&pid_file).ok().and_then(|p| p.trim().parse::<i32>().ok()) {
        let _ = Command::new("kill").args(["-9", "--", &format!("-{pgid}")]).status();
    }

    let second = sandbox
        .spine()
        .args(["worker", "--mailbox", &url, "--once", "--settings", allow_bash])
        .timeout(Duration::from_secs(60))
        .output();
    let second = second.expect("second worker");
    assert!(second.status.success(), "{}", stderr(&second));
    let lines = reports(&sandbox, &url, "crash-1");
    let terminals: Vec<&Value> = lines.iter().filter(|r| is_terminal(r)).collect();
    assert_eq!(terminals.len(), 1, "{:?}", methods(&lines));
    assert_eq!(terminals[0]["method_id"], "execution_complete");
    assert_eq!(terminals[0]["attempt_no"], 2);
    assert_eq!(terminals[0]["terminal_payload"]["tool_invocations"][0]["response_payload"]["exit_status"], 0);
    let first_attempt: Vec<&str> =
        lines.iter().filter(|r| r["attempt_no"] == 1).filter_map(|r| r["method_id"].as_str()).collect();
    assert_eq!(first_attempt, ["execution_started", "execution_progress"], "what the killed worker got out");
}

fn submit_refuses_an_over_long_or_multi_line_item_id_even_unvalidated(backend: Backend) {
    let sandbox = Sandbox::new();
    let url = mailbox_url(&sandbox, backend, "lease_ms=5000");
    for (name, id) in [("long", "x".repeat(10_000)), ("newline", "a\nb".to_owned())] {
        let path = sandbox.dir.path().join(format!("{name}.json"));
        std::fs::write(&path, example(&id).to_string()).expect("write");
        for extra in [&[][..], &["--no-validate"][..]] {
            let out = sandbox.spine().arg("submit").args(extra).args(["--mailbox", &url]).arg(&path).output();
            let out = out.expect("submit");
            assert_eq!(out.status.code(), Some(2), "{name} {extra:?}: {}", stderr(&out));
            assert!(stderr(&out).contains("item_id"), "{name}: {}", stderr(&out));
        }
    }
    let out = sandbox.spine().args(["worker", "--mailbox", &url, "--once"]).output().expect("spine worker");
    assert!(out.status.success(), "{}", stderr(&out));
    let all = sandbox.spine().args(["reports", "--mailbox", &url]).output().expect("reports");
    assert!(String::from_utf8_lossy(&all.stdout).trim().is_empty(), "nothing was queued");
}
