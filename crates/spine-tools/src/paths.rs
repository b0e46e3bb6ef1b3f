//! The workspace boundary at execution. (File tools declare their path argument through
//! `Tool::path_argument`; spine-core normalises it before hooks run and checks it at the
//! permission stage.)
//!
//! - [`confine`]: at execution the path is resolved again (symlinks followed) and refused with
//!   `permission_denied` when it lies outside the workspace: defense in depth, the permission
//!   stage has already denied such calls. A path that cannot be resolved (a symlink loop) is
//!   refused the same way, since its place cannot be checked.
//! - The resolved path is then opened race-free beneath the workspace root
//!   (`spine_core::workspace::open`): that open is the enforcement. [`open_error`] maps its
//!   errors: an escape (a symlink swapped in after the check) is `permission_denied`.
//! - [`FILE_TOOL_TIME_LIMIT`]: the time limit every file tool declares.
//! - [`listing_base`], [`listed_name`] and [`shown_name`]: Glob's and Grep's `filenames` as
//!   Claude Code gives them (relative to the working directory when under it) and back to the
//!   absolute paths the model reads.

use std::path::{Path, PathBuf};
use std::time::Duration;

use spine_core::tool::ToolContext;
use spine_core::workspace::open::OpenError;
use spine_core::workspace::{BoundaryError, Workspace};
use spine_protocol::tool::{ErrorCode, ToolError};

/// How long one call of a file tool (Read, Write, Edit, Glob, Grep, the memory tools) may run
/// before the runner stops it with a `timeout` error: 60 s.
pub const FILE_TOOL_TIME_LIMIT: Duration = Duration::from_secs(60);

/// Resolves `path` for access and checks it lies inside the workspace.
pub(crate) fn confine(ctx: &ToolContext, path: &str) -> Result<PathBuf, ToolError> {
    ctx.workspace.resolve(path, &ctx.cwd).map_err(|e| match e {
        BoundaryError::Outside { .. } => ToolError::new(ErrorCode::PermissionDenied, e.to_string()),
        BoundaryError::Unresolvable { .. } => ToolError::new(ErrorCode::PermissionDenied, e.to_string()),
    })
}

/// Resolves the optional search root of Glob and Grep: the `path` argument, or the working
/// directory (which must itself lie inside the workspace).
pub(crate) fn confine_root(ctx: &ToolContext, path: Option<&str>) -> Result<PathBuf, ToolError> {
    match path {
        Some(p) => confine(ctx, p),
        None => confine(ctx, &ctx.cwd.to_string_lossy()),
    }
}

/// Maps an error of the race-free open of `shown` (the path as the model gave it): an escape
/// is `permission_denied` (the workspace boundary), a missing file `not_found`, a directory or
/// a non-regular file a `validation_error`, anything else a `runtime_error`.
pub(crate) fn open_error(shown: &str, err: OpenError) -> ToolError {
    match err {
        OpenError::Escape { .. } => ToolError::new(ErrorCode::PermissionDenied, err.to_string()),
        OpenError::NotFound { .. } => ToolError::new(ErrorCode::NotFound, format!("File does not exist: {shown}")),
        OpenError::IsDirectory { .. } => ToolError::new(ErrorCode::ValidationError, format!("{shown} is a directory")),
        OpenError::NotDirectory { .. } => {
            ToolError::new(ErrorCode::ValidationError, format!("{shown}: a part of the path is not a directory"))
        }
        OpenError::NotRegular { .. } => ToolError::new(
            ErrorCode::ValidationError,
            format!("{shown} is not a regular file (a FIFO, socket or device)"),
        ),
        OpenError::Io { .. } => ToolError::new(ErrorCode::RuntimeError, err.to_string()),
    }
}

/// Runs blocking file work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::new(ErrorCode::RuntimeError, format!("file access failed: {e}")))?
}

/// The directory Glob's and Grep's `filenames` are relative to (their response's `cwd`): the
/// working directory with its symlinks resolved, as the walk reports paths, or as given when
/// it cannot be resolved.
pub(crate) fn listing_base(ctx: &ToolContext) -> PathBuf {
    Workspace::resolve_links(&ctx.cwd.to_string_lossy(), &ctx.cwd).unwrap_or_else(|_| ctx.cwd.clone())
}

/// A found path as Claude Code lists it: relative to `base` when under it, absolute otherwise.
pub(crate) fn listed_name(path: &Path, base: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => path.to_string_lossy().into_owned(),
    }
}

/// A listed name as the model reads it: absolute, joined to `base` (the response's `cwd`)
/// when relative. Without a base (a hook's replacement in Claude Code's shape) it is shown as
/// it is.
pub(crate) fn shown_name(name: &str, base: Option<&str>) -> String {
    match base {
        Some(base) if !Path::new(name).is_absolute() => Path::new(base).join(name).to_string_lossy().into_owned(),
        _ => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_names_are_relative_under_the_base_and_shown_absolute_again() {
        let base = Path::new("/w/project");
        for path in ["/w/project/src/a.rs", "/w/other/b.rs", "/w/project"] {
            let listed = listed_name(Path::new(path), base);
            assert_eq!(shown_name(&listed, Some("/w/project")), path);
        }
        assert_eq!(listed_name(Path::new("/w/project/src/a.rs"), base), "src/a.rs");
        assert_eq!(listed_name(Path::new("/w/other/b.rs"), base), "/w/other/b.rs");
        assert_eq!(shown_name("src/a.rs", None), "src/a.rs");
    }
}
