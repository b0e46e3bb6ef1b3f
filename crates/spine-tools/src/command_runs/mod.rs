//! Command runs: commands that live across tool calls of one agent run.
//!
//! Six tools share one [`CommandRuns`] registry (an `Arc`, created per agent run):
//!
//! | tool | effect | does |
//! |---|---|---|
//! | [`exec_command`] `{command, pty?, yield_ms?}` | execute | starts `bash -c COMMAND`; returns the result when it ends within `yield_ms` (default 10 000), else a `command_run_id` and the output so far |
//! | [`write_stdin`] `{command_run_id, text?, eof?, yield_ms?}` | execute | writes to the run's input (and/or closes it), then waits briefly for the answer |
//! | [`command_run_wait`](wait) `{command_run_id, timeout_ms?}` | read | waits for the run to end |
//! | [`command_run_read_output`](read_output) `{command_run_id}` | read | the output tails and byte counts, now |
//! | [`command_run_list`](list) `{}` | read | every run of this agent run |
//! | [`command_run_terminate`](terminate) `{command_run_id}` | execute | ends the run's process group and removes the run |
//!
//! Rules:
//! - Each run is a process group (the crate's `live` module); its stdout and stderr go into bounded
//!   rings ([`CommandRunOptions::ring_cap`] bytes each, newest kept, every byte counted). A
//!   call waiting on a run streams the run's output as progress chunks.
//! - A run that ended stays in the registry — it can still be read and waited — until it is
//!   terminated, evicted (the oldest ended run goes when [`CommandRunOptions::max_runs`] is
//!   reached) or the registry is dropped. Starting a run when `max_runs` runs are all still
//!   running is a `validation_error`.
//! - A non-zero exit is a result, not a tool error: the status is data the model reads.
//! - When the leader exits, whatever it left running in its group is ended too (as `Bash`
//!   does); long-lived services belong in [`crate::processes`].
//! - A call canceled while it waits on a run terminates that run. Dropping the registry (the
//!   end of the agent run) ends every run; [`CommandRuns::shutdown`] does it and waits.
//! - Errors: an unknown run id is `not_found`; writing to a run that ended, or after `eof`, is a
//!   `validation_error` saying so.
//! - Projection: a narrative (`Command exited with status 0 after streaming output.`) followed
//!   by the output tails the model needs; metadata `exit_status`, `command_run_id`,
//!   `stdout_bytes`, `stderr_bytes`, `output_streamed`, `session_closed`, `truncated` — sizes
//!   only, never raw output.

pub mod exec_command;
pub mod list;
mod project;
pub mod read_output;
pub mod terminate;
pub mod wait;
pub mod write_stdin;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value, json};
use spine_core::stages::prepare_turn::OperatorStateSource;
use spine_core::tool::{Tool, ToolContext};
use spine_protocol::tool::{ErrorCode, ToolError};
use tokio_util::sync::CancellationToken;

use crate::live::{Live, SpawnSpec, StdinMode, Terminal};

pub(crate) use project::output_text as project_output;

pub use exec_command::ExecCommandTool;
pub use list::CommandRunListTool;
pub use read_output::CommandRunReadOutputTool;
pub use terminate::CommandRunTerminateTool;
pub use wait::CommandRunWaitTool;
pub use write_stdin::WriteStdinTool;

/// Limits of a command-run registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandRunOptions {
    /// Bytes kept per output stream of a run (the newest; default 1 MiB).
    pub ring_cap: usize,
    /// Bytes of each stream's tail shown to the model in one result (default 16 KiB).
    pub tail_bytes: usize,
    /// Runs kept at once, running or ended (default 32).
    pub max_runs: usize,
}

impl Default for CommandRunOptions {
    fn default() -> Self {
        CommandRunOptions { ring_cap: 1024 * 1024, tail_bytes: 16 * 1024, max_runs: 32 }
    }
}

/// One registered run.
#[derive(Clone)]
pub(crate) struct RunEntry {
    /// `cmd-N`.
    pub id: String,
    /// The command as given.
    pub command: String,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// The process.
    pub live: Arc<Live>,
}

struct Inner {
    next: u64,
    runs: Vec<RunEntry>,
}

/// The command runs of one agent run. Dropping it ends every run's process group.
pub struct CommandRuns {
    inner: Mutex<Inner>,
    owner: CancellationToken,
    options: CommandRunOptions,
}

impl std::fmt::Debug for CommandRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<String> = self.entries().into_iter().map(|e| e.id).collect();
        f.debug_struct("CommandRuns").field("runs", &ids).field("options", &self.options).finish()
    }
}

impl CommandRuns {
    /// An empty registry.
    pub fn new(options: CommandRunOptions) -> Arc<Self> {
        Arc::new(CommandRuns {
            inner: Mutex::new(Inner { next: 1, runs: Vec::new() }),
            owner: CancellationToken::new(),
            options,
        })
    }

