//! The session's watch, as in Claude Code 2.1: Bash keeps its working directory between calls
//! (a `cd` out of the workspace is reset), CwdChanged fires when it moves, FileChanged when a
//! watched file changes (SessionStart's `watchPaths`, the names of FileChanged matchers in the
//! shell's directory), ConfigChange when a settings file changes during the run — through the
//! `spine` binary, a scripted model and real command hooks.
//!
//! The OS reports file changes asynchronously and spine fires them at the next safe point
//! (before a model request) once a burst settled: the scripts give it a `sleep 1` call after
//! each change; nothing asserts a duration.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

fn bash(id: &str, command: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "Bash", "arguments": {"command": command}}]})
}

/// The project directory as the shell prints it (`pwd -P`).
fn physical(s: &Sandbox) -> PathBuf {
    std::fs::canonicalize(s.project()).expect("project")
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn bash_keeps_its_directory_between_calls_and_a_cd_out_of_the_workspace_is_reset() {
    let s = Sandbox::new();
    s.write("sub/keep.txt", "");
    let project = physical(&s);
    let script = s.script(json!([
        bash("c1", "cd sub"),
        bash("c2", "pwd"),
        bash("c3", "cd ../.. && pwd"),
        bash("c4", "pwd"),
        {"text": "done"}
    ]));
    let settings = json!({"permissions": {"allow": ["Bash"]}});
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results[1].contains(&text(&project.join("sub"))), "the second call starts in sub: {}", results[1]);
    let note = format!("Shell cwd was reset to {}", text(&project));
    assert!(results[2].ends_with(&note), "{}", results[2]);
    assert!(results[3].ends_with(&text(&project)) && !results[3].contains("sub"), "{}", results[3]);
}

#[test]
fn cwd_changed_fires_with_the_old_and_new_directory_and_command_hooks_stay_in_the_starting_directory() {
    let s = Sandbox::new();
    s.write("sub/keep.txt", "");
    let project = physical(&s);
    let log = s.dir.path().join("cwd.jsonl");
    let pwd_log = s.dir.path().join("pwd.log");
    let cwd_hook = json!({"type": "command", "command": format!(
        "cat >> {log}; echo >> {log}; echo 'export WHERE=in-sub' >> \"$CLAUDE_ENV_FILE\"", log = log.display())});
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {
            "CwdChanged": [{"hooks": [cwd_hook]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("pwd >> {}", pwd_log.display())}]}]
        }
    });
    let script = s.script(json!([bash("c1", "cd sub"), bash("c2", "echo \"$WHERE\""), {"text": "done"}]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0]["hook_event_name"], "CwdChanged");
    assert_eq!(fired[0]["old_cwd"], text(&project));
    assert_eq!(fired[0]["new_cwd"], text(&project.join("sub")));
    assert_eq!(fired[0]["cwd"], text(&project.join("sub")), "hooks' cwd is the new directory");
    let pwds: Vec<String> = std::fs::read_to_string(&pwd_log).expect("pwd log").lines().map(str::to_owned).collect();
    assert_eq!(pwds, [text(&project), text(&project)], "a cd never moves where command hooks run");
    let results = tool_results(&json(&out));
    assert!(results[1].contains("in-sub"), "a CwdChanged hook's export reaches the next command: {}", results[1]);
}

