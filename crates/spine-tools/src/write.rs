//! `Write {file_path, content}` (effect: write): creates or replaces a file, creating missing
//! parent directories.
//!
//! Response (Claude Code's): `{"type": "create"|"update", "filePath", "content"}`. A path
//! outside the workspace is `permission_denied` (a symlink is followed only while it stays
//! inside: parents are made with `mkdirat` and the file opened with `openat2(RESOLVE_BENEATH)`
//! from the workspace root, so a symlink swapped in after the check cannot lead out); a
//! directory, FIFO, socket or device at the path is a `validation_error`.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::open::Presence;
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use crate::{args, paths};

/// The `Write` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteTool;

#[derive(Deserialize, JsonSchema)]
struct WriteArgs {
    /// The file to write.
    file_path: String,
    /// The whole new content.
    content: String,
}

#[async_trait]
impl Tool for WriteTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Write".to_owned(),
            description: "Writes a file, replacing it if it exists and creating missing parent \
                          directories."
                .to_owned(),
            input_schema: args::schema::<WriteArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("file_path")
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let WriteArgs { file_path, content } = args::parse(args)?;
        let path = paths::confine(ctx, &file_path)?;
        // Parents made with mkdirat and the file opened with openat2, beneath the root; the
        // content goes through that descriptor.
        let workspace = ctx.workspace.clone();
        let shown = file_path.clone();
        let bytes = content.as_bytes().to_vec();
        let presence =
            paths::blocking(move || workspace.write_file(&path, &bytes).map_err(|e| paths::open_error(&shown, e)))
                .await?;
        let existed = presence == Presence::Existed;
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
