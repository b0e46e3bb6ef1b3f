//! Code hidden in data: places where bash evaluates a variable's *value* as code, and which
//! variables the command itself may fill with an arbitrary string.
//!
//! Bash evaluates text as an arithmetic expression in `$((…))`, `$[…]`, `((…))`, `for ((…))`,
//! `let`, array subscripts, `${s:offset:length}`, the operands of `[[ … -eq … ]]` and
//! assignments to `declare -i` variables; it evaluates a value as a variable name in `${!x}`,
//! namerefs and the name arguments of builtins (`read NAME`, `printf -v NAME`, `test -v NAME`,
//! `declare NAME=…`, `unset NAME`…). In both, a subscript is expanded again: a value such as
//! `a[$(rm x)]` runs `rm x`. So:
//!
//! - an arithmetic text is scanned ([`arithmetic`]): every variable it names (`x`, `$x`,
//!   `${x}`) is *evaluated*; a command substitution, a backquote or an unusual `${…}` in it is
//!   opaque (its output would be evaluated), and so is a subscript inside it whose index holds
//!   an expansion (`a[$x]`, `a[$(…)]`), which bash expands a second time;
//! - a name argument ([`name_argument`]) that is computed at run time, or whose subscript holds
//!   `$` or a backquote, is opaque;
//! - an assignment ([`assigned`]) *taints* its variable unless the value is an integer literal
//!   or an arithmetic result; assignments to the prompt variables with expansions (`PS4`, run
//!   under `set -x`), to `BASH_ENV`/`ENV` (a file every child shell runs) and to
//!   `BASH_ALIASES`/`BASH_CMDS` (aliases and command paths) are opaque;
//! - at the end ([`finish`]), an evaluated variable that is tainted, or that bash fills with
//!   data (`$1`, `$@`, `$_`, `REPLY`, `OPTARG`, `BASH_REMATCH`…), makes the command opaque, as
//!   does a `declare -i` variable that is tainted.
//!
//! Taint is collected over the whole command, nested `sh -c` strings included, in any order
//! (a loop may assign after the use), so the check errs on the side of opaque.

use super::words::{Word, WordKind};
use super::{MAX_DEPTH, OpaqueReason, ShellAnalysis};

/// Variables bash fills with data the command may choose.
const DATA_VARIABLES: &[&str] = &[
    "_",
    "@",
    "*",
    "REPLY",
    "OPTARG",
    "BASH_REMATCH",
    "MAPFILE",
    "BASH_ARGV",
    "BASH_ARGV0",
    "BASH_COMMAND",
    "BASH_EXECUTION_STRING",
    "BASH_SOURCE",
    "FUNCNAME",
    "COPROC",
    "READLINE_LINE",
    "COMP_LINE",
    "COMP_WORDS",
    "COMPREPLY",
    "DIRSTACK",
    "PWD",
    "OLDPWD",
];

/// Prompt variables whose value bash expands (`PS4` under `set -x`, the others interactively).
const PROMPTS: &[&str] = &["PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"];

/// What the walk learnt about variables (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Names {
    /// Variables whose value bash evaluates as code.
    evaluated: Vec<String>,
    /// Variables the command may set to an arbitrary string.
    tainted: Vec<String>,
    /// Variables given the integer attribute (every assignment to them is arithmetic).
    integer: Vec<String>,
    /// Every variable the command assigns, whatever the value (for [`super::files`]).
    assigned: Vec<String>,
}

impl Names {
    /// Whether the command assigns `name` anywhere.
    pub(super) fn was_assigned(&self, name: &str) -> bool {
        self.assigned.iter().any(|n| n == name)
    }

    /// Every variable the command assigns.
    pub(super) fn assigned(&self) -> impl Iterator<Item = &str> {
        self.assigned.iter().map(String::as_str)
    }
}

/// The value an assignment gives.
#[derive(Debug, Clone, Copy)]
pub(super) enum Assigned<'a> {
    /// An arithmetic result (`$((…))`, `let`, `((…))`): an integer.
    Integer,
    /// A text known before the command runs (quoting removed).
    Literal(&'a str),
    /// Something computed or read at run time (`$x`, `read`, `mapfile`, `${x:=…}`).
    Unknown,
}

impl<'a> Assigned<'a> {
    /// The value of an assignment word.
    pub(super) fn of(word: &'a Word) -> Self {
        match word.kind {
            WordKind::Dynamic => Assigned::Unknown,
            WordKind::Literal | WordKind::Pattern => Assigned::Literal(&word.value),
        }
    }
}

fn push(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|n| n == name) {
        list.push(name.to_owned());
    }
}

