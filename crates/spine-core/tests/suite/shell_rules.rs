//! `Bash(...)` rules decided on the parse of the command, through `PermissionPolicy::decide`
//! with the call facts computed as the runner computes them (write targets normalized against
//! the cwd, resolved through symlinks for the workspace boundary).
//!
//! The table lists each command with its verdict under one of three rule sets:
//! - `D`: deny `Bash(rm *)` in `bypassPermissions` mode — only the rule stands in the way;
//! - `A`: default mode with allow `Bash(echo *)`, `Bash(git status)`, `Bash(npm run test:*)`,
//!   `Bash(ls *)`, `Bash(cat *)`, `Bash(grep *)`, `Edit(logs/**)`, ask `Bash(git push *)`,
//!   deny `Bash(rm *)` and `Edit(secrets/**)`;
//! - `E`: `acceptEdits` mode with allow `Bash(echo *)`.

use std::path::Path;

use serde_json::{Map, json};
use spine_core::permission::policy::{resolve_write_paths, shell_analysis};
use spine_core::permission::{CallFacts, PermissionPolicy, PermissionRule, PermissionRules};
use spine_core::workspace::Workspace;
use spine_protocol::permission::{DecisionSource, PermissionBehavior, PermissionMode, PermissionSuggestion};
use spine_protocol::tool::Effect;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Set {
    D,
    A,
    E,
}

use PermissionBehavior::{Allow, Ask, Deny};
use Set::{A, D, E};

const B: &str = "Bash";
const X: &str = "exec_command";
const P: &str = "process_exec";

