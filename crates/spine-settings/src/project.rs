//! The project directory of a run, and which settings sources a run reads.
//!
//! **Project directory.** Starting at the working directory (`--cwd`, else the current
//! directory, canonicalised), spine looks at each directory up to and including the
//! repository root — the nearest ancestor (or the directory itself) that holds a `.git` entry.
//! The project directory is the first of them that holds a `.claude/` or `.spine/`
//! directory. When none does, or when there is no repository above the working directory,
//! the project directory is the working directory itself (so nothing outside a repository is
//! ever picked up from a parent). The home directory is never a project found by the walk
//! (its `.claude/` and `.spine/` hold the user's own settings), only when it is the working
//! directory itself. The project directory is where `.claude/settings*.json`,
//! `.spine/settings*.json` and `.mcp.json` are read, the key of project trust, the workspace
//! root and the working directory of tools and hooks (`CLAUDE_PROJECT_DIR`).
//!
//! **Sources.** `--setting-sources user,project,local` selects, as in Claude Code, among the
//! discovered files: `user` = `~/.claude/settings.json` and `$SPINE_HOME/settings.json`;
//! `project` = `.claude/settings.json` and `.spine/settings.json`; `local` =
//! `.claude/settings.local.json` and `.spine/settings.local.json`. `--settings` and managed
//! settings ([`crate::managed`]) always apply.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The project directory of a working directory `cwd` (already canonical), by the walk the
/// module documents. `home` (canonical) is the user's home directory: above the working
/// directory it never counts as a project, since its `.claude/` and `.spine/` are the user's
/// own settings (a dotfiles repository in `~` would otherwise make all of `~` the project).
pub fn find_project_dir(cwd: &Path, home: Option<&Path>) -> PathBuf {
    let Some(root) = cwd.ancestors().find(|d| d.join(".git").exists()) else {
        return cwd.to_path_buf();
    };
    for dir in cwd.ancestors() {
        let is_home_above = dir != cwd && home == Some(dir);
        if !is_home_above && (dir.join(".claude").is_dir() || dir.join(".spine").is_dir()) {
            return dir.to_path_buf();
        }
        if dir == root {
            break;
        }
    }
    cwd.to_path_buf()
}

/// One kind of discovered settings source, for `--setting-sources`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SettingSource {
    /// `~/.claude/settings.json`, `$SPINE_HOME/settings.json`.
    User,
    /// `.claude/settings.json`, `.spine/settings.json`.
    Project,
    /// `.claude/settings.local.json`, `.spine/settings.local.json`.
    Local,
}

impl SettingSource {
    /// The name as written in `--setting-sources`.
    pub fn as_str(self) -> &'static str {
        match self {
            SettingSource::User => "user",
            SettingSource::Project => "project",
            SettingSource::Local => "local",
        }
    }
}

impl fmt::Display for SettingSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The discovered sources a run reads (default: all three).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingSources(Vec<SettingSource>);

impl Default for SettingSources {
    fn default() -> Self {
        SettingSources(vec![SettingSource::User, SettingSource::Project, SettingSource::Local])
    }
}

impl SettingSources {
    /// Whether `source` is selected.
    pub fn includes(&self, source: SettingSource) -> bool {
        self.0.contains(&source)
    }
}

impl FromStr for SettingSources {
    type Err = String;
    /// A comma-separated list of `user`, `project`, `local` (spaces allowed; an empty list
    /// selects none, so only `--settings` applies).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = Vec::new();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let source = match word {
                "user" => SettingSource::User,
                "project" => SettingSource::Project,
                "local" => SettingSource::Local,
                other => return Err(format!("unknown setting source `{other}` (expected user, project, local)")),
            };
            if !out.contains(&source) {
                out.push(source);
            }
        }
        out.sort();
        Ok(SettingSources(out))
    }
}

impl fmt::Display for SettingSources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|s| s.as_str()).collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(paths: &[&str]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().expect("tmp");
        for p in paths {
            std::fs::create_dir_all(tmp.path().join(p)).expect("mkdir");
        }
        tmp
    }

    #[test]
    fn the_project_dir_is_the_nearest_dir_with_claude_or_spine_up_to_the_repository_root() {
        let tmp = dirs(&["repo/.git", "repo/.claude", "repo/a/b", "repo/c/.spine", "repo/c/d"]);
        let repo = tmp.path().join("repo").canonicalize().expect("canon");
        assert_eq!(find_project_dir(&repo.join("a/b"), None), repo);
        assert_eq!(find_project_dir(&repo, None), repo);
        assert_eq!(find_project_dir(&repo.join("c/d"), None), repo.join("c"), "nearest wins");
    }

    #[test]
    fn the_walk_stops_at_the_repository_root_and_without_a_repository_the_cwd_is_the_project() {
        let tmp = dirs(&[".claude", "repo/.git", "repo/a", "plain/x"]);
        let base = tmp.path().canonicalize().expect("canon");
        assert_eq!(find_project_dir(&base.join("repo/a"), None), base.join("repo/a"), "no marker inside the repo");
        assert_eq!(find_project_dir(&base.join("plain/x"), None), base.join("plain/x"), "no repository: the cwd");
    }

    #[test]
    fn the_home_directory_is_a_project_only_when_it_is_the_working_directory() {
        // A dotfiles repository in the home directory, which holds the user's `.claude/`.
        let tmp = dirs(&["home/.git", "home/.claude", "home/notes/x"]);
        let home = tmp.path().join("home").canonicalize().expect("canon");
        assert_eq!(find_project_dir(&home.join("notes/x"), Some(&home)), home.join("notes/x"));
        assert_eq!(find_project_dir(&home, Some(&home)), home);
    }

    #[test]
    fn setting_sources_parse_a_comma_list_and_refuse_unknown_names() {
        let s: SettingSources = "project, local".parse().expect("ok");
        assert!(!s.includes(SettingSource::User));
        assert!(s.includes(SettingSource::Project) && s.includes(SettingSource::Local));
        assert_eq!(s.to_string(), "project,local");
        let none: SettingSources = "".parse().expect("empty");
        assert!(!none.includes(SettingSource::User));
        assert!("user,policy".parse::<SettingSources>().expect_err("bad").contains("policy"));
    }
}
