//! Harmless shell commands: the read-only commands a shell call may run without an allow rule
//! in the `default`, `acceptEdits` and `plan` modes, as Claude Code runs them (see the policy's
//! row 10c in [`super::policy`]).
//!
//! Contract of [`read_only`] (a call's [`ShellAnalysis`], never its raw text):
//! - nothing is harmless when the analysis is opaque, writes a file (a
//!   redirection or `tee`), or assigns a variable (`PATH=… ls`, `x=…; …`: what a later word or
//!   program means may change);
//! - every simple command ([`ShellAnalysis::commands`], so the parts of `&&`, `||`, `;`, `|`,
//!   the commands of `$(…)`, `<(…)`, subshells and function bodies) must be covered by an
//!   allow rule (as row 10 covers it) or be harmless by itself (a call with no simple command,
//!   such as `[[ -f x ]]`, runs no program and is harmless when its files are):
//!   - its program is written as a bare name of the table (`harmless_table.rs`, or the
//!     grammars of `harmless_special.rs`: `printf`, `cd`, `env`, `find`, `git`);
//!   - every option it is given is one the table lists (an unknown option, an abbreviation, a
//!     word computed at run time where an option or a file may stand, is refused);
//!   - `git` also needs the project's own, trusted repository (`harmless_git.rs`): a trusted
//!     project ([`Scope::trusted`]), a known starting directory ([`Scope::cwd_known`]) inside
//!     the project that holds a real `.git` directory, and no `cd`/`pushd`/`popd` anywhere in
//!     the call (git's `-C`, `--git-dir` and `--work-tree` are refused by its grammar);
//! - every file a harmless command reads or lists (its file operands, the values of options
//!   that name files, the working directory when it reads or lists that by default, the
//!   target of `cd`) and every file the analysis says it reads ([`ShellAnalysis::files`]:
//!   input redirections, the operands of the table's readers) must resolve, symlinks followed,
//!   inside the workspace (the project and the added directories), against every directory
//!   the command may be in after its `cd`s; a pattern is expanded as bash expands it and every
//!   match checked (a match that starts with `-` could be an option: refused); a path known
//!   only at run time, or one a `Read(...)` deny or ask rule matches (for a tree: one such a
//!   rule could match below it), is refused;
//! - `Err` says which part is not harmless and why; `Ok` lists the rules used and the
//!   commands that are harmless by themselves, for the decision's reason.

use std::path::{Path, PathBuf};

use super::file_glob;
use super::harmless_git;
use super::harmless_special as special;
use super::harmless_table::{self, Operands, Program};
use super::rule::PermissionRule;
use super::shell::{FileOperand, OperandPath, Reach, ShellAnalysis, SimpleCommand, basename};
use crate::workspace::Workspace;

/// The most directories a command's `cd`s may leave it in before its relative paths are not
/// checked.
const MAX_DIRS: usize = 32;

/// Where a command runs and what its reads are checked against.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The workspace (the project and the added directories).
    pub workspace: &'a Workspace,
    /// The directory the command starts in.
    pub cwd: &'a Path,
    /// The project directory relative rule patterns are anchored at.
    pub project_dir: &'a Path,
    /// The deny and ask rules (only the `Read(...)` ones are used).
    pub restricting: &'a [&'a PermissionRule],
    /// Whether `cwd` is the directory the command really starts in (the runner said so), not
    /// a default: `git` is harmless only then.
    pub cwd_known: bool,
    /// Whether the user trusts the project: `git` is harmless only then, as the repository's
    /// configuration may name programs git runs.
    pub trusted: bool,
}

/// What made a shell call run without asking.
#[derive(Debug, Clone, Default)]
pub struct ReadOnly<'r> {
    /// The allow rules that cover some of its commands.
    pub rules: Vec<&'r PermissionRule>,
    /// The commands that are harmless by themselves, as written.
    pub harmless: Vec<String>,
}

/// A file a harmless command reads or lists, as its words show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PathArg {
    /// The word.
    pub text: String,
    /// Read or listed as a whole tree.
    pub tree: bool,
}

impl PathArg {
    pub(super) fn new(text: &str, tree: bool) -> Self {
        PathArg { text: text.to_owned(), tree }
    }
}