#[rustfmt::skip]
const TABLE: &[(Set, &str, &str, PermissionBehavior)] = &[
    // Every spelling of rm is caught by `Bash(rm *)`, even in bypass mode.
    (D, B, "rm x", Deny),
    (D, B, "rm", Deny),
    (D, B, "rm -rf /", Deny),
    (D, B, "/bin/rm x", Deny),
    (D, B, "/usr/bin/rm -f x", Deny),
    (D, B, "./rm x", Deny),
    (D, B, "command rm x", Deny),
    (D, B, "command -p rm x", Deny),
    (D, B, "builtin rm x", Deny),
    (D, B, "env rm x", Deny),
    (D, B, "env -i PATH=/bin rm x", Deny),
    (D, B, "env -u HOME rm x", Deny),
    (D, B, "exec rm x", Deny),
    (D, B, "exec -a name rm x", Deny),
    (D, B, "nice rm x", Deny),
    (D, B, "nice -n 10 rm x", Deny),
    (D, B, "nice -5 rm x", Deny),
    (D, B, "timeout 5 rm x", Deny),
    (D, B, "timeout -k 1 -s KILL 5 rm x", Deny),
    (D, B, "timeout --signal=TERM 5 rm x", Deny),
    (D, B, "nohup rm x", Deny),
    (D, B, "nohup rm x &", Deny),
    (D, B, "time rm x", Deny),
    (D, B, "time -p rm x", Deny),
    (D, B, "stdbuf -o0 rm x", Deny),
    (D, B, "stdbuf -oL -eL rm x", Deny),
    (D, B, "sudo rm x", Deny),
    (D, B, "sudo -u root -E rm x", Deny),
    (D, B, "setsid rm x", Deny),
    (D, B, "env nice timeout 5 nohup rm x", Deny),
    (D, B, "bash -c 'rm x'", Deny),
    (D, B, "sh -c \"rm x\"", Deny),
    (D, B, "zsh -c 'rm x'", Deny),
    (D, B, "dash -c 'rm x'", Deny),
    (D, B, "bash -lc 'rm x'", Deny),
    (D, B, "/bin/bash -e -c 'ls; rm x' argv0", Deny),
    (D, B, "bash -c \"sh -c 'rm x'\"", Deny),
    (D, B, "sudo sh -c 'rm x'", Deny),
    (D, B, "echo x | xargs rm", Deny),
    (D, B, "xargs rm < list", Deny),
    (D, B, "xargs -0 -n1 rm -f < list", Deny),
    (D, B, "xargs -I{} rm {} < list", Deny),
    (D, B, "echo x | xargs sh -c 'rm x'", Deny),
    (D, B, "find . -exec rm {} \\;", Deny),
    (D, B, "find . -name '*.o' -execdir rm -f {} +", Deny),
    (D, B, "find . -ok rm {} ';'", Deny),
    (D, B, "find build -delete", Deny),
    (D, B, "$(rm x)", Deny),
    (D, B, "`rm x`", Deny),
    (D, B, "echo $(rm x)", Deny),
    (D, B, "echo \"$(rm x)\"", Deny),
    (D, B, "echo $(echo $(rm x))", Deny),
    (D, B, "cat <(rm x)", Deny),
    (D, B, "tee >(rm x) < /dev/null", Deny),
    (D, B, "(rm x)", Deny),
    (D, B, "{ rm x; }", Deny),
    (D, B, "if true; then rm x; fi", Deny),
    (D, B, "if rm x; then :; fi", Deny),
    (D, B, "while true; do rm x; done", Deny),
    (D, B, "until false; do rm x; done", Deny),
    (D, B, "for f in a b; do rm $f; done", Deny),
    (D, B, "case a in a) rm x;; esac", Deny),
    (D, B, "f() { rm x; }; f", Deny),
    (D, B, "! rm x", Deny),
    (D, B, "\\rm x", Deny),
    (D, B, "\"rm\" x", Deny),
    (D, B, "r''m x", Deny),
    (D, B, "$'rm' x", Deny),
    (D, B, "$'\\x72\\x6d' x", Deny),
    (D, B, "'rm' x", Deny),
    (D, B, "r\"m\" x", Deny),
    (D, B, "FOO=1 rm x", Deny),
    (D, B, "A=1 B=2 rm x", Deny),
    (D, B, "ls && rm x", Deny),
    (D, B, "ls || rm x", Deny),
    (D, B, "ls; rm x", Deny),
    (D, B, "ls | rm x", Deny),
    (D, B, "ls & rm x", Deny),
    (D, B, "ls\nrm x", Deny),
    (D, B, "rm \"a\nb\"", Deny),
    (D, B, "X=$(rm x)", Deny),
    (D, B, "export X=`rm x`", Deny),
    (D, B, "trap 'rm x' EXIT", Deny),
    (D, B, "timeout 5 bash -c 'find . -delete'", Deny),
    (D, B, "rm x &&", Deny),
    (D, B, "eval x; rm y", Deny),
    (D, X, "rm x", Deny),
    (D, X, "bash -c 'rm x'", Deny),
    (D, X, "echo $(rm x)", Deny),
    (D, P, "rm x", Deny),
    (D, P, "env rm x", Deny),
    (D, P, "sleep 1; \\rm x", Deny),
    // What cannot be seen through asks while a command rule applies.
    (D, B, "eval rm x", Ask),
    (D, B, "eval \"$X\"", Ask),
    (D, B, "$CMD x", Ask),
    (D, B, "${CMD} x", Ask),
    (D, B, "\"$(echo rm)\" x", Ask),
    (D, B, "`echo rm` x", Ask),
    (D, B, "source s.sh", Ask),
    (D, B, ". s.sh", Ask),
    (D, B, "bash -c \"$X\"", Ask),
    (D, B, "sh -c $X", Ask),
    (D, B, "echo rm x | bash", Ask),
    (D, B, "bash <<< 'rm x'", Ask),
    (D, B, "python3 <<EOF\nimport os\nEOF", Ask),
    (D, B, "/bin/r? x", Ask),
    (D, B, "/bin/r[m] x", Ask),
    (D, B, "{rm,x}", Ask),
    (D, B, "timeout --bogus 5 rm x", Ask),
    (D, B, "env -S 'rm x'", Ask),
    (D, B, "echo 'unterminated", Ask),
    (D, X, "eval rm x", Ask),
    (D, P, "$CMD", Ask),
    // Look-alikes do not match, and bypass mode allows them.
    (D, B, "echo \"rm -rf x\"", Allow),
    (D, B, "grep rm file", Allow),
    (D, B, "echo rm", Allow),
    (D, B, "git commit -m \"rm x\"", Allow),
    (D, B, "cat rm.txt", Allow),
    (D, B, "rmdir x", Allow),
    (D, B, "command -v rm", Allow),
    (D, B, "which rm", Allow),
    (D, B, "man rm", Allow),
    (D, B, "find . -name rm", Allow),
    (D, B, "grep -r 'rm -rf' .", Allow),
    (D, B, "echo 'a; rm x'", Allow),
    (D, B, "printf '%s\\n' '$(rm x)'", Allow),
    (D, B, "echo x > out.txt", Allow),
    (D, X, "ls -la", Allow),
    // Write targets outside the workspace are a hard deny, whatever the mode.
    (D, B, "echo PWNED > ../outside.txt", Deny),
    (D, B, "echo x >> /etc/passwd", Deny),
    (D, B, "echo x | tee /tmp/spine-outside", Deny),
    (D, B, "echo x > link/escape", Deny),
    (D, X, "echo x &> ../o", Deny),
    // Allow rules cover a command only when every part is covered.
    (A, B, "echo hi", Allow),
    (A, B, "echo", Allow),
    (A, B, "echo \"a b\" 'c'", Allow),
    (A, B, "echo $HOME", Allow),
    (A, B, "echo *", Allow),
    (A, B, "echo $(echo hi)", Allow),
    (A, B, "echo `echo hi`", Allow),
    (A, B, "git status", Allow),
    (A, B, "npm run test", Allow),
    (A, B, "npm run test -- --watch", Allow),
    (A, B, "ls -la", Allow),
    (A, B, "ls && echo done", Allow),
    (A, B, "echo a | grep a", Allow),
    (A, B, "cat f | grep x", Allow),
    (A, B, "git status && echo ok", Allow),
    (A, B, "FOO=1 echo hi", Allow),
    (A, B, "(echo hi)", Allow),
    (A, B, "{ echo a; echo b; }", Allow),
    (A, B, "ls 2>&1", Allow),
    (A, B, "echo x > /dev/null", Allow),
    (A, B, "echo x > logs/a.txt", Allow),
    (A, B, "echo x | tee -a logs/b.txt", Ask),
    (A, B, "echo x > logs/a.txt 2>&1", Allow),
    (A, X, "echo hi", Allow),
    (A, P, "ls", Allow),
    (A, B, "echo x; curl y", Ask),
    (A, B, "echo $(curl x)", Ask),
    (A, B, "echo `curl x`", Ask),
    (A, B, "echo \"$(curl x)\"", Ask),
    (A, B, "cat <(curl x)", Ask),
    (A, B, "echo hi & curl x", Ask),
    (A, B, "eval echo", Ask),
    (A, B, "$CMD", Ask),
    (A, B, "bash -c \"$X\"", Ask),
    (A, B, "bash -c 'echo hi'", Ask),
    (A, B, "echo x | sh", Ask),
    (A, B, "timeout 5 echo hi", Ask),
    (A, B, "git status --short", Ask),
    (A, B, "git statusx", Ask),
    (A, B, "npm run test:unit", Ask),
    (A, B, "npm run build", Ask),
    (A, B, "./echo hi", Ask),
    (A, B, "/bin/echo hi", Ask),
    (A, B, "true", Ask),
    (A, B, "echo x > out.txt", Ask),
    (A, B, "echo x | tee out.txt", Ask),
    (A, B, "echo x > $F", Ask),
    (A, B, "python3 -c 'print(1)'", Ask),
    (A, B, "git push origin main", Ask),
    (A, B, "git push", Ask),
    (A, B, "echo ok && git push", Ask),
    (A, X, "curl x", Ask),
    (A, B, "echo $(rm victim)", Deny),
    (A, B, "echo `rm victim`", Deny),
    (A, B, "git status; rm -rf .", Deny),
    (A, B, "echo x | xargs rm", Deny),
    (A, B, "echo PWNED > ../outside.txt", Deny),
    (A, B, "echo x > secrets/key", Deny),
    (A, B, "echo x | tee secrets/key", Deny),
    (A, B, "echo x > inner/key", Deny),
    (A, B, "echo x > logs/../secrets/key", Deny),
    (A, P, "echo hi > ../../x", Deny),
    // acceptEdits lets allowed commands write inside the workspace.
    (E, B, "echo x > out.txt", Allow),
    (E, B, "echo x | tee out.txt", Ask),
    (E, B, "echo x > ../out.txt", Deny),
    (E, B, "ls > out.txt", Ask),
];

