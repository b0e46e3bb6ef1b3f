//! `command_run_list {}` (effect: read).
//!
//! Every command run of this agent run, oldest first: id, command, pty, start time, status,
//! exit status and byte counts (no output).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use super::{CommandRuns, project};
use crate::args::{self, NoArgs};

/// The `command_run_list` tool.
#[derive(Debug, Clone)]
pub struct CommandRunListTool {
    runs: Arc<CommandRuns>,
}

impl CommandRunListTool {
    /// The tool over a registry.
    pub fn new(runs: Arc<CommandRuns>) -> Self {
        CommandRunListTool { runs }
    }
}

#[async_trait]
impl Tool for CommandRunListTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "command_run_list".to_owned(),
            description: "Lists the command runs of this session: id, command, status and exit status.".to_owned(),
            input_schema: args::schema::<NoArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, _args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let runs: Vec<Value> = self.runs.entries().iter().map(project::summary).collect();
        Ok(json!({"command_runs": runs}))
    }

    fn project(&self, response: &Value) -> Projection {
        let runs = response.get("command_runs").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut lines = vec![match runs.len() {
            0 => "No command runs.".to_owned(),
            1 => "1 command run:".to_owned(),
            n => format!("{n} command runs:"),
        }];
        for run in &runs {
            let field = |k: &str| run.get(k).and_then(Value::as_str).unwrap_or("?").to_owned();
            let status = match run.get("exit_status").and_then(Value::as_i64) {
                Some(code) => format!("{} {code}", field("status")),
                None => field("status"),
            };
            lines.push(format!("- {} [{status}] {}", field("command_run_id"), field("command")));
        }
        let ids: Vec<Value> = runs.iter().filter_map(|r| r.get("command_run_id").cloned()).collect();
        Projection::plain(lines.join("\n")).with("count", runs.len()).with("command_run_ids", ids)
    }
}
