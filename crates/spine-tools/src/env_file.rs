//! The run's environment file (`CLAUDE_ENV_FILE` / `SPINE_ENV_FILE`, written by SessionStart
//! hooks), applied to every command Bash runs.
//!
//! Accepted lines: `export NAME=value` and `NAME=value`, where NAME is
//! `[A-Za-z_][A-Za-z0-9_]*`. A value wrapped in matching single or double quotes loses them
//! (no escape processing; this is a parser, not a shell). Blank lines, `#` comments and lines
//! that do not fit are ignored. Later lines win. A missing or unreadable file yields nothing.

use std::path::Path;

/// Reads the variables of an environment file, in file order.
pub(crate) fn load(path: &Path) -> Vec<(String, String)> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text),
        Err(_) => Vec::new(),
    }
}

/// Parses environment-file text.
pub(crate) fn parse(text: &str) -> Vec<(String, String)> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<(String, String)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let line = match line.strip_prefix("export") {
        Some(rest) if rest.starts_with([' ', '\t']) => rest.trim_start(),
        _ => line,
    };
    let (name, value) = line.split_once('=')?;
    if !valid_name(name) {
        return None;
    }
    Some((name.to_owned(), unquote(value).to_owned()))
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(q) && value.ends_with(q) {
            return &value[1..value.len() - 1];
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_plain_and_quoted_lines_parse_and_junk_is_ignored() {
        let text = "# comment\n\nexport A=1\nB='two words'\nexport C=\"x=y\"\n\
                    not a line\n1BAD=x\nexport\tD=\nE='unbalanced\"\nexportF=3\n";
        assert_eq!(
            parse(text),
            vec![
                ("A".into(), "1".into()),
                ("B".into(), "two words".into()),
                ("C".into(), "x=y".into()),
                ("D".into(), String::new()),
                ("E".into(), "'unbalanced\"".into()),
                ("exportF".into(), "3".into()),
            ]
        );
    }
}
