//! `"type": "mcp_tool"` hooks: a tool of a connected MCP server answers the event.
//!
//! Contract of [`McpToolHook`] (docs/hooks.md, "MCP tool hooks"):
//! - The tool is `mcp__<server>__<tool>` of the run's tool registry ([`HookTools`]), called
//!   directly — not through the model, the permission policy or the tool hooks: the user's
//!   settings chose it, as they choose a command.
//! - `input` is the tool's arguments. Every string in it has each `${path}` replaced by the
//!   value at that dotted path of the event's JSON input (`${tool_input.command}`,
//!   `${session_id}`); a string value goes in as it is, another value as its JSON text, a path
//!   that does not exist as the empty string. Without `input` the arguments are `{}`.
//! - The tool's text (what the model would read) is read as a command hook's stdout on exit 0:
//!   a JSON object is the hook's answer, other text is context where the event takes plain
//!   text (SessionStart, UserPromptSubmit) and ignored elsewhere.
//! - A server that is not connected, a tool error, or the hook's time limit is a hook failure:
//!   `onFailure` decides.
//! - The call's context carries the hooks' [`ChildEnv`] (what a process the tool starts would
//!   get), as a run's tool calls carry the agent's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_core::hooks::{Hook, HookContext, HookError};
use spine_core::registry::ToolRegistry;
use spine_core::tool::{ChildEnv, ToolContext};
use spine_core::workspace::Workspace;
use spine_protocol::hook::HookOutput;

use crate::record::HookMeta;
use crate::wire::decide::{self, Exit};
use crate::wire::{WireEvent, input};

/// The tools `mcp_tool` hooks may call: the run's registry and its workspace.
#[derive(Clone)]
pub struct HookTools {
    /// The run's tools (MCP tools are `mcp__<server>__<tool>`).
    pub registry: Arc<ToolRegistry>,
    /// The workspace tool calls see.
    pub workspace: Arc<Workspace>,
}

/// An MCP tool hook.
pub struct McpToolHook {
    name: String,
    input: Option<Map<String, Value>>,
    tools: Option<HookTools>,
    child_env: ChildEnv,
    timeout: Duration,
    meta: Arc<HookMeta>,
}

impl McpToolHook {
    /// A hook calling `mcp__<server>__<tool>` of `tools`, its call's context carrying
    /// `child_env`.
    pub fn new(
        server: &str,
        tool: &str,
        input: Option<Map<String, Value>>,
        tools: Option<HookTools>,
        child_env: ChildEnv,
        timeout: Duration,
        meta: Arc<HookMeta>,
    ) -> Self {
        McpToolHook { name: format!("mcp__{server}__{tool}"), input, tools, child_env, timeout, meta }
    }

    async fn call_tool(&self, ctx: &HookContext, event: &Value) -> Result<String, HookError> {
        let Some(tools) = &self.tools else {
            return Err(HookError::launch(format!("no MCP tools in this run: `{}` cannot be called", self.name)));
        };
        let Some(handle) = tools.registry.lookup(&self.name) else {
            return Err(HookError::launch(format!("`{}` is not a tool of a connected MCP server", self.name)));
        };
        let tool = tools.registry.tool(handle);
        let args = self.input.as_ref().map(|i| substitute_map(i, event)).unwrap_or_default();
        let mut call =
            ToolContext::new(Arc::clone(&tools.workspace), "hook", self.name.clone(), self.child_env.clone());
        call.cancel = ctx.cancel.child_token();
        match tokio::time::timeout(self.timeout, tool.execute(&args, &call)).await {
            Err(_) => {
                call.cancel.cancel();
                Err(HookError::timeout(format!("no answer within {:.1} s", self.timeout.as_secs_f64())))
            }
            Ok(Err(e)) => Err(HookError::failed(format!("`{}` failed: {}", self.name, e.message))),
            Ok(Ok(response)) => Ok(tool.project(&response).content),
        }
    }
}

/// `input` with `${path}` replaced in every string, from `event`.
pub fn substitute_map(input: &Map<String, Value>, event: &Value) -> Map<String, Value> {
    input.iter().map(|(k, v)| (k.clone(), substitute(v, event))).collect()
}

fn substitute(value: &Value, event: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(substitute_text(text, event)),
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, event)).collect()),
        Value::Object(map) => Value::Object(substitute_map(map, event)),
        other => other.clone(),
    }
}

fn substitute_text(text: &str, event: &Value) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let path = &after[..end];
        let found = path.split('.').try_fold(event, |v, key| v.get(key));
        match found {
            Some(Value::String(s)) => out.push_str(s),
            Some(Value::Null) | None => {}
            Some(other) => out.push_str(&other.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[async_trait]
impl<E: WireEvent> Hook<E> for McpToolHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        let started = Instant::now();
        let payload = input::encode::<E>(ctx, input);
        let event: Value = serde_json::from_slice(&payload).unwrap_or(Value::Null);
        let answer = self.call_tool(ctx, &event).await;
        self.meta.settle_reply::<E>(answer, started, |text| {
            decide::from_exit::<E>(&Exit { code: Some(0), stdout: text, stdout_overflow: false, stderr: "" })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_of_the_event_fill_the_input_strings() {
        let event = json!({"tool_input": {"command": "rm -rf x", "timeout": 5}, "session_id": "s1"});
        let input = json!({"message": "check ${tool_input.command} in ${session_id}", "n": 3,
            "nested": ["${tool_input.timeout}", "${missing.path}", "${unclosed"]});
        let got = substitute_map(input.as_object().expect("object"), &event);
        assert_eq!(
            Value::Object(got),
            json!({"message": "check rm -rf x in s1", "n": 3, "nested": ["5", "", "${unclosed"]})
        );
    }
}
