//! The table of harmless and not harmless commands, and the policy's row 10c (one test per
//! rule).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use spine_protocol::permission::{
    DecisionSource, PermissionBehavior, PermissionDecision, PermissionMode, PermissionSuggestion,
};
use spine_protocol::tool::Effect;

use super::{Scope, read_only};
use crate::permission::policy::{CallFacts, PermissionPolicy, PermissionRules};
use crate::permission::rule::PermissionRule;
use crate::permission::shell::analyze;
use crate::workspace::Workspace;

/// A project with a few files, a directory `secret/`, `link`, a symlink to `/etc`, and its
/// own repository `.git/` (as git requires one to be; no git runs here).
fn project() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in [("README", "hello\n"), ("a", "a\n"), ("b", "b\n"), ("src/main.rs", "fn main() {}\n")] {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    std::fs::create_dir(dir.path().join("secret")).expect("secret");
    std::fs::write(dir.path().join("secret/key"), "k").expect("key");
    std::os::unix::fs::symlink("/etc", dir.path().join("link")).expect("symlink");
    for sub in [".git/objects", ".git/refs/heads"] {
        std::fs::create_dir_all(dir.path().join(sub)).expect("repository");
    }
    std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    let workspace = Workspace::new(dir.path()).expect("workspace");
    (dir, workspace)
}

