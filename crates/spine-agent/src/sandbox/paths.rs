//! The paths of a session's sandbox policy: the default denied reads, the protected paths of
//! each writable root, the `Read(…)` and `Edit(…)` deny rules and the `sandbox.filesystem`
//! entries as paths.
//!
//! Contract:
//! - A rule or entry naming one path denies that path. One whose glob is `DIR/**` (or a
//!   directory pattern ending in `/`) denies `DIR`, which is exactly what it covers. Any other
//!   glob is expanded once, when the session starts, into the existing paths it matches, as
//!   Claude Code expands `denyRead` globs: a matching file created later is not covered. The
//!   walk looks beneath the pattern's literal directory (beneath each workspace root for a
//!   pattern that matches at any depth, `Read(.env)`), at most [`WALK_LIMIT`] entries and
//!   [`MATCH_LIMIT`] matches; a walk cut short says so in a note.
//! - `sandbox.filesystem` paths are absolute (`/x`, `//x`), `~/…`, or relative to their settings
//!   file's root: the project for a project's files, the file's directory otherwise (inline
//!   JSON: the project), as in Claude Code.
//! - A bare `Read` or `Edit` deny rule (every path) cannot be a sandbox path: it is skipped
//!   with a note (the rule still refuses the file tools).

use std::path::{Component, Path, PathBuf};

use spine_core::permission::PermissionRule;
use spine_settings::trust::Scope;
use spine_settings::{Origin, SandboxPath};

/// Entries a glob's walk visits at most.
pub const WALK_LIMIT: usize = 50_000;
/// Paths a glob expands to at most.
pub const MATCH_LIMIT: usize = 256;

/// What commands may not read by default, relative to the user's home: credentials of common
/// tools, and Claude Code's own.
pub const DEFAULT_DENIED_READS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".config/gh",
    ".claude/.credentials.json",
    ".claude.json",
];

/// What commands may not read in `SPINE_HOME`: the user's settings (their `env` may hold
/// provider keys).
pub const SPINE_HOME_DENIED_READS: &[&str] = &["settings.json"];

/// Paths inside each writable root that commands may not write (they configure what runs on
/// the user's machine); spine-core's protected directories `.spine` and `.claude` whole, and
/// of `.git` the parts that run code (`.git` itself stays writable so `git commit` works).
pub const PROTECTED_IN_ROOTS: &[&str] = &[
    ".claude",
    ".spine",
    ".mcp.json",
    ".git/hooks",
    ".git/config",
    ".git/config.worktree",
    ".git/commondir",
    ".git/modules",
    ".git/worktrees",
];

