//! Path arguments of the file tools and the workspace boundary.
//!
//! - [`normalize_arg`]: before hooks run, a path argument is made absolute and lexically
//!   normal (`Workspace::normalize`), so hooks see exactly the path that will be touched.
//! - [`path_arg`]: the path a call will touch, for the permission stage's boundary check.
//! - [`confine`]: at execution the path is resolved again (symlinks followed) and refused with
//!   `permission_denied` when it lies outside the workspace: defense in depth, the permission
//!   stage has already denied such calls. A path that cannot be resolved (a symlink loop) is
//!   refused the same way, since its place cannot be checked.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_core::tool::ToolContext;
use spine_core::workspace::{BoundaryError, Workspace};
use spine_protocol::tool::{ErrorCode, ToolError};

/// Rewrites the string argument `key` (when present) into an absolute, normal path.
pub(crate) fn normalize_arg(args: &mut Map<String, Value>, key: &str, cwd: &Path) {
    if let Some(Value::String(path)) = args.get_mut(key) {
        let normal = Workspace::normalize(path, cwd);
        *path = normal.to_string_lossy().into_owned();
    }
}

/// The string argument `key` as a one-element list, or nothing when absent.
pub(crate) fn path_arg(args: &Map<String, Value>, key: &str) -> Vec<String> {
    match args.get(key) {
        Some(Value::String(path)) => vec![path.clone()],
        _ => Vec::new(),
    }
}

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
