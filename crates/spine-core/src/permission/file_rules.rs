//! `Read(...)` and `Edit(...)` rules applied to the files a shell command reads and writes
//! ([`super::shell::ShellAnalysis::files`]), for when no OS sandbox enforces them.
//!
//! Contract of [`check`] (the policy's rows 2 and 7, see [`super::policy`]):
//! - only `deny` and `ask` rules are checked; allow rules for files never allow a command
//!   (its `Bash` rules decide);
//! - a read is checked against the `Read` family's rules, a write against the `Edit`
//!   family's, each path exactly as the file tools' paths are ([`PermissionRule::matches_file`]):
//!   made absolute against the command's working directory and folded lexically (`~` is the
//!   home), then also with its symlinks followed;
//! - a relative path after `cd`/`pushd` to a literal absolute directory is checked against
//!   every directory the command may be in; after any other `cd` (relative, `-`, computed,
//!   `popd`) it is computed;
//! - a pattern (`cat .e*`) is expanded against the file system as bash expands it
//!   ([`super::file_glob`]); every match is checked, and the pattern as written too; a match
//!   starting with `-` may be an option, so it counts as computed with everything the command
//!   may do;
//! - a tree (`grep -r KEY .`, `rm -r dir`, `mv dir x`) matches a rule when the rule's path
//!   lies below it and exists, or a walk of the tree (symlinks not followed, their targets
//!   checked, at most [`MAX_WALK`] entries) finds a path the rule matches;
//! - a *certain* hit names the rule, the program, what it does and the path; an *uncertain*
//!   one is a path computed at run time (an expansion, a `cd` spine cannot follow, a path under
//!   `/proc`, links that do not resolve, a walk too large, `tar x`'s extracted files) under a
//!   rule of its kind: the deny or ask rule cannot be checked, so the policy asks.

use std::path::{Path, PathBuf};

use super::file_glob;
use super::rule::PermissionRule;
use super::shell::{Access, FileOperand, OperandPath, Reach, ShellAnalysis};
use crate::workspace::Workspace;

/// The most entries a tree is walked for.
pub const MAX_WALK: usize = 50_000;

/// A rule a file of the command matches, or may match.
#[derive(Debug, Clone)]
pub struct FileHit<'r> {
    /// The rule.
    pub rule: &'r PermissionRule,
    /// Whether it matches for sure (`false`: the path is computed at run time).
    pub certain: bool,
    /// Who (`cat`, a redirection `>`).
    pub program: String,
    /// What it does with the file.
    pub access: Access,
    /// The path (absolute), or the text that is computed and why.
    pub path: String,
}

impl FileHit<'_> {
    /// What the command does, naming the file (`` `cat` reads /proj/.env``); for an
    /// uncertain hit the whole reason of the `ask`, naming the rule.
    pub fn reason(&self) -> String {
        let who = if self.program.starts_with(['<', '>', '&']) {
            format!("the redirection `{}`", self.program)
        } else {
            format!("`{}`", self.program)
        };
        if self.certain {
            format!("{who} {} {}", self.access.verb(), self.path)
        } else {
            format!(
                "cannot check rule {} because {who} {} a path known only at run time: {}",
                self.rule.as_str(),
                self.access.verb(),
                self.path
            )
        }
    }
}

/// The hits of one command (see the module contract).
#[derive(Debug, Clone, Default)]
pub struct FileCheck<'r> {
    hits: Vec<FileHit<'r>>,
}

impl<'r> FileCheck<'r> {
    /// The certain hit of `rule`, if any.
    pub fn certain(&self, rule: &PermissionRule) -> Option<&FileHit<'r>> {
        self.hits.iter().find(|h| h.certain && std::ptr::eq(h.rule, rule))
    }

    /// The first uncertain hit, if any.
    pub fn uncertain(&self) -> Option<&FileHit<'r>> {
        self.hits.iter().find(|h| !h.certain)
    }
}

