//! Without the `mcp` feature no MCP server ever connects: [`super::connect_mcp_servers`]
//! answers each configured server with an issue saying so, and these types stand in for the
//! connection and the tool (an [`McpTool`] cannot exist).

use std::convert::Infallible;

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_core::tool::{Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

/// A connected server (never made without the feature).
pub(super) struct McpServer {
    pub(super) name: String,
    never: Infallible,
}

impl McpServer {
    pub(super) fn pid(&self) -> Option<u32> {
        match self.never {}
    }

    pub(super) async fn close(self) {
        match self.never {}
    }
}

/// An MCP tool (never made without the feature).
pub struct McpTool(Infallible);

impl McpTool {
    /// Its spine name.
    pub fn name(&self) -> &str {
        match self.0 {}
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        match self.0 {}
    }

    /// Its server's configured name.
    pub fn server(&self) -> &str {
        match self.0 {}
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        match self.0 {}
    }

    fn effect(&self) -> Effect {
        match self.0 {}
    }

    async fn execute(&self, _args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        match self.0 {}
    }
}
