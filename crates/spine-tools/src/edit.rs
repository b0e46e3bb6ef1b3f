//! `Edit {file_path, old_string, new_string, replace_all?}` (effect: write): exact string
//! replacement in a text file. An absent `replace_all` is filled in as `false` before hooks see
//! the call, as Claude Code does.
//!
//! `old_string` must occur; exactly once unless `replace_all` is true (then every
//! non-overlapping occurrence is replaced). `old_string == new_string` and an empty
//! `old_string` are refused. All of these are `validation_error`s; a missing file is
//! `not_found`, a path outside the workspace `permission_denied`. The file is read and
//! rewritten in place through one descriptor opened race-free beneath the workspace root
//! (`spine_core::workspace::open`), so a symlink swapped in after the check cannot lead out.
//!
//! Response: Claude Code's `{"filePath", "oldString", "newString", "originalFile",
//! "structuredPatch", "userModified": false, "replaceAll"}` plus spine's `"replacements"` (the
//! count). `originalFile` is the whole text before the edit (null past
//! 10 MiB); `structuredPatch` is its diff to the new text (`patch`: 3 lines of context).
//! Claude Code's optional `gitDiff` is not given.

use std::path::Path;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::{args, patch, paths};

/// The `Edit` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditTool;

#[derive(Deserialize, JsonSchema)]
struct EditArgs {
    /// The file to edit.
    file_path: String,
    /// The exact text to replace.
    old_string: String,
    /// The replacement text.
    new_string: String,
    /// Replace every occurrence (default false).
    replace_all: Option<bool>,
}

#[async_trait]
impl Tool for EditTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Edit".to_owned(),
            description: "Replaces `old_string` with `new_string` in a file. `old_string` must \
                          occur exactly once (include surrounding lines to make it unique) \
                          unless `replace_all` is true."
                .to_owned(),
            input_schema: args::schema::<EditArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("file_path")
    }

    /// The path made absolute and lexically normal (as every file tool), and an absent
    /// `replace_all` filled in as `false`: Claude Code applies its schema's default before
    /// hooks see the call, so PreToolUse and PostToolUse inputs always carry it.
    fn normalize(&self, args: &mut Map<String, Value>, cwd: &Path) {
        if let Some(Value::String(path)) = args.get_mut("file_path") {
            *path = Workspace::normalize(path, cwd).to_string_lossy().into_owned();
        }
        args.entry("replace_all").or_insert(Value::Bool(false));
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let EditArgs { file_path, old_string: old, new_string: new, replace_all } = args::parse(args)?;
        let (file_path, old, new) = (file_path.as_str(), old.as_str(), new.as_str());
        let replace_all = replace_all.unwrap_or(false);
        if old.is_empty() {
            return Err(invalid("old_string must not be empty; use Write to create a file"));
        }
        if old == new {
            return Err(invalid("old_string and new_string are identical; nothing to change"));
        }
        let path = paths::confine(ctx, file_path)?;
        // Read and rewritten through one descriptor opened race-free beneath the root.
        let workspace = ctx.workspace.clone();
        let (shown, old_s, new_s) = (file_path.to_owned(), old.to_owned(), new.to_owned());
        let (edited, hunks) = paths::blocking(move || {
            let edited = workspace
                .update_file(&path, |bytes| {
                    let edited = replace(&shown, bytes, &old_s, &new_s, replace_all)?;
                    Ok((edited.updated.as_bytes().to_vec(), edited))
                })
                .map_err(|e| paths::open_error(&shown, e))??;
            // The diff is computed off the async threads too.
            let hunks = patch::structured_patch(&edited.original, &edited.updated);
            Ok((edited, hunks))
        })
        .await?;
        Ok(json!({
            "filePath": file_path,
            "oldString": old,
            "newString": new,
            "originalFile": patch::original_file(&edited.original),
            "structuredPatch": hunks,
            "userModified": false,
            "replaceAll": replace_all,
            "replacements": edited.replacements,
        }))
    }

    fn project(&self, response: &Value) -> Projection {
        let path = response.get("filePath").and_then(Value::as_str).unwrap_or("");
        let n = response.get("replacements").and_then(Value::as_u64).unwrap_or(0);
        let noun = if n == 1 { "replacement" } else { "replacements" };
        Projection::plain(format!("Edited {path}: {n} {noun}.")).with("file_path", path).with("replacements", n)
    }
}

/// A file's text before and after an edit.
#[derive(Debug)]
struct Edited {
    original: String,
    updated: String,
    replacements: usize,
}

/// The edit itself: the text before and after, and the number of replacements.
fn replace(file_path: &str, bytes: Vec<u8>, old: &str, new: &str, replace_all: bool) -> Result<Edited, ToolError> {
    let text = String::from_utf8(bytes).map_err(|_| invalid(&format!("{file_path} is not a UTF-8 text file")))?;
    let count = text.matches(old).count();
    if count == 0 {
        return Err(invalid(&format!("old_string not found in {file_path}")));
    }
    if count > 1 && !replace_all {
        return Err(invalid(&format!(
            "old_string occurs {count} times in {file_path}; add surrounding context to \
             make it unique, or set replace_all to replace every occurrence"
        )));
    }
    let (updated, replacements) =
        if replace_all { (text.replace(old, new), count) } else { (text.replacen(old, new, 1), 1) };
    Ok(Edited { original: text, updated, replacements })
}

fn invalid(message: &str) -> ToolError {
    ToolError::new(ErrorCode::ValidationError, message)
}
