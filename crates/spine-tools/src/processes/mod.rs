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
//! - A process is `bash -c COMMAND` in its own process group, kept in a [`Processes`]
//!   registry ([`LiveRegistry`], shared with [`crate::command_runs`]), stdin `/dev/null`, stdout and
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

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use spine_core::stages::prepare_turn::OperatorStateSource;
use spine_core::tool::{Tool, ToolContext};
use spine_protocol::tool::ToolError;

use crate::live::{Enlist, Entry, Family, LiveRegistry, SpawnSpec};

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

/// The background-process family: ids `proc-N`, at most [`ProcessOptions::max_processes`].
#[derive(Debug, Clone, Copy)]
pub struct BackgroundProcess;

/// What a background process keeps beside its command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceLabel {
    /// The label the model gave it (`name`).
    pub name: Option<String>,
    /// The TCP port it serves on 127.0.0.1, when declared.
    pub port: Option<u16>,
}

impl Family for BackgroundProcess {
    type Options = ProcessOptions;
    type Meta = ServiceLabel;
    const ID_PREFIX: &'static str = "proc";
    const NOUN: &'static str = "process run";

    fn capacity(options: &ProcessOptions) -> usize {
        options.max_processes
    }

    fn full(running: usize) -> String {
        format!("{running} background processes are running; stop one with process_stop first")
    }
}

/// The arguments of the tools that take only a process: `{process_run_id}`.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ProcessIdArgs {
    /// The id process_exec returned (proc-N).
    pub process_run_id: String,
}

/// One registered process.
pub(crate) type ProcessEntry = Entry<ServiceLabel>;

/// The background processes of one agent run. Dropping it ends every process group.
pub type Processes = LiveRegistry<BackgroundProcess>;

impl LiveRegistry<BackgroundProcess> {
    /// The four tools, sharing this registry.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(ProcessExecTool::new(Arc::clone(self))),
            Arc::new(ProcessListTool::new(Arc::clone(self))),
            Arc::new(ProcessReadOutputTool::new(Arc::clone(self))),
            Arc::new(ProcessStopTool::new(Arc::clone(self))),
        ]
    }

    /// Starts a process (stdin `/dev/null`), not yet registered: [`LiveRegistry::insert`] it
    /// once it is ready.
    pub(crate) fn start_service(
        &self,
        command: &str,
        label: ServiceLabel,
        ctx: &ToolContext,
    ) -> Result<ProcessEntry, ToolError> {
        let spec = SpawnSpec::for_call(command, ctx, self.options().ring_cap);
        self.start(spec, label, Enlist::WhenReady)
    }
}

impl OperatorStateSource for LiveRegistry<BackgroundProcess> {
    fn sections(&self) -> Map<String, Value> {
        let list: Vec<Value> = self.entries().iter().map(project::summary).collect();
        let mut sections = Map::new();
        sections.insert("processes".into(), Value::Array(list));
        sections
    }
}
