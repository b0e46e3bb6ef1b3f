//! Direct calls to the family tools: a temporary workspace, a registry with the families (so
//! arguments are prepared and validated as the runner does), and process-table helpers.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use spine_core::registry::{ToolRegistry, ToolRegistryBuilder};
use spine_core::tool::{ChildEnv, Projection, ToolContext};
use spine_core::workspace::Workspace;
use spine_protocol::tool::ToolError;
use spine_tools::{FamilyConfig, FamilyHandles, register_families};

pub use spine_testkit::http::free_port;
pub use spine_testkit::procs::{eventually_none_with, marker, processes_with};

/// A workspace, the family tools and their registries.
pub struct Direct {
    pub dir: tempfile::TempDir,
    pub registry: ToolRegistry,
    pub handles: FamilyHandles,
    pub ctx: ToolContext,
}

impl Direct {
    pub fn new() -> Self {
        Self::with(FamilyConfig::default())
    }

    pub fn with(config: FamilyConfig) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = Arc::new(Workspace::new(dir.path()).expect("workspace"));
        let mut builder = ToolRegistryBuilder::new();
        let handles = register_families(&mut builder, config);
        let registry = builder.build().expect("registry");
        let ctx = ToolContext::new(workspace, "call-1", "tool", ChildEnv::default());
        Direct { dir, registry, handles, ctx }
    }

    /// The canonical workspace root.
    pub fn root(&self) -> PathBuf {
        self.ctx.workspace.root().to_path_buf()
    }

    /// Prepares (schema, normalisation) and executes a call.
    pub async fn call(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        self.call_with(tool, args, &self.ctx).await
    }

    /// Same, with another context.
    pub async fn call_with(&self, tool: &str, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        spine_testkit::direct::call(&self.registry, tool, args, ctx).await
    }

    /// The projection of a response by the named tool.
    pub fn project(&self, tool: &str, response: &Value) -> Projection {
        spine_testkit::direct::project(&self.registry, tool, response).expect("tool")
    }
}
