//! A definition's inline MCP servers (`mcpServers: [{name: {command, args, env}}]` in its front
//! matter): spine-core's [`SubagentServers`], started through the same connection code as the
//! session's servers ([`spine_tools::mcp::connect_mcp_servers`], the session's start-up limit
//! and directory from [`crate::mcp::mcp_options`]).
//!
//! Contract:
//! - every subagent run of the type starts its own connections (concurrently, each within its
//!   start-up limit) and stops them when it ends ([`McpTools::shutdown`]: stdin closed, then the
//!   process group terminated); dropping the running handle kills them;
//! - a server that fails (a bad entry, a command that does not start, a time-out) is one
//!   warning `MCP: MCP server `name`: …`; the subagent runs without its tools;
//! - whether a definition may start servers at all (trust) is decided before, in
//!   [`crate::agent_scope`].

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_core::subagents::{RunningServers, StartedServers, SubagentServers};
use spine_tools::mcp::{McpOptions, McpTools};

/// The inline servers of one definition.
pub struct InlineServers {
    /// `{name: config}`, in the definition's order.
    config: Map<String, Value>,
    names: Vec<String>,
    options: McpOptions,
}

impl InlineServers {
    /// The servers `servers` (name, config as written), started with `options`.
    pub fn new(servers: &[(String, Value)], options: McpOptions) -> Self {
        let names = servers.iter().map(|(name, _)| name.clone()).collect();
        let config = servers.iter().cloned().collect();
        InlineServers { config, names, options }
    }
}

#[async_trait]
impl SubagentServers for InlineServers {
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    async fn start(&self) -> StartedServers {
        let config = Value::Object(self.config.clone());
        let (tools, issues) = spine_tools::mcp::connect_mcp_servers(&config, &self.options).await;
        StartedServers {
            tools: tools.tools(),
            warnings: issues.iter().map(|issue| format!("MCP: {issue}")).collect(),
            running: Box::new(Running(tools)),
        }
    }
}

/// The connections of one subagent run.
struct Running(McpTools);

#[async_trait]
impl RunningServers for Running {
    async fn stop(self: Box<Self>) {
        self.0.shutdown().await;
    }
}

#[cfg(all(test, feature = "mcp"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_server_that_does_not_start_is_a_warning_and_no_tools() {
        let dir = std::env::temp_dir();
        let servers = [("broken".to_owned(), serde_json::json!({"command": "/nonexistent/spine-test-server"}))];
        let inline = InlineServers::new(&servers, McpOptions::new(&dir, spine_process::ChildEnv::default()));
        assert_eq!(inline.names(), ["broken"]);
        let started = inline.start().await;
        assert!(started.tools.is_empty());
        assert_eq!(started.warnings.len(), 1, "{:?}", started.warnings);
        assert!(started.warnings[0].starts_with("MCP: MCP server `broken`: "), "{:?}", started.warnings);
        started.running.stop().await;
    }
}
