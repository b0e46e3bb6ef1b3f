//! A mailbox per test (a fresh SQLite file, or a fresh NATS prefix), workers running in this
//! process, items, and report helpers.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use spine_protocol::report::Report;
use spine_worker::mailbox::Mailbox;
use spine_worker::shutdown::{self, ShutdownTrigger};
use spine_worker::{Environment, MailboxUrl, ReportQuery, Worker, WorkerConfig, WorkerSummary};
use tokio::task::JoinHandle;

pub use spine_testkit::files::wait_for_file;
pub use spine_testkit::procs::dead;

/// Generates `mod NAME { sqlite, nats }` tests calling `NAME(Backend)`.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$name($crate::support::Backend::Sqlite).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn nats() {
                    super::$name($crate::support::Backend::Nats).await
                }
            }
        )*
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Nats,
}

pub struct Harness {
    pub backend: Backend,
    pub dir: tempfile::TempDir,
    pub url: String,
    pub mailbox: Arc<dyn Mailbox>,
    /// The workers' settings (a `--settings` JSON text). The default lets the tests' Bash
    /// items run: a worker has nobody to answer `ask`.
    pub settings: String,
}

/// Settings under which a worker runs every tool the workspace boundary permits.
pub const BYPASS: &str = r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#;

impl Harness {
    /// A fresh mailbox with a 1.5 s lease.
    pub async fn new(backend: Backend) -> Self {
        Self::with_options(backend, "lease_ms=1500").await
    }

    pub async fn with_options(backend: Backend, options: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("ws")).expect("workspace");
        let url = match backend {
            Backend::Sqlite => format!("sqlite:{}?{options}", dir.path().join("mailbox.db").display()),
            Backend::Nats => {
                let prefix = spine_testkit::nats::unique_prefix("t");
                format!("{}?prefix={prefix}&{options}", spine_testkit::nats::nats_url())
            }
        };
        let mailbox = open(&url).await;
        Harness { backend, dir, url, mailbox, settings: BYPASS.to_owned() }
    }

    /// Another connection to the same mailbox (what another worker process would have).
    pub async fn connect(&self) -> Arc<dyn Mailbox> {
        open(&self.url).await
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    pub fn env(&self) -> Arc<Environment> {
        let home = self.dir.path().join("home");
        let cli = std::slice::from_ref(&self.settings);
        let settings =
            spine_settings::Settings::discover(&home, &self.workspace(), cli, spine_settings::ProjectTrust::Untrusted)
                .expect("settings");
        Arc::new(Environment::new(&self.workspace(), Some(&home), settings, Vec::new()).expect("environment"))
    }

    pub fn config(&self, concurrency: usize, once: bool) -> WorkerConfig {
        let url: MailboxUrl = self.url.parse().expect("url");
        let mut config = WorkerConfig::new(url.lease());
        config.concurrency = concurrency;
        config.once = once;
        config.poll = Duration::from_millis(100);
        config
    }

    /// Starts a worker on its own connection.
    pub async fn start(&self, config: WorkerConfig) -> RunningWorker {
        let mailbox = self.connect().await;
        let worker = Worker::new(mailbox, self.env(), config);
        let (trigger, listener) = shutdown::channel();
        let handle = tokio::spawn(async move { worker.run(listener).await.expect("worker runs") });
        RunningWorker { trigger, handle }
    }

    /// Runs a `--once` worker until the mailbox is drained.
    pub async fn run_once(&self, concurrency: usize) -> WorkerSummary {
        let w = self.start(self.config(concurrency, true)).await;
        tokio::time::timeout(Duration::from_secs(60), w.handle).await.expect("worker drains in time").expect("joins")
    }

    pub async fn submit(&self, item: &Value) -> String {
        self.mailbox.submit(item.to_string().as_bytes()).await.expect("submit")
    }

    /// Every report so far (of one item, or all).
    pub async fn reports(&self, item: Option<&str>) -> Vec<Report> {
        let query = ReportQuery { item_id: item.map(str::to_owned), follow: false };
        let stream = self.mailbox.reports(&query).await.expect("reports");
        stream.map(|r| r.expect("report")).collect().await
    }

    /// The reports of an item, once its terminal report is there.
    pub async fn wait_terminal(&self, item: &str, timeout: Duration) -> Vec<Report> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let reports = self.reports(Some(item)).await;
            if reports.iter().any(|r| r.body.is_terminal()) {
                return reports;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no terminal report for {item} in {timeout:?}: {reports:#?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn open(url: &str) -> Arc<dyn Mailbox> {
    let parsed: MailboxUrl = url.parse().expect("mailbox url");
    match parsed.open().await {
        Ok(m) => m,
        Err(e) => panic!(
            "cannot open the test mailbox {url}: {e}\n(start NATS with `scripts/services.sh start`; \
             set SPINE_TEST_NATS_URL for another server)"
        ),
    }
}

pub struct RunningWorker {
    pub trigger: ShutdownTrigger,
    pub handle: JoinHandle<WorkerSummary>,
}

impl RunningWorker {
    pub async fn stop(self) -> WorkerSummary {
        self.trigger.fire();
        tokio::time::timeout(Duration::from_secs(30), self.handle).await.expect("worker stops").expect("joins")
    }
}

pub fn methods(reports: &[Report]) -> Vec<&'static str> {
    reports.iter().map(|r| r.body.method_id()).collect()
}

pub fn json_of(report: &Report) -> Value {
    serde_json::to_value(report).expect("report json")
}

/// The example item of docs/pipeline.md, with another id.
pub fn example(item_id: &str) -> Value {
    spine_protocol::assignment::example_item(item_id)
}

/// An assignment with another task payload and allowed tools.
pub fn assignment(item_id: &str, task_payload: Value, allowed: &[&str]) -> Value {
    let mut item = example(item_id);
    item["payload"]["task_payload"] = task_payload;
    item["payload"]["allowed_tool_names"] = json!(allowed);
    item
}

/// A Bash assignment.
pub fn bash(item_id: &str, command: &str) -> Value {
    assignment(
        item_id,
        json!({"mode": "deterministic_tool_call", "tool_call": {"tool_name": "Bash", "arguments": {"command": command}}}),
        &["Bash"],
    )
}

/// An agent-program request.
pub fn program(item_id: &str, request_kind: &str, extra: Value) -> Value {
    let mut item = example(item_id);
    item["item_type"] = json!("agent_program_request");
    let payload = item["payload"].as_object_mut().expect("payload");
    payload.remove("task_payload");
    payload.insert("request_kind".into(), json!(request_kind));
    if let Value::Object(extra) = extra {
        payload.extend(extra);
    }
    item
}

/// A close request for `target`.
pub fn close(item_id: &str, target: &str) -> Value {
    json!({
        "item_id": item_id,
        "item_type": "resource_close_request",
        "protocol_message_id": format!("kernel-msg-{item_id}"),
        "logical_work_id": format!("work-{item_id}"),
        "payload": {"protocol_version": "spine-assignment/1", "resource_type": "execution", "resource_id": target}
    })
}