fn rules(list: &[&str]) -> Vec<PermissionRule> {
    list.iter().map(|r| PermissionRule::parse(r).expect("valid rule")).collect()
}

fn policy(set: Set, root: &Path) -> PermissionPolicy {
    let (allow, ask, deny, mode) = match set {
        D => (vec![], vec![], vec!["Bash(rm *)"], PermissionMode::BypassPermissions),
        A => (
            vec![
                "Bash(echo *)",
                "Bash(git status)",
                "Bash(npm run test:*)",
                "Bash(ls *)",
                "Bash(cat *)",
                "Bash(grep *)",
                "Edit(logs/**)",
            ],
            vec!["Bash(git push *)"],
            vec!["Bash(rm *)", "Edit(secrets/**)"],
            PermissionMode::Default,
        ),
        E => (vec!["Bash(echo *)"], vec![], vec![], PermissionMode::AcceptEdits),
    };
    PermissionPolicy::new(
        PermissionRules { allow: rules(&allow), ask: rules(&ask), deny: rules(&deny) },
        mode,
        root.to_path_buf(),
    )
}

/// Decides one call the way the runner does: parse once, normalize write targets against the
/// cwd, resolve them for the workspace boundary.
fn decide(policy: &PermissionPolicy, workspace: &Workspace, tool: &str, command: &str) -> (PermissionBehavior, String) {
    let cwd = workspace.root();
    let mut args = Map::new();
    args.insert("command".into(), json!(command));
    let shell = shell_analysis(tool, &args);
    let targets = shell.as_ref().map(|a| a.write_paths(cwd)).unwrap_or_default();
    let (write_paths, boundary) = resolve_write_paths(workspace, cwd, targets);
    let facts = CallFacts {
        boundary: boundary.as_ref(),
        write_paths: &write_paths,
        shell: shell.as_ref(),
        ..CallFacts::new(tool, Effect::Execute, &args)
    };
    let decision = policy.decide(facts, &PermissionSuggestion::Passthrough, None);
    (decision.behavior, decision.reason)
}