/// Checks the files of `analysis` (a command starting in `cwd`) against `rules` (the deny
/// and ask rules), relative patterns anchored at `project_dir`.
pub fn check<'r>(
    analysis: &ShellAnalysis,
    cwd: &Path,
    project_dir: &Path,
    rules: impl IntoIterator<Item = &'r PermissionRule>,
) -> FileCheck<'r> {
    let rules: Vec<&'r PermissionRule> =
        rules.into_iter().filter(|r| r.is_file_rule(false) || r.is_file_rule(true)).collect();
    let mut out = FileCheck::default();
    if rules.is_empty() || analysis.files.is_empty() {
        return out;
    }
    let cwds = working_directories(&analysis.dirs, cwd);
    for operand in &analysis.files {
        let relevant = |access: Access| -> Vec<&'r PermissionRule> {
            rules
                .iter()
                .copied()
                .filter(|r| (access.read && r.is_file_rule(false)) || (access.write && r.is_file_rule(true)))
                .collect()
        };
        let wanted = relevant(operand.access.union(operand.as_option));
        if wanted.is_empty() {
            continue;
        }
        let resolved = resolve(operand, &cwds);
        for (why, access) in &resolved.computed {
            for rule in relevant(*access) {
                out.push(rule, false, operand, *access, why.clone());
            }
        }
        let rules = relevant(operand.access);
        for path in &resolved.paths {
            for rule in &rules {
                let write = operand.access.write && rule.is_file_rule(true);
                if let Some((certain, shown)) = matches(rule, path, write, operand.reach, project_dir) {
                    out.push(rule, certain, operand, operand.access, shown);
                }
            }
        }
    }
    out
}

impl<'r> FileCheck<'r> {
    fn push(&mut self, rule: &'r PermissionRule, certain: bool, operand: &FileOperand, access: Access, path: String) {
        if !self.hits.iter().any(|h| std::ptr::eq(h.rule, rule) && h.certain == certain) {
            self.hits.push(FileHit { rule, certain, program: operand.program.clone(), access, path });
        }
    }
}

/// The directories a command's relative paths may resolve against, or why they are unknown.
fn working_directories(dirs: &[OperandPath], cwd: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = vec![cwd.to_path_buf()];
    for dir in dirs {
        match dir {
            OperandPath::Literal(text) if text.starts_with(['/', '~']) => {
                let path = Workspace::normalize(text, cwd);
                if !out.contains(&path) {
                    out.push(path);
                }
            }
            other => return Err(format!("a relative path after `cd {}`", other.text())),
        }
    }
    Ok(out)
}

/// The paths an operand stands for, and what of it is computed (why, and with what access).
#[derive(Debug, Default)]
struct Resolved {
    paths: Vec<PathBuf>,
    computed: Vec<(String, Access)>,
}

fn resolve(operand: &FileOperand, cwds: &Result<Vec<PathBuf>, String>) -> Resolved {
    let mut out = Resolved::default();
    let mut lexical = Vec::new();
    let relative = |text: &str| !text.starts_with(['/', '~']);
    match &operand.path {
        OperandPath::Computed(text) => out.computed.push((text.clone(), operand.access)),
        OperandPath::Literal(text) => match (relative(text), cwds) {
            (true, Err(why)) => out.computed.push((format!("{text} ({why})"), operand.access)),
            (true, Ok(cwds)) => lexical.extend(cwds.iter().map(|c| Workspace::normalize(text, c))),
            (false, _) => lexical.push(Workspace::normalize(text, Path::new("/"))),
        },
        OperandPath::Pattern(chars) => pattern(operand, chars, cwds, &mut lexical, &mut out),
        OperandPath::Into { dir, name } => {
            let inner = FileOperand { path: (**name).clone(), ..operand.clone() };
            let sources = resolve(&inner, cwds);
            out.computed.extend(sources.computed);
            let dirs: Vec<PathBuf> = match (relative(dir), cwds) {
                (true, Err(why)) => {
                    out.computed.push((format!("{dir} ({why})"), operand.access));
                    Vec::new()
                }
                (true, Ok(cwds)) => cwds.iter().map(|c| Workspace::normalize(dir, c)).collect(),
                (false, _) => vec![Workspace::normalize(dir, Path::new("/"))],
            };
            for source in sources.paths.iter().filter_map(|p| p.file_name()) {
                lexical.extend(dirs.iter().map(|d| d.join(source)));
            }
        }
    }
    for path in lexical {
        if path.starts_with("/proc") {
            out.computed.push((format!("{} (a path under /proc)", path.display()), operand.access));
            continue;
        }
        let resolved = Workspace::resolve_links(&path.to_string_lossy(), Path::new("/"));
        match resolved {
            Ok(r) if r != path => {
                add(&mut out.paths, path);
                add(&mut out.paths, r);
            }
            Ok(_) => add(&mut out.paths, path),
            Err(e) => out.computed.push((format!("{} ({e})", path.display()), operand.access)),
        }
    }
    out
}

