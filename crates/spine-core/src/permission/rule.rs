//! Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`.
//!
//! - `Write`, `mcp__server__*`: the tool name, exact or with `*` wildcards.
//! - `Bash(git *)`: the command, with `*` wildcards; a trailing ` *` or `:*` also matches the
//!   bare command. Compound commands (`&&`, `||`, `;`, `|`) are split: an *allow* rule must
//!   match every part, a *deny* or *ask* rule matches when any part does. Leading `VAR=value`
//!   assignments are ignored.
//! - `Read(src/**)`, `Edit(*.ts)`: a gitignore-style glob over the file path. Relative
//!   patterns are anchored at the project root (`*.ts` without a slash matches at any depth),
//!   `//abs` is an absolute path, `~/x` is under the home directory.
//! - `WebFetch(domain:example.com)`: the URL's host.
//!
//! `Edit` rules also cover `Write` (every tool that edits files) and `Read` rules also cover
//! `Glob` and `Grep` (every tool that reads files), as in Claude Code.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::workspace::Workspace;

/// A rule that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid permission rule `{rule}`: {reason}")]
pub struct RuleError {
    /// The rule as written.
    pub rule: String,
    /// Why.
    pub reason: String,
}

/// How a rule is used: allow rules must match every part of a compound command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleUse {
    /// An allow rule.
    Allow,
    /// A deny or ask rule (or a hook's `if`).
    Restrict,
}

/// A parsed permission rule.
#[derive(Debug, Clone)]
pub struct PermissionRule {
    text: String,
    tool: Regex,
    tool_name: String,
    specifier: Option<Specifier>,
}

#[derive(Debug, Clone)]
enum Specifier {
    /// Wildcard over a command or any string argument.
    Wildcard(Regex),
    /// A glob over a path, anchored at the project root at match time (compiled once for the
    /// first project root seen).
    Path { pattern: String, compiled: Arc<OnceLock<(PathBuf, Option<GlobMatcher>)>> },
    /// A URL host.
    Domain(String),
}

impl PermissionRule {
    /// Parses a rule.
    pub fn parse(text: &str) -> Result<Self, RuleError> {
        let err = |reason: &str| RuleError { rule: text.to_owned(), reason: reason.to_owned() };
        let trimmed = text.trim();
        let (tool_part, spec) = match trimmed.find('(') {
            Some(open) => {
                if !trimmed.ends_with(')') {
                    return Err(err("missing closing `)`"));
                }
                (&trimmed[..open], Some(&trimmed[open + 1..trimmed.len() - 1]))
            }
            None => (trimmed, None),
        };
        if tool_part.is_empty() {
            return Err(err("missing tool name"));
        }
        if !tool_part.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '.')) {
            return Err(err("tool names may contain letters, digits, `_`, `-`, `.` and `*`"));
        }
        let tool = wildcard_regex(tool_part, false).map_err(|e| err(&e))?;
        let specifier = match spec.map(str::trim) {
            None | Some("") | Some("*") => None,
            Some(s) if s.starts_with("domain:") => Some(Specifier::Domain(s["domain:".len()..].to_ascii_lowercase())),
            Some(s) if is_path_tool(tool_part) => {
                Some(Specifier::Path { pattern: s.to_owned(), compiled: Arc::default() })
            }
            Some(s) => Some(Specifier::Wildcard(wildcard_regex(s, true).map_err(|e| err(&e))?)),
        };
        Ok(PermissionRule { text: trimmed.to_owned(), tool, tool_name: tool_part.to_owned(), specifier })
    }

    /// The rule as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The path pattern of a file-tool rule (`src/**` of `Read(src/**)`), if it has one.
    pub fn path_pattern(&self) -> Option<&str> {
        match &self.specifier {
            Some(Specifier::Path { pattern, .. }) => Some(pattern),
            Some(Specifier::Wildcard(_) | Specifier::Domain(_)) | None => None,
        }
    }

    /// Whether the rule matches a call of `tool_name` with `input` (the arguments as hooks
    /// see them), with relative path patterns anchored at `project_dir`.
    pub fn matches(&self, tool_name: &str, input: &Map<String, Value>, project_dir: &Path, usage: RuleUse) -> bool {
        if !self.tool_matches(tool_name) {
            return false;
        }
        let Some(spec) = &self.specifier else {
            return true;
        };
        match spec {
            Specifier::Wildcard(re) => match input.get("command").and_then(Value::as_str) {
                Some(command) => {
                    let parts = split_command(command);
                    match usage {
                        RuleUse::Allow => !parts.is_empty() && parts.iter().all(|p| re.is_match(p)),
                        RuleUse::Restrict => parts.iter().any(|p| re.is_match(p)) || re.is_match(command.trim()),
                    }
                }
                None => first_string_arg(input).is_some_and(|s| re.is_match(s)),
            },
            Specifier::Path { pattern, compiled } => {
                let Some(path) = path_arg(input) else {
                    return false;
                };
                let path = Workspace::normalize(path, project_dir);
                let cached = compiled.get_or_init(|| (project_dir.to_path_buf(), glob_for(pattern, project_dir)));
                if cached.0 == project_dir {
                    cached.1.as_ref().is_some_and(|g| g.is_match(&path))
                } else {
                    glob_for(pattern, project_dir).is_some_and(|g| g.is_match(&path))
                }
            }
            Specifier::Domain(domain) => input
                .get("url")
                .and_then(Value::as_str)
                .and_then(url_host)
                .is_some_and(|host| host == *domain || host.ends_with(&format!(".{domain}"))),
        }
    }

    fn tool_matches(&self, tool_name: &str) -> bool {
        if self.tool.is_match(tool_name) {
            return true;
        }
        match self.tool_name.as_str() {
            "Edit" => matches!(tool_name, "Write" | "MultiEdit" | "NotebookEdit"),
            "Read" => matches!(tool_name, "Glob" | "Grep"),
            _ => false,
        }
    }
}

