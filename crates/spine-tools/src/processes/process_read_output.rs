//! `process_read_output {process_run_id}` (effect: read).
//!
//! The process's state now: status, exit status once it ended, the tails of stdout and stderr
//! and the byte counts of the whole streams.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use super::{ProcessIdArgs, Processes, project};
use crate::args;

/// The `process_read_output` tool.
#[derive(Debug, Clone)]
pub struct ProcessReadOutputTool {
    processes: Arc<Processes>,
}

impl ProcessReadOutputTool {
    /// The tool over a registry.
    pub fn new(processes: Arc<Processes>) -> Self {
        ProcessReadOutputTool { processes }
    }
}

#[async_trait]
impl Tool for ProcessReadOutputTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "process_read_output".to_owned(),
            description:
                "Reads the latest output (stdout and stderr tails, byte counts) and status of a background process."
                    .to_owned(),
            input_schema: args::schema::<ProcessIdArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let ProcessIdArgs { process_run_id } = args::parse(args)?;
        let entry = self.processes.get(&process_run_id)?;
        Ok(Value::Object(project::state(&entry, self.processes.options().tail_bytes)))
    }

    fn project(&self, response: &Value) -> Projection {
        let id = response.get("process_run_id").and_then(Value::as_str).unwrap_or("?");
        let state = match response.get("status").and_then(Value::as_str) {
            Some("running") => "is running".to_owned(),
            _ => project::ending(response),
        };
        let headline = format!(
            "Process run {id} {state} (stdout {} bytes, stderr {} bytes).",
            response.get("stdout_bytes").and_then(Value::as_u64).unwrap_or(0),
            response.get("stderr_bytes").and_then(Value::as_u64).unwrap_or(0)
        );
        project::render(headline, response)
    }
}
