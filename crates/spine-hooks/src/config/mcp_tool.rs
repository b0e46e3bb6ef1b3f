//! A `"type": "mcp_tool"` handler: `server` and `tool` (required: the tool
//! `mcp__<server>__<tool>` of a connected MCP server) and `input` (the tool's arguments, an
//! object whose strings may hold `${path}` references into the event's JSON). Run by
//! [`crate::mcp_tool::McpToolHook`].

use serde_json::{Map, Value};
use spine_settings::type_name;

use super::Diagnostics;
use super::handler::Fields;

/// An MCP tool handler, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToolConfig {
    /// The MCP server's name, as configured.
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
    /// The tool's arguments, with `${path}` references.
    pub input: Option<Map<String, Value>>,
}

impl McpToolConfig {
    /// The tool as spine registers it: `mcp__<server>__<tool>`.
    pub fn tool_name(&self) -> String {
        format!("mcp__{}__{}", self.server, self.tool)
    }
}

pub(super) fn parse(diag: &mut Diagnostics<'_>, f: &Fields<'_>) -> Option<McpToolConfig> {
    let required = |diag: &mut Diagnostics<'_>, key: &str| match f.string(diag, key) {
        Some(v) if !v.trim().is_empty() => Some(v),
        Some(_) => {
            diag.error(f.at(key), "empty");
            None
        }
        None => {
            if f.get(key).is_none() {
                diag.error(f.at(key), "missing (an mcp_tool hook needs `server` and `tool`)");
            }
            None
        }
    };
    let server = required(diag, "server");
    let tool = required(diag, "tool");
    let input = match f.get("input") {
        None => None,
        Some(Value::Object(map)) => Some(map.clone()),
        Some(other) => {
            diag.error(f.at("input"), format!("expected an object of arguments, found {}", type_name(other)));
            return None;
        }
    };
    Some(McpToolConfig { server: server?, tool: tool?, input })
}
