//! `memory_get {key}` (effect: read).
//!
//! Reads `.spine/memory/<key>.md`. The response is `{key, path, value, bytes}`; a missing entry
//! is `not_found`. The projection gives the model the value.

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::open::OpenError;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use super::{KeyArgs, key_path, relative};
use crate::{args, paths};

/// The `memory_get` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryGetTool;

#[async_trait]
impl Tool for MemoryGetTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory_get".to_owned(),
            description: "Reads the workspace memory note stored under a key.".to_owned(),
            input_schema: args::schema::<KeyArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let KeyArgs { key } = args::parse(args)?;
        let key = key.as_str();
        let path = key_path(ctx, key)?;
        let bytes = match ctx.workspace.read_file(&path) {
            Ok(bytes) => bytes,
            Err(OpenError::NotFound { .. }) => {
                return Err(ToolError::new(ErrorCode::NotFound, format!("no memory entry `{key}`")));
            }
            Err(e) => return Err(paths::open_error(&relative(ctx, &path), e)),
        };
        let value = String::from_utf8(bytes)
            .map_err(|_| ToolError::new(ErrorCode::RuntimeError, format!("memory entry `{key}` is not UTF-8 text")))?;
        Ok(json!({"key": key, "path": relative(ctx, &path), "value": value, "bytes": value.len()}))
    }

    fn project(&self, response: &Value) -> Projection {
        let key = response.get("key").and_then(Value::as_str).unwrap_or("?");
        let value = response.get("value").and_then(Value::as_str).unwrap_or("");
        let content = if value.trim().is_empty() {
            format!("Memory `{key}` is empty.")
        } else {
            format!("Memory `{key}` ({} bytes):\n{}", value.len(), value.trim_end())
        };
        Projection::plain(content)
            .with("key", key)
            .with("bytes", value.len())
            .with("path", response.get("path").cloned().unwrap_or(Value::Null))
    }
}