fn opaque(out: &mut ShellAnalysis, text: &str) {
    out.opaque.push(OpaqueReason::CodeInData { text: text.to_owned() });
}

/// Records that bash evaluates the value of variable `name` as code.
pub(super) fn evaluated(name: &str, out: &mut ShellAnalysis) {
    push(&mut out.names.evaluated, name);
}

/// Records that `name` is declared with the integer attribute.
pub(super) fn integer(name: &str, out: &mut ShellAnalysis) {
    push(&mut out.names.integer, name);
}

/// Records an assignment of `value` to `name` (the base name or `NAME[index]`).
pub(super) fn assigned(name: &str, value: Assigned<'_>, out: &mut ShellAnalysis) {
    let base = name.split('[').next().unwrap_or(name);
    push(&mut out.names.assigned, base);
    if PROMPTS.contains(&base) {
        let plain = match value {
            Assigned::Integer => true,
            Assigned::Literal(t) => !t.contains(['$', '`']),
            Assigned::Unknown => false,
        };
        if !plain {
            opaque(out, &format!("{base}=…"));
        }
    }
    // A file bash (`BASH_ENV`) or an interactive sh (`ENV`) sources before its commands: a
    // computed one or a path to stdin is a script nobody can read beforehand (a plain file
    // is a script file, see the documented limits).
    let sourced_unseen = match value {
        Assigned::Literal(t) => super::wrappers::is_stdin_path(t) || t.contains(['$', '`']),
        Assigned::Integer => false,
        Assigned::Unknown => true,
    };
    if base == "BASH_ENV" || (base == "ENV" && sourced_unseen) {
        out.opaque.push(OpaqueReason::Source);
    }
    if matches!(base, "BASH_ALIASES" | "BASH_CMDS") {
        out.opaque.push(OpaqueReason::Rebinding { program: base.to_owned() });
    }
    let safe = match value {
        Assigned::Integer => true,
        Assigned::Literal(t) => is_integer_literal(t),
        Assigned::Unknown => false,
    };
    if !safe {
        push(&mut out.names.tainted, base);
    }
}

/// An integer as bash writes one (`42`, `-1`, `0x1f`, `16#ff`), or nothing.
pub(super) fn is_integer_literal(text: &str) -> bool {
    let t = text.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    digits.is_empty()
        || (digits.starts_with(|c: char| c.is_ascii_digit())
            && digits.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '#' | '@' | '_')))
}

/// Whether a variable's value, evaluated as code, could hold anything.
fn is_data(name: &str, names: &Names) -> bool {
    DATA_VARIABLES.contains(&name)
        || name.chars().all(|c| c.is_ascii_digit())
        || names.tainted.iter().any(|t| t == name)
}

/// Marks the analysis opaque for every evaluated variable that may hold data (see the module
/// documentation). Called once, after the whole command was walked.
pub(super) fn finish(out: &mut ShellAnalysis) {
    let names = std::mem::take(&mut out.names);
    for name in &names.evaluated {
        if is_data(name, &names) {
            opaque(out, &format!("${name}"));
        }
    }
    for name in &names.integer {
        if names.tainted.iter().any(|t| t == name) {
            opaque(out, &format!("declare -i {name}"));
        }
    }
    out.names = names;
}

/// Scans an arithmetic text (as written, or after quote removal).
pub(super) fn arithmetic(text: &str, out: &mut ShellAnalysis) {
    let chars: Vec<char> = text.chars().collect();
    scan(&chars, 0, out);
}

/// Checks a word a builtin takes as a variable name (`read NAME`, `printf -v NAME`,
/// `test -v NAME`, `unset NAME`); returns the name when it is known.
pub(super) fn name_argument(word: &Word, out: &mut ShellAnalysis) -> Option<String> {
    if word.kind == WordKind::Dynamic {
        opaque(out, &word.value);
        return None;
    }
    let chars: Vec<char> = word.value.chars().collect();
    let open = chars.iter().position(|c| *c == '[');
    if let Some(open) = open {
        let close = chars.iter().rposition(|c| *c == ']').filter(|c| *c > open).unwrap_or(chars.len());
        subscript(chars.get(open + 1..close).unwrap_or_default(), &word.value, 0, out);
    }
    Some(chars.get(..open.unwrap_or(chars.len())).unwrap_or_default().iter().collect())
}

