//! Where `git` is harmless: one test per condition of the module contract, through the policy
//! (row 10c) and, for the reason, through [`read_only`].

use std::path::Path;

use serde_json::{Map, Value, json};
use spine_protocol::permission::{
    DecisionSource, PermissionBehavior, PermissionDecision, PermissionMode, PermissionSuggestion,
};
use spine_protocol::tool::Effect;

use crate::permission::harmless::{Scope, read_only};
use crate::permission::policy::{CallFacts, PermissionPolicy, PermissionRules};
use crate::permission::rule::PermissionRule;
use crate::permission::shell::analyze;
use crate::workspace::Workspace;

/// Makes `dir` look like a repository to git (`HEAD`, `objects/`, `refs/`, a `config` that
/// would run a program on `git status`); no git runs here.
fn repository_at(dir: &Path) {
    for sub in ["objects", "refs/heads"] {
        std::fs::create_dir_all(dir.join(sub)).expect("repository");
    }
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::write(
        dir.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = ./evil\n",
    )
    .expect("config");
}

/// A project with `README`, `src/`, its own `.git/` and `sub/`, a directory that looks like a
/// bare repository.
fn project() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("src")).expect("src");
    std::fs::write(dir.path().join("README"), "hello\n").expect("README");
    repository_at(&dir.path().join(".git"));
    repository_at(&dir.path().join("sub"));
    let workspace = Workspace::new(dir.path()).expect("workspace");
    (dir, workspace)
}

fn args(command: &str) -> Map<String, Value> {
    json!({ "command": command }).as_object().cloned().unwrap_or_default()
}

/// The policy's decision for `command` run in `cwd` (`None`: not known), in the default mode.
fn decide(
    workspace: &Workspace,
    cwd: Option<&Path>,
    trusted: bool,
    allow: &[&str],
    command: &str,
) -> PermissionDecision {
    let allow = allow.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect();
    let rules = PermissionRules { allow, ..PermissionRules::default() };
    let policy = PermissionPolicy::new(rules, PermissionMode::Default, workspace.root().to_path_buf())
        .with_trusted_project(trusted);
    let args = args(command);
    let facts = CallFacts { cwd, workspace: Some(workspace), ..CallFacts::new("Bash", Effect::Execute, &args) };
    policy.decide(facts, &PermissionSuggestion::Passthrough, None)
}

/// Asserts `command`, run in `cwd` of a trusted project, is not harmless and why.
fn refused(workspace: &Workspace, cwd: &Path, command: &str, why: &str) {
    let d = decide(workspace, Some(cwd), true, &[], command);
    assert_eq!(d.behavior, PermissionBehavior::Ask, "{command}: {}", d.reason);
    let scope =
        Scope { workspace, cwd, project_dir: workspace.root(), restricting: &[], cwd_known: true, trusted: true };
    let verdict = read_only(&analyze(command), &scope, "Bash", &[]);
    let reason = verdict.err().unwrap_or_default();
    assert!(reason.contains(why), "{command}: {reason:?} does not say {why:?}");
}

fn allowed(d: &PermissionDecision) -> bool {
    d.behavior == PermissionBehavior::Allow
}

#[test]
fn git_in_the_trusted_projects_own_repository_is_harmless() {
    let (_dir, ws) = project();
    for command in ["git status", "git log --oneline -3 && git diff", "ls && git branch", "git show HEAD:README"] {
        let d = decide(&ws, Some(ws.root()), true, &[], command);
        assert_eq!((d.behavior, &d.source), (PermissionBehavior::Allow, &DecisionSource::Default), "{command}");
    }
    let d = decide(&ws, Some(ws.root()), true, &[], "git status");
    assert_eq!(d.reason, "read-only command: `git status`");
}

#[test]
fn git_in_a_directory_without_its_own_dot_git_is_not_harmless() {
    let (_dir, ws) = project();
    let (root, src, sub) = (ws.root().to_path_buf(), ws.root().join("src"), ws.root().join("sub"));
    refused(&ws, &src, "git status", "src/.git, so git would look for a repository elsewhere");
    refused(&ws, &sub, "git status", "sub/.git, so git would look for a repository elsewhere");
    assert!(allowed(&decide(&ws, Some(&src), true, &[], "ls")), "other commands stay harmless there");
    std::fs::remove_dir_all(root.join(".git")).expect("remove .git");
    refused(&ws, &root, "git log", "so git would look for a repository elsewhere");
}

#[test]
fn git_after_cd_is_not_harmless() {
    let (_dir, ws) = project();
    let root = ws.root();
    for command in
        ["cd sub && git status", "cd src; git diff", "cd . && git log", "(cd sub; git status)", "git status; cd src"]
    {
        refused(&ws, root, command, "it changes directory");
    }
    assert!(allowed(&decide(&ws, Some(root), true, &[], "cd src && ls")), "cd alone stays harmless");
}

#[test]
fn git_with_a_directory_option_is_not_harmless() {
    let (_dir, ws) = project();
    let root = ws.root();
    refused(&ws, root, "git -C sub status", "`-C` makes it look for a repository elsewhere");
    refused(&ws, root, "git -C . status", "`-C` makes it look for a repository elsewhere");
    for command in ["git --git-dir=sub status", "git --git-dir sub status", "git --work-tree=. status"] {
        refused(&ws, root, command, "is not known to be harmless");
    }
}

