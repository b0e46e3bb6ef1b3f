//! The narrowest permission rule, in Claude Code's syntax, that covers one tool call: what an
//! "always allow" answer writes to settings (`Bash(npm test:*)` for `npm test --watch`).
//!
//! Contract of [`narrowest_rule`] (every rule it returns parses with [`PermissionRule::parse`](super::PermissionRule::parse)
//! and matches the call it came from):
//! - Shell tools (`Bash`, `exec_command`, `process_exec`): the command is parsed with the shell
//!   grammar ([`super::shell::analyze`]). One simple command, fully seen through: a prefix rule
//!   of its first word (`Bash(ls:*)`), or of its first two words for tools whose second word is
//!   a subcommand ([`MULTI_WORD_TOOLS`]: `Bash(git commit:*)`). The rule is the command's
//!   words exactly (`Bash(git -C x status)`) when such a tool's second word is an option or
//!   missing, when a prefix word holds `*`, `$`, a backquote or whitespace, and when the
//!   command runs code or a program it is given ([`super::exact::runs_given_code`]:
//!   interpreters and shells, `env`, `xargs`, `sudo`…, `npm run`, `npx`, `docker exec`,
//!   `cargo run`…): `Bash(python3 -c print(1))`, never `Bash(python3:*)`. A compound command
//!   (several simple commands, wrappers included), an opaque one or one that does not parse:
//!   the exact command text, `Bash(<command>)`. Such a rule matches the call as a deny or ask
//!   rule; the policy allows a compound command only when each simple command is covered by
//!   itself.
//! - A rule never holds a wildcard the user did not see: a `*` in a word that would go into
//!   the rule (`'*'`, `git '*'`) is a literal the rule syntax cannot write, so no rule is
//!   made (`None`); nor is one made when an exact rule would hold `$` or a backquote (it
//!   would also match the expansion it spells: `Bash(git $X)`), a control character, or
//!   leading or trailing whitespace. So never `Bash(*)`.
//! - File tools: the exact path, `Read(./src/lib.rs)` (or `Edit(…)` for every tool that edits
//!   files) relative to the project, `Edit(//abs/path)` outside it; glob characters are
//!   escaped with `\`. A tool with no path argument (`Glob` without `path`): the tool name.
//! - `WebFetch`: `WebFetch(domain:HOST)` of the URL's host; a URL that does not parse, has no
//!   host or carries a user name has no rule.
//! - Every other tool, MCP tools included: the tool name.
//!
//! `None` means no rule narrower than the whole tool can be written for the call, so an
//! "always" answer should not be offered.
//!
//! [`covering_rules`] is the set to write when the call itself must be allowed next time: for
//! a compound shell command that is fully seen through, the narrowest rule of each simple
//! command (wrapped commands included), which together make the policy allow it (the policy
//! allows a shell call when every simple command is covered); otherwise [`narrowest_rule`]
//! alone. An opaque command, or one with a simple command that has no rule, is never allowed
//! by rules narrower than the bare tool: `None`.

use std::path::Path;

use serde_json::{Map, Value};

use super::exact::runs_given_code;
use super::shell::{self, SimpleCommand};
use crate::workspace::Workspace;

/// Programs whose second word names a subcommand: their prefix rules keep two words.
pub const MULTI_WORD_TOOLS: &[&str] =
    &["git", "npm", "cargo", "docker", "kubectl", "pnpm", "yarn", "go", "npx", "pip", "uv", "make", "gh"];

/// The narrowest rule covering a call of `tool_name` with `input` (the arguments as hooks see
/// them); relative paths are resolved against, and project paths written relative to,
/// `project_dir`. See the module documentation for the table.
pub fn narrowest_rule(tool_name: &str, input: &Map<String, Value>, project_dir: &Path) -> Option<String> {
    if shell::is_shell_tool(tool_name) {
        let command = input.get("command").and_then(Value::as_str)?;
        return shell_rule(command);
    }
    match tool_name {
        "Read" | "Glob" | "Grep" => Some(path_rule("Read", tool_name, input, project_dir)),
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => Some(path_rule("Edit", tool_name, input, project_dir)),
        "WebFetch" => {
            let url = url::Url::parse(input.get("url").and_then(Value::as_str)?.trim()).ok()?;
            if super::web::has_userinfo(&url) {
                return None;
            }
            let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
            (!host.is_empty()).then(|| format!("WebFetch(domain:{host})"))
        }
        _ => Some(tool_name.to_owned()),
    }
}

