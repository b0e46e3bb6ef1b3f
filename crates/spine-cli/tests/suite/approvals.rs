//! Approvals at a real terminal (`tmux`): the question shows the rule "always" would remember;
//! "always for this project" writes the call's narrowest rule to `.spine/settings.local.json`
//! and the next session does not ask, never through a `.spine` that is a symbolic link; no
//! "always" is offered for a command whose rule would hold a wildcard the user did not see; a
//! shell is remembered only as the exact command; "no" with a reason gives the model the
//! reason.

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
    let tmux = spine_in_tmux(&s, &bash_script(&s, "one.json", "/bin/echo hello world"), &out);
    let screen = tmux.wait_for("always for this [p]roject");
    assert!(screen.contains("Allow Bash"), "{screen}");
    assert!(screen.contains("\"always\" remembers Bash(/bin/echo:*)"), "the rule is shown before the answer: {screen}");
    answer(&tmux, "p");
    let screen = tmux.wait_for("EXIT=0");
    let settings = s.project().join(".spine/settings.local.json");
    assert!(screen.contains("Added Bash(/bin/echo:*) to"), "{screen}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&settings).expect("written")).expect("json");
    assert_eq!(written["permissions"]["allow"], json!(["Bash(/bin/echo:*)"]));
    assert!(first_tool_result(&result(&out)).contains("hello world"));
    drop(tmux);

    let tmux = spine_in_tmux(&s, &bash_script(&s, "two.json", "/bin/echo again"), &out);
    let screen = tmux.wait_for("EXIT=0");
    assert!(!screen.contains("Allow Bash"), "the saved rule answers: {screen}");
    assert!(first_tool_result(&result(&out)).contains("again"));
}

#[test]
fn no_with_a_reason_gives_the_model_the_reason() {
    let s = Sandbox::new();
    let out = s.dir.path().join("out.json");
    let tmux = spine_in_tmux(&s, &bash_script(&s, "one.json", "/bin/echo hello"), &out);
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

#[test]
fn always_is_not_offered_when_the_rule_would_hold_a_wildcard_the_user_did_not_see() {
    let s = Sandbox::new();
    let out = s.dir.path().join("out.json");
    let tmux = spine_in_tmux(&s, &bash_script(&s, "star.json", "git '*'"), &out);
    let screen = tmux.wait_for("[n]o (reason)");
    assert!(!screen.contains("[a]lways") && !screen.contains("remembers"), "{screen}");
    answer(&tmux, "n not this one");
    tmux.wait_for("EXIT=0");
    assert!(!s.project().join(".spine/settings.local.json").exists(), "nothing saved");
}

#[test]
fn always_for_a_shell_remembers_the_exact_command_only() {
    let s = Sandbox::new();
    s.trust();
    let out = s.dir.path().join("out.json");
    let tmux = spine_in_tmux(&s, &bash_script(&s, "one.json", "bash -c 'echo hi'"), &out);
    let screen = tmux.wait_for("always for this [p]roject");
    assert!(screen.contains("remembers Bash(bash -c echo hi), Bash(echo:*)"), "{screen}");
    answer(&tmux, "p");
    tmux.wait_for("EXIT=0");
    let settings = s.project().join(".spine/settings.local.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&settings).expect("written")).expect("json");
    assert_eq!(written["permissions"]["allow"], json!(["Bash(bash -c echo hi)", "Bash(echo:*)"]));
    drop(tmux);

    let victim = s.write("victim.txt", "precious");
    let tmux = spine_in_tmux(&s, &bash_script(&s, "two.json", "bash /dev/stdin <<< 'rm victim.txt'"), &out);
    let screen = tmux.wait_for("[n]o (reason)");
    assert!(screen.contains("Allow Bash"), "the saved rules do not cover another script: {screen}");
    answer(&tmux, "n not this one");
    tmux.wait_for("EXIT=0");
    assert_eq!(std::fs::read_to_string(&victim).expect("the victim survives"), "precious");
}

#[test]
fn always_for_this_project_never_writes_through_a_symlinked_spine_folder() {
    let s = Sandbox::new();
    let outside = s.dir.path().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::os::unix::fs::symlink(&outside, s.project().join(".spine")).expect("symlink");
    let out = s.dir.path().join("out.json");
    let tmux = spine_in_tmux(&s, &bash_script(&s, "one.json", "/bin/echo hello"), &out);
    tmux.wait_for("always for this [p]roject");
    answer(&tmux, "p");
    tmux.wait_for("EXIT=0");
    let joined = tmux.cmd().args(["capture-pane", "-p", "-J", "-t", "t"]).output().expect("capture-pane");
    let screen = String::from_utf8_lossy(&joined.stdout);
    assert!(screen.contains("Not saved") && screen.contains(".spine is a symbolic link"), "{screen}");
    assert!(first_tool_result(&result(&out)).contains("hello"), "allowed for the session");
    assert_eq!(std::fs::read_dir(&outside).expect("list").count(), 0, "nothing written through the link");
}
