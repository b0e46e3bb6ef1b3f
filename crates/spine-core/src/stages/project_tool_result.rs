//! `project_tool_result`: turns a tool's structured response into the short content the model
//! reads plus machine-readable metadata, through the tool's own projector.

use std::time::Instant;

use serde_json::Value;
use spine_protocol::trace::StageName;

use crate::fields;
use crate::tool::{Projection, Tool};
use crate::trace::Trace;

/// Projects a response and records the stage.
pub fn project_tool_result(tool: &dyn Tool, response: &Value, tool_use_id: &str, trace: &Trace) -> Projection {
    let started = Instant::now();
    let projection = tool.project(response);
    let mut f = fields! { "content" => preview(&projection.content) };
    if !projection.metadata.is_empty() {
        f.insert("metadata".into(), Value::Object(projection.metadata.clone()));
    }
    trace.stage(StageName::ProjectToolResult, Some(tool_use_id), started, f);
    projection
}

/// The first 200 characters of a content, for traces.
pub fn preview(content: &str) -> String {
    const MAX: usize = 200;
    match content.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}… ({} bytes)", &content[..cut], content.len()),
        None => content.to_owned(),
    }
}
