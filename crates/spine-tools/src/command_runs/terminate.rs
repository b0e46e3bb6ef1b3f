//! `command_run_terminate {command_run_id}` (effect: execute).
//!
//! Ends the run's whole process group (SIGTERM, then SIGKILL after a grace period), waits for
//! its output to complete, and removes the run from the registry. The response is the run's
//! final state with `terminated: true` (also for a run that had already ended: it is removed
//! all the same).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use super::{CommandRuns, RunIdArgs, project};
use crate::args;

/// The `command_run_terminate` tool.
#[derive(Debug, Clone)]
pub struct CommandRunTerminateTool {
    runs: Arc<CommandRuns>,
}

impl CommandRunTerminateTool {
    /// The tool over a registry.
    pub fn new(runs: Arc<CommandRuns>) -> Self {
        CommandRunTerminateTool { runs }
    }
}

#[async_trait]
impl Tool for CommandRunTerminateTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "command_run_terminate".to_owned(),
            description: "Terminates a command run (with everything it started) and removes it.".to_owned(),
            input_schema: args::schema::<RunIdArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Execute
    }

    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let RunIdArgs { command_run_id } = args::parse(args)?;
        let id = command_run_id.as_str();
        let run = self.runs.get(id)?;
        let was_running = run.live.exit().is_none();
        run.live.terminate().await;
        self.runs.remove(id);
        let mut response = project::state(&run, self.runs.options().tail_bytes);
        response.insert("terminated".into(), json!(true));
        response.insert("was_running".into(), json!(was_running));
        Ok(Value::Object(response))
    }

    fn project(&self, response: &Value) -> Projection {
        let id = response.get("command_run_id").and_then(Value::as_str).unwrap_or("?");
        let was_running = response.get("was_running").and_then(Value::as_bool).unwrap_or(false);
        let headline = if was_running {
            format!("Command run {id} was terminated and removed.")
        } else {
            format!("Command run {id} had already ended and was removed. {}", project::ended_headline(response))
        };
        project::render(headline, response).with("terminated", true)
    }
}
