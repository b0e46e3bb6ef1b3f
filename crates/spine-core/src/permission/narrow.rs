//! The narrowest permission rule, in Claude Code's syntax, that covers one tool call: what an
//! "always allow" answer writes to settings (`Bash(npm test:*)` for `npm test --watch`).
//!
//! Contract of [`narrowest_rule`] (every rule it returns parses with [`PermissionRule::parse`](super::PermissionRule::parse)
//! and matches the call it came from):
//! - Shell tools (`Bash`, `exec_command`, `process_exec`): the command is parsed with the shell
//!   grammar ([`super::shell::analyze`]). One simple command, fully seen through: a prefix rule
//!   of its first word (`Bash(ls:*)`), or of its first two words for tools whose second word is
//!   a subcommand ([`MULTI_WORD_TOOLS`]: `Bash(git commit:*)`). When such a tool's second word
//!   is an option or missing, or a prefix word holds `*`, `$` or a backquote, the rule is the
//!   command's words exactly (`Bash(git -C x status)`). A compound command (several simple
//!   commands, wrappers included), an opaque one or one that does not parse: the exact command
//!   text, `Bash(<command>)`. Such a rule matches the call as a deny or ask rule; the policy
//!   allows a compound command only when each simple command is covered by itself.
//!   Never `Bash(*)`: a command that is empty or only `*` has no rule (`None`).
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
//! alone. An opaque command is never allowed by rules narrower than the bare tool: `None`.

use std::path::Path;

use serde_json::{Map, Value};

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
        let rule = simple_rule(command);
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    Some(rules)
}

fn shell_rule(command: &str) -> Option<String> {
    let trimmed = command.trim();
    if trimmed.chars().all(|c| c == '*' || c.is_whitespace()) {
        return None;
    }
    let exact = || Some(format!("Bash({trimmed})"));
    let analysis = shell::analyze(trimmed);
    if analysis.is_opaque() {
        return exact();
    }
    let [single] = analysis.commands.as_slice() else {
        return exact();
    };
    Some(simple_rule(single))
}

