//! `process_stop {process_run_id}` (effect: execute).
//!
//! Ends the process's whole group (SIGTERM, then SIGKILL after a grace period), waits for its
//! output to complete and removes it from the registry. The response is its final state with
//! `stopped: true`.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use super::{ProcessIdArgs, Processes, project};
use crate::args;

/// The `process_stop` tool.
#[derive(Debug, Clone)]
pub struct ProcessStopTool {
    processes: Arc<Processes>,
}

impl ProcessStopTool {
    /// The tool over a registry.
    pub fn new(processes: Arc<Processes>) -> Self {
        ProcessStopTool { processes }
    }
}

#[async_trait]
impl Tool for ProcessStopTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "process_stop".to_owned(),
            description: "Stops a background process (with everything it started) and removes it.".to_owned(),
            input_schema: args::schema::<ProcessIdArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Execute
    }

    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let ProcessIdArgs { process_run_id } = args::parse(args)?;
        let id = process_run_id.as_str();
        let entry = self.processes.get(id)?;
        let was_running = entry.live.exit().is_none();
        entry.live.terminate().await;
        self.processes.remove(id);
        let mut response = project::state(&entry, self.processes.options().tail_bytes);
        response.insert("stopped".into(), json!(true));
        response.insert("was_running".into(), json!(was_running));
        Ok(Value::Object(response))
    }

    fn project(&self, response: &Value) -> Projection {
        let id = response.get("process_run_id").and_then(Value::as_str).unwrap_or("?");
        let headline = if response.get("was_running").and_then(Value::as_bool).unwrap_or(false) {
            format!("Process run {id} was stopped and removed.")
        } else {
            format!("Process run {id} had already {} and was removed.", project::ending(response))
        };
        project::render(headline, response).with("stopped", true)
    }
}
