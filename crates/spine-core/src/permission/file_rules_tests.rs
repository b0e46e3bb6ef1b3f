//! `Read(...)`/`Edit(...)` rules on the files shell commands read and write, decided by the
//! policy against a real project directory.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use spine_protocol::permission::{PermissionBehavior, PermissionDecision, PermissionMode, PermissionSuggestion};
use spine_protocol::tool::Effect;

use crate::permission::{CallFacts, PermissionPolicy, PermissionRule, PermissionRules};

use PermissionBehavior::{Allow, Ask, Deny};

/// A project with a secret `.env`, a `README.md`, a `locked.txt`, a `sub/` directory, a
/// link to `.env` and an archive.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    for (file, text) in [(".env", "KEY=secret"), ("README.md", "hello"), ("locked.txt", "a"), ("sub/notes.txt", "n")] {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    std::os::unix::fs::symlink(root.join(".env"), root.join("envlink")).expect("link");
    (dir, root)
}

fn rules(list: &[&str]) -> Vec<PermissionRule> {
    list.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect()
}

struct Case<'a> {
    allow: &'a [&'a str],
    ask: &'a [&'a str],
    deny: &'a [&'a str],
    mode: PermissionMode,
}

const CAT_GREP_CP: &[&str] = &[
    "Bash(cat:*)",
    "Bash(grep:*)",
    "Bash(cp:*)",
    "Bash(head:*)",
    "Bash(sort:*)",
    "Bash(wc:*)",
    "Bash(rg:*)",
    "Bash(sed:*)",
    "Bash(echo:*)",
    "Bash(tee:*)",
    "Bash(cd:*)",
    "Bash(rm:*)",
    "Bash(tar:*)",
    "Bash(xargs:*)",
    "Bash(find:*)",
    "Bash(bash:*)",
    "Bash(diff:*)",
    "Bash(source:*)",
];

const READ_DENY: Case<'static> =
    Case { allow: CAT_GREP_CP, ask: &[], deny: &["Read(./.env)"], mode: PermissionMode::Default };
const EDIT_DENY: Case<'static> =
    Case { allow: CAT_GREP_CP, ask: &[], deny: &["Edit(./locked.txt)"], mode: PermissionMode::AcceptEdits };

fn decide_in(case: &Case<'_>, root: &Path, cwd: Option<&Path>, command: &str) -> PermissionDecision {
    let policy = PermissionPolicy::new(
        PermissionRules { allow: rules(case.allow), ask: rules(case.ask), deny: rules(case.deny) },
        case.mode,
        root.to_path_buf(),
    );
    let args: Map<String, Value> = json!({"command": command}).as_object().cloned().unwrap_or_default();
    let facts = CallFacts { cwd, ..CallFacts::new("Bash", Effect::Execute, &args) };
    policy.decide(facts, &PermissionSuggestion::Passthrough, None)
}

