//! `memory_store {key, value}` (effect: write).
//!
//! Writes `value` to `.spine/memory/<key>.md`, replacing what was there (atomically). The
//! response is `{key, path, bytes, created, root}`; `root: true` for the root memory file that
//! every prompt includes.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::open::EntryKind;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use super::{check_size, key_description, key_path, relative, write_atomic};
use crate::args;

#[derive(Deserialize, JsonSchema)]
struct StoreArgs {
    #[schemars(description = key_description())]
    key: String,
    /// The note (Markdown).
    value: String,
}

/// The `memory_store` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryStoreTool;

#[async_trait]
impl Tool for MemoryStoreTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory_store".to_owned(),
            description: "Stores a Markdown note under a key in the workspace memory (.spine/memory/<key>.md), \
                          replacing the previous value. The key `root` is included in every prompt."
                .to_owned(),
            input_schema: args::schema::<StoreArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let StoreArgs { key, value } = args::parse(args)?;
        let (key, value) = (key.as_str(), value.as_str());
        let path = key_path(ctx, key)?;
        check_size("value", value)?;
        let created = match ctx.workspace.kind(&path) {
            Ok(EntryKind::Directory) => {
                return Err(ToolError::new(
                    ErrorCode::ValidationError,
                    format!("{} is a directory", relative(ctx, &path)),
                ));
            }
            Ok(EntryKind::File | EntryKind::Symlink | EntryKind::Other) => false,
            Err(_) => true,
        };
        write_atomic(ctx, &path, value).await?;
        Ok(json!({
            "key": key,
            "path": relative(ctx, &path),
            "bytes": value.len(),
            "created": created,
            "root": key == "root",
        }))
    }

    fn project(&self, response: &Value) -> Projection {
        let key = response.get("key").and_then(Value::as_str).unwrap_or("?");
        let bytes = response.get("bytes").and_then(Value::as_u64).unwrap_or(0);
        let root = response.get("root").and_then(Value::as_bool).unwrap_or(false);
        let mut content = format!("Stored memory `{key}` ({bytes} bytes).");
        if root {
            content.push_str(" It is the root memory, included in every prompt.");
        }
        Projection::plain(content)
            .with("key", key)
            .with("bytes", bytes)
            .with("path", response.get("path").cloned().unwrap_or(Value::Null))
            .with("created", response.get("created").cloned().unwrap_or(Value::Null))
    }
}
