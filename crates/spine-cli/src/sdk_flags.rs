//! Flags the Agent SDKs pass that spine accepts and ignores, removed from the command line
//! before clap reads it.
//!
//! Contract:
//! - [`IGNORED`] lists each flag (as the SDKs write it) and whether it takes a value. Before
//!   parsing, [`strip`] removes every occurrence: `--flag` alone, `--flag=value`, and, for a
//!   flag that takes a value, `--flag value` (the next word, whatever it is). A flag whose value
//!   is optional ([`Value::Optional`]) takes one only in the `--flag=value` form.
//! - Nothing after `--` is touched, nor the command line of a command other than the agent's
//!   (`spine run`, `spine chat` and the top level): `is_other_command` names the others.
//! - Each removed flag is named once in the result; `spine` prints "note: --betas is accepted
//!   for the Agent SDK and ignored" for each with `-v`.
//! - A flag not in the table reaches clap, which refuses it as before. `docs/cli.md` lists the
//!   table; a test checks that no entry is a flag spine declares.

use std::ffi::OsString;

/// Whether an ignored flag takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// Never (`--session-mirror`).
    None,
    /// Always: `--flag value` or `--flag=value`.
    Required,
    /// Only as `--flag=value` (`--debug`, `--debug=api,hooks`).
    Optional,
}

/// One accepted and ignored flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ignored {
    /// The flag, with its dashes.
    pub name: &'static str,
    /// Whether it takes a value.
    pub value: Value,
}

const fn flag(name: &'static str, value: Value) -> Ignored {
    Ignored { name, value }
}

/// The flags of `claude-agent-sdk` 0.2.189 (Python) and `@anthropic-ai/claude-agent-sdk`
/// 0.3.337 (TypeScript) that spine does not implement (and `--client-app`, which earlier SDKs
/// passed). `--managed-settings` is deliberately absent: ignoring it would drop an
/// administrator's policy, so spine refuses it.
pub const IGNORED: &[Ignored] = &[
    flag("--betas", Value::Required),
    flag("--task-budget", Value::Required),
    flag("--thinking-display", Value::Required),
    flag("--session-mirror", Value::None),
    flag("--resume-session-at", Value::Required),
    flag("--resume-drops-turn", Value::Required),
    flag("--debug", Value::Optional),
    flag("--debug-file", Value::Required),
    flag("--debug-to-stderr", Value::None),
    flag("--client-app", Value::Required),
    flag("--permission-prompts", Value::Required),
    flag("--channels", Value::Required),
    flag("--project-config-root", Value::Required),
    flag("--await-initialize", Value::None),
    flag("--initialize-fields", Value::Required),
    flag("--plugin-dir-no-mcp", Value::Required),
    flag("--allow-dangerously-skip-permissions", Value::None),
];

/// A command line without its ignored flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// What clap reads.
    pub args: Vec<OsString>,
    /// The flags removed, once each, in order of first appearance.
    pub ignored: Vec<&'static str>,
}

impl Stripped {
    /// The `-v` notes.
    pub fn notes(&self) -> impl Iterator<Item = String> + '_ {
        self.ignored.iter().map(|name| format!("note: {name} is accepted for the Agent SDK and ignored"))
    }
}

/// `args` (the program first) without the flags of [`IGNORED`] (see the module documentation).
pub fn strip(args: impl IntoIterator<Item = OsString>, is_other_command: impl Fn(&str) -> bool) -> Stripped {
    let args: Vec<OsString> = args.into_iter().collect();
    // Most command lines have none: then the commands are not even looked at.
    let any = args.iter().skip(1).any(|a| a.to_str().is_some_and(|t| lookup(t).is_some()));
    let other_command =
        || args.get(1).and_then(|a| a.to_str()).is_some_and(|a| !a.starts_with('-') && is_other_command(a));
    if !any || other_command() {
        return Stripped { args, ignored: Vec::new() };
    }
    let mut kept = Vec::with_capacity(args.len());
    let mut ignored: Vec<&'static str> = Vec::new();
    let mut words = args.into_iter();
    if let Some(program) = words.next() {
        kept.push(program);
    }
    while let Some(word) = words.next() {
        let Some(text) = word.to_str() else {
            kept.push(word);
            continue;
        };
        if text == "--" {
            kept.push(word);
            kept.extend(words.by_ref());
            break;
        }
        let Some((entry, with_value)) = lookup(text) else {
            kept.push(word);
            continue;
        };
        if !ignored.contains(&entry.name) {
            ignored.push(entry.name);
        }
        if entry.value == Value::Required && !with_value {
            words.next();
        }
    }
    Stripped { args: kept, ignored }
}

