//! Approvals at a real terminal (`tmux`): "always for this project" writes the call's narrowest
//! rule to `.spine/settings.local.json` and the next session does not ask; "no" with a reason
//! gives the model the reason.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

fn bash_script(s: &Sandbox, name: &str, command: &str) -> PathBuf {
    let path = s.dir.path().join(name);
    spine_testkit::script::write_script_file(
        &path,
        json!([{"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": command}}]}, {"text": "done"}]),
    )
    .expect("script");
    path
}

/// A tmux session running `spine -p go` with `script`, its JSON result written to `out`.
fn spine_in_tmux(s: &Sandbox, script: &Path, out: &Path) -> Tmux {
    let args = format!(
        "-p go --model scripted:{} --output-format json --include-messages > {}",
        shell_quote(&script.to_string_lossy()),
        shell_quote(&out.to_string_lossy()),
    );
    Tmux::start(&s.project(), &terminal_command(s, "", &args))
}

fn answer(tmux: &Tmux, keys: &str) {
    let sent = tmux.cmd().args(["send-keys", "-t", "t", "-l", keys]).status().expect("send-keys");
    assert!(sent.success());
    let sent = tmux.cmd().args(["send-keys", "-t", "t", "Enter"]).status().expect("send-keys");
    assert!(sent.success());
}

fn result(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("output")).expect("json")
}

#[test]
fn always_for_this_project_writes_the_narrowest_rule_and_the_next_session_does_not_ask() {
    let s = Sandbox::new();
    s.trust();
    let out = s.dir.path().join("out.json");
    let tmux = spine_in_tmux(&s, &bash_script(&s, "one.json", "echo hello world"), &out);
    let screen = tmux.wait_for("always for this [p]roject");
    assert!(screen.contains("Allow Bash"), "{screen}");
    answer(&tmux, "p");
    let screen = tmux.wait_for("EXIT=0");
    let settings = s.project().join(".spine/settings.local.json");
    assert!(screen.contains("Added Bash(echo:*) to"), "{screen}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&settings).expect("written")).expect("json");
    assert_eq!(written["permissions"]["allow"], json!(["Bash(echo:*)"]));
    assert!(first_tool_result(&result(&out)).contains("hello world"));
    drop(tmux);

    let tmux = spine_in_tmux(&s, &bash_script(&s, "two.json", "echo again"), &out);
    let screen = tmux.wait_for("EXIT=0");
    assert!(!screen.contains("Allow Bash"), "the saved rule answers: {screen}");
    assert!(first_tool_result(&result(&out)).contains("again"));
}

#[test]
fn no_with_a_reason_gives_the_model_the_reason() {
    let s = Sandbox::new();
    let out = s.dir.path().join("out.json");
    let tmux = spine_in_tmux(&s, &bash_script(&s, "one.json", "echo hello"), &out);
    tmux.wait_for("[n]o (reason)");
    answer(&tmux, "n use the staging database instead");
    tmux.wait_for("EXIT=0");
    let text = first_tool_result(&result(&out));
    assert!(
        text.starts_with("Error [permission_denied]") && text.contains("use the staging database instead"),
        "{text}"
    );
    assert!(!s.project().join(".spine/settings.local.json").exists(), "nothing saved");
}