#[track_caller]
fn expect(case: &Case<'_>, root: &Path, rows: &[(&str, PermissionBehavior)]) {
    let mut failures = Vec::new();
    for (command, expected) in rows {
        let d = decide_in(case, root, None, command);
        if d.behavior != *expected {
            failures.push(format!("{command:?}: expected {expected:?}, got {:?} ({})", d.behavior, d.reason));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_read_deny_rule_covers_the_file_operands_of_cat() {
    let (_d, root) = project();
    let d = decide_in(&READ_DENY, &root, None, "cat .env");
    assert_eq!(d.behavior, Deny, "{}", d.reason);
    let env = root.join(".env");
    assert!(d.reason.contains("Read(./.env)") && d.reason.contains(&env.display().to_string()), "{}", d.reason);
    assert!(d.reason.contains("`cat` reads"), "{}", d.reason);
    expect(&READ_DENY, &root, &[("cat README.md", Allow), ("cat README.md .env", Deny)]);
}

#[test]
fn a_read_deny_rule_covers_every_reader_and_every_spelling_of_the_path() {
    let (_d, root) = project();
    let abs = format!("cat {}/.env", root.display());
    let dotdot = format!("cat {}/sub/../.env", root.display());
    expect(
        &READ_DENY,
        &root,
        &[
            ("grep KEY .env", Deny),
            ("grep -e KEY -- .env", Deny),
            ("grep KEY README.md", Allow),
            ("head -n 1 .env", Deny),
            ("cat ./sub/../.env", Deny),
            (&abs, Deny),
            (&dotdot, Deny),
            ("cat \".env\"", Deny),
            ("cat '.e'nv", Deny),
            ("cp .env out.txt", Deny),
            ("sort -o out.txt .env", Deny),
            ("wc -c < .env", Deny),
            ("diff README.md .env", Deny),
            ("bash -c 'cat .env'", Deny),
            ("echo x && cat .env", Deny),
            ("cat envlink", Deny),
            ("source .env", Deny),
        ],
    );
}

#[test]
fn a_glob_operand_is_expanded_against_the_workspace_as_bash_expands_it() {
    let (_d, root) = project();
    expect(
        &READ_DENY,
        &root,
        &[
            ("cat .e*", Deny),
            ("cat .[e]nv", Deny),
            ("cat .?nv", Deny),
            ("cat {.env,README.md}", Deny),
            ("cat sub/../.e*", Deny),
            ("cat *.md", Allow),
            ("cat sub/*", Allow),
            // `envlink` is a link to `.env`.
            ("cat *", Deny),
        ],
    );
}

#[test]
fn a_glob_operand_that_could_match_a_denied_file_is_opaque() {
    let (_d, root) = project();
    // Glob options the command itself changes, and a match that turns into an option.
    expect(&READ_DENY, &root, &[("shopt -s dotglob; cat *", Ask), ("GLOBIGNORE=x; cat *", Ask)]);
    let sub = root.join("sub");
    std::fs::write(sub.join("-n"), "").expect("write");
    for (command, expected) in [("cat *", Ask), ("cat -- *", Allow), ("cat ./*", Allow)] {
        let d = decide_in(&READ_DENY, &root, Some(&sub), command);
        assert_eq!(d.behavior, expected, "{command}: {}", d.reason);
    }
}

#[test]
fn a_computed_operand_under_a_read_deny_is_opaque() {
    let (_d, root) = project();
    expect(
        &READ_DENY,
        &root,
        &[
            ("cat $F", Ask),
            ("cat \"$(echo .env)\"", Ask),
            ("echo .env | xargs cat", Ask),
            ("find . -name .env -exec cat {} \\;", Ask),
            ("cat /proc/self/root/etc/hostname", Ask),
            ("eval cat .env", Ask),
            ("cd sub && cat ../.env", Ask),
        ],
    );
    let no_rules = Case { deny: &[], ..READ_DENY };
    expect(&no_rules, &root, &[("cat $F", Allow), ("cat .env", Allow)]);
}

#[test]
fn relative_operands_resolve_against_the_shell_cwd_and_literal_absolute_cd_targets() {
    let (_d, root) = project();
    let sub = root.join("sub");
    let d = decide_in(&READ_DENY, &root, Some(&sub), "cat ../.env");
    assert_eq!(d.behavior, Deny, "{}", d.reason);
    let d = decide_in(&READ_DENY, &root, Some(&sub), "cat .env");
    assert_eq!(d.behavior, Allow, "{}", d.reason);
    let cd = format!("cd {} && cat ../.env", sub.display());
    expect(&READ_DENY, &root, &[(&cd, Deny)]);
}

#[test]
fn a_tree_a_command_reads_recursively_holds_the_denied_file() {
    let (_d, root) = project();
    expect(
        &READ_DENY,
        &root,
        &[("grep -r KEY .", Deny), ("grep -r KEY sub", Allow), ("rg KEY", Deny), ("rg KEY sub", Allow)],
    );
    let anywhere = Case { deny: &["Read(.env)"], ..READ_DENY };
    expect(&anywhere, &root, &[("rg KEY sub", Allow), ("rg KEY", Deny), ("cat sub/.env", Deny)]);
}

#[test]
fn a_tree_hit_names_the_file_below_the_tree() {
    let (_d, root) = project();
    let d = decide_in(&READ_DENY, &root, None, "grep -rn KEY .");
    let env = root.join(".env").display().to_string();
    assert!(d.reason.contains(&format!("{env} (below {})", root.display())), "{}", d.reason);
    let anywhere = Case { deny: &["Read(.env)"], ..READ_DENY };
    std::fs::write(root.join("sub/.env"), "x").expect("write");
    let d = decide_in(&anywhere, &root, None, "rg KEY sub");
    assert_eq!(d.behavior, Deny, "{}", d.reason);
    assert!(d.reason.contains("sub/.env (below"), "{}", d.reason);
}

#[test]
fn sed_in_place_reads_and_writes_its_operands() {
    let (_d, root) = project();
    expect(
        &EDIT_DENY,
        &root,
        &[
            ("sed -i s/a/b/ locked.txt", Deny),
            ("sed --in-place=.bak s/a/b/ locked.txt", Deny),
            ("sed s/a/b/ locked.txt", Allow),
            ("sed -i s/a/b/ README.md", Allow),
        ],
    );
}

#[test]
fn an_edit_deny_rule_covers_redirections_tee_and_the_writers() {
    let (_d, root) = project();
    let d = decide_in(&EDIT_DENY, &root, None, "echo x > locked.txt");
    assert_eq!(d.behavior, Deny, "{}", d.reason);
    assert!(d.reason.contains("locked.txt") && d.reason.contains("Edit(./locked.txt)"), "{}", d.reason);
    expect(
        &EDIT_DENY,
        &root,
        &[
            ("echo x | tee locked.txt", Deny),
            ("sort -o locked.txt README.md", Deny),
            ("cp README.md locked.txt", Deny),
            ("rm locked.txt", Deny),
            ("rm -rf .", Deny),
            ("rm -rf sub", Allow),
            ("echo x > lock*", Deny),
            ("echo x > $F", Ask),
            ("tar -xf a.tar", Ask),
            ("cat locked.txt", Allow),
            ("echo x > out.txt", Allow),
        ],
    );
}

#[test]
fn a_deny_holds_in_bypass_mode_and_an_opaque_command_asks() {
    let (_d, root) = project();
    let bypass = Case { allow: &[], mode: PermissionMode::BypassPermissions, ..READ_DENY };
    expect(&bypass, &root, &[("cat .env", Deny), ("eval 'cat .env'", Ask), ("cat $F", Ask), ("cat README.md", Allow)]);
}

#[test]
fn an_ask_rule_for_a_file_asks_and_names_the_file() {
    let (_d, root) = project();
    let ask = Case { ask: &["Read(./.env)"], deny: &[], ..READ_DENY };
    let d = decide_in(&ask, &root, None, "grep KEY .env");
    assert_eq!(d.behavior, Ask, "{}", d.reason);
    assert!(d.reason.contains("Read(./.env)") && d.reason.contains("`grep` reads"), "{}", d.reason);
}

#[test]
fn allow_rules_for_files_never_allow_a_command() {
    let (_d, root) = project();
    let read_allow = Case { allow: &["Read(**)", "Edit(**)"], ask: &[], deny: &[], mode: PermissionMode::Default };
    expect(&read_allow, &root, &[("cat README.md", Ask), ("rm README.md", Ask)]);
}

#[test]
fn a_home_pattern_covers_tilde_operands() {
    let (_d, root) = project();
    let Some(home) = spine_protocol::home::user_home() else {
        return;
    };
    let case = Case { deny: &["Read(~/.ssh/**)"], ..READ_DENY };
    let abs = format!("cat {}/.ssh/id_rsa", home.display());
    expect(&case, &root, &[("cat ~/.ssh/id_rsa", Deny), (&abs, Deny), ("HOME=/x; cat ~/.ssh/id_rsa", Ask)]);
}
