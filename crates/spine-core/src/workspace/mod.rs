//! The workspace boundary: every path a file tool touches must resolve inside the workspace
//! root. Resolution handles `~`, relative paths, `.`/`..`, and symlinks (followed, including
//! dangling ones and ones in the middle of a path), so a link pointing outside is caught.
//!
//! Paths that do not exist yet (a file about to be written) resolve through their deepest
//! existing ancestor.
//!
//! [`Workspace::resolve`] is the early, explainable check (the policy's boundary stage and the
//! tools' first look). It reads the file system by name, so a symlink swapped in afterwards
//! would win; the enforcement is [`open`]: every file tool opens through the root directory's
//! descriptor with `openat2(RESOLVE_BENEATH)`, race-free, and checks what it opened by its
//! descriptor.

pub mod open;

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

/// How deep symlink chains may go before resolution gives up (as the kernel's ELOOP).
const MAX_LINKS: usize = 40;

/// A path outside the workspace, or one that could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BoundaryError {
    /// The path resolves outside the root.
    #[error("{path} is outside the workspace {root}")]
    Outside {
        /// The path as resolved.
        path: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// Too many symlinks, or an unreadable link.
    #[error("cannot resolve {path}: {reason}")]
    Unresolvable {
        /// The path as given.
        path: PathBuf,
        /// Why (a symlink loop, or the error reading a link).
        reason: String,
    },
}

/// The workspace root that confines file tools, and its directory held open (the descriptor
/// every race-free open of [`open`] starts from; holding it costs one descriptor per workspace
/// and saves an `open` of the root per file access).
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    root_fd: Arc<OwnedFd>,
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Eq for Workspace {}

impl Workspace {
    /// A workspace rooted at `root` (canonicalised; it must exist and be a directory).
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        let root_fd = open::open_root(&root)?;
        Ok(Workspace { root, root_fd: Arc::new(root_fd) })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Makes a path absolute and lexically normal (`~`, relative to `cwd`, `.`/`..` folded)
    /// without touching the file system. This is what hooks see.
    pub fn normalize(path: &str, cwd: &Path) -> PathBuf {
        let expanded = expand_home(path);
        let joined = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
        lexical_normal(&joined)
    }

    /// Resolves a path for access (following symlinks) and checks it is inside the root.
    pub fn resolve(&self, path: &str, cwd: &Path) -> Result<PathBuf, BoundaryError> {
        let normal = Self::normalize(path, cwd);
        let resolved = resolve_links(&normal, 0)
            .map_err(|reason| BoundaryError::Unresolvable { path: PathBuf::from(path), reason })?;
        if resolved.starts_with(&self.root) {
            Ok(resolved)
        } else {
            Err(BoundaryError::Outside { path: resolved, root: self.root.clone() })
        }
    }

    /// Makes a path absolute (as [`Workspace::normalize`]) and follows its symlinks, without
    /// checking any boundary.
    pub fn resolve_links(path: &str, cwd: &Path) -> Result<PathBuf, BoundaryError> {
        let normal = Self::normalize(path, cwd);
        resolve_links(&normal, 0).map_err(|reason| BoundaryError::Unresolvable { path: PathBuf::from(path), reason })
    }

    /// Whether a resolved path is inside the root.
    pub fn contains(&self, resolved: &Path) -> bool {
        resolved.starts_with(&self.root)
    }
}

fn expand_home(path: &str) -> PathBuf {
    if (path == "~" || path.starts_with("~/"))
        && let Some(home) = std::env::var_os("HOME")
    {
        let rest = path.trim_start_matches('~').trim_start_matches('/');
        return PathBuf::from(home).join(rest);
    }
    PathBuf::from(path)
}

/// Folds `.` and `..` lexically on an absolute path.
fn lexical_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from("/") } else { out }
}

/// Resolves symlinks along an absolute, lexically normal path; components past the deepest
/// existing one are appended as they are.
fn resolve_links(path: &Path, depth: usize) -> Result<PathBuf, String> {
    if depth > MAX_LINKS {
        return Err("too many levels of symbolic links".to_owned());
    }
    let mut resolved = PathBuf::from("/");
    let mut components = path.components().peekable();
    while let Some(c) = components.next() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => continue,
            Component::ParentDir => {
                resolved.pop();
                continue;
            }
            Component::Normal(name) => {
                let candidate = resolved.join(name);
                match std::fs::symlink_metadata(&candidate) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        let target = std::fs::read_link(&candidate).map_err(|e| e.to_string())?;
                        let joined = if target.is_absolute() { target } else { resolved.join(target) };
                        let mut rest = lexical_normal(&joined);
                        for r in components {
                            rest.push(r.as_os_str());
                        }
                        return resolve_links(&lexical_normal(&rest), depth + 1);
                    }
                    Ok(_) => resolved = candidate,
                    Err(_) => {
                        // Does not exist (yet): the rest cannot contain links.
                        let mut rest = candidate;
                        for r in components {
                            rest.push(r.as_os_str());
                        }
                        return Ok(lexical_normal(&rest));
                    }
                }
            }
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        (dir, ws)
    }

    #[test]
    fn relative_absolute_and_dotdot_inside_are_allowed() {
        let (_d, ws) = ws();
        let root = ws.root().to_path_buf();
        std::fs::create_dir(root.join("src")).expect("mkdir");
        assert_eq!(ws.resolve("src/a.rs", &root), Ok(root.join("src/a.rs")));
        assert_eq!(ws.resolve(root.join("src/../b").to_str().expect("utf8"), &root), Ok(root.join("b")));
        assert_eq!(ws.resolve("./new/dir/file", &root), Ok(root.join("new/dir/file")));
    }

    #[test]
    fn dotdot_escape_and_absolute_outside_are_denied() {
        let (_d, ws) = ws();
        let root = ws.root().to_path_buf();
        assert!(matches!(ws.resolve("../x", &root), Err(BoundaryError::Outside { .. })));
        assert!(matches!(ws.resolve("/etc/passwd", &root), Err(BoundaryError::Outside { .. })));
        assert!(matches!(ws.resolve("src/../../x", &root), Err(BoundaryError::Outside { .. })));
    }

    #[test]
    fn symlinks_pointing_outside_are_denied_even_when_dangling_or_mid_path() {
        let (_d, ws) = ws();
        let outside = tempfile::tempdir().expect("tempdir");
        let root = ws.root().to_path_buf();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).expect("link");
        std::os::unix::fs::symlink(outside.path().join("nope"), root.join("dangling")).expect("link");
        assert!(matches!(ws.resolve("out/file", &root), Err(BoundaryError::Outside { .. })));
        assert!(matches!(ws.resolve("dangling", &root), Err(BoundaryError::Outside { .. })));
        std::os::unix::fs::symlink(root.join("in"), root.join("inlink")).expect("link");
        assert_eq!(ws.resolve("inlink/f", &root), Ok(root.join("in/f")));
    }

    #[test]
    fn normalize_is_lexical_and_absolute() {
        let cwd = Path::new("/w/p");
        assert_eq!(Workspace::normalize("a/../b/./c", cwd), PathBuf::from("/w/p/b/c"));
        assert_eq!(Workspace::normalize("/x/../y", cwd), PathBuf::from("/y"));
    }
}