#[test]
fn file_changed_fires_for_session_start_watch_paths_with_add_change_and_unlink() {
    let s = Sandbox::new();
    let project = physical(&s);
    let watched = project.join("watched.txt");
    let log = s.dir.path().join("files.jsonl");
    let start = json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "watchPaths": [text(&watched)]}});
    // Bash's redirections are writes: `Edit` allows them.
    let settings = json!({
        "permissions": {"allow": ["Bash", "Edit"]},
        "hooks": {
            "SessionStart": [{"hooks": [logging(&s.dir.path().join("start.jsonl"), &start)]}],
            "FileChanged": [{"hooks": [logging(&log, &json!({"systemMessage": "saw a file change"}))]}]
        }
    });
    let script = s.script(json!([
        bash("c1", "echo a > watched.txt; echo b > other.txt"),
        bash("c2", "sleep 1"),
        bash("c3", "echo more >> watched.txt; echo more >> watched.txt"),
        bash("c4", "sleep 1"),
        bash("c5", "rm watched.txt"),
        bash("c6", "sleep 1"),
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    let events: Vec<(&str, &str)> =
        fired.iter().map(|e| (e["file_path"].as_str().unwrap_or(""), e["event"].as_str().unwrap_or(""))).collect();
    let path = text(&watched);
    assert_eq!(events, [(path.as_str(), "add"), (path.as_str(), "change"), (path.as_str(), "unlink")], "{fired:?}");
    assert_eq!(fired[0]["hook_event_name"], "FileChanged");
    assert!(stderr(&out).contains("saw a file change"), "the systemMessage is shown: {}", stderr(&out));
}

#[test]
fn file_changed_watches_the_matchers_names_in_the_shells_directory() {
    let s = Sandbox::new();
    s.write("sub/keep.txt", "");
    let project = physical(&s);
    let log = s.dir.path().join("envrc.jsonl");
    let settings = json!({
        "permissions": {"allow": ["Bash", "Edit"]},
        "hooks": {"FileChanged": [{"matcher": ".envrc", "hooks": [logging(&log, &json!({}))]}]}
    });
    let script = s.script(json!([
        bash("c1", "echo one > .envrc; echo x > .env"),
        bash("c2", "sleep 1"),
        bash("c3", "cd sub"),
        bash("c4", "echo two > .envrc"),
        bash("c5", "sleep 1"),
        bash("c6", "echo three > ../.envrc"),
        bash("c7", "sleep 1"),
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    let events: Vec<(String, String)> = fired
        .iter()
        .map(|e| (e["file_path"].as_str().unwrap_or("").to_owned(), e["event"].as_str().unwrap_or("").to_owned()))
        .collect();
    assert_eq!(
        events,
        [(text(&project.join(".envrc")), "add".to_owned()), (text(&project.join("sub/.envrc")), "add".to_owned())],
        "the name is looked for where the shell is; the old directory's file is no longer watched"
    );
}

/// A sandbox whose project has `.claude/settings.json`, and a run whose ConfigChange hook is
/// `hook`, whose model rewrites that file then waits.
fn config_run(s: &Sandbox, hook: Value, env: &[(&str, &str)]) -> std::process::Output {
    s.write(".claude/settings.json", "{}\n");
    let settings = json!({
        "permissions": {"allow": ["Bash", "Write(.claude/**)", "Edit(.claude/**)"]},
        "hooks": {"ConfigChange": [{"hooks": [hook]}]}
    });
    let script = s.script(json!([
        {"tool_calls": [{"id": "w1", "name": "Write", "arguments": {
            "file_path": ".claude/settings.json", "content": "{\"permissions\": {\"deny\": [\"Bash\"]}}\n"}}]},
        bash("c2", "sleep 1"),
        {"text": "done"}
    ]));
    let mut cmd = s.spine();
    cmd.args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())]);
    cmd.args(["--settings", &settings.to_string()]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("spine runs")
}

#[test]
fn config_change_blocks_a_settings_change_made_during_the_run_and_the_session_keeps_its_settings() {
    let s = Sandbox::new();
    let log = s.dir.path().join("config.jsonl");
    let hook = json!({"type": "command", "command": format!(
        "cat >> {log}; echo >> {log}; echo 'settings are frozen' >&2; exit 2", log = log.display())});
    let out = config_run(&s, hook, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0]["hook_event_name"], "ConfigChange");
    assert_eq!(fired[0]["source"], "project_settings");
    assert_eq!(fired[0]["file_path"], text(&physical(&s).join(".claude/settings.json")));
    let err = stderr(&out);
    assert!(err.contains("settings are frozen") && err.contains("the session keeps its settings"), "{err}");
    // The deny rule written during the run did not apply: the Bash call after it ran.
    assert!(!err.contains("permission_denied"), "{err}");
}

#[test]
fn config_change_that_is_not_blocked_is_noted_as_applying_from_the_next_session() {
    let s = Sandbox::new();
    let log = s.dir.path().join("config.jsonl");
    let out = config_run(&s, logging(&log, &json!({})), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(logged(&log).len(), 1);
    let err = stderr(&out);
    assert!(err.contains("project_settings changed") && err.contains("applies from the next session"), "{err}");
}

#[test]
fn a_managed_settings_change_cannot_be_blocked() {
    let s = Sandbox::new();
    let managed = s.dir.path().join("managed");
    std::fs::create_dir_all(&managed).expect("managed dir");
    std::fs::write(managed.join("managed-settings.json"), "{}\n").expect("managed file");
    let log = s.dir.path().join("config.jsonl");
    let hook =
        json!({"type": "command", "command": format!("cat >> {log}; echo >> {log}; exit 2", log = log.display())});
    let file = managed.join("managed-settings.json");
    // An administrator's change during the run (a hook writes it: the model may not write
    // outside the workspace).
    let admin = json!({"type": "command", "once": true, "command": format!(
        "echo '{{\"env\": {{\"A\": \"1\"}}}}' > {}", file.display())});
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {
            "ConfigChange": [{"matcher": "policy_settings", "hooks": [hook]}],
            "PostToolUse": [{"matcher": "Bash", "hooks": [admin]}]
        }
    });
    let script = s.script(json!([bash("c1", "true"), bash("c2", "sleep 1"), {"text": "done"}]));
    let out = s
        .spine()
        .env("SPINE_MANAGED_SETTINGS_DIR", &managed)
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--settings", &settings.to_string()])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0]["source"], "policy_settings");
    let err = stderr(&out);
    assert!(err.contains("cannot be blocked"), "{err}");
}

#[test]
fn a_guard_hook_with_a_relative_script_path_still_blocks_after_the_model_cds_away() {
    let s = Sandbox::new();
    s.write("sub/keep.txt", "");
    s.write(
        ".claude/hooks/guard.sh",
        "cmd=$(cat)\nif [[ \"$cmd\" == *\"rm -rf\"* ]]; then echo 'no rm -rf' >&2; exit 2; fi\n",
    );
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "bash .claude/hooks/guard.sh"}]}]}
    });
    let script = s.script(json!([bash("c1", "cd sub"), bash("c2", "rm -rf keep.txt"), {"text": "done"}]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results[1].contains("hook_blocked") && results[1].contains("no rm -rf"), "{}", results[1]);
    assert!(s.project().join("sub/keep.txt").exists(), "the guard held after the cd");
}
