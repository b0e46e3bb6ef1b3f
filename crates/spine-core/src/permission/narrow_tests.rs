//! Tests of [`super::narrowest_rule`] and [`super::covering_rules`]: one per rule of the
//! contract, each checked through the rule parser and, where it allows, through the policy.

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
    // A computed word: an exact rule would spell the expansion, so none is made.
    assert_eq!(narrow("Bash", json!({"command": "git \"$SUB\" x"})), None);
}

#[test]
fn compound_wrapped_and_opaque_commands_get_the_exact_command() {
    check("Bash", json!({"command": "npm test && rm -rf build"}), "Bash(npm test && rm -rf build)", RuleUse::Restrict);
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
    assert_eq!(rules, ["Bash(timeout 5 npm test)", "Bash(npm test:*)"]);
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

/// The rules of `command` (covering rules) as the policy sees them: whether they allow `other`.
fn rules_of(command: &str) -> Option<Vec<String>> {
    covering_rules("Bash", &input(json!({"command": command})), Path::new(ROOT))
}

fn allows_call(rules: &[String], command: &str) -> bool {
    policy_allows(rules, "Bash", &json!({"command": command}))
}

#[test]
fn a_quoted_star_is_a_literal_no_rule_can_write_so_no_rule_is_offered() {
    for command in ["'*'", "\\*", "git '*'", "git \"*\" push", "python3 -c 'print(\"*\")'"] {
        assert_eq!(narrow("Bash", json!({"command": command})), None, "{command}");
        assert_eq!(rules_of(command), None, "{command}");
    }
    // The exact text of a compound command holds its glob: no rule; each part has its own.
    assert_eq!(narrow("Bash", json!({"command": "ls *.rs && rm x"})), None);
    assert_eq!(rules_of("ls *.rs && rm x").expect("rules"), ["Bash(ls:*)", "Bash(rm:*)"]);
    // A `*` beyond the words the rule keeps is not in the rule.
    check("Bash", json!({"command": "echo '*'"}), "Bash(echo:*)", RuleUse::Allow);
    check("Bash", json!({"command": "git add '*.rs'"}), "Bash(git add:*)", RuleUse::Allow);
}

#[test]
fn an_interpreter_or_shell_is_remembered_only_as_the_exact_command() {
    check("Bash", json!({"command": "python3 -c 'print(1)'"}), "Bash(python3 -c print(1))", RuleUse::Allow);
    check("Bash", json!({"command": "/usr/bin/perl -e 'print 1'"}), "Bash(/usr/bin/perl -e print 1)", RuleUse::Allow);
    check("Bash", json!({"command": "node build.js"}), "Bash(node build.js)", RuleUse::Allow);
    check("Bash", json!({"command": "awk 'NR==1' f"}), "Bash(awk NR==1 f)", RuleUse::Allow);
    let python = rules_of("python3 -c 'print(1)'").expect("rules");
    assert!(allows_call(&python, "python3 -c 'print(1)'"));
    for other in ["python3 -c 'import os'", "python3 evil.py", "python3"] {
        assert!(!allows_call(&python, other), "{other}");
    }
    let bash = rules_of("bash -c 'echo hi'").expect("rules");
    assert_eq!(bash, ["Bash(bash -c echo hi)", "Bash(echo:*)"]);
    assert!(allows_call(&bash, "bash -c 'echo hi'"));
    for other in ["bash /dev/stdin <<< 'rm victim'", "bash -c 'rm victim'", "bash x.sh", "bash", "sh -c 'echo hi'"] {
        assert!(!allows_call(&bash, other), "{other}");
    }
}

#[test]
fn a_wrapper_is_remembered_only_as_the_exact_command() {
    assert_eq!(rules_of("env A=1 ls -la").expect("rules"), ["Bash(env A=1 ls -la)", "Bash(ls:*)"]);
    assert_eq!(rules_of("sudo ls").expect("rules"), ["Bash(sudo ls)", "Bash(ls:*)"]);
    assert_eq!(rules_of("echo a | xargs ls").expect("rules"), ["Bash(echo:*)", "Bash(xargs ls)", "Bash(ls:*)"]);
    let sudo = rules_of("sudo ls").expect("rules");
    for other in ["sudo -s", "sudo bash", "sudo ls /root && sudo rm -rf /"] {
        assert!(!allows_call(&sudo, other), "{other}");
    }
}

#[test]
fn a_run_or_exec_subcommand_is_remembered_only_as_the_exact_command() {
    for (command, rule) in [
        ("npm run build", "Bash(npm run build)"),
        ("npm exec eslint", "Bash(npm exec eslint)"),
        ("npx prettier --write .", "Bash(npx prettier --write .)"),
        ("uv run pytest", "Bash(uv run pytest)"),
        ("docker run --rm alpine", "Bash(docker run --rm alpine)"),
        ("docker exec app ls", "Bash(docker exec app ls)"),
        ("go run .", "Bash(go run .)"),
        ("cargo run --bin x", "Bash(cargo run --bin x)"),
        ("pnpm dlx create-x", "Bash(pnpm dlx create-x)"),
        ("yarn dlx create-x", "Bash(yarn dlx create-x)"),
        ("bundle exec rake", "Bash(bundle exec rake)"),
        ("poetry run pytest", "Bash(poetry run pytest)"),
        ("pipx run black .", "Bash(pipx run black .)"),
    ] {
        check("Bash", json!({"command": command}), rule, RuleUse::Allow);
    }
    let build = rules_of("npm run build").expect("rules");
    assert!(!allows_call(&build, "npm run evil"));
    assert!(!allows_call(&build, "npm run build -- --exec 'rm victim'"));
    // Subcommands that run what the project defines keep their prefix rule.
    check("Bash", json!({"command": "npm test --watch"}), "Bash(npm test:*)", RuleUse::Allow);
    check("Bash", json!({"command": "cargo build --release"}), "Bash(cargo build:*)", RuleUse::Allow);
}

#[test]
fn an_exact_rule_that_would_spell_an_expansion_or_hide_a_character_is_not_made() {
    for command in [
        "python3 -c \"print('$HOME')\"",
        "python3 -c 'print(`x`)'",
        "bash -c 'echo $1' x",
        "python3 -c $'print(1)\\rprint(2)'",
        "python3 -c 'print(1)\nprint(2)'",
        "git -C \"$D\" status",
    ] {
        assert_eq!(rules_of(command), None, "{command}");
    }
}
