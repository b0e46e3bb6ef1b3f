//! Rule files: every `*.md` under `.claude/rules/` (of the user's home and of the project,
//! subfolders included, in path order), which Claude Code loads as memory beside `CLAUDE.md`.
//!
//! Contract of [`rule_files`]: the Markdown files under `dir`, sorted by path, links not
//! followed into directories; a missing directory has none. Contract of the loader's `rules`:
//! each rule file is read where the loader may read it (through the workspace boundary for the
//! project's); one whose front matter sets `paths:` globs is conditional and kept aside
//! ([`ConditionalRule`], matched against paths relative to the `base` the caller gives); every
//! other one loads as a root memory file, with its imports.

use std::path::{Path, PathBuf};

use super::conditional::ConditionalRule;
use super::{FILE_CAP, Loader, MemoryKind, Reach};
use crate::workspace::Workspace;

/// The rules folder, relative to a project directory or to home.
pub const RULES_DIR: &str = ".claude/rules";

/// How deep subfolders of the rules folder are searched.
const MAX_DEPTH: usize = 8;

/// The rule files under `dir`, sorted by path.
pub fn rule_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, 0, &mut out);
    out.sort();
    out
}

fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_dir() && depth < MAX_DEPTH {
            collect(&path, depth + 1, out);
        } else if (kind.is_file() || kind.is_symlink()) && path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

impl Loader<'_> {
    /// The rule files of a rules folder: a conditional one is kept aside with globs relative to
    /// `base`, every other one loads as a root file.
    pub(super) fn rules(&mut self, dir: &Path, kind: MemoryKind, reach: Reach, base: &Path) {
        for path in rule_files(dir) {
            match self.conditional_rule(&path, kind, reach, base) {
                Some(rule) => self.conditional.push(rule),
                // Not conditional, or not readable here: `root` loads it or says why not.
                None => self.root(&path, kind, reach),
            }
        }
    }

    /// The rule at `path` when it is readable where loading may read it and its front matter
    /// sets `paths:` globs.
    fn conditional_rule(
        &mut self,
        path: &Path,
        kind: MemoryKind,
        reach: Reach,
        base: &Path,
    ) -> Option<ConditionalRule> {
        let named = path.to_string_lossy();
        let resolved = match reach {
            Reach::Workspace => self.workspace.resolve(&named, self.workspace.root()),
            Reach::Anywhere => Workspace::resolve_links(&named, Path::new("/")),
        }
        .ok()?;
        let (text, truncated) = super::cut(self.read(&resolved, reach).ok()?)?;
        let (mut rule, warnings) = ConditionalRule::read(&resolved, kind, base, &text)?;
        self.warnings.extend(warnings);
        if truncated {
            self.warnings.push(format!("memory file {} cut at {FILE_CAP} bytes", resolved.display()));
            rule.body.push_str(&format!("\n[memory file truncated at {FILE_CAP} bytes]"));
        }
        Some(rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_files_are_every_markdown_file_under_the_folder_in_path_order() {
        let dir = tempfile::tempdir().expect("dir");
        let rules = dir.path().join(RULES_DIR);
        std::fs::create_dir_all(rules.join("frontend")).expect("mkdir");
        for name in ["b.md", "a.md", "notes.txt", "frontend/react.md"] {
            std::fs::write(rules.join(name), "x").expect("write");
        }
        let found: Vec<PathBuf> =
            rule_files(&rules).into_iter().map(|p| p.strip_prefix(&rules).expect("under").to_path_buf()).collect();
        assert_eq!(found, [PathBuf::from("a.md"), PathBuf::from("b.md"), PathBuf::from("frontend/react.md")]);
        assert!(rule_files(&dir.path().join("absent")).is_empty());
    }
}
