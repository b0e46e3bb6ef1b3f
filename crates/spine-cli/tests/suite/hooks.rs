//! External hooks through the `spine` binary: `spine run` with hooks from settings files,
//! configuration errors and warnings, and `spine hooks list | check | test`.

use serde_json::json;

use crate::support::*;

#[test]
fn run_applies_project_hooks_and_the_model_reads_hook_blocked() {
    let s = Sandbox::new();
    s.trust();
    s.write(
        ".spine/hooks/guard.sh",
        "#!/bin/sh\nif grep -q 'rm -rf'; then echo 'destructive command refused' >&2; exit 2; fi\n",
    );
    s.write(
        ".spine/settings.json",
        r#"{"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "sh \"$CLAUDE_PROJECT_DIR/.spine/hooks/guard.sh\""}]}]}}"#,
    );
    let out = s.run(&s.script(bash_then_answer("rm -rf build")), &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tool_results(&json(&out)), ["Error [hook_blocked]: destructive command refused"]);
    let out = s.run(&s.script(bash_then_answer("echo fine")), &["--output-format", "json", "--include-messages"]);
    assert!(tool_results(&json(&out))[0].contains("fine"));
}

#[test]
fn run_exits_2_naming_the_file_and_json_path_of_a_bad_hook() {
    let s = Sandbox::new();
    s.trust();
    s.write(".spine/settings.local.json", r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}"#);
    let out = s.run(&s.script(bash_then_answer("true")), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(".spine/settings.local.json") && err.contains("hooks.PreToolUse[0].hooks[0].command"),
        "{err}"
    );
    let out = s.run(&s.script(bash_then_answer("true")), &["--settings", r#"{"hooks": {"PreToolUsee": []}}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("did you mean `PreToolUse`?"), "{}", stderr(&out));
}

#[test]
fn run_warns_on_stderr_without_verbose_about_hooks_that_will_not_run() {
    let s = Sandbox::new();
    let settings = r#"{"hooks": {"TeammateIdle": [{"hooks": [{"type": "command", "command": "true"}]}],
        "PreToolUse": [{"hooks": [{"type": "command", "command": "true", "futureField": 1}]}]}}"#;
    let out = s.run(&s.script(json!([{"text": "hi"}])), &["--settings", settings]);
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(err.contains("warning: --settings #1 (inline JSON): hooks.TeammateIdle: spine does not fire"), "{err}");
    assert!(err.contains("hooks.PreToolUse[0].hooks[0].futureField: unknown field `futureField` ignored"), "{err}");
    let out = s.run(&s.script(json!([{"text": "hi"}])), &["--settings", settings, "-q"]);
    assert!(!stderr(&out).contains("warning"));
}

fn configured(s: &Sandbox) {
    s.trust();
    s.write(".spine/hooks/check.py", "import json, sys\njson.load(sys.stdin)\n");
    s.write(
        ".spine/settings.json",
        r#"{"hooks": {
            "PreToolUse": [{"matcher": "Bash|Write", "hooks": [
                {"type": "command", "command": "/usr/bin/python3 .spine/hooks/check.py", "timeout": 30, "onFailure": "closed"}]}],
            "Stop": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/stop", "async": true}]}]}}"#,
    );
}

