//! The matcher syntax of hook groups (Claude Code's): `*`, empty or absent match everything; a
//! string of only letters, digits, `_`, `-`, spaces, `|` and `,` is a list of exact names;
//! anything else is an unanchored regular expression (`Edit.*` also matches `NotebookEdit`;
//! write `^…$` to anchor). MCP tools are named `mcp__<server>__<tool>`, so `mcp__memory`
//! alone matches nothing and `mcp__memory__.*` matches the server's tools.

use regex::Regex;
use thiserror::Error;

/// A bad matcher.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("matcher `{matcher}` is not a valid regular expression: {reason}")]
pub struct MatcherError {
    /// The matcher as written.
    pub matcher: String,
    /// The regex error.
    pub reason: String,
}

/// A compiled matcher.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Matches everything.
    All,
    /// Matches one of these exact names.
    Names(Vec<String>),
    /// Matches when the regex finds a match anywhere in the subject.
    Regex(Regex),
}

impl Matcher {
    /// Parses a matcher.
    pub fn parse(text: &str) -> Result<Matcher, MatcherError> {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed == "*" {
            return Ok(Matcher::All);
        }
        let is_list = trimmed.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '|' | ',' | ' '));
        if is_list {
            let names = trimmed.split(['|', ',']).map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).collect();
            return Ok(Matcher::Names(names));
        }
        Regex::new(trimmed)
            .map(Matcher::Regex)
            .map_err(|e| MatcherError { matcher: text.to_owned(), reason: e.to_string() })
    }

    /// Whether the matcher accepts a subject; events without a matcher subject (`None`)
    /// ignore matchers.
    pub fn matches(&self, subject: Option<&str>) -> bool {
        let Some(subject) = subject else { return true };
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == subject),
            Matcher::Regex(re) => re.is_match(subject),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Matcher {
        Matcher::parse(s).expect("valid matcher")
    }

    #[test]
    fn star_empty_match_everything() {
        for s in ["", "*", "  "] {
            assert!(m(s).matches(Some("Anything")));
        }
    }

    #[test]
    fn plain_names_are_exact_lists_split_on_pipe_and_comma() {
        let list = m("Bash|Write, Edit");
        assert!(list.matches(Some("Bash")) && list.matches(Some("Write")) && list.matches(Some("Edit")));
        assert!(!list.matches(Some("NotebookEdit")));
        assert!(!m("mcp__memory").matches(Some("mcp__memory__create")));
        assert!(!m("code-reviewer").matches(Some("senior-code-reviewer")));
    }

    #[test]
    fn other_strings_are_unanchored_regexes() {
        assert!(m("Edit.*").matches(Some("NotebookEdit")));
        assert!(m("mcp__fs__.*").matches(Some("mcp__fs__read_file")));
        assert!(!m("^Edit$").matches(Some("NotebookEdit")));
    }

    #[test]
    fn events_without_a_subject_ignore_the_matcher() {
        assert!(m("Bash").matches(None));
    }

    #[test]
    fn invalid_regex_is_an_error_naming_the_matcher() {
        let err = Matcher::parse("Bash(").expect_err("invalid");
        assert_eq!(err.matcher, "Bash(");
    }
}