/// Decides whether every command of `analysis` is covered by one of `allow` or harmless (see
/// the module contract).
pub fn read_only<'r>(
    analysis: &ShellAnalysis,
    scope: &Scope<'_>,
    tool_name: &str,
    allow: &'r [PermissionRule],
) -> Result<ReadOnly<'r>, String> {
    if analysis.is_opaque() {
        return Err(format!("the command cannot be analysed: {}", analysis.opaque_summary()));
    }
    if let Some(target) = analysis.writes.first() {
        return Err(format!("it writes {target}"));
    }
    if let Some(name) = analysis.assigned_names().next() {
        return Err(format!("it assigns the variable {name}"));
    }
    let cwds = working_directories(analysis, scope.cwd)?;
    let mut out = ReadOnly::default();
    let mut harmless_programs: Vec<&str> = Vec::new();
    let mut git_checked = false;
    for command in &analysis.commands {
        if let Some(rule) = allow.iter().find(|r| r.covers_shell_command(tool_name, command)) {
            if !out.rules.iter().any(|u| std::ptr::eq(*u, rule)) {
                out.rules.push(rule);
            }
            continue;
        }
        let text = command.text();
        let paths = command_paths(command).map_err(|why| format!("`{text}` is not read-only: {why}"))?;
        if command.program() == "git" && !git_checked {
            harmless_git::check(analysis, scope).map_err(|why| format!("`{text}` is not harmless here: {why}"))?;
            git_checked = true;
        }
        for path in &paths {
            check_path(&path.text, path.tree, &cwds, scope).map_err(|why| format!("`{text}` {why}"))?;
        }
        harmless_programs.push(command.program());
        if !out.harmless.contains(&text) {
            out.harmless.push(text);
        }
    }
    let programs: Vec<&str> = analysis.commands.iter().map(|c| basename(c.program())).collect();
    for operand in &analysis.files {
        let redirection = operand.program.starts_with(['<', '>', '&']);
        let ours = harmless_programs.iter().any(|p| basename(p) == operand.program);
        if redirection || ours || !programs.contains(&operand.program.as_str()) {
            check_operand(operand, &cwds, scope).map_err(|why| format!("`{}` {why}", operand.program))?;
        }
    }
    Ok(out)
}

/// The reason of an allow by [`read_only`].
pub fn reason(verdict: &ReadOnly<'_>) -> String {
    let mut commands = verdict.harmless.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
    if commands.is_empty() {
        commands = "no program runs (a test or an empty command)".to_owned();
    }
    match verdict.rules.as_slice() {
        [] => format!("read-only command: {commands}"),
        rules => {
            let text = rules.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
            format!("allowed by rule {text}; read-only command: {commands}")
        }
    }
}

/// The files one command reads or lists, or why it is not harmless.
pub(super) fn command_paths(command: &SimpleCommand) -> Result<Vec<PathArg>, String> {
    let name = command.program();
    let Some(program) = harmless_table::program(name) else {
        return Err(format!("`{name}` is not in the list of read-only commands"));
    };
    let args = command.argv.get(1..).unwrap_or_default();
    match program.operands {
        Operands::Any => Ok(Vec::new()),
        Operands::Special => special::paths(name, args),
        _ => options_and_operands(program, args),
    }
}

/// Whether a word holds an expansion (its source text is kept): `$x`, `$(…)`, backticks,
/// `<(…)`. A quoted `$` counts too, which only errs towards asking.
pub(super) fn is_dynamic(word: &str) -> bool {
    word.contains(['$', '`']) || word.starts_with("<(") || word.starts_with(">(")
}

/// Reads a command's words with its row's option grammar.
fn options_and_operands(program: &Program, args: &[String]) -> Result<Vec<PathArg>, String> {
    let mut paths = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut pattern_given = false;
    let mut ended = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if is_dynamic(word) {
            return Err(format!("`{word}` is known only at run time"));
        }
        if ended || word == "-" || !word.starts_with('-') {
            operands.push(word);
            continue;
        }
        if word == "--" {
            ended = true;
            continue;
        }
        if word.starts_with("--") {
            let (name, attached) = word.split_once('=').map_or((word.as_str(), None), |(n, v)| (n, Some(v)));
            let path = program.long_path_values.contains(&name);
            let flag =
                program.long_optional.contains(&name) || (program.long_flags.contains(&name) && attached.is_none());
            if !flag && !path && !program.long_values.contains(&name) {
                return Err(format!("option `{name}` is not known to be harmless"));
            }
            if !flag {
                let value = match attached {
                    Some(v) => v.to_owned(),
                    None => next_value(&mut words, name)?,
                };
                if path {
                    paths.push(PathArg::new(&value, false));
                }
            }
            pattern_given |= program.pattern_options.contains(&name);
            continue;
        }
        let cluster = &word[1..];
        if program.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        for (at, c) in cluster.char_indices() {
            if program.flags.contains(c) {
                pattern_given |= program.pattern_options.contains(&format!("-{c}").as_str());
                continue;
            }
            if program.optional.contains(c) {
                break;
            }
            let path = program.path_values.contains(c);
            if !path && !program.values.contains(c) {
                return Err(format!("option `-{c}` is not known to be harmless"));
            }
            pattern_given |= program.pattern_options.contains(&format!("-{c}").as_str());
            let rest = &cluster[at + c.len_utf8()..];
            let value = if rest.is_empty() { next_value(&mut words, &format!("-{c}"))? } else { rest.to_owned() };
            if path {
                paths.push(PathArg::new(&value, false));
            }
            break;
        }
    }
    let files: &[&str] = match program.operands {
        Operands::None if !operands.is_empty() => return Err("it takes no operands".to_owned()),
        Operands::OnePath if operands.len() > 1 => return Err("a second operand is written".to_owned()),
        Operands::Format => {
            return match operands.iter().find(|o| !o.starts_with('+')) {
                Some(o) => Err(format!("operand `{o}` is not a +FORMAT")),
                None => Ok(paths),
            };
        }
        Operands::PatternThenPaths if !pattern_given => operands.get(1..).unwrap_or_default(),
        Operands::Paths | Operands::OnePath | Operands::PatternThenPaths => &operands,
        Operands::None | Operands::Strings | Operands::Any | Operands::Special => &[],
    };
    paths.extend(files.iter().filter(|f| **f != "-").map(|f| PathArg::new(f, program.tree)));
    if program.implicit_dot && files.is_empty() {
        paths.push(PathArg::new(".", program.tree));
    }
    Ok(paths)
}

