//! Background processes: long-lived services (a dev server, a database) started for the rest
//! of the agent run.
//!
//! Four tools share one [`Processes`] registry (an `Arc`, created per agent run):
//!
//! | tool | effect | does |
//! |---|---|---|
//! | [`process_exec`] `{command, name?, port?, ready_timeout_ms?}` | execute | starts the service and waits until it is ready |
//! | [`process_list`] `{}` | read | every process, with status and port |
//! | [`process_read_output`] `{process_run_id}` | read | output tails and byte counts |
//! | [`process_stop`] `{process_run_id}` | execute | ends the process group and removes it |
//!
//! Rules:
//! - A process is `bash -c COMMAND` in its own process group, stdin `/dev/null`, stdout and
//!   stderr kept in bounded rings ([`ProcessOptions::ring_cap`] bytes each) for its whole life.
//! - Readiness: with `port`, a TCP connection to `127.0.0.1:port` must succeed within
//!   `ready_timeout_ms` (default [`process_exec::DEFAULT_READY_TIMEOUT_MS`]); otherwise the
//!   call fails with `timeout` and the process is stopped. Without `port`, the process must
//!   survive a start window (`ready_timeout_ms` when given, else
//!   [`process_exec::START_WINDOW_MS`]). A process that exits before it is ready — even with
//!   status 0, since a service is meant to keep running — fails the call with `runtime_error`
//!   carrying its exit status and output, and is not kept.
//! - A process that dies later stays listed (status `exited`) with its output until it is
//!   stopped or the registry goes.
//! - Dropping the registry (the end of the agent run) ends every process group;
//!   [`Processes::shutdown`] does it and waits.
//! - Projection: `Background service started as process run <id>.` (with the port when known);
//!   metadata `process_run_id`, `pid`, `port`, `ready_ms`, byte counts — no output.

pub mod process_exec;
pub mod process_list;
pub mod process_read_output;
pub mod process_stop;
mod project;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value};
use spine_core::stages::prepare_turn::OperatorStateSource;
use spine_core::tool::{Tool, ToolContext};
use spine_protocol::tool::{ErrorCode, ToolError};
use tokio_util::sync::CancellationToken;

use crate::command_runs::now_rfc3339;
use crate::live::{Live, SpawnSpec};

pub use process_exec::ProcessExecTool;
pub use process_list::ProcessListTool;
pub use process_read_output::ProcessReadOutputTool;
pub use process_stop::ProcessStopTool;

/// Limits of a process registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessOptions {
    /// Bytes kept per output stream of a process (the newest; default 256 KiB).
    pub ring_cap: usize,
    /// Bytes of each stream's tail shown to the model in one result (default 8 KiB).
    pub tail_bytes: usize,
    /// Processes kept at once (default 16); when full, the oldest ended one goes.
    pub max_processes: usize,
}

impl Default for ProcessOptions {
    fn default() -> Self {
        ProcessOptions { ring_cap: 256 * 1024, tail_bytes: 8 * 1024, max_processes: 16 }
    }
}

/// One registered process.
#[derive(Clone)]
pub(crate) struct ProcessEntry {
    /// `proc-N`.
    pub id: String,
    /// The label the model gave it.
    pub name: Option<String>,
    /// The command.
    pub command: String,
    /// The port it serves, when declared.
    pub port: Option<u16>,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// The process.
    pub live: Arc<Live>,
}

struct Inner {
    next: u64,
    entries: Vec<ProcessEntry>,
}

/// The background processes of one agent run. Dropping it ends every process group.
pub struct Processes {
    inner: Mutex<Inner>,
    owner: CancellationToken,
    options: ProcessOptions,
}

impl std::fmt::Debug for Processes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<String> = self.entries().into_iter().map(|e| e.id).collect();
        f.debug_struct("Processes").field("processes", &ids).field("options", &self.options).finish()
    }
}

impl Processes {
    /// An empty registry.
    pub fn new(options: ProcessOptions) -> Arc<Self> {
        Arc::new(Processes {
            inner: Mutex::new(Inner { next: 1, entries: Vec::new() }),
            owner: CancellationToken::new(),
            options,
        })
    }