/// The narrowest rules that together allow the call (see the module documentation).
pub fn covering_rules(tool_name: &str, input: &Map<String, Value>, project_dir: &Path) -> Option<Vec<String>> {
    if !shell::is_shell_tool(tool_name) {
        return narrowest_rule(tool_name, input, project_dir).map(|r| vec![r]);
    }
    let analysis = shell::analyze(input.get("command").and_then(Value::as_str)?);
    if analysis.is_opaque() || analysis.commands.is_empty() {
        return None;
    }
    let mut rules: Vec<String> = Vec::new();
    for command in &analysis.commands {
        let rule = simple_rule(command)?;
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    Some(rules)
}

fn shell_rule(command: &str) -> Option<String> {
    let trimmed = command.trim();
    let analysis = shell::analyze(trimmed);
    if analysis.is_opaque() {
        return exact_rule(trimmed, false);
    }
    let [single] = analysis.commands.as_slice() else {
        return exact_rule(trimmed, false);
    };
    simple_rule(single)
}

/// `Bash(<text>)` matching `text` only: none when the rule syntax would read more into it (a
/// `*` wildcard; with `strict`, an expansion spelled `$`/backquote), when it holds a control
/// character the question would not show, or when it is empty or padded with whitespace.
fn exact_rule(text: &str, strict: bool) -> Option<String> {
    let unsafe_char = |c: char| c == '*' || c.is_control() || (strict && matches!(c, '$' | '`'));
    let usable = !text.is_empty() && text.trim() == text && !text.chars().any(unsafe_char);
    usable.then(|| format!("Bash({text})"))
}

/// The rule of one simple command: a one- or two-word prefix, else its words exactly (see the
/// module contract).
fn simple_rule(command: &SimpleCommand) -> Option<String> {
    let words = &command.argv;
    let plain = |w: &str| {
        !w.is_empty() && !w.contains(['*', '$', '`']) && !w.chars().any(|c| c.is_whitespace() || c.is_control())
    };
    let exact = || exact_rule(&command.text(), true);
    let program = command.program();
    if !plain(program) || runs_given_code(words) {
        return exact();
    }
    if MULTI_WORD_TOOLS.contains(&program) {
        match words.get(1) {
            Some(sub) if plain(sub) && !sub.starts_with('-') && !sub.starts_with('+') => {
                Some(format!("Bash({program} {sub}:*)"))
            }
            Some(_) | None => exact(),
        }
    } else {
        Some(format!("Bash({program}:*)"))
    }
}

/// `Rule(./relative)` inside the project, `Rule(//absolute)` outside it; the tool name when
/// the call names no path.
fn path_rule(rule_tool: &str, tool_name: &str, input: &Map<String, Value>, project_dir: &Path) -> String {
    let Some(path) = ["file_path", "path", "notebook_path"].iter().find_map(|k| input.get(*k).and_then(Value::as_str))
    else {
        return tool_name.to_owned();
    };
    let absolute = Workspace::normalize(path, project_dir);
    let pattern = match absolute.strip_prefix(project_dir) {
        Ok(rel) if !rel.as_os_str().is_empty() => format!("./{}", escape_glob(&rel.to_string_lossy())),
        Ok(_) | Err(_) => format!("/{}", escape_glob(&absolute.to_string_lossy())),
    };
    format!("{rule_tool}({pattern})")
}

/// A path with the glob metacharacters escaped, so that the pattern matches only itself.
fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "narrow_tests.rs"]
mod tests;
