//! Paths made absolute and lexically normal without touching the file system: what hooks see,
//! what settings' `additionalDirectories` resolve to, where the workspace boundary starts.
//!
//! Contract of [`normalize`]:
//! - `~` and `~/x` expand to the user's home ([`crate::home`]); without one they stay as
//!   written (a relative path, so they land under `cwd`).
//! - A relative path is joined to `cwd` (which should be absolute); an absolute one is kept.
//! - `.` is dropped and `..` removes the component before it, lexically ([`lexical_normal`]):
//!   symlinks are not followed (spine-core's `Workspace::resolve` does that) and `..` at the
//!   root stays at the root.
//!
//! spine-core's `Workspace::normalize` is [`normalize`].

use std::path::{Component, Path, PathBuf};

use crate::home;

/// `path` made absolute against `cwd` and lexically normal, `~` expanded with the user's home
/// from `HOME` (see the module contract).
pub fn normalize(path: &str, cwd: &Path) -> PathBuf {
    normalize_with(path, cwd, home::user_home().as_deref())
}

/// [`normalize`] with the user's home given (`None`: no home, `~` stays as written).
pub fn normalize_with(path: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let expanded = home::expand_tilde_with(path, home).unwrap_or_else(|| PathBuf::from(path));
    let joined = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    lexical_normal(&joined)
}

/// Folds `.` and `..` lexically on an absolute path (`/` when nothing remains).
pub fn lexical_normal(path: &Path) -> PathBuf {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical_and_absolute() {
        let cwd = Path::new("/w/p");
        assert_eq!(normalize_with("a/../b/./c", cwd, None), PathBuf::from("/w/p/b/c"));
        assert_eq!(normalize_with("/x/../y", cwd, None), PathBuf::from("/y"));
        assert_eq!(normalize_with("/../..", cwd, None), PathBuf::from("/"));
        assert_eq!(normalize_with(".", cwd, None), PathBuf::from("/w/p"));
    }

    #[test]
    fn a_tilde_expands_to_the_home_and_stays_as_written_without_one() {
        let cwd = Path::new("/w");
        assert_eq!(normalize_with("~/notes/../x", cwd, Some(Path::new("/h"))), PathBuf::from("/h/x"));
        assert_eq!(normalize_with("~", cwd, Some(Path::new("/h"))), PathBuf::from("/h"));
        assert_eq!(normalize_with("~/x", cwd, None), PathBuf::from("/w/~/x"));
    }
}
