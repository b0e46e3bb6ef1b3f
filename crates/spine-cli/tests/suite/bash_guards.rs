//! Guard hooks written the way Claude Code users write them — bash syntax, jq, python, a JSON
//! decision — block the same calls through every tool that runs a command, and a guard that
//! cannot run is a hook failure decided by its `onFailure`, never a block or an allow by
//! accident. All through the `spine` binary.

use serde_json::{Value, json};

use crate::support::*;

/// One call of each tool that runs a command line, each trying `rm -rf victim`; `write_stdin`
/// types it into a bash started by `exec_command`.
fn every_shell_tool() -> Value {
    let destroy = "rm -rf victim";
    json!([
        {"tool_calls": [
            {"id": "bash", "name": "Bash", "arguments": {"command": destroy}},
            {"id": "exec", "name": "exec_command", "arguments": {"command": destroy}},
            {"id": "service", "name": "process_exec", "arguments": {"command": destroy}},
            {"id": "shell", "name": "exec_command", "arguments": {"command": "bash", "yield_ms": 100}},
            {"id": "typed", "name": "write_stdin", "arguments": {"command_run_id": "cmd-1", "text": format!("{destroy}\n"), "yield_ms": 300}}
        ]},
        {"text": "done"}
    ])
}

const ALLOW_SHELL_TOOLS: &str = r#""permissions": {"allow": ["Bash", "exec_command", "process_exec", "write_stdin"]}"#;

/// Runs the calls with `hooks` (the value of `hooks.PreToolUse`) in the project settings and
/// returns each tool result in order.
fn run_with_guard(s: &Sandbox, pre_tool_use: &str) -> Vec<String> {
    s.write("victim/keep.txt", "precious\n");
    s.write(".claude/settings.json", &format!(r#"{{{ALLOW_SHELL_TOOLS}, "hooks": {{"PreToolUse": {pre_tool_use}}}}}"#));
    let out = s.run(&s.script(every_shell_tool()), &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    tool_results(&json(&out))
}

fn assert_destroy_refused(s: &Sandbox, results: &[String], reason: &str) {
    assert_eq!(results.len(), 5, "{results:?}");
    for (i, result) in results.iter().enumerate().filter(|(i, _)| *i != 3) {
        assert!(result.starts_with("Error [") && result.contains(reason), "call {i}: {result}");
    }
    assert!(!results[3].starts_with("Error"), "starting an idle bash is allowed: {}", results[3]);
    assert!(s.project().join("victim/keep.txt").exists(), "the guard let rm -rf through: {results:?}");
}

#[test]
fn a_double_bracket_guard_in_settings_blocks_rm_through_every_shell_tool() {
    let s = Sandbox::new();
    s.trust();
    let guard = r#"cmd=$(jq -r .tool_input.command); [[ "$cmd" == *"rm -rf"* ]] && { echo "refused: $cmd" >&2; exit 2; }; exit 0"#;
    let hooks = json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}]);
    let results = run_with_guard(&s, &hooks.to_string());
    assert_destroy_refused(&s, &results, "refused: rm -rf victim");
    assert!(results[0].starts_with("Error [hook_blocked]"), "{}", results[0]);
}

#[test]
fn a_bash_script_guard_with_here_strings_arrays_and_pipefail_blocks_through_every_shell_tool() {
    let s = Sandbox::new();
    s.trust();
    let script = s.write(
        ".claude/hooks/guard.sh",
        r#"#!/usr/bin/env bash
set -euo pipefail
input=$(cat)
cmd=$(jq -r '.tool_input.command' <<< "$input")
patterns=("rm -rf" "mkfs" "dd if=")
for p in "${patterns[@]}"; do
  if [[ $cmd == *"$p"* ]]; then
    echo "guard.sh refused ${p}" >&2
    exit 2
  fi
done
"#,
    );
    make_executable(&script);
    let hooks = r#"[{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"}]}]"#;
    let results = run_with_guard(&s, hooks);
    assert_destroy_refused(&s, &results, "guard.sh refused rm -rf");
}

#[test]
fn a_python_guard_and_a_jq_json_decision_block_through_every_shell_tool() {
    let s = Sandbox::new();
    s.trust();
    s.write(
        ".claude/hooks/guard.py",
        "import json, sys\nev = json.load(sys.stdin)\nif 'rm -rf' in ev['tool_input']['command']:\n    \
         print('python guard: ' + ev['tool_name'] + ' ' + ev.get('spine_tool_name', ''), file=sys.stderr)\n    sys.exit(2)\n",
    );
    let hooks = r#"[{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR/.claude/hooks/guard.py\""}]}]"#;
    let results = run_with_guard(&s, hooks);
    assert_destroy_refused(&s, &results, "python guard: Bash");
    assert!(results[1].contains("python guard: Bash exec_command"), "the real tool is named: {}", results[1]);

    let s = Sandbox::new();
    s.trust();
    let deny = r#"jq -c 'if (.tool_input.command | test("rm -rf")) then {hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "jq says no"}} else {} end'"#;
    let hooks = json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": deny}]}]);
    let results = run_with_guard(&s, &hooks.to_string());
    assert_destroy_refused(&s, &results, "jq says no");
}

