//! Which files a tool call touched, for conditional rule files ([`super::conditional`]): after
//! the call, the rules whose globs match one of these files are shown to the model.
//!
//! Contract of [`touched_files`], Claude Code 2.1's triggers:
//! - `Read`: its `file_path`, whether the read succeeded or failed (Claude Code notes the file
//!   before reading it);
//! - `Write` and `Edit`: their `file_path`, when the call succeeded;
//! - `Bash`, when the command succeeded: the file a command that only prints a file names —
//!   `cat`/`nl`/`bat`/`batcat FILE` (with their numbering or plain flags only),
//!   `head`/`tail` with a line count, `sed -n 'Np'` or `sed -n 'N,Mp'`, and when it is the only
//!   command, `grep`/`egrep`/`fgrep`/`rg PATTERN FILE` with display flags only; several such
//!   commands count when every other command is `echo`, `printf`, `true` or `:`. A pipe or a
//!   redirection anywhere, a command the shell analysis cannot see through, or a file that is
//!   not a regular file names none;
//! - nothing else (Glob, Grep, MCP tools and spine's own tools touch no rule).
//!
//! Paths are made absolute and lexically normal against the working directory.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::permission::shell::analyze;
use crate::workspace::Workspace;

/// The files a call of `tool_name` with `input` touched (see the module documentation).
pub fn touched_files(tool_name: &str, input: &Map<String, Value>, succeeded: bool, cwd: &Path) -> Vec<PathBuf> {
    let file_path = || input.get("file_path").and_then(Value::as_str).filter(|p| !p.is_empty());
    let named: Vec<String> = match tool_name {
        "Read" => file_path().map(str::to_owned).into_iter().collect(),
        "Write" | "Edit" if succeeded => file_path().map(str::to_owned).into_iter().collect(),
        "Bash" if succeeded => {
            let command = input.get("command").and_then(Value::as_str).unwrap_or_default();
            let files = printed_files(command);
            return files.iter().map(|f| Workspace::normalize(f, cwd)).filter(|p| p.is_file()).collect();
        }
        _ => Vec::new(),
    };
    named.iter().map(|f| Workspace::normalize(f, cwd)).collect()
}

/// The files a shell command only prints (see the module documentation), as written.
pub fn printed_files(command: &str) -> Vec<String> {
    if command.contains(['|', '<', '>']) {
        return Vec::new();
    }
    let analysis = analyze(command);
    if analysis.is_opaque() || !analysis.writes.is_empty() {
        return Vec::new();
    }
    let alone = analysis.commands.len() == 1;
    let mut files = Vec::new();
    for command in &analysis.commands {
        match printed_file(&command.argv, alone) {
            Some(file) => files.push(file.to_owned()),
            None if !alone && matches!(command.program(), "echo" | "printf" | "true" | ":") => {}
            None => return Vec::new(),
        }
    }
    files
}

/// The file one simple command prints, when it is one of the recognised readers.
fn printed_file(argv: &[String], alone: bool) -> Option<&str> {
    let (program, args) = argv.split_first()?;
    match program.as_str() {
        "sed" => sed(args),
        "cat" => cat_like(args, &["-n", "--number"]),
        "nl" => cat_like(args, &[]),
        "bat" | "batcat" => cat_like(args, &["-n", "--number", "-p", "--plain"]),
        "head" | "tail" => head_tail(args),
        "grep" | "egrep" | "fgrep" if alone => grep(args, false),
        "rg" if alone => grep(args, true),
        _ => None,
    }
}

fn digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// `sed -n 'Np' FILE` or `sed -n 'N,Mp' FILE` (no in-place edit, no `-e`).
fn sed(args: &[String]) -> Option<&str> {
    let (mut quiet, mut positional) = (false, Vec::new());
    for arg in args {
        if let Some(long) = arg.strip_prefix("--") {
            if long == "in-place" || long.starts_with("in-place=") || long == "expression" {
                return None;
            }
            quiet |= long == "quiet" || long == "silent";
        } else if arg.starts_with('-') {
            if arg.contains('i') || arg == "-e" {
                return None;
            }
            quiet |= arg.contains('n');
        } else {
            positional.push(arg.as_str());
        }
    }
    let [script, file] = positional[..] else { return None };
    let range = script.strip_suffix('p')?;
    let lines_only = match range.split_once(',') {
        Some((from, to)) => digits(from) && digits(to),
        None => digits(range),
    };
    (quiet && lines_only).then_some(file)
}

