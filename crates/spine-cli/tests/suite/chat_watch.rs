//! The session's watch in an interactive session (`tmux`): the shell's working directory
//! carries over from one prompt to the next, and FileChanged fires while the session waits at
//! its prompt.

use serde_json::json;

use crate::support::*;

#[test]
fn a_watched_file_changed_while_the_session_waits_fires_file_changed_and_the_shell_keeps_its_directory() {
    let s = Sandbox::new();
    s.write("sub/keep.txt", "");
    let log = s.dir.path().join("files.jsonl");
    let hook = format!(
        "cat >> {log}; echo >> {log}; echo '{{\"systemMessage\": \"envrc reloaded\"}}'",
        log = shell_quote(&log.to_string_lossy())
    );
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"FileChanged": [{"matcher": ".envrc", "hooks": [{"type": "command", "command": hook}]}]}
    });
    s.write(".claude/settings.json", &settings.to_string());
    s.trust();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "cd sub"}}]},
        {"text": "first answer"},
        {"tool_calls": [{"id": "c2", "name": "Bash", "arguments": {"command": "pwd > where.txt"}}]},
        {"text": "second answer"}
    ]));
    let tmux = chat_session(&s, &script, &[], "--permission-mode acceptEdits");
    tmux.send_line("go");
    tmux.wait_for("first answer");
    // The shell is in `sub`: the matcher's name is watched there.
    std::fs::write(s.project().join("sub/.envrc"), "export A=1\n").expect("write");
    tmux.wait_for("envrc reloaded");
    let fired = std::fs::read_to_string(&log).expect("FileChanged fired");
    let sub = std::fs::canonicalize(s.project().join("sub")).expect("sub");
    assert!(fired.contains(&format!("\"file_path\":\"{}\"", sub.join(".envrc").display())), "{fired}");
    assert!(fired.contains("\"event\":\"add\""), "{fired}");
    tmux.send_line("again");
    tmux.wait_for("second answer");
    let written = std::fs::read_to_string(sub.join("where.txt")).expect("the second prompt's command ran in sub");
    assert_eq!(written.trim(), sub.display().to_string());
}
