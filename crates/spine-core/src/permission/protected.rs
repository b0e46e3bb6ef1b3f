//! Protected paths: the directories through which a project configures what runs on the
//! user's machine — `.spine/` and `.claude/` (settings with hooks, allow rules, MCP servers)
//! and `.git/` (`config`, `hooks/`). A call that writes into one of them needs an `allow` rule
//! that names the directory explicitly, in every permission mode and even after a hook
//! `allow`; without one the policy answers `ask` (a refusal when nobody can answer).
//!
//! Contract:
//! - [`written_paths`] lists the absolute, lexically normal paths a call writes. For now it
//!   reads the file-edit tools' `file_path` (`notebook_path` for `NotebookEdit`); shell
//!   redirect targets come with `CallFacts::write_paths` later.
//! - A path is protected when any of its components below the project directory (for a path
//!   outside it, such as one in a directory added with `--add-dir`: any of its components) is
//!   `.spine`, `.claude` or `.git` (compared ASCII-case-insensitively, so `.GIT/config` on a
//!   case-insensitive file system is caught). Both the lexical path and the path with
//!   symlinks followed are checked, so `docs -> .git/hooks` does not hide a hook. A path
//!   whose links cannot be resolved counts as protected.
//! - An allow rule *names* a protected path when its path pattern has the protected directory
//!   as a component (`Edit(.spine/settings.local.json)`, `Edit(.claude/**)`, `Write(//p/.git/config)`)
//!   and it matches the call. A bare `Edit`, `Edit(*)` or `Edit(**)` does not count.

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::tool::Effect;

use super::rule::{PermissionRule, RuleUse};
use crate::workspace::Workspace;

/// The directories of a project that configure what runs on the user's machine.
pub const PROTECTED_DIRS: [&str; 3] = [".spine", ".claude", ".git"];

/// Tools whose `file_path` (or `notebook_path`) is the file they write.
const FILE_EDIT_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// A written path inside a protected directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedWrite {
    /// The path written (absolute, lexically normal).
    pub path: PathBuf,
    /// The protected directory it is in (`.spine`, `.claude` or `.git`).
    pub dir: &'static str,
}

impl ProtectedWrite {
    /// The reason given with the `ask` decision.
    pub fn reason(&self) -> String {
        format!(
            "{} is inside the protected directory {}/ (it can make code run); only an allow rule that names \
             {}/ explicitly, such as Edit({}/…), lets a call write there",
            self.path.display(),
            self.dir,
            self.dir,
            self.dir
        )
    }
}

/// The paths a call writes: the file-edit tools' `file_path`, made absolute against
/// `project_dir`. Other tools write no path this function can see (yet).
pub fn written_paths(tool_name: &str, effect: Effect, args: &Map<String, Value>, project_dir: &Path) -> Vec<PathBuf> {
    let edits_files = match effect {
        Effect::Write => true,
        Effect::Read | Effect::Execute | Effect::Network => false,
    };
    if !edits_files || !FILE_EDIT_TOOLS.contains(&tool_name) {
        return Vec::new();
    }
    ["file_path", "notebook_path"]
        .iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str))
        .map(|p| Workspace::normalize(p, project_dir))
        .collect()
}

/// The first written path that is protected, if any.
pub fn protected_write(paths: &[PathBuf], project_dir: &Path) -> Option<ProtectedWrite> {
    paths.iter().find_map(|path| {
        let lexical = protected_dir(path, project_dir);
        let dir = match lexical {
            Some(dir) => Some(dir),
            None => match path.to_str().map(|p| Workspace::resolve_links(p, project_dir)) {
                Some(Ok(resolved)) => protected_dir(&resolved, project_dir),
                // Not UTF-8 or unresolvable: spine cannot see where it lands, so it is protected.
                Some(Err(_)) | None => Some(PROTECTED_DIRS[0]),
            },
        };
        dir.map(|dir| ProtectedWrite { path: path.clone(), dir })
    })
}

