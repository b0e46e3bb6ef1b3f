//! `Glob {pattern, path?}` (effect: read): files whose path matches a glob pattern.
//!
//! The search root is `path` (normalised, inside the workspace) or the working directory.
//! The walk and the pattern rules are `walk`'s (gitignore-aware, hidden files
//! skipped; a pattern without `/` matches names at any depth). An absolute pattern under the
//! root is taken relative to it. Every result is checked with a race-free open beneath the
//! workspace root, so an entry listed through a directory swapped for a symlink that leads
//! out of the workspace is left out. Results are sorted newest modification first and capped at
//! [`MAX_FILES`].
//!
//! Response: Claude Code's `{"filenames", "durationMs", "numFiles", "truncated",
//! "totalMatches", "countIsComplete"}` plus spine's `"cwd"`. As in Claude Code, `filenames` are
//! relative to the working directory when under it (absolute otherwise); `cwd` is that
//! directory (symlinks resolved), and the model reads the names joined to it, absolute.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::open::EntryKind;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::walk::{self, PathGlob};
use crate::{args, paths};

/// Most file names returned.
pub const MAX_FILES: usize = 100;

/// The `Glob` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobTool;

#[derive(Deserialize, JsonSchema)]
struct GlobArgs {
    /// The glob pattern.
    pattern: String,
    /// The directory to search (default: the working directory).
    path: Option<String>,
}

#[async_trait]
impl Tool for GlobTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Glob".to_owned(),
            description: format!(
                "Finds files by glob pattern (`**/*.rs`, `src/**/*.{{ts,tsx}}`; a pattern \
                 without `/` matches file names at any depth), skipping hidden and \
                 git-ignored files. Returns absolute paths, newest first, at most {MAX_FILES}."
            ),
            input_schema: args::schema::<GlobArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let started = std::time::Instant::now();
        let GlobArgs { pattern, path } = args::parse(args)?;
        let (pattern, path_arg) = (pattern.as_str(), path.as_deref());
        let root = paths::confine_root(ctx, path_arg)?;
        let shown_root = path_arg.map_or_else(|| ctx.cwd.clone(), std::path::PathBuf::from);
        match ctx.workspace.kind(&root) {
            Ok(EntryKind::Directory) => {}
            Ok(EntryKind::File | EntryKind::Symlink | EntryKind::Other) => {
                return Err(ToolError::new(
                    ErrorCode::ValidationError,
                    format!("{} is not a directory", shown_root.display()),
                ));
            }
            Err(e) => return Err(paths::open_error(&shown_root.to_string_lossy(), e)),
        }
        let relative = relative_pattern(pattern, &root, &shown_root)?;
        let glob = PathGlob::new(relative).map_err(|e| {
            ToolError::new(ErrorCode::ValidationError, format!("invalid glob pattern {pattern:?}: {e}"))
        })?;
        let cancel = ctx.cancel.clone();
        let workspace = ctx.workspace.clone();
        let mut found = tokio::task::spawn_blocking(move || {
            let mut found = walk::files(&root, Some(&glob), &cancel);
            // Each result is checked race-free beneath the root: a name reached through a
            // directory swapped for a symlink leading out is dropped.
            found.retain(|f| matches!(workspace.kind(&f.path), Ok(EntryKind::File)));
            found
        })
        .await
        .map_err(|e| ToolError::new(ErrorCode::RuntimeError, format!("file walk failed: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(ErrorCode::Canceled, "Glob canceled"));
        }
        walk::sort_newest_first(&mut found);
        let truncated = found.len() > MAX_FILES;
        let base = paths::listing_base(ctx);
        let filenames: Vec<String> = found.iter().take(MAX_FILES).map(|f| paths::listed_name(&f.path, &base)).collect();
        Ok(json!({
            "filenames": filenames,
            "durationMs": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "numFiles": filenames.len(),
            "truncated": truncated,
            "totalMatches": found.len(),
            "countIsComplete": true,
            "cwd": base.to_string_lossy(),
        }))
    }

    fn project(&self, response: &Value) -> Projection {
        let base = response.get("cwd").and_then(Value::as_str);
        let names: Vec<String> = response
            .get("filenames")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(|n| paths::shown_name(n, base)).collect())
            .unwrap_or_default();
        let truncated = response.get("truncated").and_then(Value::as_bool).unwrap_or(false);
        let content = match names.len() {
            0 => "No files found.".to_owned(),
            n => {
                let noun = if n == 1 { "file" } else { "files" };
                let mut text = format!("Found {n} {noun}");
                if truncated {
                    text.push_str(" (the first results, newest first; narrow the pattern for the rest)");
                }
                text.push_str(":\n");
                text.push_str(&names.join("\n"));
                text
            }
        };
        Projection::plain(content).with("num_files", names.len()).with("truncated", truncated)
    }
}

/// An absolute pattern is accepted when it lies under the search root (as given or resolved)
/// and made relative to it.
fn relative_pattern<'a>(
    pattern: &'a str,
    root: &std::path::Path,
    shown_root: &std::path::Path,
) -> Result<&'a str, ToolError> {
    if !pattern.starts_with('/') {
        return Ok(pattern);
    }
    for base in [shown_root, root] {
        let base = base.to_string_lossy();
        let base = base.trim_end_matches('/');
        if let Some(rest) = pattern.strip_prefix(base)
            && let Some(rest) = rest.strip_prefix('/')
        {
            return Ok(rest);
        }
    }
    Err(ToolError::new(
        ErrorCode::ValidationError,
        format!(
            "the pattern {pattern:?} is absolute but not under the search path {}; give a \
             pattern relative to `path`",
            shown_root.display()
        ),
    ))
}
