//! Programs given to `sed`, `awk` and `jq` are code: they can open files of their own
//! (`sed 'r FILE'`, `sed 's/x/y/w FILE'`, `sed 'e CMD'`, awk's `getline < FILE`,
//! `print > FILE`, `system(…)`, `ARGV` edits, jq's `import`/`include`). A program that could
//! do so gives its command an operand computed at run time with everything the command may do
//! ([`super::file_table::Spec::can`]): a `Read`/`Edit` deny or ask rule then asks.
//!
//! - sed scripts are parsed ([`sed_opens_files`]): only scripts made of commands that touch no
//!   file (`s///` without the `w`/`e` flags, `y`, `d`, `p`, `a`/`i`/`c`, labels and
//!   branches…) stay transparent; `r`, `R`, `w`, `W`, `e`, the `w`/`e` flags and anything not
//!   understood do not. `--sandbox` refuses those commands, so its scripts are transparent.
//! - awk programs are scanned for the words and characters without which awk opens no file
//!   and runs nothing: `getline`, `system`, `ARGV`, `>`, `|`, `@` (`@include`, `@load`).
//!   The scan errs towards opaque (`$3 > 100` counts).
//! - jq filters are opaque when they hold `import` or `include`.
//! - A program in a file (`sed -f`, `awk -f`) or computed at run time cannot be read: opaque.

use super::operands::{Parsed, Sink, sub_value};
use super::words::{Word, WordKind};

/// Checks the first operand of `program` when it is its program (`sed SCRIPT`, `awk PROG`,
/// `jq FILTER`).
pub(super) fn check_first(program: &str, word: &Word, parsed: &Parsed<'_>, sink: &mut Sink<'_>) {
    let text = (word.kind != WordKind::Dynamic).then_some(word.value.as_str());
    check(program, text, parsed, sink);
}

/// Checks the programs given by options (`sed -e`, `awk -e`/`--source`) and the program
/// files (`sed -f`).
pub(super) fn check_options(program: &str, parsed: &Parsed<'_>, sink: &mut Sink<'_>) {
    let (texts, files): (&[&str], &[&str]) = match program {
        "sed" | "gsed" => (&["-e", "--expression"], &["-f", "--file"]),
        "awk" | "gawk" | "mawk" | "nawk" => (&["-e", "--source"], &[]),
        _ => return,
    };
    for (word, skip) in parsed.values(texts) {
        let text = (word.kind != WordKind::Dynamic).then(|| sub_value(word, skip));
        check(program, text.as_deref(), parsed, sink);
    }
    if parsed.has(files) {
        check(program, None, parsed, sink);
    }
}

fn check(program: &str, text: Option<&str>, parsed: &Parsed<'_>, sink: &mut Sink<'_>) {
    let opens = match (program, text) {
        ("sed" | "gsed", _) if parsed.has(&["--sandbox"]) => false,
        (_, None) => true,
        ("sed" | "gsed", Some(script)) => sed_opens_files(script),
        ("awk" | "gawk" | "mawk" | "nawk", Some(prog)) => awk_opens_files(prog),
        ("jq" | "gojq" | "jaq", Some(filter)) => filter.contains("import") || filter.contains("include"),
        _ => false,
    };
    if opens {
        sink.computed(&format!("files the {program} program may open"), sink.can);
    }
}

/// Whether an awk program could open a file or run a command (see the module documentation).
pub(super) fn awk_opens_files(program: &str) -> bool {
    ["getline", "system", "ARGV", ">", "|", "@"].iter().any(|t| program.contains(t))
}

