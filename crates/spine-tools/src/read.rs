//! `Read {file_path, offset?, limit?}` (effect: read): a window of a text file's lines.
//!
//! `offset` is the 1-based line to start at (0 counts as 1), `limit` the number of lines
//! (default [`DEFAULT_LIMIT`]). The response is Claude Code's
//! `{"type":"text","file":{"filePath","content","numLines","startLine","totalLines"}}`, where
//! `content` holds the selected lines exactly (joined by `\n`). The projection numbers them as
//! `cat -n` does (`{n:>6}\t{line}`), cutting lines longer than [`MAX_LINE_CHARS`] characters.
//!
//! A missing file is `not_found`; a directory or a binary file (one holding a NUL byte) is a
//! `validation_error`, as is a FIFO, socket or device; a path outside the workspace (also one a
//! symlink swapped in after the check leads out of) is `permission_denied`. The file is opened
//! race-free beneath the workspace root (`spine_core::workspace::open`).

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::open::OpenError;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::output::truncate_line;
use crate::{args, paths};

/// Lines returned when `limit` is absent.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Longest line shown whole in the projection.
pub const MAX_LINE_CHARS: usize = 2000;

/// The `Read` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

#[async_trait]
impl Tool for ReadTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Read".to_owned(),
            description: format!(
                "Reads a text file and returns its lines numbered like `cat -n`. Reads up to \
                 {DEFAULT_LIMIT} lines from the start by default; use `offset` (1-based line) \
                 and `limit` for other parts. Lines longer than {MAX_LINE_CHARS} characters are \
                 cut."
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The file to read."},
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "The line number to start reading from (1-based)."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "The number of lines to read."
                    }
                },
                "required": ["file_path"],
                "additionalProperties": false
            }),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("file_path")
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let file_path = args::string(args, "file_path")?;
        let start = args::opt_u64(args, "offset")?.unwrap_or(1).max(1);
        let limit = args::opt_u64(args, "limit")?.unwrap_or(DEFAULT_LIMIT).max(1);
        let path = paths::confine(ctx, file_path)?;
        // Opened race-free beneath the root and checked by descriptor (a regular file).
        let workspace = ctx.workspace.clone();
        let shown = file_path.to_owned();
        let bytes = paths::blocking(move || {
            workspace.read_file(&path).map_err(|e| match e {
                OpenError::IsDirectory { .. } => ToolError::new(
                    ErrorCode::ValidationError,
                    format!("{shown} is a directory, not a file; use Glob to list it"),
                ),
                other => paths::open_error(&shown, other),
            })
        })
        .await?;
        if bytes.contains(&0) {
            return Err(ToolError::new(
                ErrorCode::ValidationError,
                format!("{file_path} is a binary file; Read only shows text"),
            ));
        }
        let text = String::from_utf8_lossy(&bytes);
        let total = text.lines().count();
        let skip = usize::try_from(start - 1).unwrap_or(usize::MAX);
        let take = usize::try_from(limit).unwrap_or(usize::MAX);
        let selected: Vec<&str> = text.lines().skip(skip).take(take).collect();
        Ok(json!({
            "type": "text",
            "file": {
                "filePath": file_path,
                "content": selected.join("\n"),
                "numLines": selected.len(),
                "startLine": start,
                "totalLines": total,
            }
        }))
    }

    fn project(&self, response: &Value) -> Projection {
        let file = response.get("file").unwrap_or(&Value::Null);
        let path = file.get("filePath").and_then(Value::as_str).unwrap_or("");
        let content = file.get("content").and_then(Value::as_str).unwrap_or("");
        let num = file.get("numLines").and_then(Value::as_u64).unwrap_or(0);
        let start = file.get("startLine").and_then(Value::as_u64).unwrap_or(1);
        let total = file.get("totalLines").and_then(Value::as_u64).unwrap_or(0);

        let mut cut_lines = false;
        let numbered: Vec<String> = if num == 0 {
            Vec::new()
        } else {
            content
                .split('\n')
                .zip(start..)
                .map(|(line, n)| {
                    let (line, cut) = truncate_line(line, MAX_LINE_CHARS);
                    cut_lines |= cut;
                    format!("{n:>6}\t{line}")
                })
                .collect()
        };
        let partial = start > 1 || start + num <= total;
        let text = if total == 0 {
            format!("{path} is empty.")
        } else if num == 0 {
            format!("{path} has {total} lines; offset {start} is past the end.")
        } else if partial {
            format!(
                "{}\n[Lines {start}-{} of {total} in {path}; use offset and limit to read \
                 more.]",
                numbered.join("\n"),
                start + num - 1
            )
        } else {
            numbered.join("\n")
        };
        Projection::plain(text)
            .with("file_path", path)
            .with("start_line", start)
            .with("num_lines", num)
            .with("total_lines", total)
            .with("truncated", partial || cut_lines)
    }
}
