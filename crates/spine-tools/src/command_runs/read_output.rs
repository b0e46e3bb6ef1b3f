//! `command_run_read_output {command_run_id}` (effect: read).
//!
//! The run's state now, without waiting: status, exit status once ended, the tails of stdout
//! and stderr (`stdout_tail`, `stderr_tail`, at most the registry's `tail_bytes` each) and the
//! byte counts of the whole streams.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use super::{CommandRuns, RunIdArgs, project};
use crate::args;

/// The `command_run_read_output` tool.
#[derive(Debug, Clone)]
pub struct CommandRunReadOutputTool {
    runs: Arc<CommandRuns>,
}

impl CommandRunReadOutputTool {
    /// The tool over a registry.
    pub fn new(runs: Arc<CommandRuns>) -> Self {
        CommandRunReadOutputTool { runs }
    }
}

#[async_trait]
impl Tool for CommandRunReadOutputTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "command_run_read_output".to_owned(),
            description: "Reads the latest output of a command run (the tails of stdout and stderr, \
                          and how many bytes each has produced) without waiting."
                .to_owned(),
            input_schema: args::schema::<RunIdArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let RunIdArgs { command_run_id } = args::parse(args)?;
        let run = self.runs.get(&command_run_id)?;
        Ok(Value::Object(project::state(&run, self.runs.options().tail_bytes)))
    }

    fn project(&self, response: &Value) -> Projection {
        let id = response.get("command_run_id").and_then(Value::as_str).unwrap_or("?");
        let how = if project::ended(response) { project::how_ended(response) } else { "is still running".to_owned() };
        let sizes = format!(
            "stdout {} bytes, stderr {} bytes",
            response.get("stdout_bytes").and_then(Value::as_u64).unwrap_or(0),
            response.get("stderr_bytes").and_then(Value::as_u64).unwrap_or(0)
        );
        project::render(format!("Command run {id} {how} ({sizes})."), response)
    }
}