    /// The four tools, sharing this registry.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(ProcessExecTool::new(Arc::clone(self))),
            Arc::new(ProcessListTool::new(Arc::clone(self))),
            Arc::new(ProcessReadOutputTool::new(Arc::clone(self))),
            Arc::new(ProcessStopTool::new(Arc::clone(self))),
        ]
    }

    /// The limits.
    pub fn options(&self) -> ProcessOptions {
        self.options
    }

    /// How many processes are registered.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no process is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The leaders' process ids of the processes still running.
    pub fn running_pids(&self) -> Vec<u32> {
        self.entries().iter().filter(|e| e.live.exit().is_none()).filter_map(|e| e.live.pid()).collect()
    }

    /// Ends every process (SIGTERM, then SIGKILL, to each group), waits until they are gone,
    /// and empties the registry.
    pub async fn shutdown(&self) {
        let entries = std::mem::take(&mut self.lock().entries);
        for e in &entries {
            e.live.kill();
        }
        for e in &entries {
            e.live.terminate().await;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a process (not yet registered: [`Processes::insert`] once it is ready).
    pub(crate) fn start(
        &self,
        command: &str,
        name: Option<&str>,
        port: Option<u16>,
        ctx: &ToolContext,
    ) -> Result<ProcessEntry, ToolError> {
        {
            let mut inner = self.lock();
            if inner.entries.len() >= self.options.max_processes {
                match inner.entries.iter().position(|e| e.live.exit().is_some()) {
                    Some(oldest_ended) => {
                        inner.entries.remove(oldest_ended);
                    }
                    None => {
                        return Err(ToolError::new(
                            ErrorCode::ValidationError,
                            format!(
                                "{} background processes are running; stop one with process_stop first",
                                inner.entries.len()
                            ),
                        ));
                    }
                }
            }
        }
        let spec = SpawnSpec::for_call(command, ctx, self.options.ring_cap);
        let live =
            Live::spawn(spec, &self.owner).map_err(|e| ToolError::new(ErrorCode::RuntimeError, e.to_string()))?;
        let id = {
            let mut inner = self.lock();
            let id = format!("proc-{}", inner.next);
            inner.next += 1;
            id
        };
        Ok(ProcessEntry {
            id,
            name: name.map(str::to_owned),
            command: command.to_owned(),
            port,
            started_at: now_rfc3339(),
            live,
        })
    }

    /// Registers a process that became ready.
    pub(crate) fn insert(&self, entry: ProcessEntry) {
        self.lock().entries.push(entry);
    }

    /// A process by id; `not_found` naming the known ids otherwise.
    pub(crate) fn get(&self, id: &str) -> Result<ProcessEntry, ToolError> {
        let inner = self.lock();
        match inner.entries.iter().find(|e| e.id == id) {
            Some(e) => Ok(e.clone()),
            None => {
                let known: Vec<&str> = inner.entries.iter().map(|e| e.id.as_str()).collect();
                let hint =
                    if known.is_empty() { "there are none".to_owned() } else { format!("known: {}", known.join(", ")) };
                Err(ToolError::new(ErrorCode::NotFound, format!("no process run `{id}` ({hint})")))
            }
        }
    }

    /// Removes a process from the registry.
    pub(crate) fn remove(&self, id: &str) -> Option<ProcessEntry> {
        let mut inner = self.lock();
        let i = inner.entries.iter().position(|e| e.id == id)?;
        Some(inner.entries.remove(i))
    }

    /// Every process, oldest first.
    pub(crate) fn entries(&self) -> Vec<ProcessEntry> {
        self.lock().entries.clone()
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        self.owner.cancel();
    }
}

impl OperatorStateSource for Processes {
    fn sections(&self) -> Map<String, Value> {
        let list: Vec<Value> = self.entries().iter().map(project::summary).collect();
        let mut sections = Map::new();
        sections.insert("processes".into(), Value::Array(list));
        sections
    }
}
