//! Direct calls to the family tools: a temporary workspace, a registry with the families (so
//! arguments are prepared and validated as the runner does), and process-table helpers.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use spine_core::registry::{ToolRegistry, ToolRegistryBuilder};
use spine_core::tool::{Projection, ToolContext};
use spine_core::workspace::Workspace;
use spine_protocol::tool::ToolError;
use spine_tools::{FamilyConfig, FamilyHandles, register_families};

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
        let ctx = ToolContext::new(workspace, "call-1", "tool");
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

/// A string no other process on the machine has in its command line.
pub fn marker() -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{}.{:09}", 50_000 + std::process::id() % 10_000, nanos)
}

/// The pids of live (non-zombie) processes whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return found };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(needle) && !crate::support::dead(pid) {
            found.push(pid);
        }
    }
    found
}

/// Polls until no live process has `needle` in its command line (up to five seconds).
pub async fn eventually_none_with(needle: &str) -> Vec<u32> {
    for _ in 0..500 {
        let left = processes_with(needle);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    processes_with(needle)
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}
