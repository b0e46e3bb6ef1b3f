//! Harmless (read-only) shell commands run without an allow rule in the default mode, end to
//! end through `spine run -p` (where whatever would ask is refused): each part of a compound
//! command is allowed by a rule or harmless; writes, reads outside the workspace and denied
//! reads are not.

use serde_json::Value;

use crate::support::*;

/// Runs one Bash `command` with `settings` in the default mode and returns its tool result
/// and the permission record of its decision in the trace.
fn run_bash(s: &Sandbox, command: &str, settings: &str) -> (String, Value) {
    let script = s.script(bash_then_answer(command));
    let trace = s.dir.path().join("trace.jsonl");
    let trace_arg = trace.to_str().expect("utf8");
    let out = s
        .run(&script, &["--settings", settings, "--output-format", "json", "--include-messages", "--trace", trace_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = first_tool_result(&json(&out));
    let decision = spine_testkit::files::read_jsonl(&trace)
        .into_iter()
        .find(|e| e["kind"] == "tool_decision")
        .map(|e| e["permission"].clone())
        .unwrap_or(Value::Null);
    (result, decision)
}

const NO_RULES: &str = r#"{"permissions": {}}"#;

#[test]
fn a_rule_allowed_command_and_a_harmless_echo_run_together_with_only_the_rule() {
    let s = Sandbox::new();
    s.write("test_tiny.py", "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n");
    let settings = r#"{"permissions": {"allow": ["Bash(python3 -m unittest:*)"]}}"#;
    let (result, decision) = run_bash(&s, "python3 -m unittest && echo all-done", settings);
    assert!(!result.starts_with("Error"), "{result}");
    assert!(result.contains("all-done"), "{result}");
    assert_eq!(decision["behavior"], "allow", "{decision}");
    let reason = decision["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("Bash(python3 -m unittest:*)") && reason.contains("read-only command: `echo all-done`"));
}

#[test]
fn ls_and_cat_run_with_no_rules_and_the_trace_says_read_only_command() {
    let s = Sandbox::new();
    s.write("README", "hello from the readme");
    let (result, decision) = run_bash(&s, "ls && cat README", NO_RULES);
    assert!(result.contains("hello from the readme"), "{result}");
    assert_eq!(decision["behavior"], "allow", "{decision}");
    assert_eq!(decision["source"]["type"], "default", "{decision}");
    assert_eq!(decision["reason"], "read-only command: `ls`, `cat README`", "{decision}");
}

#[test]
fn a_redirection_to_a_file_is_a_write_and_is_refused_with_no_rules() {
    let s = Sandbox::new();
    let (result, _) = run_bash(&s, "echo x > out.txt", NO_RULES);
    assert!(result.starts_with("Error [permission_denied]"), "{result}");
    assert!(!s.project().join("out.txt").exists(), "the redirection ran");
}

#[test]
fn a_read_outside_the_workspace_is_not_harmless() {
    let s = Sandbox::new();
    let (result, decision) = run_bash(&s, "cat /etc/passwd", NO_RULES);
    assert!(result.starts_with("Error [permission_denied]"), "{result}");
    assert!(!result.contains("root:"), "{result}");
    assert_ne!(decision["reason"].as_str().unwrap_or_default(), "read-only command: `cat /etc/passwd`");
}

#[test]
fn find_delete_is_refused_and_the_files_survive() {
    let s = Sandbox::new();
    let victim = s.write("victim.txt", "precious");
    let (result, _) = run_bash(&s, "find . -name victim.txt -delete", NO_RULES);
    assert!(result.starts_with("Error [permission_denied]"), "{result}");
    assert!(victim.exists(), "find -delete ran");
}

#[test]
fn a_read_deny_rule_still_denies_cat_of_the_file() {
    let s = Sandbox::new();
    s.write("secret", "hunter2");
    let (result, decision) = run_bash(&s, "cat secret", r#"{"permissions": {"deny": ["Read(./secret)"]}}"#);
    assert!(result.starts_with("Error [permission_denied]"), "{result}");
    assert!(!result.contains("hunter2"), "{result}");
    assert_eq!(decision["source"]["type"], "rule", "{decision}");
}

#[test]
fn a_bash_deny_rule_denies_a_harmless_command() {
    let s = Sandbox::new();
    let (result, decision) = run_bash(&s, "ls", r#"{"permissions": {"deny": ["Bash(ls:*)"]}}"#);
    assert!(result.starts_with("Error [permission_denied]"), "{result}");
    assert_eq!(decision["source"]["rule"], "Bash(ls:*)", "{decision}");
}

/// Makes `dir` look like a bare repository whose `config` runs `evil.sh` (which creates
/// `marker`) as `core.fsmonitor` on `git status`.
fn bare_looking_repository(dir: &std::path::Path, marker: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir.join("objects")).expect("objects");
    std::fs::create_dir_all(dir.join("refs/heads")).expect("refs");
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    let evil = dir.join("evil.sh");
    std::fs::write(&evil, format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display())).expect("evil.sh");
    std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = {}\n",
        evil.display()
    );
    std::fs::write(dir.join("config"), config).expect("config");
}

/// [`run_bash`] with a fresh trace.
fn run_bash_again(s: &Sandbox, command: &str) -> (String, Value) {
    let _ = std::fs::remove_file(s.dir.path().join("trace.jsonl"));
    run_bash(s, command, NO_RULES)
}

#[test]
fn git_runs_only_in_the_trusted_projects_own_repository() {
    let s = Sandbox::new();
    s.write("README", "hello");
    git(&s.project(), &["init", "-q"]);
    git(&s.project(), &["add", "README"]);
    git(&s.project(), &["commit", "-qm", "first"]);
    s.trust();
    let marker = s.dir.path().join("fsmonitor-ran");
    bare_looking_repository(&s.project().join("sub"), &marker);

    // The layout is a real attack: git itself runs the program from `sub/config`.
    let scratch = tempfile::tempdir().expect("scratch");
    let scratch_marker = scratch.path().join("fsmonitor-ran");
    bare_looking_repository(&scratch.path().join("sub"), &scratch_marker);
    let plain = std::process::Command::new("git")
        .args(["-C", "sub", "status"])
        .current_dir(scratch.path())
        .env("HOME", scratch.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        scratch_marker.exists(),
        "plain git did not run core.fsmonitor: {}",
        String::from_utf8_lossy(&plain.stderr)
    );

    let (result, decision) = run_bash_again(&s, "git status");
    assert!(result.contains("On branch main"), "{result}");
    assert_eq!(decision["behavior"], "allow", "{decision}");
    assert_eq!(decision["reason"], "read-only command: `git status`", "{decision}");
    assert!(!marker.exists(), "git status in the project ran sub/config's program");

    for command in ["git -C sub status", "cd sub && git status"] {
        let (result, decision) = run_bash_again(&s, command);
        assert!(result.starts_with("Error [permission_denied]"), "{command}: {result}");
        assert_ne!(decision["behavior"], "allow", "{command}: {decision}");
        assert!(!marker.exists(), "{command} ran sub/config's core.fsmonitor");
    }
}

#[test]
fn git_status_is_refused_in_an_untrusted_project() {
    let s = Sandbox::new();
    git(&s.project(), &["init", "-q"]);
    let (result, decision) = run_bash(&s, "git status", NO_RULES);
    assert!(result.starts_with("Error [permission_denied]"), "{result}");
    assert_ne!(decision["behavior"], "allow", "{decision}");
    let (result, _) = run_bash_again(&s, "ls");
    assert!(!result.starts_with("Error"), "other commands stay harmless: {result}");
}