/// The protected directory among `path`'s components below `project_dir`.
fn protected_dir(path: &Path, project_dir: &Path) -> Option<&'static str> {
    let below = path.strip_prefix(project_dir).unwrap_or(path);
    below.components().find_map(|c| match c {
        Component::Normal(name) => {
            let name = name.to_str()?;
            PROTECTED_DIRS.iter().copied().find(|d| d.eq_ignore_ascii_case(name))
        }
        Component::Prefix(_) | Component::RootDir | Component::CurDir | Component::ParentDir => None,
    })
}

/// Whether an allow rule names `dir` explicitly and matches the call.
pub fn names_explicitly(
    rule: &PermissionRule,
    dir: &str,
    tool_name: &str,
    args: &Map<String, Value>,
    project_dir: &Path,
) -> bool {
    let Some(pattern) = rule.path_pattern() else {
        return false;
    };
    let names_dir = pattern.split('/').any(|part| part.eq_ignore_ascii_case(dir));
    names_dir && rule.matches(tool_name, args, project_dir, RuleUse::Allow)
}

/// The protected write of a call that no allow rule names, if any: the policy's `ask` row.
/// `shell_writes` are the redirect and `tee` targets of a shell command (the call's
/// `write_paths`); for those an allow rule names the directory when its path pattern does and
/// it matches the target as a file edit.
pub fn unnamed_protected_write(
    tool_name: &str,
    effect: Effect,
    args: &Map<String, Value>,
    project_dir: &Path,
    allow: &[PermissionRule],
    shell_writes: &[PathBuf],
) -> Option<ProtectedWrite> {
    let paths = written_paths(tool_name, effect, args, project_dir);
    if let Some(hit) = protected_write(&paths, project_dir)
        && !allow.iter().any(|r| names_explicitly(r, hit.dir, tool_name, args, project_dir))
    {
        return Some(hit);
    }
    shell_writes.iter().find_map(|path| {
        let hit = protected_write(std::slice::from_ref(path), project_dir)?;
        let named = allow.iter().any(|r| {
            r.path_pattern().is_some_and(|p| p.split('/').any(|part| part.eq_ignore_ascii_case(hit.dir)))
                && r.matches_write(path, project_dir)
        });
        (!named).then_some(hit)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ROOT: &str = "/proj";

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn rules(list: &[&str]) -> Vec<PermissionRule> {
        list.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect()
    }

    fn unnamed(tool: &str, path: &str, allow: &[&str]) -> Option<ProtectedWrite> {
        unnamed_protected_write(
            tool,
            Effect::Write,
            &args(json!({"file_path": path})),
            Path::new(ROOT),
            &rules(allow),
            &[],
        )
    }

    #[test]
    fn writes_into_spine_claude_and_git_are_protected_at_any_depth_and_case() {
        for path in [".spine/settings.local.json", ".claude/settings.json", ".git/hooks/pre-commit", ".git/config"] {
            assert!(unnamed("Write", path, &[]).is_some(), "{path}");
        }
        assert_eq!(unnamed("Edit", "/proj/sub/.git/config", &[]).map(|w| w.dir), Some(".git"));
        assert_eq!(unnamed("Write", ".GIT/config", &[]).map(|w| w.dir), Some(".git"));
        assert_eq!(unnamed("Write", "src/../.spine/x", &[]).map(|w| w.dir), Some(".spine"));
    }

    #[test]
    fn writes_into_protected_directories_of_an_added_root_are_protected_too() {
        // An added workspace root (`--add-dir /added`) lies outside the project directory:
        // its whole path is checked, so its `.git/` and `.claude/` are protected like the
        // project's, and so is everything in a root that itself lies in such a folder.
        assert_eq!(unnamed("Write", "/added/.git/config", &[]).map(|w| w.dir), Some(".git"));
        assert_eq!(unnamed("Edit", "/added/sub/.claude/settings.json", &[]).map(|w| w.dir), Some(".claude"));
        assert_eq!(unnamed("Write", "/home/me/.claude/notes.md", &[]).map(|w| w.dir), Some(".claude"));
        assert_eq!(unnamed("Write", "/added/notes.md", &[]), None);
        assert_eq!(unnamed("Write", "/added/.git/config", &["Edit(//added/.git/config)"]), None);
    }

    #[test]
    fn ordinary_files_and_look_alike_names_are_not_protected() {
        for path in ["src/main.rs", ".github/workflows/ci.yml", ".gitignore", "docs/.spinet", ".spine.md"] {
            assert_eq!(unnamed("Write", path, &[]), None, "{path}");
        }
    }

    #[test]
    fn only_an_allow_rule_naming_the_protected_directory_lifts_it() {
        assert_eq!(unnamed("Write", ".spine/settings.local.json", &["Edit(.spine/settings.local.json)"]), None);
        assert_eq!(unnamed("Edit", ".claude/settings.json", &["Edit(.claude/**)"]), None);
        assert_eq!(unnamed("Write", ".git/config", &["Write(//proj/.git/config)"]), None);
        for generic in ["Edit", "Write", "Edit(**)", "Edit(*)", "Edit(*.json)"] {
            assert!(unnamed("Write", ".spine/settings.local.json", &[generic]).is_some(), "{generic}");
        }
        // A rule naming another protected file, or another protected directory, does not count.
        assert!(unnamed("Write", ".spine/settings.json", &["Edit(.spine/settings.local.json)"]).is_some());
        assert!(unnamed("Write", ".git/hooks/pre-commit", &["Edit(.spine/**)"]).is_some());
    }

    #[test]
    fn only_file_edit_tools_that_write_have_written_paths() {
        let a = args(json!({"file_path": ".spine/settings.json"}));
        assert!(written_paths("Read", Effect::Read, &a, Path::new(ROOT)).is_empty());
        assert!(written_paths("mcp__x__write", Effect::Execute, &a, Path::new(ROOT)).is_empty());
        assert_eq!(
            written_paths("Write", Effect::Write, &a, Path::new(ROOT)),
            vec![PathBuf::from("/proj/.spine/settings.json")]
        );
    }

    #[test]
    fn a_symlink_into_a_protected_directory_is_followed() {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().canonicalize().expect("canon");
        std::fs::create_dir_all(root.join(".git/hooks")).expect("mkdir");
        std::os::unix::fs::symlink(root.join(".git/hooks"), root.join("docs")).expect("link");
        let a = args(json!({"file_path": "docs/pre-commit"}));
        let hit = unnamed_protected_write("Write", Effect::Write, &a, &root, &[], &[]);
        assert_eq!(hit.map(|w| w.dir), Some(".git"));
    }

    #[test]
    fn shell_redirects_into_protected_directories_need_an_edit_rule_naming_them() {
        let bash = args(json!({"command": "echo '{}' > .spine/settings.local.json"}));
        let target = [PathBuf::from("/proj/.spine/settings.local.json")];
        let root = Path::new(ROOT);
        let hit = unnamed_protected_write("Bash", Effect::Execute, &bash, root, &rules(&["Bash"]), &target);
        assert_eq!(hit.map(|h| h.dir), Some(".spine"));
        let generic = rules(&["Bash", "Edit(**)"]);
        assert!(unnamed_protected_write("Bash", Effect::Execute, &bash, root, &generic, &target).is_some());
        let named = rules(&["Bash", "Edit(.spine/settings.local.json)"]);
        assert!(unnamed_protected_write("Bash", Effect::Execute, &bash, root, &named, &target).is_none());
        let elsewhere = [PathBuf::from("/proj/notes.txt")];
        assert!(unnamed_protected_write("Bash", Effect::Execute, &bash, root, &[], &elsewhere).is_none());
    }
}
