//! `Write {file_path, content}` (effect: write): creates or replaces a file, creating missing
//! parent directories.
//!
//! Response (Claude Code's): `{"type": "create"|"update", "filePath", "content"}`. A path
//! outside the workspace is `permission_denied` (a symlink is followed and its target
//! checked); a directory at the path is a `validation_error`.

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::{args, paths};

/// The `Write` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteTool;

#[async_trait]
impl Tool for WriteTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Write".to_owned(),
            description: "Writes a file, replacing it if it exists and creating missing parent \
                          directories."
                .to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The file to write."},
                    "content": {"type": "string", "description": "The whole new content."}
                },
                "required": ["file_path", "content"],
                "additionalProperties": false
            }),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("file_path")
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let file_path = args::string(args, "file_path")?;
        let content = args::string(args, "content")?;
        let path = paths::confine(ctx, file_path)?;
        let existed = match tokio::fs::metadata(&path).await {
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::new(ErrorCode::ValidationError, format!("{file_path} is a directory")));
            }
            Ok(_) => true,
            Err(_) => false,
        };
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| paths::io_error(parent, &e))?;
        }
        tokio::fs::write(&path, content).await.map_err(|e| paths::io_error(&path, &e))?;
        Ok(json!({
            "type": if existed { "update" } else { "create" },
            "filePath": file_path,
            "content": content,
        }))
    }

    fn project(&self, response: &Value) -> Projection {
        let path = response.get("filePath").and_then(Value::as_str).unwrap_or("");
        let bytes = response.get("content").and_then(Value::as_str).map_or(0, str::len);
        let operation = match response.get("type").and_then(Value::as_str) {
            Some("update") => "updated",
            _ => "created",
        };
        Projection::plain(format!("Wrote {bytes} bytes to {path} ({operation})."))
            .with("file_path", path)
            .with("bytes", bytes)
            .with("operation", operation)
    }
}
