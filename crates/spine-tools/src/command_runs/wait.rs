//! `command_run_wait {command_run_id, timeout_ms?}` (effect: read).
//!
//! Waits until the run ends or `timeout_ms` (default [`DEFAULT_TIMEOUT_MS`], at most
//! [`MAX_TIMEOUT_MS`]) passes, streaming its output as progress. A run that already ended
//! answers at once (`session_closed: true`, its exit status and output tails). A run still
//! running after the wait is not an error: the response says `timed_out: true`. A canceled
//! call terminates the run.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use super::{CommandRuns, RUN_ID, project};
use crate::args::{self, Count};
use crate::live::{WaitEnd, progress_emit};

/// Default wait, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Longest accepted wait.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

#[derive(Deserialize, JsonSchema)]
struct WaitArgs {
    #[schemars(description = RUN_ID)]
    command_run_id: String,
    /// How long to wait, in milliseconds.
    #[schemars(range(max = MAX_TIMEOUT_MS))]
    timeout_ms: Option<Count>,
}

/// The `command_run_wait` tool.
#[derive(Debug, Clone)]
pub struct CommandRunWaitTool {
    runs: Arc<CommandRuns>,
}

impl CommandRunWaitTool {
    /// The tool over a registry.
    pub fn new(runs: Arc<CommandRuns>) -> Self {
        CommandRunWaitTool { runs }
    }
}

#[async_trait]
impl Tool for CommandRunWaitTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "command_run_wait".to_owned(),
            description: format!(
                "Waits for a command run to end (up to timeout_ms, default {DEFAULT_TIMEOUT_MS}) and \
                 returns its exit status and output tails."
            ),
            input_schema: args::schema::<WaitArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let WaitArgs { command_run_id, timeout_ms } = args::parse(args)?;
        let id = command_run_id.as_str();
        let timeout_ms = timeout_ms.map_or(DEFAULT_TIMEOUT_MS, Count::get).min(MAX_TIMEOUT_MS);
        let run = self.runs.get(id)?;
        let listener = run.live.listen(progress_emit(ctx));
        let end = run.live.wait_exit(Duration::from_millis(timeout_ms), &ctx.cancel).await;
        let streamed = listener.chunks() > 0;
        drop(listener);
        if end == WaitEnd::Canceled {
            return Err(self.runs.cancel_run(&run).await);
        }
        let mut response = project::state(&run, self.runs.options().tail_bytes);
        response.insert("output_streamed".into(), json!(streamed));
        response.insert("timed_out".into(), json!(end == WaitEnd::TimedOut));
        response.insert("timeout_ms".into(), json!(timeout_ms));
        Ok(Value::Object(response))
    }

    fn project(&self, response: &Value) -> Projection {
        let headline = if project::ended(response) {
            project::ended_headline(response)
        } else {
            format!(
                "Command run {} is still running after waiting {} ms.",
                response.get("command_run_id").and_then(Value::as_str).unwrap_or("?"),
                response.get("timeout_ms").and_then(Value::as_u64).unwrap_or(0),
            )
        };
        let timed_out = response.get("timed_out").and_then(Value::as_bool).unwrap_or(false);
        project::render(headline, response).with("timed_out", timed_out)
    }
}