#[test]
fn hooks_list_shows_event_matcher_type_command_and_source_as_text_or_json() {
    let s = Sandbox::new();
    configured(&s);
    let out = s.spine().args(["hooks", "list"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("EVENT") && lines[0].contains("SOURCE"), "{text}");
    assert!(lines[1].starts_with("PreToolUse  Bash|Write  command  /usr/bin/python3 .spine/hooks/check.py"), "{text}");
    assert!(lines[1].contains("timeout=30s onFailure=closed") && lines[1].contains("hooks.PreToolUse[0].hooks[0]"));
    assert!(lines[2].starts_with("Stop") && lines[2].contains("http://127.0.0.1:9/stop") && lines[2].contains("async"));
    let out = s.spine().args(["hooks", "list", "--output-format", "json"]).output().expect("runs");
    let v = json(&out);
    assert_eq!(v["hooks"][0]["event"], "PreToolUse");
    assert_eq!(v["hooks"][0]["matcher"], "Bash|Write");
    assert_eq!(v["hooks"][0]["type"], "command");
    assert_eq!(v["hooks"][0]["command"], "/usr/bin/python3 .spine/hooks/check.py");
    assert!(v["hooks"][0]["source"].as_str().is_some_and(|p| p.ends_with(".spine/settings.json")));
    assert_eq!(v["hooks"][1]["url"], "http://127.0.0.1:9/stop");
}

#[test]
fn hooks_check_passes_a_good_configuration_with_a_summary() {
    let s = Sandbox::new();
    configured(&s);
    let out = s.spine().args(["hooks", "check"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("ok: 2 hook(s) on 2 event(s) from 1 settings source(s); 0 error(s)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn hooks_check_reports_missing_scripts_and_programs_and_bad_settings_with_exit_2() {
    let s = Sandbox::new();
    s.write(
        ".spine/settings.json",
        r#"{"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "/usr/bin/python3 .spine/hooks/missing.py"},
            {"type": "command", "command": "no-such-linter-xyz --fix"}]}]}}"#,
    );
    let out = s.spine().args(["hooks", "check"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(
        text.contains("hooks.PreToolUse[0].hooks[0].command: script `.spine/hooks/missing.py` not found"),
        "{text}"
    );
    assert!(text.contains("hooks.PreToolUse[0].hooks[1].command: program `no-such-linter-xyz` not found"), "{text}");
    assert!(text.contains("FAILED"));
    let bad = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": []}], "Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": -1}]}]}}"#;
    let out = s.spine().args(["hooks", "check", "--settings", bad, "--output-format", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    let paths: Vec<&str> =
        v["findings"].as_array().expect("findings").iter().filter_map(|f| f["path"].as_str()).collect();
    assert!(paths.contains(&"hooks.PreToolUse[0].matcher") && paths.contains(&"hooks.Stop[0].hooks[0].timeout"), "{v}");
    assert_eq!(v["ok"], false);
}

#[test]
fn hooks_test_fires_one_event_and_prints_raw_answers_and_the_merged_decision() {
    let s = Sandbox::new();
    s.trust();
    s.write(
        ".spine/settings.json",
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "grep -q 'git push' && { echo 'no pushes' >&2; exit 2; }; echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"additionalContext\": \"checked\"}}'"}]}]}}"#,
    );
    let out = s
        .spine()
        .args([
            "hooks",
            "test",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            r#"{"tool_input": {"command": "git push"}}"#,
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("exit 2 in"), "{text}");
    assert!(text.contains("stderr: no pushes"), "{text}");
    assert!(text.contains("\"model_sees\": \"Error [hook_blocked]: no pushes\""), "{text}");

    let input_file = s.write("input.json", r#"{"tool_input": {"command": "ls"}}"#);
    let out = s
        .spine()
        .args(["hooks", "test", "PreToolUse", "--input"])
        .arg(&input_file)
        .args(["--output-format", "json"])
        .output()
        .expect("runs");
    let v = json(&out);
    assert_eq!(v["event"], "PreToolUse");
    assert_eq!(v["input"]["tool_input"]["command"], "ls");
    assert_eq!(v["hooks"][0]["raw"]["exit_code"], 0);
    assert_eq!(v["hooks"][0]["type"], "command");
    assert_eq!(v["merged"]["decision"], "proceed");
    assert_eq!(v["merged"]["additional_context"], json!(["checked"]));
}

#[test]
fn hooks_test_validates_the_tool_call_and_the_event_name() {
    let s = Sandbox::new();
    let out = s
        .spine()
        .args(["hooks", "test", "PreToolUse", "--input", r#"{"tool_input": {"cmd": "ls"}}"#])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid_arguments"), "{}", stderr(&out));
    let out = s.spine().args(["hooks", "test", "TeammateIdle"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("spine does not fire the Claude Code event `TeammateIdle`"));
    let out =
        s.spine().args(["hooks", "test", "Stop", "--input", r#"{"stop_hook_activ": true}"#]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown field `stop_hook_activ`"), "{}", stderr(&out));
}

#[test]
fn a_hook_printing_invalid_json_warns_on_one_line_naming_the_reason() {
    let s = Sandbox::new();
    let settings = json!({"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo '{\"decision\": oops'"}]}]}});
    let out = s.run(&s.script(bash_then_answer("echo ran")), &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: PreToolUse hook")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    let line = warnings[0];
    assert!(line.contains("failed: answer is not valid JSON: expected value at line 1 column"), "{line}");
    assert!(line.ends_with("; failing open"), "{line}");
}