/// The rule of one simple command: a one- or two-word prefix, else its words exactly.
fn simple_rule(command: &SimpleCommand) -> String {
    let words = &command.argv;
    let plain = |w: &str| !w.is_empty() && !w.contains(['*', '$', '`', '\n']) && !w.chars().any(char::is_whitespace);
    let exact = || format!("Bash({})", command.text());
    let program = command.program();
    if !plain(program) {
        return exact();
    }
    if MULTI_WORD_TOOLS.contains(&program) {
        match words.get(1) {
            Some(sub) if plain(sub) && !sub.starts_with('-') && !sub.starts_with('+') => {
                format!("Bash({program} {sub}:*)")
            }
            Some(_) | None => exact(),
        }
    } else {
        format!("Bash({program}:*)")
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
mod tests {
    use serde_json::json;

    use super::*;
    use crate::permission::{PermissionRule, RuleUse};

    const ROOT: &str = "/proj";

    fn input(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn narrow(tool: &str, v: Value) -> Option<String> {
        narrowest_rule(tool, &input(v), Path::new(ROOT))
    }

    /// The rule round-trips through the parser and matches its call (as an allow rule when
    /// `allow` says so, always as a deny/ask rule).
    fn check(tool: &str, v: Value, expected: &str, usage: RuleUse) {
        let rule_text = narrow(tool, v.clone()).unwrap_or_else(|| panic!("a rule for {tool} {v}"));
        assert_eq!(rule_text, expected, "{tool} {v}");
        let rule = PermissionRule::parse(&rule_text).unwrap_or_else(|e| panic!("{rule_text}: {e}"));
        assert_eq!(rule.as_str(), rule_text, "round trip");
        assert!(!rule.is_bare() || !shell::is_shell_tool(tool), "never a bare shell rule: {rule_text}");
        let map = input(v);
        assert!(rule.matches(tool, &map, Path::new(ROOT), RuleUse::Restrict), "{rule_text} restricts its call");
        if usage == RuleUse::Allow {
            assert!(rule.matches(tool, &map, Path::new(ROOT), RuleUse::Allow), "{rule_text} allows its call");
        }
    }

    #[test]
    fn a_simple_command_gets_a_prefix_rule_of_its_first_word() {
        check("Bash", json!({"command": "ls -la src"}), "Bash(ls:*)", RuleUse::Allow);
        check("Bash", json!({"command": "pytest"}), "Bash(pytest:*)", RuleUse::Allow);
        check("Bash", json!({"command": "FOO=1 make"}), "Bash(make)", RuleUse::Allow);
        check("Bash", json!({"command": "ls *.rs"}), "Bash(ls:*)", RuleUse::Allow);
        check("Bash", json!({"command": "echo hi > out.txt"}), "Bash(echo:*)", RuleUse::Allow);
        check("exec_command", json!({"command": "ls"}), "Bash(ls:*)", RuleUse::Allow);
    }

    #[test]
    fn multi_word_tools_keep_their_subcommand() {
        check("Bash", json!({"command": "npm test --watch"}), "Bash(npm test:*)", RuleUse::Allow);
        check("Bash", json!({"command": "git commit -m 'a b'"}), "Bash(git commit:*)", RuleUse::Allow);
        check("Bash", json!({"command": "cargo test -p x"}), "Bash(cargo test:*)", RuleUse::Allow);
        check("Bash", json!({"command": "docker ps"}), "Bash(docker ps:*)", RuleUse::Allow);
        check("Bash", json!({"command": "kubectl get pods"}), "Bash(kubectl get:*)", RuleUse::Allow);
        check("Bash", json!({"command": "go build ./..."}), "Bash(go build:*)", RuleUse::Allow);
        // An option or nothing after the tool: the words exactly, never the whole tool.
        check("Bash", json!({"command": "git -C sub status"}), "Bash(git -C sub status)", RuleUse::Allow);
        check("Bash", json!({"command": "cargo +nightly build"}), "Bash(cargo +nightly build)", RuleUse::Allow);
        check("Bash", json!({"command": "git"}), "Bash(git)", RuleUse::Allow);
        check("Bash", json!({"command": "git \"$SUB\" x"}), "Bash(git \"$SUB\" x)", RuleUse::Allow);
    }

    #[test]
    fn compound_wrapped_and_opaque_commands_get_the_exact_command() {
        check(
            "Bash",
            json!({"command": "npm test && rm -rf build"}),
            "Bash(npm test && rm -rf build)",
            RuleUse::Restrict,
        );
        check("Bash", json!({"command": "ls | wc -l"}), "Bash(ls | wc -l)", RuleUse::Restrict);
        check("Bash", json!({"command": "echo $(whoami)"}), "Bash(echo $(whoami))", RuleUse::Restrict);
        check("Bash", json!({"command": "timeout 5 npm test"}), "Bash(timeout 5 npm test)", RuleUse::Restrict);
        check("Bash", json!({"command": "eval \"$X\""}), "Bash(eval \"$X\")", RuleUse::Restrict);
        check("Bash", json!({"command": "if then fi ("}), "Bash(if then fi ()", RuleUse::Restrict);
        check("Bash", json!({"command": "  ls; ls  "}), "Bash(ls; ls)", RuleUse::Restrict);
    }

    #[test]
    fn no_shell_rule_is_ever_the_whole_tool() {
        for command in ["", "   ", "*", " * * "] {
            assert_eq!(narrow("Bash", json!({"command": command})), None, "{command:?}");
        }
        assert_eq!(narrow("Bash", json!({})), None, "no command");
    }

    #[test]
    fn file_tools_get_the_exact_path_relative_inside_and_absolute_outside_the_project() {
        check("Edit", json!({"file_path": "/proj/src/lib.rs"}), "Edit(./src/lib.rs)", RuleUse::Allow);
        check("Edit", json!({"file_path": "src/lib.rs"}), "Edit(./src/lib.rs)", RuleUse::Allow);
        check("Write", json!({"file_path": "/proj/a/../b.txt"}), "Edit(./b.txt)", RuleUse::Allow);
        check("Read", json!({"file_path": "/etc/hosts"}), "Read(//etc/hosts)", RuleUse::Allow);
        check("Edit", json!({"file_path": "/other/x.rs"}), "Edit(//other/x.rs)", RuleUse::Allow);
        check("Grep", json!({"pattern": "x", "path": "/proj/src"}), "Read(./src)", RuleUse::Allow);
        check("NotebookEdit", json!({"notebook_path": "/proj/n.ipynb"}), "Edit(./n.ipynb)", RuleUse::Allow);
        check("Glob", json!({"pattern": "*.rs"}), "Glob", RuleUse::Allow);
    }

    #[test]
    fn glob_characters_in_a_path_are_escaped_so_the_rule_matches_only_that_path() {
        check("Edit", json!({"file_path": "/proj/a*[1].rs"}), "Edit(./a\\*\\[1\\].rs)", RuleUse::Allow);
        let rule = PermissionRule::parse("Edit(./a\\*\\[1\\].rs)").expect("parses");
        let other = input(json!({"file_path": "/proj/abc[1].rs"}));
        assert!(!rule.matches("Edit", &other, Path::new(ROOT), RuleUse::Allow), "no wildcard left");
    }

    #[test]
    fn web_fetch_gets_the_urls_domain() {
        check("WebFetch", json!({"url": "https://example.com/a?b"}), "WebFetch(domain:example.com)", RuleUse::Allow);
        check("WebFetch", json!({"url": "https://Docs.RS./x"}), "WebFetch(domain:docs.rs)", RuleUse::Allow);
        check("WebFetch", json!({"url": "http://127.0.0.1:8080/"}), "WebFetch(domain:127.0.0.1)", RuleUse::Allow);
        assert_eq!(narrow("WebFetch", json!({"url": "not a url"})), None);
        assert_eq!(narrow("WebFetch", json!({"url": "https://u:p@example.com/"})), None);
    }

    /// Whether the policy, with `allow` as its only allow rules, allows the call outright.
    fn policy_allows(allow: &[String], tool: &str, v: &Value) -> bool {
        use spine_protocol::permission::{PermissionBehavior, PermissionMode, PermissionSuggestion};
        use spine_protocol::tool::Effect;

        use crate::permission::{CallFacts, PermissionPolicy, PermissionRules};
        let rules = PermissionRules {
            allow: allow.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect(),
            ..PermissionRules::default()
        };
        let policy = PermissionPolicy::new(rules, PermissionMode::Default, Path::new(ROOT).to_path_buf());
        let args = input(v.clone());
        let decision =
            policy.decide(CallFacts::new(tool, Effect::Execute, &args), &PermissionSuggestion::Passthrough, None);
        decision.behavior == PermissionBehavior::Allow
    }

    #[test]
    fn the_rules_of_a_compound_command_allow_it_through_the_policy_and_its_parts_only() {
        let call = json!({"command": "npm test --watch && git status | wc -l"});
        let rules = covering_rules("Bash", &input(call.clone()), Path::new(ROOT)).expect("rules");
        assert_eq!(rules, ["Bash(npm test:*)", "Bash(git status:*)", "Bash(wc:*)"]);
        assert!(policy_allows(&rules, "Bash", &call));
        assert!(!policy_allows(&rules, "Bash", &json!({"command": "npm test && rm -rf /"})), "rm is not covered");
        let exact = narrow("Bash", call.clone()).expect("rule");
        assert!(!policy_allows(&[exact], "Bash", &call), "the exact compound rule restricts, it does not allow");

        let wrapped = json!({"command": "timeout 5 npm test"});
        let rules = covering_rules("Bash", &input(wrapped.clone()), Path::new(ROOT)).expect("rules");
        assert_eq!(rules, ["Bash(timeout:*)", "Bash(npm test:*)"]);
        assert!(policy_allows(&rules, "Bash", &wrapped));
        assert!(!policy_allows(&rules, "Bash", &json!({"command": "timeout 5 rm -rf /"})));

        assert_eq!(covering_rules("Bash", &input(json!({"command": "eval \"$X\""})), Path::new(ROOT)), None);
        assert_eq!(
            covering_rules("Edit", &input(json!({"file_path": "/proj/a.rs"})), Path::new(ROOT)),
            Some(vec!["Edit(./a.rs)".to_owned()])
        );
    }

    #[test]
    fn a_simple_commands_rule_allows_it_through_the_policy() {
        for command in ["npm test --watch", "ls -la", "git -C sub status", "git commit -m 'a b'", "FOO=1 make"] {
            let call = json!({"command": command});
            let rule = narrow("Bash", call.clone()).expect("rule");
            assert!(policy_allows(std::slice::from_ref(&rule), "Bash", &call), "{rule} allows {command}");
        }
    }

    #[test]
    fn mcp_and_other_tools_get_their_name() {
        check("mcp__github__create_issue", json!({"title": "x"}), "mcp__github__create_issue", RuleUse::Allow);
        check("WebSearch", json!({"query": "rust"}), "WebSearch", RuleUse::Allow);
        check("Task", json!({"prompt": "x"}), "Task", RuleUse::Allow);
    }
}
