//! The live status line in a real terminal (`tmux`): while a tool runs, one line on stderr
//! names the turn and the running tool; it is gone when the run prints its answer. With `-v`
//! (every event as its own line) there is none.

use std::path::Path;

use serde_json::json;

use crate::support::*;

fn command(s: &Sandbox, script: &Path, extra: &str) -> String {
    let args = format!(
        "-p go --model scripted:{} --allowedTools 'Bash(sleep *)' {extra}",
        shell_quote(&script.to_string_lossy())
    );
    terminal_command(s, "", &args)
}

fn sleeping_script(s: &Sandbox) -> std::path::PathBuf {
    s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "sleep 3"}}]},
        {"text": "All done."}
    ]))
}

#[test]
fn a_run_on_a_terminal_shows_the_running_tool_and_clears_the_line_at_the_end() {
    let s = Sandbox::new();
    let script = sleeping_script(&s);
    let tmux = Tmux::start(&s.project(), &command(&s, &script, ""));
    let during = tmux.wait_for("Bash: sleep 3");
    let line = during.lines().find(|l| l.contains("Bash: sleep 3")).expect("status line");
    assert!(line.starts_with("⠿ turn 1 · Bash: sleep 3 · "), "{line}");
    let after = tmux.wait_for("EXIT=0");
    assert!(after.contains("All done."), "{after}");
    assert!(!after.contains('⠿'), "the status line is cleared before the answer:\n{after}");
}

#[test]
fn verbose_runs_print_lines_and_no_status_line() {
    let s = Sandbox::new();
    let script = sleeping_script(&s);
    let tmux = Tmux::start(&s.project(), &command(&s, &script, "-v"));
    let after = tmux.wait_for("EXIT=0");
    assert!(after.contains("[Hook] PreToolUse: Bash"), "{after}");
    assert!(!after.contains('⠿'), "{after}");
}
