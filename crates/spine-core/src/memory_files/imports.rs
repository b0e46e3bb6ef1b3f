//! The `@path` imports of a memory file, read off its text as Claude Code reads them (see
//! [`imports`]); the caller resolves and loads them.

/// The `@path` imports of a memory file, in order: outside fenced code blocks and code spans,
/// an `@` at the start of a line or after whitespace, up to the next unescaped whitespace;
/// `\ ` is a space and a `#fragment` is dropped. Paths must start with `./`, `../`, `~/`, `/`
/// or a letter, digit, `.`, `_` or `-` (so `@@x` and `@#x` are not imports).
pub fn imports(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some((ch, n)) = fence_marker(trimmed).filter(|_| indent < 4) {
            match fence {
                None => fence = Some((ch, n)),
                Some((open, len)) if open == ch && n >= len && trimmed.trim_start_matches(ch).trim().is_empty() => {
                    fence = None;
                }
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        scan_line(&without_code_spans(line), &mut found);
    }
    found
}

/// A fence opener or closer: three or more backticks or tildes.
fn fence_marker(trimmed: &str) -> Option<(char, usize)> {
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = trimmed.chars().take_while(|c| *c == ch).count();
    (n >= 3).then_some((ch, n))
}

/// The line with each code span (a run of N backticks up to the next run of exactly N)
/// replaced by a space; an unmatched run stays as it is.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let n = chars[j..].iter().take_while(|c| **c == '`').count();
                if n == run {
                    close = Some(j + n);
                    break;
                }
                j += n;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                out.push(' ');
                i = end;
            }
            None => {
                out.extend(&chars[i..i + run]);
                i += run;
            }
        }
    }
    out
}

fn scan_line(line: &str, found: &mut Vec<String>) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let at_start = i == 0 || chars[i - 1].is_whitespace();
        if chars[i] != '@' || !at_start {
            i += 1;
            continue;
        }
        let mut path = String::new();
        let mut j = i + 1;
        while j < chars.len() {
            match chars[j] {
                '\\' if chars.get(j + 1) == Some(&' ') => {
                    path.push(' ');
                    j += 2;
                }
                c if c.is_whitespace() => break,
                c => {
                    path.push(c);
                    j += 1;
                }
            }
        }
        i = j;
        if let Some(hash) = path.find('#') {
            path.truncate(hash);
        }
        let plausible = path.starts_with("./")
            || path.starts_with("../")
            || path.starts_with("~/")
            || (path.starts_with('/') && path.len() > 1)
            || path.chars().next().is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if plausible {
            found.push(path);
        }
    }
}