/// Files of the user's home that run code or configure spine, write-protected when the home
/// is inside a writable root.
pub const PROTECTED_IN_HOME: &[&str] =
    &[".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".claude", ".spine"];

/// Paths from rules and entries, and notes about what could not be made paths.
#[derive(Debug, Default)]
pub struct Resolved {
    /// The paths.
    pub paths: Vec<PathBuf>,
    /// One line per rule skipped or glob walk cut short.
    pub notes: Vec<String>,
}

/// The paths the deny rules of `rules` name, for reads (`write` false: `Read` rules) or writes
/// (`Edit` rules).
pub fn rule_paths<'a>(
    rules: impl IntoIterator<Item = (&'a PermissionRule, String)>,
    write: bool,
    project: &Path,
    roots: &[PathBuf],
) -> Resolved {
    let mut out = Resolved::default();
    for (rule, at) in rules {
        if !rule.is_file_rule(write) {
            continue;
        }
        let Some((scope, exact)) = rule.path_scope(project) else {
            out.notes.push(format!("{at}: `{}` denies every path; the sandbox cannot hide them all", rule.as_str()));
            continue;
        };
        if exact {
            out.paths.push(scope);
            continue;
        }
        let pattern = rule.path_pattern().unwrap_or_default();
        if is_whole_directory(pattern) {
            out.paths.push(scope);
            continue;
        }
        let bases: Vec<PathBuf> = if scope == Path::new("/") { roots.to_vec() } else { vec![scope] };
        expand(&mut out, &at, rule.as_str(), &bases, |path| rule.matches_file(path, write, project));
    }
    out
}

/// `sandbox.filesystem` entries as paths (a glob expanded as a rule's).
pub fn entry_paths(entries: &[SandboxPath], project: &Path, home: Option<&Path>, roots: &[PathBuf]) -> Resolved {
    let mut out = Resolved::default();
    for entry in entries {
        let Some(path) = entry_path(entry, project, home) else {
            out.notes.push(format!("{}: {}: `~` needs a home directory; skipped", entry.origin, entry.path));
            continue;
        };
        let text = path.to_string_lossy().into_owned();
        if !has_glob(&text) {
            out.paths.push(path);
            continue;
        }
        let at = format!("{}: {}", entry.origin, entry.path);
        if is_whole_directory(&text) {
            out.paths.push(literal_prefix(&text));
            continue;
        }
        match PermissionRule::parse(&format!("Read(/{text})")) {
            Ok(rule) => {
                let scope = literal_prefix(&text);
                let bases = if scope == Path::new("/") { roots.to_vec() } else { vec![scope] };
                expand(&mut out, &at, &text, &bases, |p| rule.matches_file(p, false, project));
            }
            Err(e) => out.notes.push(format!("{at}: {e}; skipped")),
        }
    }
    out
}

/// An entry's path: `//x` and `/x` absolute, `~/x` in the home, anything else against its
/// settings file's root.
fn entry_path(entry: &SandboxPath, project: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let written = entry.written.trim();
    if let Some(rest) = written.strip_prefix("//") {
        return Some(normalize(&Path::new("/").join(rest)));
    }
    if written == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = written.strip_prefix("~/") {
        return home.map(|h| normalize(&h.join(rest)));
    }
    let path = Path::new(written);
    if path.is_absolute() {
        return Some(normalize(path));
    }
    Some(normalize(&settings_root(&entry.origin, project).join(path)))
}

/// The root relative sandbox paths of a settings file resolve against (see the contract).
fn settings_root(origin: &Origin, project: &Path) -> PathBuf {
    let Some(dir) = origin.base_dir() else { return project.to_path_buf() };
    let in_config_folder = dir.file_name().is_some_and(|n| n == ".claude" || n == ".spine");
    match (origin.scope(), in_config_folder, dir.parent()) {
        (Scope::Project, true, Some(parent)) => parent.to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

fn has_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// `DIR/**` or `DIR/` with no other glob: the pattern covers exactly `DIR` and what is below.
fn is_whole_directory(pattern: &str) -> bool {
    let stem = pattern.strip_suffix("/**").or_else(|| pattern.strip_suffix('/')).unwrap_or(pattern);
    stem != pattern && !stem.is_empty() && !has_glob(stem) && !stem.ends_with("**")
}

/// The directories of `text` before its first glob.
fn literal_prefix(text: &str) -> PathBuf {
    let mut prefix = PathBuf::from("/");
    for part in text.split('/').filter(|p| !p.is_empty()) {
        if has_glob(part) {
            break;
        }
        prefix.push(part);
    }
    prefix
}

/// Walks `bases` for existing paths `matches` accepts (bounded, see the contract).
fn expand(out: &mut Resolved, at: &str, what: &str, bases: &[PathBuf], matches: impl Fn(&Path) -> bool) {
    let mut visited = 0usize;
    let mut found = 0usize;
    let mut stack: Vec<PathBuf> = bases.iter().filter(|b| b.exists()).cloned().collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            visited += 1;
            if visited > WALK_LIMIT || found >= MATCH_LIMIT {
                out.notes.push(format!(
                    "{at}: `{what}` was expanded only in part (at most {WALK_LIMIT} entries and {MATCH_LIMIT} matches); \
                     deny the enclosing directory instead"
                ));
                return;
            }
            let path = entry.path();
            if matches(&path) {
                found += 1;
                out.paths.push(path);
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
}

/// `path` without `.` and with `..` taken back (lexically).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> PermissionRule {
        PermissionRule::parse(text).expect("rule")
    }

    #[test]
    fn exact_rules_directories_and_globs_become_paths() {
        let dir = tempfile::tempdir().expect("tmp");
        let project = dir.path().canonicalize().expect("canon");
        std::fs::create_dir_all(project.join("a/b")).expect("dirs");
        std::fs::write(project.join("a/b/.env"), "k").expect("env");
        std::fs::write(project.join("a/x.pem"), "k").expect("pem");
        let rules =
            [rule("Read(./.env)"), rule("Read(secrets/**)"), rule("Read(.env)"), rule("Read(**/*.pem)"), rule("Read")];
        let at = |r: &PermissionRule| (r.clone(), format!("s.json: {}", r.as_str()));
        let owned: Vec<(PermissionRule, String)> = rules.iter().map(at).collect();
        let resolved =
            rule_paths(owned.iter().map(|(r, a)| (r, a.clone())), false, &project, std::slice::from_ref(&project));
        assert_eq!(
            resolved.paths,
            vec![project.join(".env"), project.join("secrets"), project.join("a/b/.env"), project.join("a/x.pem")]
        );
        assert_eq!(resolved.notes.len(), 1, "{:?}", resolved.notes);
        assert!(resolved.notes[0].contains("denies every path"), "{:?}", resolved.notes);
    }

    #[test]
    fn entries_resolve_against_their_settings_files_root() {
        let project = Path::new("/p");
        let entry = |written: &str, origin: Origin| SandboxPath { written: written.into(), origin, path: "x".into() };
        let home = Some(Path::new("/h"));
        let proj = Origin::Project("/p/.claude/settings.json".into());
        let user = Origin::User("/h/.claude/settings.json".into());
        let of = |e: SandboxPath| entry_paths(&[e], project, home, &[]).paths;
        assert_eq!(of(entry("build/out", proj.clone())), vec![PathBuf::from("/p/build/out")]);
        assert_eq!(of(entry("cache", user)), vec![PathBuf::from("/h/.claude/cache")]);
        assert_eq!(of(entry("~/.cache/x", proj.clone())), vec![PathBuf::from("/h/.cache/x")]);
        assert_eq!(of(entry("//opt/../srv", proj.clone())), vec![PathBuf::from("/srv")]);
        assert_eq!(of(entry("/var/data/**", proj)), vec![PathBuf::from("/var/data")]);
        assert!(is_whole_directory("/a/b/**") && !is_whole_directory("/a/**/b") && !is_whole_directory("/a/*.x"));
    }
}