/// `cat`-like readers: one file operand, only the `allowed` flags.
fn cat_like<'a>(args: &'a [String], allowed: &[&str]) -> Option<&'a str> {
    let mut file = None;
    for arg in args {
        if arg.starts_with('-') && arg != "-" {
            if !allowed.contains(&arg.as_str()) {
                return None;
            }
        } else if file.replace(arg.as_str()).is_some() {
            return None;
        }
    }
    file.filter(|f| *f != "-")
}

/// `head`/`tail` with at most a line count (`-n N`, `--lines N`, `--lines=N`, `-nN`, `-N`)
/// and one file operand.
fn head_tail(args: &[String]) -> Option<&str> {
    let (mut count, mut file) = (None, None);
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let n = if arg == "-n" || arg == "--lines" {
            words.next().map(String::as_str)
        } else if let Some(n) = arg.strip_prefix("--lines=").or_else(|| arg.strip_prefix("-n")) {
            Some(n)
        } else if arg.starts_with('-') {
            arg.strip_prefix('-').filter(|n| digits(n))
        } else {
            if file.replace(arg.as_str()).is_some() {
                return None;
            }
            continue;
        };
        let n = n.filter(|n| digits(n))?;
        count = Some(n.parse::<u64>().ok()?);
    }
    if count == Some(0) {
        return None;
    }
    file
}

/// Long flags of `grep` that only change how matches are shown.
const GREP_LONG: &[&str] = &[
    "--line-number",
    "--ignore-case",
    "--word-regexp",
    "--line-regexp",
    "--extended-regexp",
    "--fixed-strings",
    "--basic-regexp",
    "--perl-regexp",
    "--with-filename",
    "--no-filename",
    "--color=never",
    "--color=auto",
];
/// Long flags of `rg` that only change how matches are shown.
const RG_LONG: &[&str] = &[
    "--ignore-case",
    "--smart-case",
    "--case-sensitive",
    "--word-regexp",
    "--line-regexp",
    "--fixed-strings",
    "--line-number",
    "--no-line-number",
    "--with-filename",
    "--no-filename",
    "--multiline",
    "--pcre2",
];

/// `grep PATTERN FILE` (or `rg`) with display flags and context counts only; the file is not a
/// glob.
fn grep(args: &[String], rg: bool) -> Option<&str> {
    let (short, long) = if rg { ("iSswxFnNHUP", RG_LONG) } else { ("niwxEFGPHh", GREP_LONG) };
    let context_long = ["--after-context", "--before-context", "--context"];
    let (mut pattern, mut file) = (None, None);
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        if !arg.starts_with('-') || arg == "-" {
            if pattern.is_none() {
                pattern = Some(arg.as_str());
            } else if file.replace(arg.as_str()).is_some() {
                return None;
            }
            continue;
        }
        let counted = matches!(arg.as_str(), "-A" | "-B" | "-C") || (rg && context_long.contains(&arg.as_str()));
        if counted {
            words.next().filter(|n| digits(n))?;
            continue;
        }
        let flags = arg.strip_prefix('-').unwrap_or_default();
        let context = ["-A", "-B", "-C"].iter().any(|f| arg.strip_prefix(f).is_some_and(digits))
            || context_long.iter().any(|f| arg.strip_prefix(f).and_then(|r| r.strip_prefix('=')).is_some_and(digits));
        let display = !flags.is_empty() && flags.chars().all(|c| short.contains(c));
        if !(context || display || long.contains(&arg.as_str())) {
            return None;
        }
    }
    pattern?;
    file.filter(|f| *f != "-" && !f.contains(['*', '?', '[', '{']))
}

#[cfg(test)]
#[path = "triggers_tests.rs"]
mod tests;