fn next_value<'w>(words: &mut impl Iterator<Item = &'w String>, option: &str) -> Result<String, String> {
    let value = words.next().ok_or_else(|| format!("option `{option}` lacks its value"))?;
    if is_dynamic(value) {
        return Err(format!("`{value}` is known only at run time"));
    }
    Ok(value.clone())
}

/// The directories the command may be in: where it starts, and every literal target of its
/// `cd`s resolved against each directory before it (a superset of the real ones).
fn working_directories(analysis: &ShellAnalysis, cwd: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = vec![cwd.to_path_buf()];
    for dir in &analysis.dirs {
        let OperandPath::Literal(text) = dir else {
            return Err(format!("it changes to a directory known only at run time ({})", dir.text()));
        };
        let next: Vec<PathBuf> = out.iter().map(|c| Workspace::normalize(text, c)).collect();
        for path in next {
            if !out.contains(&path) {
                out.push(path);
            }
        }
        if out.len() > MAX_DIRS {
            return Err(format!("it changes directory more than {MAX_DIRS} ways"));
        }
    }
    Ok(out)
}

/// Checks one file operand the analysis found (see the module contract).
fn check_operand(operand: &FileOperand, cwds: &[PathBuf], scope: &Scope<'_>) -> Result<(), String> {
    if operand.access.write {
        return Err(format!("{} {}", operand.access.verb(), operand.path.text()));
    }
    let tree = operand.reach != Reach::Path;
    match &operand.path {
        OperandPath::Literal(text) => check_path(text, tree, cwds, scope),
        OperandPath::Pattern(chars) => check_pattern(chars, tree, cwds, scope),
        OperandPath::Into { dir, name } => match &**name {
            OperandPath::Literal(source) => check_path(&format!("{dir}/{}", basename(source)), tree, cwds, scope),
            _ => Err(format!("reads {}, a path known only at run time", operand.path.text())),
        },
        OperandPath::Computed(_) => Err(format!("reads {}, a path known only at run time", operand.path.text())),
    }
}

/// Checks a path as written (see the module contract).
pub(super) fn check_path(text: &str, tree: bool, cwds: &[PathBuf], scope: &Scope<'_>) -> Result<(), String> {
    if is_dynamic(text) {
        return Err(format!("reads {text}, a path known only at run time"));
    }
    if text.starts_with('~') && text != "~" && !text.starts_with("~/") {
        return Err(format!("reads {text}, a path known only at run time"));
    }
    if text.contains(['*', '?', '[', '{']) {
        let chars: Vec<(char, bool)> = text.chars().map(|c| (c, false)).collect();
        return check_pattern(&chars, tree, cwds, scope);
    }
    for cwd in cwds {
        check_resolved(&Workspace::normalize(text, cwd), tree, scope)?;
    }
    Ok(())
}

fn check_pattern(chars: &[(char, bool)], tree: bool, cwds: &[PathBuf], scope: &Scope<'_>) -> Result<(), String> {
    let text: String = chars.iter().map(|(c, _)| *c).collect();
    for cwd in cwds {
        let matches = file_glob::expand(chars, cwd).map_err(|e| format!("reads {text}, which bash expands to {e}"))?;
        for (word, path) in matches {
            if word.starts_with('-') {
                return Err(format!("{text} matches `{word}`, which it would read as an option"));
            }
            check_resolved(&path, tree, scope)?;
        }
    }
    Ok(())
}

/// Checks an absolute, lexically normal path: inside the workspace once its symlinks are
/// followed, and out of the reach of every `Read(...)` deny or ask rule.
fn check_resolved(path: &Path, tree: bool, scope: &Scope<'_>) -> Result<(), String> {
    let resolved =
        scope.workspace.resolve(&path.to_string_lossy(), Path::new("/")).map_err(|e| format!("reads {e}"))?;
    for rule in scope.restricting.iter().filter(|r| r.is_file_rule(false)) {
        let hit = [path, resolved.as_path()].iter().any(|p| rule.matches_file(p, false, scope.project_dir));
        let below = tree
            && [path, resolved.as_path()].iter().any(|p| match rule.path_scope(scope.project_dir) {
                None => true,
                Some((scoped, _)) => scoped.starts_with(p) || p.starts_with(&scoped),
            });
        if hit || below {
            return Err(format!("reads {}, which rule {} restricts", path.display(), rule.as_str()));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "harmless_tests.rs"]
mod tests;