#[test]
fn a_matcher_naming_the_real_tool_still_matches_and_if_rules_see_the_command() {
    let s = Sandbox::new();
    s.trust();
    let hooks = json!([
        {"matcher": "exec_command", "hooks": [{"type": "command", "command": "echo 'exec only' >&2; exit 2"}]},
        {"matcher": "Bash", "hooks": [{"type": "command", "if": "Bash(rm *)", "command": "echo 'if rule' >&2; exit 2"}]}
    ]);
    let results = run_with_guard(&s, &hooks.to_string());
    assert!(results[0].contains("if rule") && !results[0].contains("exec only"), "{}", results[0]);
    assert!(results[1].contains("exec only"), "{}", results[1]);
    assert!(results[2].contains("if rule") && !results[2].contains("exec only"), "{}", results[2]);
    assert!(results[4].contains("if rule"), "{}", results[4]);
}

/// A guard that does not parse: bash exits 2 on it, which must not read as a block.
const BROKEN_GUARD: &str = "echo checking >&2\nif [[ -n \"$x\" ]]; then";

#[test]
fn a_guard_that_does_not_parse_is_a_hook_failure_decided_by_on_failure_never_a_block() {
    let s = Sandbox::new();
    s.trust();
    let open = json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": BROKEN_GUARD}]}]);
    s.write(
        ".claude/settings.json",
        &format!(r#"{{"permissions": {{"allow": ["Bash"]}}, "hooks": {{"PreToolUse": {open}}}}}"#),
    );
    let out = s.run(&s.script(bash_then_answer("touch ran.txt")), &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(s.project().join("ran.txt").exists(), "onFailure open: the call runs");
    assert!(stderr(&out).contains("syntax error"), "the failure is reported: {}", stderr(&out));

    let s = Sandbox::new();
    s.trust();
    let closed =
        json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": BROKEN_GUARD, "onFailure": "block"}]}]);
    s.write(
        ".claude/settings.json",
        &format!(r#"{{"permissions": {{"allow": ["Bash"]}}, "hooks": {{"PreToolUse": {closed}}}}}"#),
    );
    let out = s.run(&s.script(bash_then_answer("touch ran.txt")), &["--output-format", "json", "--include-messages"]);
    let result = first_tool_result(&json(&out));
    assert!(result.starts_with("Error [hook_launch_error]"), "a failure, not a block: {result}");
    assert!(!s.project().join("ran.txt").exists(), "onFailure block: the call does not run");
}

#[test]
fn a_missing_interpreter_or_script_is_a_hook_failure_not_a_block() {
    for command in ["no-such-interpreter-xyz guard.py", "python3 \"$CLAUDE_PROJECT_DIR/.claude/hooks/missing.py\""] {
        let s = Sandbox::new();
        s.trust();
        let hooks =
            json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": command, "onFailure": "continue"}]}]);
        s.write(
            ".claude/settings.json",
            &format!(r#"{{"permissions": {{"allow": ["Bash"]}}, "hooks": {{"PreToolUse": {hooks}}}}}"#),
        );
        let out =
            s.run(&s.script(bash_then_answer("touch ran.txt")), &["--output-format", "json", "--include-messages"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(s.project().join("ran.txt").exists(), "{command}: onFailure continue lets the call run");
    }
}

#[test]
fn command_hooks_run_under_bash_and_under_sh_only_when_no_bash_exists() {
    let s = Sandbox::new();
    let hook = r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo \"$0 ${BASH_VERSION:+bash}\" > \"$CLAUDE_PROJECT_DIR/shell.txt\""}]}]}}"#;
    let out = s.run(&s.script(json!([{"text": "hi"}])), &["--settings", hook]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shell = std::fs::read_to_string(s.project().join("shell.txt")).expect("hook ran");
    assert!(shell.trim().ends_with("bash bash"), "bash -c with BASH_VERSION: {shell}");

    let empty = s.project().join("empty-path");
    std::fs::create_dir_all(&empty).expect("dir");
    let out = s
        .spine_process()
        .env("PATH", &empty)
        .args(["run", "--model", &format!("scripted:{}", s.script(json!([{"text": "hi"}])).display())])
        .args(["-p", "hi", "--settings", hook])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("no bash on PATH: this hook runs under /bin/sh"), "{}", stderr(&out));
    let shell = std::fs::read_to_string(s.project().join("shell.txt")).expect("hook ran");
    assert_eq!(shell.trim(), "/bin/sh", "the fallback is POSIX sh");
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