/// The table's entry for `word`, and whether the word carries the value (`--flag=value`).
fn lookup(word: &str) -> Option<(Ignored, bool)> {
    let (name, with_value) = match word.split_once('=') {
        Some((name, _)) => (name, true),
        None => (word, false),
    };
    let entry = IGNORED.iter().find(|f| f.name == name)?;
    match (entry.value, with_value) {
        // `--session-mirror=x` is not this flag's form: clap refuses it.
        (Value::None, true) => None,
        _ => Some((*entry, with_value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(words: &[&str]) -> Stripped {
        let args = std::iter::once("spine").chain(words.iter().copied()).map(OsString::from);
        strip(args, |w| w == "hooks")
    }

    fn kept(s: &Stripped) -> Vec<String> {
        s.args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn both_value_forms_and_bare_flags_are_removed_and_named_once() {
        let s = run(&[
            "--output-format",
            "stream-json",
            "--betas",
            "a,b",
            "--task-budget=9",
            "--session-mirror",
            "--betas=c",
            "-p",
            "hi",
        ]);
        assert_eq!(kept(&s), ["--output-format", "stream-json", "-p", "hi"]);
        assert_eq!(s.ignored, ["--betas", "--task-budget", "--session-mirror"]);
        assert_eq!(s.notes().next().as_deref(), Some("note: --betas is accepted for the Agent SDK and ignored"));
    }

    #[test]
    fn an_optional_value_is_taken_only_with_equals() {
        let s = run(&["--debug", "prompt", "--debug=api"]);
        assert_eq!(kept(&s), ["prompt"]);
        assert_eq!(s.ignored, ["--debug"]);
    }

    #[test]
    fn unknown_flags_words_after_double_dash_and_other_commands_are_untouched() {
        let s = run(&["--no-such-flag", "--", "--betas", "x"]);
        assert_eq!(kept(&s), ["--no-such-flag", "--", "--betas", "x"]);
        assert!(s.ignored.is_empty());
        let s = run(&["hooks", "list", "--betas", "x"]);
        assert_eq!(kept(&s), ["hooks", "list", "--betas", "x"]);
        assert_eq!(run(&["--session-mirror=on"]).ignored, Vec::<&str>::new());
    }

    #[test]
    fn every_ignored_flag_is_listed_in_the_cli_documentation() {
        let docs = include_str!("../../../docs/cli.md");
        for entry in IGNORED {
            assert!(docs.contains(&format!("| `{}` |", entry.name)), "docs/cli.md does not list {}", entry.name);
        }
    }

    #[test]
    fn no_ignored_flag_is_one_spine_declares() {
        let command = <crate::cli::Cli as clap::CommandFactory>::command();
        let mut declared: Vec<String> = Vec::new();
        let mut stack = vec![&command];
        while let Some(c) = stack.pop() {
            for arg in c.get_arguments() {
                declared.extend(arg.get_long().map(|l| format!("--{l}")));
                declared.extend(arg.get_all_aliases().unwrap_or_default().into_iter().map(|a| format!("--{a}")));
            }
            stack.extend(c.get_subcommands());
        }
        for entry in IGNORED {
            assert!(!declared.iter().any(|d| d == entry.name), "{} is declared: remove it from IGNORED", entry.name);
        }
    }
}