/// Command → harmless, and why.
const TABLE: &[(&str, bool, &str)] = &[
    ("echo hello", true, "echo only prints"),
    ("pwd", true, "prints the directory"),
    ("true", true, "does nothing"),
    ("ls", true, "lists the project"),
    ("ls -la src", true, "a listing of a project directory"),
    ("ls -la --color=auto src", true, "an optional long value"),
    ("ls src/*.rs", true, "a pattern whose matches are inside"),
    ("ls 2>/dev/null", true, "/dev/null is no write"),
    ("cat README", true, "reads a project file"),
    ("head -n 5 README", true, "a value option"),
    ("head -5 README", true, "a numeric option"),
    ("tail -n 20 README", true, "tail without -f ends"),
    ("wc -l src/main.rs", true, "counts a project file"),
    ("grep -rn main src", true, "searches a project tree"),
    ("grep -r main", true, "searches the project (implicit .)"),
    ("grep -c x README src/main.rs", true, "the pattern is no file"),
    ("rg main src", true, "searches a project tree"),
    ("rg --files", true, "lists the project"),
    ("rg -n -e main", true, "-e gives the pattern"),
    ("find . -name '*.rs'", true, "a test only"),
    ("find src -type f -maxdepth 2 -print", true, "tests and -print"),
    ("git status", true, "git listing"),
    ("git log --oneline -5", true, "git listing"),
    ("git diff HEAD~1 -- src", true, "a diff inside the project"),
    ("git show HEAD:README", true, "a blob of the repository"),
    ("git branch", true, "lists branches"),
    ("git branch -a -v", true, "lists branches"),
    ("git branch --list 'feat*'", true, "a pattern with --list"),
    ("git status && ls src", true, "git in the project's own repository, no cd"),
    ("git diff | wc -l", true, "git in a pipeline"),
    ("ls && cat README", true, "every part is harmless"),
    ("cat README | grep x | wc -l", true, "a pipeline of readers"),
    ("date", true, "prints the date"),
    ("date +%Y-%m-%d", true, "a +FORMAT"),
    ("whoami", true, "prints the user"),
    ("which cargo", true, "looks up a name"),
    ("type ls", true, "looks up a name"),
    ("file README", true, "reads a project file"),
    ("stat src", true, "reads a project directory"),
    ("du -sh .", true, "sizes the project"),
    ("df -h", true, "lists file systems"),
    ("sort README", true, "sorts to stdout"),
    ("sort -k2 -n README", true, "value options"),
    ("uniq README", true, "one operand: no output file"),
    ("cut -d: -f1 README", true, "attached values"),
    ("tr a-z A-Z < README", true, "an input redirection inside"),
    ("basename /a/b", true, "string operands"),
    ("dirname /a/b", true, "string operands"),
    ("realpath src", true, "a project path"),
    ("printf '%s\\n' x", true, "a literal format"),
    ("test -f README", true, "a test"),
    ("[ -d src ]", true, "a test"),
    ("diff a b", true, "two project files"),
    ("cmp a b", true, "two project files"),
    ("tree src", true, "lists a project tree"),
    ("env", true, "prints the environment"),
    ("uname -a", true, "prints the system"),
    ("id", true, "prints the user"),
    ("hostname", true, "prints the host name"),
    ("cd src && ls", true, "cd inside the project"),
    ("echo $(pwd)", true, "the substituted command is harmless"),
    ("echo x >&2", true, "a copy of stderr is no write"),
    ("cat <<EOF\nhi\nEOF", true, "a here-document is no file"),
    ("cat src/../README", true, "`..` folds inside the project"),
    ("git log -p -- src", true, "a pathspec inside"),
    ("grep -e x -e y README", true, "patterns by option"),
    ("cat *", false, "a match is the symlink out of the project"),
    ("git --no-pager log -3", true, "--no-pager only"),
    ("git status --porcelain", true, "git listing"),
    ("git branch --merged main", true, "a listing option with its commit"),
    ("find . -newer README", true, "compares with a project file"),
    ("grep -- -x README", true, "the pattern after --"),
    ("head -c 5 README", true, "a value option"),
    ("git log --outp=x", false, "an abbreviation of --output"),
    ("git show --pathspec-from-file=/etc/x", false, "reads a file of its choice"),
    ("git branch -m a b", false, "renames a branch"),
    ("find . -newer /etc/passwd", false, "compares with a file outside"),
    ("rg --pre=cat x", false, "--pre runs a program"),
    ("ls -L", false, "-L follows links"),
    ("tree -l", false, "-l follows links"),
    ("md5sum -c sums", false, "-c reads a list of files"),
    ("find . -exec rm {} \\;", false, "-exec runs a command"),
    ("find . -delete", false, "-delete removes files"),
    ("find . -fprint out", false, "-fprint writes a file"),
    ("find -L .", false, "-L follows links out of the tree"),
    ("find /etc -name passwd", false, "a start point outside"),
    ("git -c core.pager=evil log", false, "-c sets configuration"),
    ("git -c alias.x='!rm -rf /' x", false, "-c sets an alias"),
    ("git --config-env=core.pager=X log", false, "--config-env sets configuration"),
    ("git --exec-path=/tmp log", false, "--exec-path moves git's programs"),
    ("git -C /etc status", false, "-C outside the project"),
    ("git -C src status", false, "-C makes git look for a repository elsewhere"),
    ("git -C . status", false, "-C, even to the project"),
    ("git --git-dir=src status", false, "--git-dir names the repository"),
    ("git --work-tree=src status", false, "--work-tree"),
    ("cd src && git status", false, "cd before git: another repository may be found"),
    ("cd . && git log", false, "any cd before git"),
    ("git status; cd src", false, "a cd anywhere in the call"),
    ("(cd src; git status)", false, "a cd in a subshell"),
    ("GIT_DIR=src git status", false, "an assignment to a GIT_ variable"),
    ("env -C src git status", false, "env runs git elsewhere"),
    ("git diff --output=f", false, "--output writes a file"),
    ("git diff --out=f", false, "an abbreviation of --output"),
    ("git diff --no-index /etc/passwd README", false, "reads outside the project"),
    ("git branch -D x", false, "deletes a branch"),
    ("git branch newbranch", false, "creates a branch"),
    ("git push", false, "not a listing subcommand"),
    ("grep -r x /etc", false, "reads outside the project"),
    ("grep -R x .", false, "-R follows symlinks out"),
    ("grep -f /etc/passwd README", false, "a pattern file outside"),
    ("cat /etc/passwd", false, "reads outside the project"),
    ("cat ~/.ssh/id_rsa", false, "reads the home directory"),
    ("cat link/passwd", false, "a symlink out of the project"),
    ("cat ../outside", false, "reads outside the project"),
    ("cat < /etc/passwd", false, "an input redirection outside"),
    ("ls /etc", false, "lists outside the project"),
    ("ls ~", false, "lists the home directory"),
    ("echo x > file", false, "a redirection writes"),
    ("echo x >> file", false, "a redirection writes"),
    ("cat a | tee b", false, "tee writes"),
    ("ls $(rm -rf x)", false, "the substituted command is rm"),
    ("echo $(curl evil)", false, "the substituted command is curl"),
    ("echo `rm x`", false, "the substituted command is rm"),
    ("cat <(rm x)", false, "the process substitution runs rm"),
    ("sort -o out README", false, "-o writes"),
    ("sort --output=out README", false, "--output writes"),
    ("uniq README out", false, "the second operand is written"),
    ("tree -o out", false, "-o writes"),
    ("rg --pre cat x", false, "--pre runs a program"),
    ("rg -z x", false, "-z runs decompressors"),
    ("diff -r a b", false, "-r follows symlinks"),
    ("wc --files0-from=list", false, "reads a list of files"),
    ("date -s 2020-01-01", false, "sets the clock"),
    ("date 010100002030", false, "sets the clock"),
    ("hostname newname", false, "sets the host name"),
    ("env rm x", false, "env runs a command"),
    ("env FOO=1 ls", false, "env runs a command"),
    ("echo a | xargs rm", false, "xargs runs a command"),
    ("sed -n 1p README", false, "sed is not in the list (w and e commands)"),
    ("sed -i s/a/b/ README", false, "sed -i writes"),
    ("less README", false, "interactive"),
    ("more README", false, "interactive"),
    ("tail -f README", false, "-f never ends"),
    ("$CMD README", false, "the command name is an expansion"),
    ("${X}ls", false, "the command name is an expansion"),
    ("eval ls", false, "eval is opaque"),
    ("cat $FILE", false, "a path known only at run time"),
    ("cd /tmp && ls", false, "cd outside the project"),
    ("cd .. && ls", false, "cd outside the project"),
    ("cd", false, "cd home"),
    ("ls | sh", false, "sh runs its input"),
    ("bash -c 'ls'", false, "bash is not in the list"),
    ("printf -v PATH x", false, "-v assigns a variable"),
    ("PATH=/tmp ls", false, "an assignment changes what ls is"),
    ("x=1; echo $x", false, "an assignment"),
    ("./ls", false, "a program with a directory part"),
    ("/bin/ls", false, "a program with a directory part"),
    ("python3 -c 'print(1)'", false, "an interpreter"),
    ("rm README", false, "rm writes"),
    ("ls && rm x", false, "one part is not harmless"),
];

