//! [`TimeLimited`]: any tool with a time limit of the embedder's choosing.
//!
//! File tools declare [`FILE_TOOL_TIME_LIMIT`](crate::FILE_TOOL_TIME_LIMIT); an embedder that
//! wants another limit (shorter for an interactive front end, longer for a slow network mount)
//! registers the tool wrapped: `TimeLimited::new(GrepTool, Duration::from_secs(10))`. Everything
//! else (spec, effect, paths, execution, projection) is the wrapped tool's.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

/// A tool whose calls the runner stops after `limit`.
#[derive(Debug, Clone)]
pub struct TimeLimited<T> {
    tool: T,
    limit: Duration,
}

impl<T: Tool> TimeLimited<T> {
    /// Wraps `tool` with the time limit `limit`.
    pub fn new(tool: T, limit: Duration) -> Self {
        TimeLimited { tool, limit }
    }
}

#[async_trait]
impl<T: Tool> Tool for TimeLimited<T> {
    fn spec(&self) -> ToolSpec {
        self.tool.spec()
    }

    fn effect(&self) -> Effect {
        self.tool.effect()
    }

    fn path_argument(&self) -> Option<&'static str> {
        self.tool.path_argument()
    }

    fn normalize(&self, args: &mut Map<String, Value>, cwd: &Path) {
        self.tool.normalize(args, cwd);
    }

    fn workspace_paths(&self, args: &Map<String, Value>) -> Vec<String> {
        self.tool.workspace_paths(args)
    }

    fn time_limit(&self) -> Option<Duration> {
        Some(self.limit)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        self.tool.execute(args, ctx).await
    }

    fn project(&self, response: &Value) -> Projection {
        self.tool.project(response)
    }
}