fn is_path_tool(tool: &str) -> bool {
    matches!(tool, "Read" | "Write" | "Edit" | "MultiEdit" | "Glob" | "Grep" | "NotebookEdit")
}

/// Translates a `*` wildcard pattern into an anchored regex. With `command` set, a trailing
/// ` *` or `:*` also matches the bare prefix.
fn wildcard_regex(pattern: &str, command: bool) -> Result<Regex, String> {
    let mut body = pattern.trim();
    let mut optional_tail = false;
    if command {
        if let Some(prefix) = body.strip_suffix(":*") {
            body = prefix;
            optional_tail = true;
        } else if let Some(prefix) = body.strip_suffix(" *") {
            body = prefix;
            optional_tail = true;
        }
    }
    let mut re = String::from("^");
    for (i, piece) in body.split('*').enumerate() {
        if i > 0 {
            re.push_str(".*");
        }
        re.push_str(&regex::escape(piece));
    }
    if optional_tail {
        re.push_str("(\\s.*)?");
    }
    re.push('$');
    Regex::new(&re).map_err(|e| e.to_string())
}

fn glob_for(pattern: &str, project_dir: &Path) -> Option<GlobMatcher> {
    let absolute: PathBuf = if let Some(rest) = pattern.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        PathBuf::from(std::env::var_os("HOME")?).join(rest)
    } else if let Some(rest) = pattern.strip_prefix('/') {
        project_dir.join(rest)
    } else if pattern.contains('/') {
        project_dir.join(pattern.trim_start_matches("./"))
    } else {
        project_dir.join("**").join(pattern)
    };
    let text = absolute.to_string_lossy();
    // A directory pattern also covers what is below it.
    let text = if text.ends_with('/') { format!("{text}**") } else { text.into_owned() };
    GlobBuilder::new(&text).literal_separator(true).build().ok().map(|g| g.compile_matcher())
}

fn path_arg(input: &Map<String, Value>) -> Option<&str> {
    ["file_path", "path", "notebook_path"].iter().find_map(|k| input.get(*k).and_then(Value::as_str))
}

fn first_string_arg(input: &Map<String, Value>) -> Option<&str> {
    input.values().find_map(Value::as_str)
}

fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(':').next()?;
    Some(host.to_ascii_lowercase())
}

/// Splits a shell command on `&&`, `||`, `;`, `|` and newlines outside quotes, and drops
/// leading `NAME=value` assignments from each part.
pub fn split_command(command: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), '\\') => {
                current.push(c);
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                current.push(c);
            }
            (None, '\\') => {
                current.push(c);
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            (None, ';' | '\n') => parts.push(std::mem::take(&mut current)),
            (None, '&') if chars.peek() == Some(&'&') => {
                chars.next();
                parts.push(std::mem::take(&mut current));
            }
            (None, '|') => {
                if chars.peek() == Some(&'|') {
                    chars.next();
                }
                parts.push(std::mem::take(&mut current));
            }
            (None, c) => current.push(c),
        }
    }
    parts.push(current);
    parts.into_iter().map(|p| strip_assignments(p.trim()).to_owned()).filter(|p| !p.is_empty()).collect()
}

