//! Shell words: one argument node of the syntax tree resolved to the string the shell would
//! pass, with quoting removed (`\x`, `'…'`, `"…"`, `$'…'`, `$"…"`).
//!
//! A word holding an expansion (`$X`, `${X}`, `$(…)`, backticks, `<(…)`, `$((…))`, `{1..3}`)
//! is [`WordKind::Dynamic`] and keeps its source text. A word with an unquoted glob or brace
//! character (`*`, `?`, `[`, `{`) is [`WordKind::Pattern`]: the shell may rewrite it, so it
//! never counts as a known command name.

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
}

impl Word {
    /// A literal word (for synthesized commands).
    pub fn literal(value: &str) -> Word {
        Word { value: value.to_owned(), kind: WordKind::Literal }
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
        return Word { value: raw.to_owned(), kind: WordKind::Dynamic };
    }
    let (value, pattern) = unquote(raw);
    Word { value, kind: if pattern { WordKind::Pattern } else { WordKind::Literal } }
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
    let mut out = String::with_capacity(raw.len());
    let mut pattern = false;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            },
            '\'' => {
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    out.push(n);
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
            '*' | '?' | '[' | '{' => {
                pattern = true;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    (out, pattern)
}

fn double_quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut String) {
    while let Some(n) = chars.next() {
        match n {
            '"' => return,
            '\\' => match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(e) = chars.next() {
                        out.push(e);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            },
            n => out.push(n),
        }
    }
}

/// `$'…'` with bash's backslash escapes.
fn ansi_c(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, out: &mut String) {
    while let Some(n) = chars.next() {
        match n {
            '\'' => return,
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push('\\');
                    return;
                };
                match e {
                    'a' => out.push('\x07'),
                    'b' => out.push('\x08'),
                    'e' | 'E' => out.push('\x1b'),
                    'f' => out.push('\x0c'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'v' => out.push('\x0b'),
                    '\\' | '\'' | '"' | '?' => out.push(e),
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
                            out.push('\\');
                            out.push(e);
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
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            n => out.push(n),
        }
    }
}

fn push_code(out: &mut String, code: Option<u32>) {
    if let Some(c) = code.and_then(char::from_u32) {
        out.push(c);
    }
}
