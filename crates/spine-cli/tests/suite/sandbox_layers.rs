//! When the kernel lacks a layer, through the binary: a session with `failIfUnavailable`
//! refuses every command and says why once; without it, one line says what is missing and the
//! commands run with the layers that are there (Landlock still refuses a write outside). The
//! missing layer is user namespaces, taken away inside a throw-away user namespace.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::sandbox::{assert_ran, assert_refused};
use crate::sandbox_escapes::on_path;
use crate::support::*;

/// `spine run` on `script` (bypassPermissions, JSON with messages) where user namespaces cannot
/// be created: inside a throw-away user namespace whose `user.max_user_namespaces` is 0, so the
/// probe at session start finds that layer missing. `None` (said on stderr) when this machine
/// cannot make that namespace.
fn run_without_user_namespaces(s: &Sandbox, script: &Path) -> Option<Output> {
    let works =
        on_path("unshare") && Command::new("unshare").args(["-Ur", "true"]).output().is_ok_and(|o| o.status.success());
    if !works {
        eprintln!("skipped: no user namespace to take user namespaces away in (unshare -Ur)");
        return None;
    }
    let spine = s.spine_process();
    let mut command = Command::new("unshare");
    command
        .args(["-Ur", "sh", "-c", "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"", "sh"])
        .arg(spine.get_program())
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--output-format", "json", "--include-messages", "--permission-mode", "bypassPermissions"])
        .current_dir(s.project());
    for (key, value) in spine.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let out = command.output().expect("unshare runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    Some(out)
}

/// The stderr lines of `out` about the missing layer.
fn missing_layer_lines(out: &Output) -> Vec<String> {
    stderr(out).lines().filter(|l| l.contains("user namespaces unavailable")).map(str::to_owned).collect()
}

#[test]
fn fail_if_unavailable_refuses_every_command_when_a_layer_is_missing() {
    let s = Sandbox::new();
    s.write(".spine/settings.json", r#"{"sandbox": {"enabled": true, "failIfUnavailable": true}}"#);
    let script = s.script(bash_then_answer("touch ran.txt"));
    let Some(out) = run_without_user_namespaces(&s, &script) else { return };
    let result = first_tool_result(&json(&out));
    assert!(result.starts_with("Error [runtime_error]"), "a tool error: {result}");
    assert!(result.contains("the sandbox cannot run here (user namespaces unavailable ("), "{result}");
    assert!(result.contains("sandbox.failIfUnavailable refuses to run commands unconfined"), "{result}");
    assert!(!s.project().join("ran.txt").exists(), "the command did not run");
    let lines = missing_layer_lines(&out);
    assert_eq!(lines.len(), 1, "one line: {}", stderr(&out));
    assert!(lines[0].starts_with("spine: sandbox: user namespaces unavailable ("), "{}", lines[0]);
    assert!(lines[0].ends_with("; every command is refused"), "{}", lines[0]);
}

#[test]
fn without_fail_if_unavailable_a_missing_layer_is_said_once_and_commands_run_best_effort() {
    let s = Sandbox::new();
    s.write(".spine/settings.json", r#"{"sandbox": {"enabled": true}}"#);
    let outside = s.dir.path().join("outside.txt");
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": "touch ran.txt"}},
            {"id": "c2", "name": "Bash", "arguments": {"command": format!("touch {}", outside.display())}}
        ]},
        {"text": "done"}
    ]));
    let Some(out) = run_without_user_namespaces(&s, &script) else { return };
    let results = tool_results(&json(&out));
    assert_ran(&results[0]);
    assert!(s.project().join("ran.txt").exists(), "the command ran");
    // Landlock is still there: the write outside is refused.
    assert_refused(&results[1], "write outside the workspace");
    assert!(!outside.exists());
    let lines = missing_layer_lines(&out);
    assert_eq!(lines.len(), 1, "one line: {}", stderr(&out));
    assert!(lines[0].contains("commands run with the layers that are in force (best effort;"), "{}", lines[0]);
}