fn strip_assignments(mut part: &str) -> &str {
    loop {
        let Some((word, rest)) = part.split_once(char::is_whitespace) else {
            return part;
        };
        let is_assignment = word
            .split_once('=')
            .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if !is_assignment {
            return part;
        }
        part = rest.trim_start();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(s: &str) -> PermissionRule {
        PermissionRule::parse(s).expect("valid rule")
    }
    const ROOT: &str = "/proj";

    fn m(r: &str, tool: &str, input: Value, usage: RuleUse) -> bool {
        let map = input.as_object().cloned().unwrap_or_default();
        rule(r).matches(tool, &map, Path::new(ROOT), usage)
    }

    #[test]
    fn bare_tool_names_match_every_call_of_the_tool() {
        assert!(m("Write", "Write", json!({"file_path": "/proj/a"}), RuleUse::Allow));
        assert!(!m("Write", "Read", json!({}), RuleUse::Allow));
        assert!(m("mcp__fs__*", "mcp__fs__read_file", json!({}), RuleUse::Allow));
        assert!(!m("mcp__fs__*", "mcp__git__log", json!({}), RuleUse::Allow));
    }

    #[test]
    fn bash_rules_match_commands_with_wildcards_and_optional_tail() {
        assert!(m("Bash(git *)", "Bash", json!({"command": "git status"}), RuleUse::Allow));
        assert!(m("Bash(git *)", "Bash", json!({"command": "git"}), RuleUse::Allow));
        assert!(!m("Bash(git *)", "Bash", json!({"command": "gitk"}), RuleUse::Allow));
        assert!(m("Bash(npm run test:*)", "Bash", json!({"command": "npm run test -- x"}), RuleUse::Allow));
        assert!(m("Bash(rm *)", "Bash", json!({"command": "FOO=1 rm -rf x"}), RuleUse::Restrict));
    }

    #[test]
    fn compound_commands_need_every_part_for_allow_and_any_part_for_deny() {
        let input = json!({"command": "git status && rm -rf /"});
        assert!(!m("Bash(git *)", "Bash", input.clone(), RuleUse::Allow));
        assert!(m("Bash(rm *)", "Bash", input, RuleUse::Restrict));
        assert!(m("Bash(rm *)", "Bash", json!({"command": "echo 'a;b' | rm x"}), RuleUse::Restrict));
        assert_eq!(split_command("echo 'a;b' && ls"), vec!["echo 'a;b'", "ls"]);
    }

    #[test]
    fn path_rules_are_globs_anchored_at_the_project_root() {
        assert!(m("Read(src/**)", "Read", json!({"file_path": "/proj/src/a/b.rs"}), RuleUse::Allow));
        assert!(!m("Read(src/**)", "Read", json!({"file_path": "/proj/lib/b.rs"}), RuleUse::Allow));
        assert!(m("Edit(*.ts)", "Edit", json!({"file_path": "/proj/deep/x.ts"}), RuleUse::Restrict));
        assert!(m("Edit(*.ts)", "Write", json!({"file_path": "/proj/x.ts"}), RuleUse::Restrict));
        assert!(m("Read(//etc/**)", "Read", json!({"file_path": "/etc/passwd"}), RuleUse::Restrict));
        assert!(m("Read(src/**)", "Grep", json!({"pattern": "x", "path": "src/q"}), RuleUse::Allow));
    }

    #[test]
    fn domain_rules_match_the_url_host() {
        assert!(m("WebFetch(domain:example.com)", "WebFetch", json!({"url": "https://example.com/x"}), RuleUse::Allow));
        assert!(m(
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "http://api.example.com:8080"}),
            RuleUse::Allow
        ));
        assert!(!m(
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://evil.com/example.com"}),
            RuleUse::Allow
        ));
    }

    #[test]
    fn malformed_rules_are_errors() {
        assert!(PermissionRule::parse("Bash(git *").is_err());
        assert!(PermissionRule::parse("(x)").is_err());
        assert!(PermissionRule::parse("Ba sh").is_err());
    }
}
