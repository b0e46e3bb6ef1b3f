//! `write_stdin {command_run_id, text?, eof?, yield_ms?}` (effect: execute).
//!
//! Writes `text` to the run's input (the pipe, or the pty), then closes the input when
//! `eof: true` (a closed pipe; `^D` on a pty). Then it waits for the answer: until the run
//! ends, or output arrived and went quiet for [`QUIET_MS`], or `yield_ms` (default
//! [`DEFAULT_YIELD_MS`], at most [`MAX_YIELD_MS`]) passed — streaming the output as progress.
//! Neither `text` nor `eof` just waits and reports (a poll).
//!
//! Errors: unknown run → `not_found`; a run that ended, or whose input was already closed (or
//! that closed it itself) → `validation_error` saying which; a process that does not take its
//! input within a few seconds → `runtime_error`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use super::{CommandRuns, RUN_ID, project};
use crate::args::{self, Count};
use crate::live::{InputError, WaitEnd, progress_emit};

/// Default time to wait for the answer, in milliseconds.
pub const DEFAULT_YIELD_MS: u64 = 250;
/// Longest accepted `yield_ms`.
pub const MAX_YIELD_MS: u64 = 30_000;
/// Output counts as complete after this long without more, in milliseconds.
pub const QUIET_MS: u64 = 50;

#[derive(Deserialize, JsonSchema)]
struct WriteStdinArgs {
    #[schemars(description = RUN_ID)]
    command_run_id: String,
    /// Text to write.
    text: Option<String>,
    /// Close the input after writing (default false).
    eof: Option<bool>,
    /// How long to wait for output, in milliseconds.
    #[schemars(range(max = MAX_YIELD_MS))]
    yield_ms: Option<Count>,
}

/// The `write_stdin` tool.
#[derive(Debug, Clone)]
pub struct WriteStdinTool {
    runs: Arc<CommandRuns>,
}

impl WriteStdinTool {
    /// The tool over a registry.
    pub fn new(runs: Arc<CommandRuns>) -> Self {
        WriteStdinTool { runs }
    }
}

#[async_trait]
impl Tool for WriteStdinTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write_stdin".to_owned(),
            description: format!(
                "Writes text to the input of a running command run (include \\n to end a line) and/or \
                 closes its input (eof: true), then waits up to yield_ms (default {DEFAULT_YIELD_MS}) \
                 for its answer and returns the output tails."
            ),
            input_schema: args::schema::<WriteStdinArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Execute
    }

    fn command_argument(&self) -> Option<&'static str> {
        Some("text")
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let WriteStdinArgs { command_run_id, text, eof, yield_ms } = args::parse(args)?;
        let id = command_run_id.as_str();
        let text = text.as_deref().unwrap_or("");
        let eof = eof.unwrap_or(false);
        let yield_ms = yield_ms.map_or(DEFAULT_YIELD_MS, Count::get).min(MAX_YIELD_MS);
        let run = self.runs.get(id)?;
        let changes = run.live.changes();
        let listener = run.live.listen(progress_emit(ctx));
        let written = run.live.write(text, eof).await.map_err(|e| input_error(id, e))?;
        let end = run
            .live
            .settle(changes, Duration::from_millis(yield_ms), Duration::from_millis(QUIET_MS), &ctx.cancel)
            .await;
        let streamed = listener.chunks() > 0;
        drop(listener);
        if end == WaitEnd::Canceled {
            return Err(self.runs.cancel_run(&run).await);
        }
        let mut response = project::state(&run, self.runs.options().tail_bytes);
        response.insert("bytes_written".into(), json!(written));
        response.insert("eof".into(), json!(eof));
        response.insert("output_streamed".into(), json!(streamed));
        Ok(Value::Object(response))
    }

    fn project(&self, response: &Value) -> Projection {
        let id = response.get("command_run_id").and_then(Value::as_str).unwrap_or("?");
        let written = response.get("bytes_written").and_then(Value::as_u64).unwrap_or(0);
        let eof = response.get("eof").and_then(Value::as_bool).unwrap_or(false);
        let action = match (written, eof) {
            (0, false) => format!("Polled command run {id}."),
            (0, true) => format!("Closed the input of command run {id}."),
            (n, false) => format!("Wrote {n} bytes to command run {id}."),
            (n, true) => format!("Wrote {n} bytes to command run {id} and closed its input."),
        };
        let state = if project::ended(response) {
            project::ended_headline(response)
        } else {
            "It is still running.".to_owned()
        };
        let mut p = project::render(format!("{action} {state}"), response);
        p.metadata.insert("bytes_written".into(), json!(written));
        p
    }
}

/// A write refused by the run, as the model reads it.
pub(crate) fn input_error(id: &str, e: InputError) -> ToolError {
    let code = match e {
        InputError::Exited(_) | InputError::Closed | InputError::Gone | InputError::NoInput => {
            ErrorCode::ValidationError
        }
        InputError::Stalled | InputError::Io(_) => ErrorCode::RuntimeError,
    };
    ToolError::new(code, format!("cannot write to command run {id}: {e}"))
}
