//! Memory: Markdown notes the agent keeps in the workspace, under `.spine/memory/`.
//!
//! | tool | effect | does |
//! |---|---|---|
//! | [`memory_store`] `{key, value}` | write | writes `.spine/memory/<key>.md` (replacing it) |
//! | [`memory_get`] `{key}` | read | reads one entry |
//! | [`memory_list`] `{}` | read | the entries and daily logs, with sizes |
//! | [`memory_search`] `{query}` | read | ranked matches over entries and daily logs, with snippets |
//! | [`memory_append_daily`] `{text}` | write | appends a timestamped entry to `.spine/memory/daily/YYYY-MM-DD.md` (UTC) |
//!
//! Rules:
//! - A key is `[A-Za-z0-9._-]+`, at most [`MAX_KEY_LEN`] characters, not starting with a dot:
//!   no path separators, so a key names one file directly under `.spine/memory/`. Anything
//!   else is a `validation_error`. The key `root` is the root memory file
//!   ([`ROOT_MEMORY_FILE`]) that `prepare_turn` puts in every prompt's Memory layer.
//! - Every file goes through the workspace boundary before any I/O: a `.spine` or
//!   `.spine/memory` that is a symlink leading outside the workspace is `permission_denied`.
//!   Every read, write and listing then goes through the race-free opener beneath the
//!   workspace root (`spine_core::workspace::open`), so a symlink swapped in after the check
//!   cannot lead out either.
//! - Values are at most [`MAX_VALUE_BYTES`]; writes replace the file atomically (a temporary
//!   file renamed over it), so a prompt never reads half an entry.
//! - A missing entry is `not_found`.

pub mod memory_append_daily;
pub mod memory_get;
pub mod memory_list;
pub mod memory_search;
pub mod memory_store;
mod search;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use spine_core::tool::{Tool, ToolContext};
use spine_protocol::tool::{ErrorCode, ToolError};

pub use memory_append_daily::MemoryAppendDailyTool;
pub use memory_get::MemoryGetTool;
pub use memory_list::MemoryListTool;
pub use memory_search::MemorySearchTool;
pub use memory_store::MemoryStoreTool;
pub use spine_core::stages::prepare_turn::ROOT_MEMORY_FILE;

use crate::paths;

/// The memory directory, relative to the workspace root.
pub const MEMORY_DIR: &str = ".spine/memory";
/// The daily logs' directory, relative to the workspace root.
pub const DAILY_DIR: &str = ".spine/memory/daily";
/// Longest key.
pub const MAX_KEY_LEN: usize = 100;
/// Largest value (and daily entry), in bytes.
pub const MAX_VALUE_BYTES: usize = 256 * 1024;

/// The five memory tools.
pub fn memory_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(MemoryStoreTool),
        Arc::new(MemoryGetTool),
        Arc::new(MemoryListTool),
        Arc::new(MemorySearchTool),
        Arc::new(MemoryAppendDailyTool),
    ]
}

/// Checks a key: `[A-Za-z0-9._-]+`, no leading dot, at most [`MAX_KEY_LEN`] characters.
pub fn validate_key(key: &str) -> Result<(), ToolError> {
    let invalid = |why: &str| {
        Err(ToolError::new(
            ErrorCode::ValidationError,
            format!(
                "invalid memory key {key:?}: {why} (keys are letters, digits, '.', '_' and '-', not starting with '.')"
            ),
        ))
    };
    if key.is_empty() {
        return invalid("it is empty");
    }
    if key.len() > MAX_KEY_LEN {
        return invalid(&format!("it is longer than {MAX_KEY_LEN} characters"));
    }
    if key.starts_with('.') {
        return invalid("it starts with a dot");
    }
    if let Some(c) = key.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
        return invalid(&format!("{c:?} is not allowed"));
    }
    Ok(())
}

/// The file of `key`, resolved through the workspace boundary.
pub(crate) fn key_path(ctx: &ToolContext, key: &str) -> Result<PathBuf, ToolError> {
    validate_key(key)?;
    confine(ctx, &format!("{MEMORY_DIR}/{key}.md"))
}

/// A path relative to the workspace root, resolved through the boundary.
pub(crate) fn confine(ctx: &ToolContext, relative: &str) -> Result<PathBuf, ToolError> {
    paths::confine(ctx, &ctx.workspace.root().join(relative).to_string_lossy())
}

/// The path relative to the workspace root, for responses.
pub(crate) fn relative(ctx: &ToolContext, path: &Path) -> String {
    path.strip_prefix(ctx.workspace.root()).unwrap_or(path).to_string_lossy().into_owned()
}

/// Refuses values over [`MAX_VALUE_BYTES`].
pub(crate) fn check_size(what: &str, text: &str) -> Result<(), ToolError> {
    if text.len() > MAX_VALUE_BYTES {
        return Err(ToolError::new(
            ErrorCode::ValidationError,
            format!("the {what} is {} bytes; memory entries are at most {MAX_VALUE_BYTES} bytes", text.len()),
        ));
    }
    Ok(())
}

/// Writes `content` to `path` atomically (temporary file, then `renameat`, both on the parent
/// directory's descriptor opened race-free beneath the workspace root), creating parents.
pub(crate) async fn write_atomic(ctx: &ToolContext, path: &Path, content: &str) -> Result<(), ToolError> {
    let workspace = ctx.workspace.clone();
    let (path, content, shown) = (path.to_path_buf(), content.as_bytes().to_vec(), relative(ctx, path));
    paths::blocking(move || {
        workspace.replace_file_atomically(&path, &content).map_err(|e| paths::open_error(&shown, e))
    })
    .await
}

/// The description of the `key` argument. The key's rules are checked by the tool
/// ([`validate_key`], a `validation_error`), not by the schema.
pub(crate) fn key_description() -> String {
    format!(
        "The entry's name: letters, digits, '.', '_' and '-', not starting with '.', at most {MAX_KEY_LEN} \
         characters. `root` is the memory loaded into every prompt."
    )
}

/// The arguments of `memory_get`: `{key}`.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct KeyArgs {
    #[schemars(description = key_description())]
    pub key: String,
}