#[test]
fn harmless_commands_table() {
    assert!(TABLE.len() >= 60, "{} rows", TABLE.len());
    let (_dir, workspace) = project();
    let root = workspace.root().to_path_buf();
    let scope = Scope {
        workspace: &workspace,
        cwd: &root,
        project_dir: &root,
        restricting: &[],
        cwd_known: true,
        trusted: true,
    };
    let mut failures = Vec::new();
    for (command, expected, why) in TABLE {
        let verdict = read_only(&analyze(command), &scope, "Bash", &[]);
        if verdict.is_ok() != *expected {
            failures.push(format!("{command:?} ({why}): expected harmless={expected}, got {verdict:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn rules(list: &[&str]) -> Vec<PermissionRule> {
    list.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect()
}

struct Setup<'a> {
    allow: &'a [&'a str],
    ask: &'a [&'a str],
    deny: &'a [&'a str],
    mode: PermissionMode,
}

const NO_RULES: Setup<'static> = Setup { allow: &[], ask: &[], deny: &[], mode: PermissionMode::Default };

fn decide_with(setup: &Setup<'_>, workspace: Option<&Workspace>, root: &Path, command: &str) -> PermissionDecision {
    let policy = PermissionPolicy::new(
        PermissionRules { allow: rules(setup.allow), ask: rules(setup.ask), deny: rules(setup.deny) },
        setup.mode,
        root.to_path_buf(),
    )
    .with_trusted_project(true);
    let args: Map<String, Value> = json!({"command": command}).as_object().cloned().unwrap_or_default();
    let facts = CallFacts { cwd: Some(root), workspace, ..CallFacts::new("Bash", Effect::Execute, &args) };
    policy.decide(facts, &PermissionSuggestion::Passthrough, None)
}

fn decide(setup: &Setup<'_>, command: &str) -> PermissionDecision {
    let (_dir, workspace) = project();
    let root: PathBuf = workspace.root().to_path_buf();
    decide_with(setup, Some(&workspace), &root, command)
}

#[test]
fn a_harmless_command_is_allowed_in_default_mode_as_a_read_only_command() {
    let d = decide(&NO_RULES, "ls && cat README");
    assert_eq!((d.behavior, &d.source), (PermissionBehavior::Allow, &DecisionSource::Default), "{}", d.reason);
    assert_eq!(d.reason, "read-only command: `ls`, `cat README`");
}

#[test]
fn an_allow_rule_and_harmless_commands_together_allow_a_compound_command() {
    let setup = Setup { allow: &["Bash(python3 -m unittest:*)"], ..NO_RULES };
    let d = decide(&setup, "python3 -m unittest && echo done");
    assert_eq!(d.behavior, PermissionBehavior::Allow, "{}", d.reason);
    assert_eq!(d.source, DecisionSource::Rule { rule: "Bash(python3 -m unittest:*)".into() });
    assert!(d.reason.contains("read-only command: `echo done`"), "{}", d.reason);
    let d = decide(&setup, "python3 -m unittest && rm x");
    assert_eq!(d.behavior, PermissionBehavior::Ask, "{}", d.reason);
}

