//! Shell words: one argument node of the syntax tree resolved to the string the shell would
//! pass, with quoting removed (`\x`, `'…'`, `"…"`, `$'…'`, `$"…"`).
//!
//! A word holding an expansion (`$X`, `${X}`, `$(…)`, backticks, `<(…)`, `$((…))`, `{1..3}`)
//! is [`WordKind::Dynamic`] and keeps its source text. A word with an unquoted glob or brace
//! character (`*`, `?`, `[`, `{`) is [`WordKind::Pattern`]: the shell may rewrite it, so it
//! never counts as a known command name.
//!
//! Each word also keeps its source text ([`Word::raw`]): [`marked`] gives its characters after
//! quote removal with a flag saying which were quoted (a quoted `*` is no glob), and
//! [`single_field`] / [`could_start_with_dash`] say what word splitting and option parsing
//! could make of an expansion (see [`super::operands`]).

use tree_sitter::Node;

/// How far a word's value is known before the command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WordKind {
    /// Fully known.
    Literal,
    /// Known text, but with unquoted glob or brace characters the shell may expand.
    Pattern,
    /// Depends on an expansion.
    Dynamic,
}

/// One resolved word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    /// The value with quoting removed (the source text for dynamic words).
    pub value: String,
    /// How far the value is known.
    pub kind: WordKind,
    /// The source text, quotes included.
    pub raw: String,
}

impl Word {
    /// A literal word (for synthesized commands).
    pub fn literal(value: &str) -> Word {
        Word { value: value.to_owned(), kind: WordKind::Literal, raw: value.to_owned() }
    }

    /// Whether the word is a fully known string.
    pub fn is_literal(&self) -> bool {
        self.kind == WordKind::Literal
    }
}

const EXPANSIONS: &[&str] = &[
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
    "brace_expression",
];

/// Resolves a word node.
pub(super) fn word(node: Node<'_>, src: &str) -> Word {
    let raw = src.get(node.byte_range()).unwrap_or_default();
    if has_expansion(node) {
        return Word { value: raw.to_owned(), kind: WordKind::Dynamic, raw: raw.to_owned() };
    }
    let (value, pattern) = unquote(raw);
    Word { value, kind: if pattern { WordKind::Pattern } else { WordKind::Literal }, raw: raw.to_owned() }
}

fn has_expansion(node: Node<'_>) -> bool {
    if EXPANSIONS.contains(&node.kind()) {
        return true;
    }
    let mut cursor = node.walk();
    node.named_children(&mut cursor).any(has_expansion)
}

/// Removes shell quoting from the source text of a word without expansions. Returns the value
/// and whether an unquoted glob or brace character was seen.
pub(super) fn unquote(raw: &str) -> (String, bool) {
    let chars = marked(raw);
    let pattern = chars.iter().any(|&(c, quoted)| !quoted && matches!(c, '*' | '?' | '[' | '{'));
    (chars.into_iter().map(|(c, _)| c).collect(), pattern)
}

/// The characters of a word without expansions after quote removal, each with whether it was
/// quoted (inside `'…'`, `"…"`, `$'…'`, `$"…"` or after a backslash).
pub(super) fn marked(raw: &str) -> Vec<(char, bool)> {
    let mut out = Vec::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push((n, true)),
            },
            '\'' => {
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    out.push((n, true));
                }
            }
            '"' => double_quoted(&mut chars, &mut out),
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                ansi_c(&mut chars, &mut out);
            }
            '$' if chars.peek() == Some(&'"') => {
                chars.next();
                double_quoted(&mut chars, &mut out);
            }
            c => out.push((c, false)),
        }
    }
    out
}

/// Whether an expansion word stays one field: every `$`, backquote, glob or brace character
/// is inside double quotes (or the word has none), and no `@` (`"$@"`, `"${a[@]}"`) appears in
/// a double-quoted expansion. Anything not understood counts as splitting.
pub(super) fn single_field(raw: &str) -> bool {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if !chars.by_ref().any(|n| n == '\'') => return false,
            '\'' => {}
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                let mut escaped = false;
                let closed = chars.by_ref().any(|n| {
                    let end = n == '\'' && !escaped;
                    escaped = n == '\\' && !escaped;
                    end
                });
                if !closed {
                    return false;
                }
            }
            '$' if chars.peek() == Some(&'"') => {}
            '"' => {
                let mut expansion = false;
                loop {
                    match chars.next() {
                        None => return false,
                        Some('"') => break,
                        Some('\\') => {
                            chars.next();
                        }
                        Some('$' | '`') => expansion = true,
                        // `"$@"`, `"${a[@]}"`, `"${!p@}"`; a nested quote may end the string early.
                        Some('@' | '\'') if expansion => return false,
                        Some(_) => {}
                    }
                }
            }
            '$' | '`' | '*' | '?' | '[' | '{' | '<' | '>' => return false,
            _ => {}
        }
    }
    true
}

/// Whether a word computed at run time could start with `-` (and so be read as an option):
/// its first character after quotes is anything but a letter, a digit or one of `./_~+=:,@%`
/// (an expansion, a glob, a brace, a `-`).
pub(super) fn could_start_with_dash(raw: &str) -> bool {
    let first = raw.trim_start_matches(['"', '\'']).chars().next();
    !first.is_some_and(|c| c.is_alphanumeric() || "./_~+=:,@%".contains(c))
}

fn double_quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut Vec<(char, bool)>) {
    while let Some(n) = chars.next() {
        match n {
            '"' => return,
            '\\' => match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(e) = chars.next() {
                        out.push((e, true));
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(('\\', true)),
            },
            n => out.push((n, true)),
        }
    }
}

/// `$'…'` with bash's backslash escapes.
fn ansi_c(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut Vec<(char, bool)>) {
    while let Some(n) = chars.next() {
        match n {
            '\'' => return,
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push(('\\', true));
                    return;
                };
                match e {
                    'a' => out.push(('\x07', true)),
                    'b' => out.push(('\x08', true)),
                    'e' | 'E' => out.push(('\x1b', true)),
                    'f' => out.push(('\x0c', true)),
                    'n' => out.push(('\n', true)),
                    'r' => out.push(('\r', true)),
                    't' => out.push(('\t', true)),
                    'v' => out.push(('\x0b', true)),
                    '\\' | '\'' | '"' | '?' => out.push((e, true)),
                    '0'..='7' => {
                        let mut digits = String::from(e);
                        while digits.len() < 3 && chars.peek().is_some_and(|d| ('0'..='7').contains(d)) {
                            digits.extend(chars.next());
                        }
                        push_code(out, u32::from_str_radix(&digits, 8).ok());
                    }
                    'x' | 'u' | 'U' => {
                        let max = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let mut digits = String::new();
                        while digits.len() < max && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                            digits.extend(chars.next());
                        }
                        if digits.is_empty() {
                            out.push(('\\', true));
                            out.push((e, true));
                        } else {
                            push_code(out, u32::from_str_radix(&digits, 16).ok());
                        }
                    }
                    'c' => {
                        if let Some(ctl) = chars.next() {
                            push_code(out, Some(u32::from(ctl) & 0x1f));
                        }
                    }
                    other => {
                        out.push(('\\', true));
                        out.push((other, true));
                    }
                }
            }
            n => out.push((n, true)),
        }
    }
}

fn push_code(out: &mut Vec<(char, bool)>, code: Option<u32>) {
    if let Some(c) = code.and_then(char::from_u32) {
        out.push((c, true));
    }
}
