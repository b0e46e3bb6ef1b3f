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
//! - Each run is a process group (the crate's `live` module), kept in a [`CommandRuns`]
//!   registry ([`LiveRegistry`], shared with [`crate::processes`]); its stdout and stderr go into bounded
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

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use spine_core::stages::prepare_turn::OperatorStateSource;
use spine_core::tool::{Tool, ToolContext};
use spine_protocol::tool::{ErrorCode, ToolError};

use crate::live::{Enlist, Entry, Family, LiveRegistry, SpawnSpec, StdinMode, Terminal};

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

/// The command-run family: ids `cmd-N`, at most [`CommandRunOptions::max_runs`] runs.
#[derive(Debug, Clone, Copy)]
pub struct CommandRun;

impl Family for CommandRun {
    type Options = CommandRunOptions;
    /// A run keeps nothing beyond the registry's own fields (its pty flag is the process's).
    type Meta = ();
    const ID_PREFIX: &'static str = "cmd";
    const NOUN: &'static str = "command run";

    fn capacity(options: &CommandRunOptions) -> usize {
        options.max_runs
    }

    fn full(running: usize) -> String {
        format!("{running} command runs are still running; end one with command_run_terminate before starting another")
    }
}

/// One registered run.
pub(crate) type RunEntry = Entry<()>;

/// The command runs of one agent run. Dropping it ends every run's process group.
pub type CommandRuns = LiveRegistry<CommandRun>;

impl LiveRegistry<CommandRun> {
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

    /// Starts and registers a run (pipes with a stdin pipe, or a pty), evicting the oldest
    /// ended run when the registry is full.
    pub(crate) fn start_run(
        &self,
        command: &str,
        terminal: Terminal,
        ctx: &ToolContext,
    ) -> Result<RunEntry, ToolError> {
        let mut spec = SpawnSpec::for_call(command, ctx, self.options().ring_cap);
        spec.terminal = terminal;
        spec.stdin = StdinMode::Piped;
        self.start(spec, (), Enlist::Now)
    }

    /// Terminates a run a canceled call was waiting on and removes it.
    pub(crate) async fn cancel_run(&self, run: &RunEntry) -> ToolError {
        run.live.terminate().await;
        self.remove(&run.id);
        ToolError::new(ErrorCode::Canceled, format!("the run was canceled; command run {} was terminated", run.id))
    }
}

impl OperatorStateSource for LiveRegistry<CommandRun> {
    fn sections(&self) -> Map<String, Value> {
        let runs: Vec<Value> = self.entries().iter().map(project::summary).collect();
        let mut sections = Map::new();
        sections.insert("command_runs".into(), Value::Array(runs));
        sections
    }
}

/// The description of `command_run_id`, the first argument of every tool but exec_command.
pub(crate) const RUN_ID: &str = "The id exec_command returned (cmd-N).";

/// The arguments of the tools that take only a run: `{command_run_id}`.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct RunIdArgs {
    #[schemars(description = RUN_ID)]
    pub command_run_id: String,
}
