//! `exec_command {command, pty?, yield_ms?}` (effect: execute).
//!
//! Starts `bash -c COMMAND` as a new command run (pipes, or a pseudo-terminal with
//! `pty: true`) and waits up to `yield_ms` (default [`DEFAULT_YIELD_MS`], at most
//! [`MAX_YIELD_MS`]; 0 returns at once) while streaming its output as progress. When the
//! command ends in time, the response holds its exit status and output tails
//! (`session_closed: true`); otherwise it holds the `command_run_id` to continue with and the
//! output so far. The response also says whether output was streamed (`output_streamed`) and
//! how long the call waited (`waited_ms`). A canceled call terminates the run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use super::{CommandRuns, project};
use crate::args::{self, Count};
use crate::live::{Terminal, WaitEnd, progress_emit};

/// Default time the call waits for the command to end, in milliseconds.
pub const DEFAULT_YIELD_MS: u64 = 10_000;
/// Longest accepted `yield_ms`.
pub const MAX_YIELD_MS: u64 = 600_000;

#[derive(Deserialize, JsonSchema)]
struct ExecCommandArgs {
    /// The command to run.
    #[schemars(length(min = 1))]
    command: String,
    /// Run on a pseudo-terminal (default false).
    pty: Option<bool>,
    /// How long to wait for the command to end, in milliseconds.
    #[schemars(range(max = MAX_YIELD_MS))]
    yield_ms: Option<Count>,
}

/// The `exec_command` tool.
#[derive(Debug, Clone)]
pub struct ExecCommandTool {
    runs: Arc<CommandRuns>,
}

impl ExecCommandTool {
    /// The tool over a registry.
    pub fn new(runs: Arc<CommandRuns>) -> Self {
        ExecCommandTool { runs }
    }
}

#[async_trait]
impl Tool for ExecCommandTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "exec_command".to_owned(),
            description: format!(
                "Starts a shell command (bash -c) as a command run that lives across tool calls. \
                 Waits up to yield_ms (default {DEFAULT_YIELD_MS}) for it to end: then you get its \
                 exit status and output; otherwise a command_run_id for write_stdin, \
                 command_run_wait, command_run_read_output and command_run_terminate, and the \
                 output so far. pty: true runs it on a pseudo-terminal (no echo)."
            ),
            input_schema: args::schema::<ExecCommandArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Execute
    }

    fn command_argument(&self) -> Option<&'static str> {
        Some("command")
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let ExecCommandArgs { command, pty, yield_ms } = args::parse(args)?;
        let command = command.as_str();
        let pty = pty.unwrap_or(false);
        let yield_ms = yield_ms.map_or(DEFAULT_YIELD_MS, Count::get).min(MAX_YIELD_MS);
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(ErrorCode::Canceled, "the run was canceled before the command started"));
        }
        let terminal = if pty { Terminal::Pty } else { Terminal::Pipes };
        let run = self.runs.start_run(command, terminal, ctx)?;
        let started = Instant::now();
        let listener = run.live.listen(progress_emit(ctx));
        let end = run.live.wait_exit(Duration::from_millis(yield_ms), &ctx.cancel).await;
        let streamed = listener.chunks() > 0;
        drop(listener);
        if end == WaitEnd::Canceled {
            return Err(self.runs.cancel_run(&run).await);
        }
        let mut response = project::state(&run, self.runs.options().tail_bytes);
        response.insert("output_streamed".into(), json!(streamed));
        response.insert("waited_ms".into(), json!(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)));
        Ok(Value::Object(response))
    }

    fn project(&self, response: &Value) -> Projection {
        let headline = if project::ended(response) {
            project::ended_headline(response)
        } else {
            format!(
                "Command is still running as command run {} after {} ms; continue with write_stdin, \
                 command_run_wait, command_run_read_output or command_run_terminate.",
                response.get("command_run_id").and_then(Value::as_str).unwrap_or("?"),
                response.get("waited_ms").and_then(Value::as_u64).unwrap_or(0),
            )
        };
        project::render(headline, response)
    }
}