#[test]
fn git_with_dot_git_as_a_file_or_symlink_is_not_harmless() {
    let (_dir, ws) = project();
    let root = ws.root();
    std::fs::rename(root.join(".git"), root.join("real-git")).expect("move");
    std::os::unix::fs::symlink(root.join("real-git"), root.join(".git")).expect("symlink");
    refused(&ws, root, "git status", ".git is a symlink");
    std::fs::remove_file(root.join(".git")).expect("unlink");
    std::fs::write(root.join(".git"), "gitdir: sub\n").expect("gitdir file");
    refused(&ws, root, "git status", ".git is a file");
}

#[test]
fn git_with_an_incomplete_or_redirected_dot_git_is_not_harmless() {
    let (_dir, ws) = project();
    let (root, dot_git) = (ws.root(), ws.root().join(".git"));
    std::fs::write(dot_git.join("HEAD"), "not a ref\n").expect("HEAD");
    refused(&ws, root, "git status", "is not a whole repository");
    std::fs::write(dot_git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::remove_dir_all(dot_git.join("objects")).expect("objects");
    refused(&ws, root, "git status", "is not a whole repository");
    std::fs::create_dir(dot_git.join("objects")).expect("objects");
    assert!(allowed(&decide(&ws, Some(root), true, &[], "git status")), "whole again");
    std::fs::write(dot_git.join("commondir"), "../sub\n").expect("commondir");
    refused(&ws, root, "git status", "commondir sends git to another repository");
}

#[test]
fn git_in_an_untrusted_project_is_not_harmless() {
    let (_dir, ws) = project();
    let root = ws.root();
    let d = decide(&ws, Some(root), false, &[], "git status");
    assert_eq!(d.behavior, PermissionBehavior::Ask, "{}", d.reason);
    assert!(allowed(&decide(&ws, Some(root), false, &[], "ls && cat README")), "other commands stay harmless");
    let policy = PermissionPolicy::new(PermissionRules::default(), PermissionMode::Default, root.to_path_buf());
    let args = args("git status");
    let facts = CallFacts { cwd: Some(root), workspace: Some(&ws), ..CallFacts::new("Bash", Effect::Execute, &args) };
    let d = policy.decide(facts, &PermissionSuggestion::Passthrough, None);
    assert_eq!(d.behavior, PermissionBehavior::Ask, "a new policy trusts no project: {}", d.reason);
    let scope =
        Scope { workspace: &ws, cwd: root, project_dir: root, restricting: &[], cwd_known: true, trusted: false };
    let why = read_only(&analyze("git status"), &scope, "Bash", &[]).err().unwrap_or_default();
    assert!(why.contains("the project is not trusted"), "{why}");
}

#[test]
fn git_without_a_known_working_directory_is_not_harmless() {
    let (_dir, ws) = project();
    assert_eq!(decide(&ws, None, true, &[], "git status").behavior, PermissionBehavior::Ask);
    assert!(allowed(&decide(&ws, None, true, &[], "ls")), "other commands stay harmless");
    let root = ws.root();
    let scope =
        Scope { workspace: &ws, cwd: root, project_dir: root, restricting: &[], cwd_known: false, trusted: true };
    let why = read_only(&analyze("git status"), &scope, "Bash", &[]).err().unwrap_or_default();
    assert!(why.contains("the directory it starts in is not known"), "{why}");
}

#[test]
fn git_in_an_added_directory_is_not_harmless() {
    let (_dir, ws) = project();
    let other = tempfile::tempdir().expect("other");
    repository_at(&other.path().join(".git"));
    let both = Workspace::with_roots(ws.root(), [other.path()]).expect("roots");
    let added = both.added_roots().next().expect("added").to_path_buf();
    refused(&both, &added, "git status", "is not inside the project");
    assert!(allowed(&decide(&both, Some(both.root()), true, &[], "git status")), "the project's own still is");
}

#[test]
fn git_with_a_git_variable_assigned_is_not_harmless() {
    let (_dir, ws) = project();
    refused(&ws, ws.root(), "GIT_DIR=sub git status", "it assigns the variable GIT_DIR");
    refused(&ws, ws.root(), "GIT_CONFIG_GLOBAL=sub/config git log", "it assigns the variable");
}

#[test]
fn an_allow_rule_that_covers_git_still_allows_it() {
    let (_dir, ws) = project();
    let d = decide(&ws, Some(ws.root()), false, &["Bash(git status)"], "git status && ls");
    assert_eq!(d.behavior, PermissionBehavior::Allow, "{}", d.reason);
    assert_eq!(d.source, DecisionSource::Rule { rule: "Bash(git status)".into() });
}

#[test]
fn git_whose_config_includes_other_files_is_not_harmless() {
    let (_dir, ws) = project();
    let config = ws.root().join(".git/config");
    for text in ["[include]\n\tpath = ../shared.gitconfig\n", "[core]\n[IncludeIf \"gitdir:~/\"]\n\tpath = x\n"] {
        std::fs::write(&config, text).expect("config");
        refused(&ws, ws.root(), "git status", "config includes other files");
    }
    std::fs::write(&config, "[core]\n\tbare = false\n").expect("config");
    assert!(allowed(&decide(&ws, Some(ws.root()), true, &[], "git status")), "no include");
}
