//! Calling one tool directly, the way the runner does (prepare, then execute).

use serde_json::Value;
use spine_core::registry::ToolRegistry;
use spine_core::tool::{Projection, ToolContext};
use spine_protocol::tool::{ErrorCode, ToolArguments, ToolCall, ToolError};

/// Prepares (schema, normalisation) and executes a call of `tool` in `ctx`.
pub async fn call(registry: &ToolRegistry, tool: &str, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
    let call = ToolCall { id: ctx.call_id.clone(), name: tool.to_owned(), arguments: ToolArguments::Json(args) };
    let prepared = registry.prepare(&call, &ctx.cwd)?;
    let mut ctx = ctx.clone();
    ctx.tool_name = tool.to_owned();
    registry.tool(prepared.handle).execute(&prepared.args, &ctx).await
}

/// The projection of a response by the named tool.
pub fn project(registry: &ToolRegistry, tool: &str, response: &Value) -> Result<Projection, ToolError> {
    let handle = registry
        .lookup(tool)
        .ok_or_else(|| ToolError::new(ErrorCode::UnknownTool, format!("no tool named `{tool}`")))?;
    Ok(registry.tool(handle).project(response))
}
