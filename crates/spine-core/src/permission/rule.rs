//! Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`.
//!
//! - `Write`, `mcp__server__*`: the tool name, exact or with `*` wildcards.
//! - `Bash(git *)`: a shell command, with `*` wildcards; a trailing ` *` or `:*` also matches
//!   the bare command. The command is parsed ([`super::shell`]) into every simple command it
//!   would run; each is matched as its words joined by single spaces. A *deny* or *ask* rule
//!   matches when any simple command matches, by the program as written or by its basename
//!   (`/bin/rm x` matches `Bash(rm *)`), or when the whole command text does. An *allow* rule
//!   only covers simple commands by the program as written; whether a whole command is allowed
//!   is decided across all allow rules by the policy. `Bash` rules also govern the other tools
//!   that run shell commands (`exec_command`, `process_exec`).
//! - `Read(src/**)`, `Edit(*.ts)`: a gitignore-style glob over the file path. Relative
//!   patterns with a slash (`src/**`, `./x`, `/x`) are anchored at the project root; a name
//!   without a slash (`*.ts`, `.env`) matches at any depth in every workspace root, the added
//!   directories too; `//abs` is an absolute path, `~/x` is under the home directory.
//! - `WebFetch(domain:example.com)`: the URL's host, as `url::Url` parses it (see
//!   [`super::web::url_in_domain`]; URLs with userinfo never match).
//!
//! `Edit` rules also cover `Write` (every tool that edits files) and `Read` rules also cover
//! `Glob` and `Grep` (every tool that reads files), as in Claude Code. A rule naming a tool's
//! former name names the tool: `Task(reviewer)` matches an `Agent` call whose `subagent_type` is
//! `reviewer` ([`crate::tool_names`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;
use serde_json::{Map, Value};
use thiserror::Error;

use super::shell::{self, ShellAnalysis, SimpleCommand};
use crate::workspace::Workspace;

