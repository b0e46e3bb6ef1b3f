//! The workspace boundary: every path a file tool touches must resolve inside one of the
//! workspace's roots. Resolution handles `~`, relative paths, `.`/`..`, and symlinks (followed,
//! including dangling ones and ones in the middle of a path), so a link pointing outside is
//! caught.
//!
//! Roots: the primary root (the project: relative paths and [`Workspace::root`] mean it) and
//! the added directories (`permissions.additionalDirectories`, `--add-dir`), each canonical and
//! held open by its own descriptor ([`Workspace::with_roots`]). A path is inside the workspace
//! when it resolves inside ANY root; a boundary error names every root.
//!
//! Paths that do not exist yet (a file about to be written) resolve through their deepest
//! existing ancestor.
//!
//! [`Workspace::resolve`] is the early, explainable check (the policy's boundary stage and the
//! tools' first look). It reads the file system by name, so a symlink swapped in afterwards
//! would win; the enforcement is [`open`]: every file tool opens through the descriptor of
//! the root that lexically contains the (resolved) path, with `openat2(RESOLVE_BENEATH)`,
//! race-free, and checks what it opened by its descriptor. A symlink in one root that points
//! into another root is therefore followed by [`Workspace::resolve`] (its target is inside the
//! workspace) and the tools open the target beneath the root that holds it; a symlink pointing
//! outside every root is refused, by the check and again by the open. When roots nest, the
//! outermost root that contains a path is the one it is opened beneath.

pub mod open;

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use spine_protocol::lexical_path::lexical_normal;
use thiserror::Error;

/// How deep symlink chains may go before resolution gives up (as the kernel's ELOOP).
const MAX_LINKS: usize = 40;

/// A path outside the workspace, or one that could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BoundaryError {
    /// The path resolves outside every root.
    #[error("{path} is outside the workspace {}", show_roots(roots))]
    Outside {
        /// The path as resolved.
        path: PathBuf,
        /// The workspace roots, the primary root first.
        roots: Vec<PathBuf>,
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

/// The roots a boundary message names: `/p`, or `/p (and the added directories /a, /b)`.
pub fn show_roots(roots: &[PathBuf]) -> String {
    match roots.split_first() {
        None => String::new(),
        Some((primary, [])) => primary.display().to_string(),
        Some((primary, extra)) => {
            let extra: Vec<String> = extra.iter().map(|r| r.display().to_string()).collect();
            let noun = if extra.len() == 1 { "directory" } else { "directories" };
            format!("{} (and the added {noun} {})", primary.display(), extra.join(", "))
        }
    }
}

/// One root: its canonical path and its directory held open.
#[derive(Debug)]
struct Root {
    path: PathBuf,
    fd: OwnedFd,
}

impl Root {
    fn open(path: &Path) -> io::Result<Root> {
        let path = path.canonicalize()?;
        let fd = open::open_root(&path)?;
        Ok(Root { path, fd })
    }
}

/// The workspace roots that confine file tools — the primary root, then the added directories
/// — each with its directory held open (the descriptor every race-free open of [`open`] starts
/// from; holding it costs one descriptor per root and saves an `open` of the root per file
/// access).
#[derive(Debug, Clone)]
pub struct Workspace {
    /// Never empty: the primary root first.
    roots: Arc<[Root]>,
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.roots().eq(other.roots())
    }
}

impl Eq for Workspace {}

