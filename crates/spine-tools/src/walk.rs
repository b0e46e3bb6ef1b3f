//! The file walk of Glob and Grep, and their glob patterns.
//!
//! [`files`] lists the regular files under a root the way ripgrep does: `.gitignore`,
//! `.ignore` and git's exclude files are honoured (even outside a git repository), hidden
//! files and directories are skipped, symlinks are not followed (a link cannot lead a search
//! out of the workspace), unreadable entries are skipped. Order is by path.
//!
//! [`PathGlob`] follows ripgrep's `--glob` rule, which Claude Code's tools inherit: a pattern
//! without `/` matches a file's name at any depth (`*.rs`); one with `/` matches the path
//! relative to the search root (`src/**/*.rs`), where `*` stays within one directory and `**`
//! crosses any number. `{a,b}` alternatives and `[...]` classes work.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use tokio_util::sync::CancellationToken;

/// A compiled glob pattern.
#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

impl PathGlob {
    /// Compiles a pattern; the error text explains what is wrong with it.
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        let name_only = !pattern.contains('/');
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| e.to_string())?
            .compile_matcher();
        Ok(PathGlob { matcher, name_only })
    }

    /// Whether `path` (relative to the search root) matches.
    pub(crate) fn matches(&self, relative: &Path) -> bool {
        if self.name_only {
            relative.file_name().is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// A file found by the walk.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The absolute path.
    pub(crate) path: PathBuf,
    /// Its modification time (the epoch when unknown).
    pub(crate) modified: SystemTime,
}

/// The regular files under `root` (or `root` itself when it is a file) that match `glob`,
/// in path order. Stops early, returning what it has, when `cancel` fires.
pub(crate) fn files(root: &Path, glob: Option<&PathGlob>, cancel: &CancellationToken) -> Vec<Found> {
    let mut found = Vec::new();
    let walker = WalkBuilder::new(root)
        .hidden(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        if cancel.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let relative = match path.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel,
            // The root itself is the file.
            _ => Path::new(path.file_name().unwrap_or(path.as_os_str())),
        };
        if glob.is_some_and(|g| !g.matches(relative)) {
            continue;
        }
        let modified = entry.metadata().ok().and_then(|m| m.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH);
        found.push(Found { path: path.to_path_buf(), modified });
    }
    found
}

/// Sorts newest first; equal times by path.
pub(crate) fn sort_newest_first(found: &mut [Found]) {
    sort_newest_first_by(found, |f| f);
}

/// Sorts items by their file, newest first; equal times by path.
pub(crate) fn sort_newest_first_by<T>(items: &mut [T], file: impl Fn(&T) -> &Found) {
    items.sort_by(|a, b| {
        let (a, b) = (file(a), file(b));
        b.modified.cmp(&a.modified).then_with(|| a.path.cmp(&b.path))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_without_a_slash_match_names_at_any_depth() {
        let g = PathGlob::new("*.rs").expect("glob");
        assert!(g.matches(Path::new("a.rs")));
        assert!(g.matches(Path::new("src/deep/a.rs")));
        assert!(!g.matches(Path::new("a.txt")));
        let g = PathGlob::new("src/*.rs").expect("glob");
        assert!(g.matches(Path::new("src/a.rs")));
        assert!(!g.matches(Path::new("src/deep/a.rs")));
        let g = PathGlob::new("**/*.{rs,toml}").expect("glob");
        assert!(g.matches(Path::new("Cargo.toml")));
        assert!(g.matches(Path::new("x/y/z.rs")));
    }
}