#[path = "rule_files.rs"]
mod files;

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
    /// see them), with relative path patterns anchored at `project_dir`. A `command` argument
    /// is parsed here (hook `if` conditions); the policy parses once per call and uses
    /// [`restricts_shell`](Self::restricts_shell) and
    /// [`covers_shell_command`](Self::covers_shell_command) instead.
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
                    let analysis = shell::analyze(command);
                    match usage {
                        RuleUse::Allow => {
                            !analysis.is_opaque()
                                && !analysis.commands.is_empty()
                                && analysis.commands.iter().all(|c| command_matches(re, c, usage))
                        }
                        RuleUse::Restrict => {
                            analysis.commands.iter().any(|c| command_matches(re, c, usage))
                                || re.is_match(command.trim())
                        }
                    }
                }
                None => specifier_subject(tool_name, input).is_some_and(|s| re.is_match(s)),
            },
            Specifier::Path { pattern, compiled } => {
                let Some(path) = path_arg(input) else {
                    return false;
                };
                glob_matches(pattern, compiled, &Workspace::normalize(path, project_dir), project_dir)
            }
            Specifier::Domain(domain) => {
                input.get("url").and_then(Value::as_str).is_some_and(|url| super::web::url_in_domain(url, domain))
            }
        }
    }

    /// Whether the rule names `tool_name` (`Edit` also names every tool that edits files,
    /// `Read` every tool that reads them, `Bash` every tool that runs shell commands; a former
    /// name names its tool: `Task` names `Agent`).
    pub fn tool_matches(&self, tool_name: &str) -> bool {
        if crate::tool_names::names_of(tool_name).any(|name| self.tool.is_match(name)) {
            return true;
        }
        match self.tool_name.as_str() {
            "Edit" => matches!(tool_name, "Write" | "MultiEdit" | "NotebookEdit"),
            "Read" => matches!(tool_name, "Glob" | "Grep"),
            "Bash" => shell::is_shell_tool(tool_name),
            _ => false,
        }
    }

    /// Whether the rule has no specifier (it names the tool only).
    pub fn is_bare(&self) -> bool {
        self.specifier.is_none()
    }

    /// Whether the rule restricts shell commands with a command pattern (`Bash(rm *)`).
    pub fn has_command_pattern(&self) -> bool {
        matches!(self.specifier, Some(Specifier::Wildcard(_)))
    }

    /// The deny/ask match of a shell call of `tool_name` on its analysis: any simple command
    /// matches (by the program as written or its basename), or the whole `command` text does.
    pub fn restricts_shell(&self, tool_name: &str, analysis: &ShellAnalysis, command: &str) -> bool {
        if !self.tool_matches(tool_name) {
            return false;
        }
        match &self.specifier {
            None => true,
            Some(Specifier::Wildcard(re)) => {
                analysis.commands.iter().any(|c| command_matches(re, c, RuleUse::Restrict))
                    || re.is_match(command.trim())
            }
            Some(Specifier::Path { .. } | Specifier::Domain(_)) => false,
        }
    }

    /// Whether this allow rule covers one simple command of a shell call of `tool_name` (by the
    /// program as written: `Bash(git status)` does not cover `./git status`).
    pub fn covers_shell_command(&self, tool_name: &str, command: &SimpleCommand) -> bool {
        if !self.tool_matches(tool_name) {
            return false;
        }
        match &self.specifier {
            None => true,
            Some(Specifier::Wildcard(re)) => command_matches(re, command, RuleUse::Allow),
            Some(Specifier::Path { .. } | Specifier::Domain(_)) => false,
        }
    }

    /// Whether this is a file-edit rule (`Edit`, `Write`, `Edit(src/**)`…) that matches a write
    /// of the absolute, normal `path`; relative patterns are anchored at `project_dir`.
    pub fn matches_write(&self, path: &Path, project_dir: &Path) -> bool {
        if !self.tool_matches("Write") {
            return false;
        }
        match &self.specifier {
            None => true,
            Some(Specifier::Path { pattern, compiled }) => glob_matches(pattern, compiled, path, project_dir),
            Some(Specifier::Wildcard(_) | Specifier::Domain(_)) => false,
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
    // `(?s)`: a command word may hold a newline (`rm "a<newline>b"`).
    let mut re = String::from("(?s)^");
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

/// Matches a path glob, compiled once for the first project root seen.
fn glob_matches(
    pattern: &str,
    compiled: &OnceLock<(PathBuf, Option<GlobMatcher>)>,
    path: &Path,
    project_dir: &Path,
) -> bool {
    let cached = compiled.get_or_init(|| (project_dir.to_path_buf(), glob_for(pattern, project_dir)));
    if cached.0 == project_dir {
        cached.1.as_ref().is_some_and(|g| g.is_match(path))
    } else {
        glob_for(pattern, project_dir).is_some_and(|g| g.is_match(path))
    }
}

fn glob_for(pattern: &str, project_dir: &Path) -> Option<GlobMatcher> {
    let text = absolute_pattern(pattern, project_dir)?;
    GlobBuilder::new(&text).literal_separator(true).build().ok().map(|g| g.compile_matcher())
}

/// A path pattern as the glob it is matched with (`//x` absolute, `~/` home, `/x` and `a/b`
/// at the project, a name without a slash `**/name`; a directory pattern covers what is
/// below it).
fn absolute_pattern(pattern: &str, project_dir: &Path) -> Option<String> {
    let absolute: PathBuf = if let Some(rest) = pattern.strip_prefix("//") {
        PathBuf::from("/").join(rest)
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        spine_protocol::home::user_home()?.join(rest)
    } else if let Some(rest) = pattern.strip_prefix('/') {
        project_dir.join(rest)
    } else if pattern.contains('/') {
        project_dir.join(pattern.trim_start_matches("./"))
    } else {
        // A name without a slash matches at any depth, in every workspace root alike (the
        // added directories too); paths outside every root never reach a rule's allow.
        Path::new("**").join(pattern)
    };
    let text = absolute.to_string_lossy();
    // A directory pattern also covers what is below it.
    Some(if text.ends_with('/') { format!("{text}**") } else { text.into_owned() })
}

fn path_arg(input: &Map<String, Value>) -> Option<&str> {
    ["file_path", "path", "notebook_path"].iter().find_map(|k| input.get(*k).and_then(Value::as_str))
}

fn first_string_arg(input: &Map<String, Value>) -> Option<&str> {
    input.values().find_map(Value::as_str)
}

/// What a wildcard specifier of a tool without a command matches: for `Agent` (or `Task`), the
/// agent type (`Agent(reviewer)`, as in Claude Code; absent: `general-purpose`, the type that
/// runs); for `Skill`, the skill's name (`Skill(deploy)`, `Skill(deploy *)`); for other tools,
/// the first string argument.
fn specifier_subject<'a>(tool_name: &str, input: &'a Map<String, Value>) -> Option<&'a str> {
    use crate::subagents::{AGENT_TOOL, GENERAL_PURPOSE};
    match crate::tool_names::current_name(tool_name) {
        AGENT_TOOL => Some(input.get("subagent_type").and_then(Value::as_str).unwrap_or(GENERAL_PURPOSE)),
        // `Skill(deploy)`: the skill's name, without a leading `/` (Claude Code's rules).
        crate::skills::SKILL_TOOL => {
            input.get("skill").and_then(Value::as_str).map(|s| s.trim().trim_start_matches('/'))
        }
        _ => first_string_arg(input),
    }
}