/// Whether a GNU sed script could open a file or run a command, or is not understood.
pub(super) fn sed_opens_files(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ';') {
            i += 1;
        }
        let Some(&c) = chars.get(i) else {
            return false;
        };
        if c == '#' {
            i = line_end(&chars, i);
            continue;
        }
        let Some(next) = address(&chars, i).and_then(|i| {
            let i = skip_blanks(&chars, i);
            if chars.get(i) != Some(&',') {
                return Some(i);
            }
            address(&chars, skip_blanks(&chars, i + 1))
        }) else {
            return true;
        };
        i = skip_blanks(&chars, next);
        while chars.get(i) == Some(&'!') {
            i = skip_blanks(&chars, i + 1);
        }
        let Some(&command) = chars.get(i) else {
            return true;
        };
        i += 1;
        i = match command {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => i,
            'q' | 'Q' | 'l' | 'L' => digits(&chars, skip_blanks(&chars, i)),
            ':' | 'b' | 't' | 'T' | 'v' => label_end(&chars, i),
            'a' | 'i' | 'c' => text_end(&chars, i),
            's' => {
                let Some(end) = delimited(&chars, i, 2) else {
                    return true;
                };
                let mut j = end;
                while let Some(&flag) = chars.get(j) {
                    match flag {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => j += 1,
                        'w' | 'e' => return true,
                        _ => break,
                    }
                }
                j
            }
            'y' => match delimited(&chars, i, 2) {
                Some(end) => end,
                None => return true,
            },
            // `r`, `R`, `w`, `W`, `e` and anything not understood.
            _ => return true,
        };
        let after = skip_blanks(&chars, i);
        if !matches!(chars.get(after), None | Some(';' | '\n' | '}' | '#')) {
            return true;
        }
        i = after;
    }
}

fn skip_blanks(chars: &[char], mut i: usize) -> usize {
    while chars.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
        i += 1;
    }
    i
}

fn digits(chars: &[char], mut i: usize) -> usize {
    while chars.get(i).is_some_and(char::is_ascii_digit) {
        i += 1;
    }
    i
}

fn line_end(chars: &[char], i: usize) -> usize {
    chars.iter().skip(i).position(|c| *c == '\n').map_or(chars.len(), |p| i + p)
}

/// A label runs to a newline or `;` (GNU).
fn label_end(chars: &[char], i: usize) -> usize {
    chars.iter().skip(i).position(|c| matches!(c, '\n' | ';')).map_or(chars.len(), |p| i + p)
}

/// The text of `a`, `i`, `c`: to the end of the line, lines ending in `\` continue.
fn text_end(chars: &[char], mut i: usize) -> usize {
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 2,
            '\n' => return i,
            _ => i += 1,
        }
    }
    chars.len()
}

/// One address (`12`, `$`, `/re/I`, `\%re%`, `first~step`, `+N`, `~N`), or none; the index
/// after it, `None` when it does not parse.
fn address(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i) {
        Some('0'..='9') => {
            let j = digits(chars, i);
            Some(if chars.get(j) == Some(&'~') { digits(chars, j + 1) } else { j })
        }
        Some('+' | '~') => Some(digits(chars, i + 1)),
        Some('$') => Some(i + 1),
        Some('/') => regex_address(chars, i),
        Some('\\') => regex_address(chars, i + 1),
        _ => Some(i),
    }
}

fn regex_address(chars: &[char], i: usize) -> Option<usize> {
    let mut j = delimited(chars, i, 1)?;
    while chars.get(j).is_some_and(|c| matches!(c, 'I' | 'M')) {
        j += 1;
    }
    Some(j)
}

/// `parts` parts delimited by the character at `i` (`/a/b/` is two), with `\` escapes; the
/// index after the last delimiter.
fn delimited(chars: &[char], i: usize, parts: usize) -> Option<usize> {
    let delimiter = *chars.get(i).filter(|c| !matches!(c, '\n' | '\\'))?;
    let mut j = i + 1;
    let mut left = parts;
    while left > 0 {
        match chars.get(j)? {
            '\\' => j += 2,
            c if *c == delimiter => {
                left -= 1;
                j += 1;
            }
            _ => j += 1,
        }
    }
    Some(j)
}