fn pattern(
    operand: &FileOperand,
    chars: &[(char, bool)],
    cwds: &Result<Vec<PathBuf>, String>,
    lexical: &mut Vec<PathBuf>,
    out: &mut Resolved,
) {
    let text: String = chars.iter().map(|(c, _)| *c).collect();
    let starts_plain = chars.first().is_some_and(|(c, _)| *c == '/' || *c == '~');
    let cwds: Vec<PathBuf> = match cwds {
        Ok(c) => c.clone(),
        Err(_) if starts_plain => vec![PathBuf::from("/")],
        Err(why) => {
            out.computed.push((format!("{text} ({why})"), operand.access.union(operand.as_option)));
            return;
        }
    };
    for cwd in &cwds {
        match file_glob::expand(chars, cwd) {
            Ok(matches) => {
                for (word, path) in matches {
                    if word.starts_with('-') && operand.as_option.any() {
                        out.computed.push((format!("{text} (matches `{word}`, an option)"), operand.as_option));
                    }
                    add(lexical, path);
                }
            }
            Err(why) => out.computed.push((format!("{text} ({why})"), operand.access.union(operand.as_option))),
        }
    }
}

fn add(paths: &mut Vec<PathBuf>, path: PathBuf) {
    if !paths.contains(&path) {
        paths.push(path);
    }
}

/// Whether `rule` matches an access of `path` with `reach`: `Some((true, shown))` for sure,
/// `Some((false, shown))` possibly (a walk too large, or files the run chooses), `None` not;
/// `shown` is the path that matched, for the reason.
fn matches(
    rule: &PermissionRule,
    path: &Path,
    write: bool,
    reach: Reach,
    project_dir: &Path,
) -> Option<(bool, String)> {
    let itself = rule.matches_file(path, write, project_dir);
    let scope = rule.path_scope(project_dir);
    let shown = path.display();
    match reach {
        Reach::Path => itself.then(|| (true, shown.to_string())),
        Reach::Within => {
            let overlaps = scope.is_none_or(|(scope, _)| scope.starts_with(path) || path.starts_with(&scope));
            (itself || overlaps).then(|| (false, format!("files it chooses below {shown}")))
        }
        Reach::Tree if itself => Some((true, shown.to_string())),
        Reach::Tree => {
            let below = |found: &Path| (true, format!("{} (below {shown})", found.display()));
            match scope {
                None => Some((true, format!("everything below {shown}"))),
                Some((scope, true)) if scope.starts_with(path) => {
                    std::fs::symlink_metadata(&scope).is_ok().then(|| below(&scope))
                }
                Some((scope, false)) if scope.starts_with(path) => walk(rule, &scope, write, project_dir, below),
                Some((scope, _)) if path.starts_with(&scope) => walk(rule, path, write, project_dir, below),
                Some(_) => None,
            }
        }
    }
}

/// Walks a tree for a path `rule` matches (see the module contract).
fn walk(
    rule: &PermissionRule,
    root: &Path,
    write: bool,
    project_dir: &Path,
    below: impl Fn(&Path) -> (bool, String),
) -> Option<(bool, String)> {
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_WALK {
                return Some((false, format!("{} (more than {MAX_WALK} entries below it)", root.display())));
            }
            let path = entry.path();
            if rule.matches_file(&path, write, project_dir) {
                return Some(below(&path));
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_symlink() => {
                    let target = Workspace::resolve_links(&path.to_string_lossy(), Path::new("/"));
                    if let Ok(target) = target
                        && rule.matches_file(&target, write, project_dir)
                    {
                        return Some(below(&path));
                    }
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "file_rules_tests.rs"]
mod tests;
