//! A definition's own tool servers — Claude Code's inline `mcpServers` configs in agent front
//! matter — as the runner sees them: something it starts when a subagent of that type starts
//! and stops when it ends. spine-core knows no MCP; spine-agent implements [`SubagentServers`]
//! with spine-tools' MCP client.
//!
//! Contract:
//! - [`SubagentServers::start`] is called once per subagent run, before its first request, and
//!   never fails as a whole: a server that does not start is a warning
//!   ([`StartedServers::warnings`]) and the subagent runs without its tools;
//! - the tools it returns join that run's registry only
//!   ([`ToolRegistry::extended`](crate::registry::ToolRegistry::extended)): neither the parent
//!   nor another subagent (a grandchild included) sees them; a tool whose name the session
//!   already has is skipped with a warning; `disallowedTools` still removes them;
//! - [`RunningServers::stop`] is awaited when the run ends, however it ends (an answer, an
//!   error, a cancellation); dropping the handle instead (a run aborted mid-way) must stop them
//!   too.

use std::sync::Arc;

use async_trait::async_trait;

use crate::tool::Tool;

/// A definition's own servers, started per subagent run (see the module contract).
#[async_trait]
pub trait SubagentServers: Send + Sync {
    /// The servers' names, in the definition's order (for messages).
    fn names(&self) -> Vec<String>;

    /// Starts every server; what did not start is a warning.
    async fn start(&self) -> StartedServers;
}

/// What [`SubagentServers::start`] started.
pub struct StartedServers {
    /// The tools of the servers that started.
    pub tools: Vec<Arc<dyn Tool>>,
    /// One line per server (or tool) that failed, for the user.
    pub warnings: Vec<String>,
    /// The running servers; stopped when the subagent's run ends.
    pub running: Box<dyn RunningServers>,
}

/// Servers started for one subagent run.
#[async_trait]
pub trait RunningServers: Send {
    /// Stops them and waits until they are gone.
    async fn stop(self: Box<Self>);
}

/// Nothing running (a definition without servers, or none started).
pub struct NoServers;

#[async_trait]
impl RunningServers for NoServers {
    async fn stop(self: Box<Self>) {}
}