    /// The six tools, sharing this registry.
    pub fn tools(self: &Arc<Self>) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(ExecCommandTool::new(Arc::clone(self))),
            Arc::new(WriteStdinTool::new(Arc::clone(self))),
            Arc::new(CommandRunWaitTool::new(Arc::clone(self))),
            Arc::new(CommandRunReadOutputTool::new(Arc::clone(self))),
            Arc::new(CommandRunListTool::new(Arc::clone(self))),
            Arc::new(CommandRunTerminateTool::new(Arc::clone(self))),
        ]
    }

    /// The limits.
    pub fn options(&self) -> CommandRunOptions {
        self.options
    }

    /// How many runs are registered.
    pub fn len(&self) -> usize {
        self.lock().runs.len()
    }

    /// Whether no run is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The leaders' process ids of the runs still running.
    pub fn running_pids(&self) -> Vec<u32> {
        self.entries().iter().filter(|e| e.live.exit().is_none()).filter_map(|e| e.live.pid()).collect()
    }

    /// Ends every run (SIGTERM, then SIGKILL, to each process group), waits until they are
    /// gone, and empties the registry.
    pub async fn shutdown(&self) {
        let runs = std::mem::take(&mut self.lock().runs);
        for run in &runs {
            run.live.kill();
        }
        for run in &runs {
            run.live.terminate().await;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts a run, evicting the oldest ended run when the registry is full.
    pub(crate) fn start(&self, command: &str, pty: bool, ctx: &ToolContext) -> Result<RunEntry, ToolError> {
        let mut inner = self.lock();
        if inner.runs.len() >= self.options.max_runs {
            match inner.runs.iter().position(|r| r.live.exit().is_some()) {
                Some(oldest_ended) => {
                    inner.runs.remove(oldest_ended);
                }
                None => {
                    return Err(ToolError::new(
                        ErrorCode::ValidationError,
                        format!(
                            "{} command runs are still running; end one with command_run_terminate before starting another",
                            inner.runs.len()
                        ),
                    ));
                }
            }
        }
        let mut spec = SpawnSpec::for_call(command, ctx, self.options.ring_cap);
        spec.terminal = if pty { Terminal::Pty } else { Terminal::Pipes };
        spec.stdin = StdinMode::Piped;
        let live =
            Live::spawn(spec, &self.owner).map_err(|e| ToolError::new(ErrorCode::RuntimeError, e.to_string()))?;
        let id = format!("cmd-{}", inner.next);
        inner.next += 1;
        let entry = RunEntry { id, command: command.to_owned(), started_at: now_rfc3339(), live };
        inner.runs.push(entry.clone());
        Ok(entry)
    }

    /// A run by id; `not_found` naming the known ids otherwise.
    pub(crate) fn get(&self, id: &str) -> Result<RunEntry, ToolError> {
        let inner = self.lock();
        match inner.runs.iter().find(|r| r.id == id) {
            Some(run) => Ok(run.clone()),
            None => Err(unknown(id, inner.runs.iter().map(|r| r.id.as_str()))),
        }
    }

    /// Removes a run from the registry.
    pub(crate) fn remove(&self, id: &str) -> Option<RunEntry> {
        let mut inner = self.lock();
        let i = inner.runs.iter().position(|r| r.id == id)?;
        Some(inner.runs.remove(i))
    }

    /// Every run, oldest first.
    pub(crate) fn entries(&self) -> Vec<RunEntry> {
        self.lock().runs.clone()
    }

    /// Terminates a run a canceled call was waiting on and removes it.
    pub(crate) async fn cancel_run(&self, run: &RunEntry) -> ToolError {
        run.live.terminate().await;
        self.remove(&run.id);
        ToolError::new(ErrorCode::Canceled, format!("the run was canceled; command run {} was terminated", run.id))
    }
}

impl Drop for CommandRuns {
    fn drop(&mut self) {
        self.owner.cancel();
    }
}

impl OperatorStateSource for CommandRuns {
    fn sections(&self) -> Map<String, Value> {
        let runs: Vec<Value> = self.entries().iter().map(project::summary).collect();
        let mut sections = Map::new();
        sections.insert("command_runs".into(), Value::Array(runs));
        sections
    }
}

/// `not_found` for an unknown id.
pub(crate) fn unknown<'a>(id: &str, known: impl Iterator<Item = &'a str>) -> ToolError {
    let known: Vec<&str> = known.collect();
    let hint = if known.is_empty() { "there are none".to_owned() } else { format!("known: {}", known.join(", ")) };
    ToolError::new(ErrorCode::NotFound, format!("no command run `{id}` ({hint})"))
}

/// The current time as RFC 3339 (UTC).
pub(crate) fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// The JSON Schema of `{command_run_id}` plus extra properties.
pub(crate) fn id_schema(extra: Value) -> Value {
    let mut properties = Map::new();
    properties.insert(
        "command_run_id".into(),
        json!({"type": "string", "description": "The id exec_command returned (cmd-N)."}),
    );
    if let Value::Object(more) = extra {
        properties.extend(more);
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": ["command_run_id"],
        "additionalProperties": false
    })
}