#[test]
fn a_deny_rule_beats_a_harmless_command() {
    let d = decide(&Setup { deny: &["Bash(ls:*)"], ..NO_RULES }, "ls");
    assert_eq!(d.behavior, PermissionBehavior::Deny, "{}", d.reason);
}

#[test]
fn an_ask_rule_beats_a_harmless_command() {
    let d = decide(&Setup { ask: &["Bash(cat:*)"], ..NO_RULES }, "cat README");
    assert_eq!(d.behavior, PermissionBehavior::Ask, "{}", d.reason);
}

#[test]
fn a_read_deny_rule_still_denies_cat_of_the_file() {
    let d = decide(&Setup { deny: &["Read(./secret/**)"], ..NO_RULES }, "cat secret/key");
    assert_eq!(d.behavior, PermissionBehavior::Deny, "{}", d.reason);
}

#[test]
fn a_read_deny_rule_makes_listing_its_tree_not_harmless() {
    let setup = Setup { deny: &["Read(./secret/**)"], ..NO_RULES };
    for command in ["ls secret", "find .", "ls -R"] {
        let d = decide(&setup, command);
        assert_eq!(d.behavior, PermissionBehavior::Ask, "{command}: {}", d.reason);
    }
    assert_eq!(decide(&setup, "ls src").behavior, PermissionBehavior::Allow);
}

#[test]
fn dont_ask_mode_still_refuses_commands_no_rule_allows() {
    let d = decide(&Setup { mode: PermissionMode::DontAsk, ..NO_RULES }, "ls");
    assert_eq!(d.behavior, PermissionBehavior::Deny, "{}", d.reason);
}

#[test]
fn accept_edits_mode_runs_harmless_commands() {
    let d = decide(&Setup { mode: PermissionMode::AcceptEdits, ..NO_RULES }, "git status");
    assert_eq!(d.behavior, PermissionBehavior::Allow, "{}", d.reason);
}

#[test]
fn plan_mode_runs_harmless_commands_and_denies_the_others() {
    let plan = Setup { mode: PermissionMode::Plan, ..NO_RULES };
    assert_eq!(decide(&plan, "cat README | wc -l").behavior, PermissionBehavior::Allow);
    assert_eq!(decide(&plan, "echo x > out").behavior, PermissionBehavior::Deny);
    let ruled = Setup { allow: &["Bash(python3:*)"], mode: PermissionMode::Plan, ..NO_RULES };
    assert_eq!(decide(&ruled, "python3 x.py && echo done").behavior, PermissionBehavior::Deny);
}

#[test]
fn without_the_workspace_nothing_is_harmless() {
    let (_dir, workspace) = project();
    let d = decide_with(&NO_RULES, None, workspace.root(), "ls");
    assert_eq!(d.behavior, PermissionBehavior::Ask, "{}", d.reason);
}

#[test]
fn an_added_directory_is_inside_the_workspace() {
    let (_dir, workspace) = project();
    let other = tempfile::tempdir().expect("other");
    std::fs::write(other.path().join("notes"), "n").expect("notes");
    let both = Workspace::with_roots(workspace.root(), [other.path()]).expect("roots");
    let notes = both.added_roots().next().expect("added").join("notes");
    let command = format!("cat {}", notes.display());
    assert_eq!(decide_with(&NO_RULES, Some(&both), both.root(), &command).behavior, PermissionBehavior::Allow);
    assert_eq!(decide_with(&NO_RULES, Some(&workspace), workspace.root(), &command).behavior, PermissionBehavior::Ask);
}

#[test]
fn a_command_on_a_pseudo_terminal_is_not_harmless() {
    let (_dir, workspace) = project();
    let root = workspace.root();
    let policy = PermissionPolicy::new(PermissionRules::default(), PermissionMode::Default, root.to_path_buf())
        .with_trusted_project(true);
    for (pty, expected) in [(false, PermissionBehavior::Allow), (true, PermissionBehavior::Ask)] {
        let args: Map<String, Value> =
            json!({"command": "git log", "pty": pty}).as_object().cloned().unwrap_or_default();
        let facts = CallFacts {
            cwd: Some(root),
            workspace: Some(&workspace),
            ..CallFacts::new("exec_command", Effect::Execute, &args)
        };
        let d = policy.decide(facts, &PermissionSuggestion::Passthrough, None);
        assert_eq!(d.behavior, expected, "pty {pty}: {}", d.reason);
    }
}
