//! The workspace boundary at execution. (File tools declare their path argument through
//! `Tool::path_argument`; spine-core normalises it before hooks run and checks it at the
//! permission stage.)
//!
//! - [`confine`]: at execution the path is resolved again (symlinks followed) and refused with
//!   `permission_denied` when it lies outside the workspace: defense in depth, the permission
//!   stage has already denied such calls. A path that cannot be resolved (a symlink loop) is
//!   refused the same way, since its place cannot be checked.

use std::path::{Path, PathBuf};

use spine_core::tool::ToolContext;
use spine_core::workspace::BoundaryError;
use spine_protocol::tool::{ErrorCode, ToolError};

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

/// Maps an I/O error on `path` to a tool error: a missing file is `not_found`, anything else
/// a `runtime_error` naming the path.
pub(crate) fn io_error(path: &Path, err: &std::io::Error) -> ToolError {
    match err.kind() {
        std::io::ErrorKind::NotFound => {
            ToolError::new(ErrorCode::NotFound, format!("{} does not exist", path.display()))
        }
        _ => ToolError::new(ErrorCode::RuntimeError, format!("{}: {err}", path.display())),
    }
}
