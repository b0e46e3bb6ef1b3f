//! Rule files: every `*.md` under `.claude/rules/` (of the user's home and of the project,
//! subfolders included, in path order), which Claude Code loads as memory beside `CLAUDE.md`.
//!
//! Contract of [`rule_files`]: the Markdown files under `dir`, sorted by path, links not
//! followed into directories; a missing directory has none. A rule whose front matter sets
//! `paths:` applies only while the agent works on matching files in Claude Code; spine does not
//! load those yet, and [`conditional`] says so, so the caller can warn instead of loading them
//! for every file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

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

#[derive(Debug, Default, Deserialize)]
struct RuleMeta {
    #[serde(default)]
    paths: Option<serde_json::Value>,
}

/// The `paths:` of a rule file's front matter, when it sets them (the rule is conditional).
pub fn conditional(text: &str) -> Option<String> {
    let (meta, _) = crate::front_matter::parse::<RuleMeta>(text).ok()?;
    match meta.paths? {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s),
        other => Some(other.to_string()),
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

    #[test]
    fn a_rule_with_paths_is_conditional() {
        assert_eq!(conditional("---\npaths: src/**/*.ts\n---\nUse strict mode.\n"), Some("src/**/*.ts".to_owned()));
        assert!(conditional("---\npaths:\n  - a/**\n  - b/**\n---\nx\n").is_some());
        assert_eq!(conditional("Always answer briefly.\n"), None);
        assert_eq!(conditional("---\ndescription: style\n---\nx\n"), None);
    }
}
