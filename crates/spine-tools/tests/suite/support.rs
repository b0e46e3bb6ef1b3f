//! Shared fixtures: a temporary workspace, a context, and `call`, which prepares a call
//! through the registry (schema + normalisation) and executes it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use spine_core::registry::{ToolRegistry, ToolRegistryBuilder};
use spine_core::tool::{ChildEnv, OutputStream, ProgressSink, Projection, ToolContext};
use spine_core::workspace::Workspace;
use spine_protocol::tool::ToolError;

pub use spine_testkit::procs::eventually_dead;

/// Reads a pid written by a test command (panics when none appears: the test failed).
pub async fn read_pid(path: &Path) -> u32 {
    spine_testkit::procs::read_pid(path).await.unwrap_or_else(|| panic!("no pid in {}", path.display()))
}

/// A temporary workspace with a context rooted at it.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub registry: ToolRegistry,
    pub ctx: ToolContext,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = Arc::new(Workspace::new(dir.path()).expect("workspace"));
        let mut builder = ToolRegistryBuilder::new();
        spine_tools::register_builtins(&mut builder);
        let registry = builder.build().expect("registry");
        let ctx = ToolContext::new(workspace, "call-1", "tool", ChildEnv::default());
        Fixture { _dir: dir, registry, ctx }
    }

    /// The canonical workspace root.
    pub fn root(&self) -> PathBuf {
        self.ctx.workspace.root().to_path_buf()
    }

    /// A path under the root, as a string.
    pub fn path(&self, rel: &str) -> String {
        self.root().join(rel).to_string_lossy().into_owned()
    }

    /// Writes a file under the root (parents created).
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        spine_testkit::files::write_file(&self.root(), rel, content)
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

/// Sets a file's modification time to `secs` after the epoch.
pub fn set_mtime(path: &Path, secs: u64) {
    let f = std::fs::File::options().write(true).open(path).expect("open");
    f.set_modified(std::time::UNIX_EPOCH + Duration::from_secs(secs)).expect("set mtime");
}

/// A progress sink that records every chunk.
#[derive(Default)]
pub struct Recorder {
    pub chunks: Mutex<Vec<(String, String, OutputStream, String)>>,
}

impl ProgressSink for Recorder {
    fn output(&self, call_id: &str, tool_name: &str, stream: OutputStream, text: &str) {
        self.chunks.lock().expect("lock").push((call_id.to_owned(), tool_name.to_owned(), stream, text.to_owned()));
    }
}
