//! A closed stdout is a normal end for every command: `spine … | head -0` never panics.

use std::process::Stdio;

use serde_json::json;

use crate::support::*;

/// Runs `spine ARGS` with a stdout whose reader is already gone, so every write fails with
/// EPIPE; returns the exit status and stderr.
fn with_closed_stdout(sandbox: &Sandbox, args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = sandbox
        .spine_process()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("spine runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn every_printing_command_ends_normally_when_stdout_is_closed() {
    let sandbox = Sandbox::new();
    let hook =
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0"}]}]}}"#;
    let script = sandbox.script(json!([{"text": "done"}]));
    let trace = sandbox.dir.path().join("trace.jsonl");
    let made = sandbox.run(&script, &["--trace", trace.to_str().expect("utf-8")]);
    assert!(made.status.success(), "{}", stderr(&made));
    let model = format!("scripted:{}", script.display());

    let cases: Vec<Vec<&str>> = vec![
        vec!["hooks", "list", "--settings", hook],
        vec!["hooks", "list", "--settings", hook, "--output-format", "json"],
        vec!["hooks", "check", "--settings", hook],
        vec![
            "hooks",
            "test",
            "PreToolUse",
            "--tool",
            "Bash",
            "--input",
            r#"{"tool_input": {"command": "ls"}}"#,
            "--settings",
            hook,
        ],
        vec!["hooks", "list"],
        vec!["trace", "show", trace.to_str().expect("utf-8")],
        vec!["run", "-p", "go", "--model", &model],
        vec!["run", "-p", "go", "--model", &model, "--output-format", "json", "--include-messages"],
        vec!["run", "-p", "go", "--model", &model, "--output-format", "stream-json"],
    ];
    for args in cases {
        let (code, err) = with_closed_stdout(&sandbox, &args);
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        assert_eq!(code, Some(0), "{args:?} ends normally: {err}");
    }
}