/// A subscript inside an arithmetic text or a name argument: expanded a second time by bash,
/// so an expansion in it is code.
fn subscript(index: &[char], whole: &str, depth: usize, out: &mut ShellAnalysis) {
    if index.iter().any(|c| matches!(c, '$' | '`')) {
        opaque(out, whole);
    } else if !matches!(index, ['@'] | ['*']) {
        scan(index, depth + 1, out);
    }
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The index after the bracket that closes the one at `open` (`[`/`]`, `(`/`)`, `{`/`}`).
fn closing(chars: &[char], open: usize) -> usize {
    let (left, right) = match chars.get(open) {
        Some('[') => ('[', ']'),
        Some('(') => ('(', ')'),
        _ => ('{', '}'),
    };
    let mut level = 0usize;
    for (i, c) in chars.iter().enumerate().skip(open) {
        if *c == left {
            level += 1;
        } else if *c == right {
            level = level.saturating_sub(1);
            if level == 0 {
                return i + 1;
            }
        }
    }
    chars.len()
}

fn text(chars: &[char]) -> String {
    chars.iter().collect()
}

fn scan(chars: &[char], depth: usize, out: &mut ShellAnalysis) {
    if depth > MAX_DEPTH {
        out.opaque.push(OpaqueReason::TooDeep);
        return;
    }
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if is_name_start(c) {
            let start = i;
            while chars.get(i).is_some_and(|c| is_name_char(*c)) {
                i += 1;
            }
            evaluated(&text(chars.get(start..i).unwrap_or_default()), out);
            if chars.get(i) == Some(&'[') {
                let end = closing(chars, i);
                let index = chars.get(i + 1..end.saturating_sub(1).max(i + 1)).unwrap_or_default();
                subscript(index, &text(chars.get(start..end).unwrap_or_default()), depth, out);
                i = end;
            }
            continue;
        }
        if c.is_ascii_digit() {
            while chars.get(i).is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '#' | '@' | '_')) {
                i += 1;
            }
            continue;
        }
        match (c, chars.get(i + 1).copied()) {
            ('$', Some('(')) if chars.get(i + 2) == Some(&'(') => {
                let end = closing(chars, i + 1);
                scan(chars.get(i + 3..end.saturating_sub(2).max(i + 3)).unwrap_or_default(), depth + 1, out);
                i = end;
            }
            ('$', Some('[')) => {
                let end = closing(chars, i + 1);
                scan(chars.get(i + 2..end.saturating_sub(1).max(i + 2)).unwrap_or_default(), depth + 1, out);
                i = end;
            }
            ('$', Some('{')) => {
                let end = closing(chars, i + 1);
                braced(chars.get(i + 2..end.saturating_sub(1).max(i + 2)).unwrap_or_default(), depth, out);
                i = end;
            }
            ('$', Some(n)) if is_name_start(n) => {
                let start = i + 1;
                i = start;
                while chars.get(i).is_some_and(|c| is_name_char(*c)) {
                    i += 1;
                }
                evaluated(&text(chars.get(start..i).unwrap_or_default()), out);
            }
            ('$', Some(n)) if n.is_ascii_digit() || n == '@' || n == '*' => {
                evaluated(&n.to_string(), out);
                i += 2;
            }
            ('$', Some('#' | '?' | '$' | '!' | '-')) => i += 2,
            // `$(…)`, `$'…'`, a lone `$`, a backquote: the text is computed at run time.
            ('$' | '`', _) => {
                opaque(out, &text(chars));
                return;
            }
            ('\\', _) => i += 2,
            _ => i += 1,
        }
    }
}

/// `${…}` inside an arithmetic text: `${x}`, `${#x}`, `${x[i]}` and `${#x[i]}` name `x`;
/// anything else (defaults, substitutions, indirection) is opaque.
fn braced(body: &[char], depth: usize, out: &mut ShellAnalysis) {
    let (length, rest) = match body.split_first() {
        Some(('#', rest)) if !rest.is_empty() => (true, rest),
        _ => (false, body),
    };
    let name_end = rest.iter().position(|c| !is_name_char(*c)).unwrap_or(rest.len());
    let name = text(rest.get(..name_end).unwrap_or_default());
    let tail = rest.get(name_end..).unwrap_or_default();
    let simple = !name.is_empty() && (tail.is_empty() || (tail.first() == Some(&'[') && tail.last() == Some(&']')));
    let special = matches!(rest, ['@'] | ['*']) || rest.iter().all(char::is_ascii_digit);
    if !simple && !special {
        opaque(out, &format!("${{{}}}", text(body)));
        return;
    }
    if !length {
        evaluated(if special { "@" } else { &name }, out);
    }
    if let Some(index) = tail.get(1..tail.len().saturating_sub(1)).filter(|_| !tail.is_empty()) {
        subscript(index, &text(body), depth, out);
    }
}
