//! `process_exec {command, name?, port?, ready_timeout_ms?}` (effect: execute).
//!
//! Starts a background service and waits until it is ready (see [`super`] for the rules),
//! streaming its start-up output as progress. Success registers it and answers
//! `Background service started as process run <id>.` (plus the port). A process that exits
//! before it is ready is a `runtime_error` with its exit status and output; a port that does
//! not accept connections in time is a `timeout` (the process is stopped); either way the
//! error carries the process's state as its response.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
use tokio_util::sync::CancellationToken;

use super::{ProcessEntry, Processes, ServiceLabel, project};
use crate::args::{self, Count};
use crate::command_runs::project_output;
use crate::live::{WaitEnd, progress_emit};

/// Default time a declared port has to accept connections, in milliseconds.
pub const DEFAULT_READY_TIMEOUT_MS: u64 = 30_000;
/// Longest accepted `ready_timeout_ms`.
pub const MAX_READY_TIMEOUT_MS: u64 = 600_000;
/// How long a process without a port must survive, in milliseconds.
pub const START_WINDOW_MS: u64 = 300;
/// Pause between connection attempts.
const PROBE_INTERVAL: Duration = Duration::from_millis(50);

#[derive(Deserialize, JsonSchema)]
struct ProcessExecArgs {
    /// The command that runs the service.
    #[schemars(length(min = 1))]
    command: String,
    /// A short label for the service.
    name: Option<String>,
    /// The TCP port the service listens on (127.0.0.1).
    #[schemars(range(min = 1, max = 65535))]
    port: Option<Count>,
    /// How long the service has to become ready, in milliseconds.
    #[schemars(range(max = MAX_READY_TIMEOUT_MS))]
    ready_timeout_ms: Option<Count>,
}

/// The `process_exec` tool.
#[derive(Debug, Clone)]
pub struct ProcessExecTool {
    processes: Arc<Processes>,
}

impl ProcessExecTool {
    /// The tool over a registry.
    pub fn new(processes: Arc<Processes>) -> Self {
        ProcessExecTool { processes }
    }
}

/// How the readiness wait ended.
enum Readiness {
    Ready,
    Died,
    NotListening,
    Canceled,
}

#[async_trait]
impl Tool for ProcessExecTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "process_exec".to_owned(),
            description: format!(
                "Starts a long-running background service (bash -c) that keeps running across tool \
                 calls, e.g. a dev server. With port, waits until 127.0.0.1:port accepts connections \
                 (up to ready_timeout_ms, default {DEFAULT_READY_TIMEOUT_MS}). Returns a process_run_id \
                 for process_read_output and process_stop."
            ),
            input_schema: args::schema::<ProcessExecArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Execute
    }

    fn command_argument(&self) -> Option<&'static str> {
        Some("command")
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let ProcessExecArgs { command, name, port, ready_timeout_ms } = args::parse(args)?;
        let command = command.as_str();
        let port = match port.map(Count::get) {
            None => None,
            Some(p) => Some(u16::try_from(p).ok().filter(|p| *p > 0).ok_or_else(|| {
                ToolError::new(ErrorCode::ValidationError, format!("port {p} is not a TCP port (1-65535)"))
            })?),
        };
        let ready_ms = ready_timeout_ms.map(|ms| ms.get().min(MAX_READY_TIMEOUT_MS));
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(ErrorCode::Canceled, "the run was canceled before the process started"));
        }
        let label = ServiceLabel { name, port };
        let entry = self.processes.start_service(command, label, ctx)?;
        let started = Instant::now();
        let listener = entry.live.listen(progress_emit(ctx));
        let readiness = match port {
            Some(port) => {
                let limit = Duration::from_millis(ready_ms.unwrap_or(DEFAULT_READY_TIMEOUT_MS));
                wait_for_port(&entry, port, limit, &ctx.cancel).await
            }
            None => {
                let window = Duration::from_millis(ready_ms.unwrap_or(START_WINDOW_MS));
                match entry.live.wait_exit(window, &ctx.cancel).await {
                    WaitEnd::Exited => Readiness::Died,
                    WaitEnd::TimedOut => Readiness::Ready,
                    WaitEnd::Canceled => Readiness::Canceled,
                }
            }
        };
        drop(listener);
        let tail = self.processes.options().tail_bytes;
        let ready_ms_taken = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match readiness {
            Readiness::Ready => {
                let mut response = project::state(&entry, tail);
                response.insert("ready".into(), json!(true));
                response.insert("ready_ms".into(), json!(ready_ms_taken));
                self.processes.insert(entry);
                Ok(Value::Object(response))
            }
            Readiness::Died => {
                let response = Value::Object(project::state(&entry, tail));
                let output = project_output(&response);
                let mut message = format!("process {} before it was ready: {command}", project::ending(&response));
                if !output.is_empty() {
                    message.push('\n');
                    message.push_str(&output);
                }
                Err(ToolError::new(ErrorCode::RuntimeError, message).with_response(response))
            }
            Readiness::NotListening => {
                entry.live.terminate().await;
                let response = Value::Object(project::state(&entry, tail));
                let output = project_output(&response);
                let mut message = format!(
                    "process did not accept connections on 127.0.0.1:{} within {} ms; it was stopped",
                    port.unwrap_or(0),
                    ready_ms.unwrap_or(DEFAULT_READY_TIMEOUT_MS)
                );
                if !output.is_empty() {
                    message.push('\n');
                    message.push_str(&output);
                }
                Err(ToolError::new(ErrorCode::Timeout, message).with_response(response))
            }
            Readiness::Canceled => {
                entry.live.terminate().await;
                Err(ToolError::new(
                    ErrorCode::Canceled,
                    "the run was canceled while the process started; it was stopped",
                ))
            }
        }
    }

    fn project(&self, response: &Value) -> Projection {
        let id = response.get("process_run_id").and_then(Value::as_str).unwrap_or("?");
        let mut headline = format!("Background service started as process run {id}.");
        if let Some(port) = response.get("port").and_then(Value::as_u64) {
            headline.push_str(&format!(" It accepts connections on 127.0.0.1:{port}."));
        }
        let ready_ms = response.get("ready_ms").cloned().unwrap_or(Value::Null);
        project::render(headline, response).with("ready_ms", ready_ms)
    }
}

/// Connects to `127.0.0.1:port` until it accepts, the process dies, `limit` passes or the call
/// is canceled.
async fn wait_for_port(entry: &ProcessEntry, port: u16, limit: Duration, cancel: &CancellationToken) -> Readiness {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if entry.live.exit().is_some() {
            return Readiness::Died;
        }
        let attempt = tokio::time::timeout(PROBE_INTERVAL * 4, tokio::net::TcpStream::connect(("127.0.0.1", port)));
        if let Ok(Ok(_stream)) = attempt.await {
            return Readiness::Ready;
        }
        if tokio::time::Instant::now() >= deadline {
            return Readiness::NotListening;
        }
        match entry.live.wait_exit(PROBE_INTERVAL, cancel).await {
            WaitEnd::Exited => return Readiness::Died,
            WaitEnd::Canceled => return Readiness::Canceled,
            WaitEnd::TimedOut => {}
        }
    }
}