#[test]
fn bash_rules_decide_on_the_parsed_command_table() {
    assert!(TABLE.len() >= 150, "{} rows", TABLE.len());
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink("/tmp", dir.path().join("link")).expect("symlink");
    std::fs::create_dir(dir.path().join("secrets")).expect("secrets");
    std::os::unix::fs::symlink("secrets", dir.path().join("inner")).expect("symlink");
    let workspace = Workspace::new(dir.path()).expect("workspace");
    let policies = [D, A, E].map(|s| (s, policy(s, workspace.root())));
    let mut failures = Vec::new();
    for (set, tool, command, expected) in TABLE {
        let policy = &policies.iter().find(|(s, _)| s == set).expect("set").1;
        let (got, reason) = decide(policy, &workspace, tool, command);
        if got != *expected {
            failures.push(format!("{set:?} {tool} {command:?}: expected {expected:?}, got {got:?} ({reason})"));
        }
    }
    assert!(failures.is_empty(), "{} of {} rows wrong:\n{}", failures.len(), TABLE.len(), failures.join("\n"));
}

#[test]
fn deny_rule_catches_rm_behind_env_wrapper_and_names_the_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = Workspace::new(dir.path()).expect("workspace");
    let p = policy(D, workspace.root());
    let mut args = Map::new();
    args.insert("command".into(), json!("env rm x"));
    let d = p.decide(CallFacts::new("Bash", Effect::Execute, &args), &PermissionSuggestion::Passthrough, None);
    assert_eq!((d.behavior, d.source), (Deny, DecisionSource::Rule { rule: "Bash(rm *)".into() }));
}

#[test]
fn allow_names_every_rule_that_covered_a_part() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = Workspace::new(dir.path()).expect("workspace");
    let p = policy(A, workspace.root());
    let mut args = Map::new();
    args.insert("command".into(), json!("ls && echo done"));
    let d = p.decide(CallFacts::new("Bash", Effect::Execute, &args), &PermissionSuggestion::Passthrough, None);
    assert_eq!(d.behavior, Allow);
    assert_eq!(d.source, DecisionSource::Rule { rule: "Bash(ls *), Bash(echo *)".into() });
}

#[test]
fn bare_bash_allow_rule_still_needs_write_targets_covered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = Workspace::new(dir.path()).expect("workspace");
    let p = PermissionPolicy::new(
        PermissionRules { allow: rules(&["Bash"]), ..Default::default() },
        PermissionMode::Default,
        workspace.root().to_path_buf(),
    );
    assert_eq!(decide(&p, &workspace, B, "eval anything").0, Allow);
    assert_eq!(decide(&p, &workspace, B, "echo x > out.txt").0, Ask);
}