/// Matches a command pattern against one simple command: its words joined by spaces, and for
/// restrict rules also with the program replaced by its basename.
fn command_matches(re: &Regex, command: &SimpleCommand, usage: RuleUse) -> bool {
    re.is_match(&command.text())
        || match usage {
            RuleUse::Restrict => command.basename_text().is_some_and(|t| re.is_match(&t)),
            RuleUse::Allow => false,
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
    fn an_agent_or_task_rule_names_the_agent_type_not_the_first_argument() {
        let call = json!({"description": "review it", "prompt": "p", "subagent_type": "reviewer"});
        for (rule, tool) in [("Agent", "Agent"), ("Task", "Agent"), ("Agent", "Task"), ("Task", "Task")] {
            assert!(m(&format!("{rule}(reviewer)"), tool, call.clone(), RuleUse::Restrict), "{rule} on {tool}");
            assert!(m(rule, tool, call.clone(), RuleUse::Allow), "bare {rule} on {tool}");
            assert!(!m(&format!("{rule}(review it)"), tool, call.clone(), RuleUse::Restrict));
            assert!(!m(&format!("{rule}(general-purpose)"), tool, call.clone(), RuleUse::Restrict));
        }
        let untyped = json!({"description": "d", "prompt": "p"});
        assert!(m("Agent(general-purpose)", "Agent", untyped, RuleUse::Restrict), "absent: general-purpose");
        assert!(!m("Task(reviewer)", "Bash", json!({"command": "reviewer"}), RuleUse::Restrict));
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
        assert!(!m("Bash(rm *)", "Bash", json!({"command": "echo 'a;rm b'"}), RuleUse::Restrict));
    }

    #[test]
    fn bash_rules_govern_exec_command_and_process_exec() {
        for tool in ["exec_command", "process_exec"] {
            assert!(m("Bash(rm *)", tool, json!({"command": "env rm x"}), RuleUse::Restrict), "{tool}");
            assert!(m("Bash", tool, json!({"command": "ls"}), RuleUse::Allow), "{tool}");
        }
        assert!(!m("Bash(rm *)", "Write", json!({"command": "rm x"}), RuleUse::Restrict));
    }

    #[test]
    fn deny_matches_the_program_basename_and_allow_only_the_program_as_written() {
        assert!(m("Bash(rm *)", "Bash", json!({"command": "/bin/rm x"}), RuleUse::Restrict));
        assert!(m("Bash(/bin/rm *)", "Bash", json!({"command": "/bin/rm x"}), RuleUse::Restrict));
        assert!(!m("Bash(git status)", "Bash", json!({"command": "./git status"}), RuleUse::Allow));
        assert!(m("Bash(rm *)", "Bash", json!({"command": "rm \"a\nb\""}), RuleUse::Restrict));
    }

    #[test]
    fn edit_rules_match_write_targets() {
        let root = Path::new(ROOT);
        assert!(rule("Edit(logs/**)").matches_write(Path::new("/proj/logs/a"), root));
        assert!(!rule("Edit(logs/**)").matches_write(Path::new("/proj/src/a"), root));
        assert!(rule("Edit").matches_write(Path::new("/anything"), root));
        assert!(!rule("Read(logs/**)").matches_write(Path::new("/proj/logs/a"), root));
        assert!(!rule("Bash(echo *)").matches_write(Path::new("/proj/logs/a"), root));
    }

    #[test]
    fn path_rules_are_globs_anchored_at_the_project_root() {
        assert!(m("Read(src/**)", "Read", json!({"file_path": "/proj/src/a/b.rs"}), RuleUse::Allow));
        assert!(!m("Read(src/**)", "Read", json!({"file_path": "/proj/lib/b.rs"}), RuleUse::Allow));
        assert!(m("Edit(*.ts)", "Edit", json!({"file_path": "/proj/deep/x.ts"}), RuleUse::Restrict));
        assert!(m("Edit(*.ts)", "Write", json!({"file_path": "/proj/x.ts"}), RuleUse::Restrict));
        assert!(m("Read(//etc/**)", "Read", json!({"file_path": "/etc/passwd"}), RuleUse::Restrict));
        assert!(!m("Edit(*.ts)", "Edit", json!({"file_path": "/proj/x.tsx"}), RuleUse::Restrict));
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

    #[test]
    fn names_without_a_slash_match_in_added_directories_too_and_slashed_patterns_stay_at_the_project() {
        let added = json!({"file_path": "/added/deep/.env"});
        assert!(m("Read(.env)", "Read", added.clone(), RuleUse::Restrict));
        assert!(m("Read(.env)", "Read", json!({"file_path": "/proj/.env"}), RuleUse::Restrict));
        assert!(!m("Read(.env)", "Read", json!({"file_path": "/added/.envrc"}), RuleUse::Restrict));
        assert!(m("Edit(*.md)", "Write", json!({"file_path": "/added/notes.md"}), RuleUse::Allow));
        assert!(!m("Read(./.env)", "Read", added, RuleUse::Restrict));
        assert!(m("Read(//added/**)", "Read", json!({"file_path": "/added/a/b"}), RuleUse::Allow));
    }
}
