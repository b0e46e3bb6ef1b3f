//! `process_list {}` (effect: read).
//!
//! Every background process of this agent run, oldest first: id, name, command, port, pid,
//! status, exit status and byte counts (no output).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use super::{Processes, project};
use crate::args::{self, NoArgs};

/// The `process_list` tool.
#[derive(Debug, Clone)]
pub struct ProcessListTool {
    processes: Arc<Processes>,
}

impl ProcessListTool {
    /// The tool over a registry.
    pub fn new(processes: Arc<Processes>) -> Self {
        ProcessListTool { processes }
    }
}

#[async_trait]
impl Tool for ProcessListTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "process_list".to_owned(),
            description: "Lists the background processes of this session: id, name, port and status.".to_owned(),
            input_schema: args::schema::<NoArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, _args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let list: Vec<Value> = self.processes.entries().iter().map(project::summary).collect();
        Ok(json!({"processes": list}))
    }

    fn project(&self, response: &Value) -> Projection {
        let list = response.get("processes").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut lines = vec![match list.len() {
            0 => "No background processes.".to_owned(),
            1 => "1 background process:".to_owned(),
            n => format!("{n} background processes:"),
        }];
        for p in &list {
            let field = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let mut line = format!("- {} [{}]", field("process_run_id"), field("status"));
            if let Some(code) = p.get("exit_status").and_then(Value::as_i64) {
                line.push_str(&format!(" status {code}"));
            }
            if !field("name").is_empty() {
                line.push_str(&format!(" {}", field("name")));
            }
            if let Some(port) = p.get("port").and_then(Value::as_u64) {
                line.push_str(&format!(" port {port}"));
            }
            line.push_str(&format!(": {}", field("command")));
            lines.push(line);
        }
        let ids: Vec<Value> = list.iter().filter_map(|p| p.get("process_run_id").cloned()).collect();
        Projection::plain(lines.join("\n")).with("count", list.len()).with("process_run_ids", ids)
    }
}
