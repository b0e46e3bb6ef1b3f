//! `Write {file_path, content}` (effect: write): creates or replaces a file, creating missing
//! parent directories.
//!
//! Response (Claude Code's): `{"type": "create"|"update", "filePath", "content",
//! "structuredPatch", "originalFile", "userModified": false}`. For a new file `originalFile` is
//! null and `structuredPatch` empty; for a replaced one they are the old text and its diff to
//! the new (`patch`), or null and empty when the old text was over 10 MiB, not UTF-8 or
//! unreadable (as Claude Code does past its own limit). Claude Code's optional `gitDiff` is not
//! given.
//!
//! A path outside the workspace is `permission_denied` (a symlink is followed only while it stays
//! inside: parents are made with `mkdirat` and the file opened with `openat2(RESOLVE_BENEATH)`
//! from the workspace root, so a symlink swapped in after the check cannot lead out); a
//! directory, FIFO, socket or device at the path is a `validation_error`.
//!
//! A call that fails leaves no directory it made: before writing, the call notes which of the
//! file's parent directories are missing (`write/new_dirs.rs`); when the write fails (a final
//! name over `NAME_MAX`, a path past `PATH_MAX` after many new directories, a final component
//! that cannot be created) it removes those it made, deepest first, each only while it is
//! empty and still the directory the walk passed, reached by descriptor from the root without
//! following a symlink. A file the call created stays when writing its content fails after the
//! open (a full disk); its directories then stay with it.

use std::io::Read;
use std::path::Path;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_core::workspace::open::{OpenFor, Presence};
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use crate::{args, patch, paths};

mod new_dirs;

use new_dirs::NewDirs;

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
        // content goes through that descriptor. The old text is read the same way first, and
        // the diff computed off the async threads too.
        let workspace = ctx.workspace.clone();
        let shown = file_path.clone();
        let text = content.clone();
        let (presence, original, hunks) = paths::blocking(move || {
            let original = read_original(&workspace, &path);
            let new_dirs = NewDirs::find(&workspace, &path);
            let presence = workspace.write_file(&path, text.as_bytes()).map_err(|e| {
                if let Some(new_dirs) = new_dirs {
                    new_dirs.undo();
                }
                paths::open_error(&shown, e)
            })?;
            let original = original.filter(|_| presence == Presence::Existed);
            let hunks = original.as_deref().map(|old| patch::structured_patch(old, &text)).unwrap_or_default();
            Ok((presence, original, hunks))
        })
        .await?;
        Ok(json!({
            "type": if presence == Presence::Existed { "update" } else { "create" },
            "filePath": file_path,
            "content": content,
            "structuredPatch": hunks,
            "originalFile": original,
            "userModified": false,
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

/// The text a Write replaces, read through the same race-free open: `None` when there is no
/// file, or it is over [`patch::MAX_ORIGINAL_BYTES`], not UTF-8 or cannot be read (the write
/// then reports what is wrong with the path).
fn read_original(workspace: &Workspace, path: &Path) -> Option<String> {
    let (file, _) = workspace.open_file(path, OpenFor::Read).ok()?;
    let cap = patch::MAX_ORIGINAL_BYTES;
    if file.metadata().ok()?.len() > u64::try_from(cap).ok()? {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(u64::try_from(cap).ok()? + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() > cap {
        return None;
    }
    String::from_utf8(bytes).ok()
}