impl Workspace {
    /// A workspace rooted at `root` (canonicalised; it must exist and be a directory).
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        Self::with_roots(root, std::iter::empty::<PathBuf>())
    }

    /// A workspace with a primary root and added directories (each canonicalised; each must
    /// exist and be a directory; the error names the one that does not). An added directory
    /// equal to a root already given is left out.
    pub fn with_roots<P: AsRef<Path>>(
        primary: impl AsRef<Path>,
        extra: impl IntoIterator<Item = P>,
    ) -> io::Result<Self> {
        let mut roots = vec![Root::open(primary.as_ref())?];
        for dir in extra {
            let dir = dir.as_ref();
            let root = Root::open(dir).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
            if !roots.iter().any(|r| r.path == root.path) {
                roots.push(root);
            }
        }
        Ok(Workspace { roots: roots.into() })
    }

    /// The canonical primary root (the project: relative paths are relative to it).
    pub fn root(&self) -> &Path {
        &self.primary().path
    }

    /// Every canonical root, the primary root first.
    pub fn roots(&self) -> impl ExactSizeIterator<Item = &Path> + Clone {
        self.roots.iter().map(|r| r.path.as_path())
    }

    /// The added directories (every root but the primary one).
    pub fn added_roots(&self) -> impl ExactSizeIterator<Item = &Path> + Clone {
        self.roots.iter().skip(1).map(|r| r.path.as_path())
    }

    /// The root a resolved path lies in: the outermost root that contains it.
    pub fn root_of(&self, resolved: &Path) -> Option<&Path> {
        self.root_index(resolved).map(|i| self.roots[i].path.as_path())
    }

    fn primary(&self) -> &Root {
        // `roots` is never empty (see `with_roots`).
        &self.roots[0]
    }

    /// The index of the outermost root that lexically contains `path`.
    fn root_index(&self, path: &Path) -> Option<usize> {
        self.roots
            .iter()
            .enumerate()
            .filter(|(_, r)| path.starts_with(&r.path))
            .min_by_key(|(_, r)| r.path.components().count())
            .map(|(i, _)| i)
    }

    fn root_paths(&self) -> Vec<PathBuf> {
        self.roots().map(Path::to_path_buf).collect()
    }

    /// Makes a path absolute and lexically normal (`~`, relative to `cwd`, `.`/`..` folded)
    /// without touching the file system. This is what hooks see. It is
    /// `spine_protocol::lexical_path::normalize` (`~`: the user's home of `spine_protocol::home`).
    pub fn normalize(path: &str, cwd: &Path) -> PathBuf {
        spine_protocol::lexical_path::normalize(path, cwd)
    }

    /// Resolves a path for access (following symlinks) and checks it is inside a root.
    pub fn resolve(&self, path: &str, cwd: &Path) -> Result<PathBuf, BoundaryError> {
        let normal = Self::normalize(path, cwd);
        let resolved = resolve_links(&normal, 0)
            .map_err(|reason| BoundaryError::Unresolvable { path: PathBuf::from(path), reason })?;
        if self.contains(&resolved) {
            Ok(resolved)
        } else {
            Err(BoundaryError::Outside { path: resolved, roots: self.root_paths() })
        }
    }

    /// Makes a path absolute (as [`Workspace::normalize`]) and follows its symlinks, without
    /// checking any boundary.
    pub fn resolve_links(path: &str, cwd: &Path) -> Result<PathBuf, BoundaryError> {
        let normal = Self::normalize(path, cwd);
        resolve_links(&normal, 0).map_err(|reason| BoundaryError::Unresolvable { path: PathBuf::from(path), reason })
    }

    /// Whether a resolved path is inside a root.
    pub fn contains(&self, resolved: &Path) -> bool {
        self.roots.iter().any(|r| resolved.starts_with(&r.path))
    }
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

    #[test]
    fn a_path_in_any_root_is_inside_and_one_outside_every_root_names_them_all() {
        let (primary, extra) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
        let ws = Workspace::with_roots(primary.path(), [extra.path()]).expect("workspace");
        let (p, e) = (ws.root().to_path_buf(), extra.path().canonicalize().expect("canon"));
        assert_eq!(ws.roots().collect::<Vec<_>>(), vec![p.as_path(), e.as_path()]);
        assert_eq!(ws.added_roots().collect::<Vec<_>>(), vec![e.as_path()]);
        let inside = e.join("notes.md");
        assert_eq!(ws.resolve(inside.to_str().expect("utf8"), &p), Ok(inside.clone()));
        assert_eq!(ws.root_of(&inside), Some(e.as_path()));
        assert!(ws.contains(&inside));
        let err = ws.resolve("/etc/passwd", &p).expect_err("outside");
        assert_eq!(err, BoundaryError::Outside { path: "/etc/passwd".into(), roots: vec![p.clone(), e.clone()] });
        let text = err.to_string();
        assert!(text.contains("is outside the workspace") && text.contains(&*p.to_string_lossy()), "{text}");
        assert!(text.contains(&format!("added directory {}", e.display())), "{text}");
    }

    #[test]
    fn an_added_root_that_does_not_exist_or_is_a_file_is_an_error_naming_it() {
        let (_d, ws) = ws();
        let missing = ws.root().join("nope");
        let err = Workspace::with_roots(ws.root(), [&missing]).expect_err("missing");
        assert!(err.to_string().contains(&*missing.to_string_lossy()), "{err}");
        std::fs::write(ws.root().join("file"), "x").expect("write");
        let file = ws.root().join("file");
        let err = Workspace::with_roots(ws.root(), [&file]).expect_err("file");
        assert!(err.to_string().contains(&*file.to_string_lossy()), "{err}");
        assert_eq!(err.kind(), io::ErrorKind::NotADirectory, "{err}");
    }

    #[test]
    fn roots_given_twice_count_once_and_nested_roots_use_the_outermost() {
        let (_d, ws) = ws();
        let root = ws.root().to_path_buf();
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        let nested = Workspace::with_roots(&root, [root.join("sub"), root.clone()]).expect("workspace");
        assert_eq!(nested.roots().count(), 2);
        assert_eq!(nested.root_of(&root.join("sub/x")), Some(root.as_path()));
    }

    #[test]
    fn a_symlink_from_one_root_into_another_resolves_into_the_other() {
        let (primary, extra) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
        let ws = Workspace::with_roots(primary.path(), [extra.path()]).expect("workspace");
        let e = extra.path().canonicalize().expect("canon");
        std::os::unix::fs::symlink(&e, ws.root().join("other")).expect("link");
        assert_eq!(ws.resolve("other/f", ws.root()), Ok(e.join("f")));
    }
}
