//! `--resume` without an id: on a terminal (`tmux`) it lists this project's sessions, newest
//! first, and resumes the one picked; without a terminal it is a usage error that says how to
//! find an id.

use serde_json::json;

use crate::support::*;

fn session(s: &Sandbox, prompt: &str) -> String {
    let script = s.script(json!([{"text": format!("answered {prompt}")}]));
    let out = s
        .spine()
        .args(["-p", prompt, "--model", &format!("scripted:{}", script.display()), "--output-format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)["session_id"].as_str().expect("id").to_owned()
}

#[test]
fn resume_without_an_id_on_a_terminal_offers_the_projects_sessions_newest_first() {
    let s = Sandbox::new();
    let older = session(&s, "first question");
    let newer = session(&s, "second question");
    let script = s.script(json!([{"text": "picked up"}]));
    let args = format!(
        "-p again --resume --model scripted:{} --output-format json > {}",
        shell_quote(&script.to_string_lossy()),
        shell_quote(&s.dir.path().join("out.json").to_string_lossy()),
    );
    let command = terminal_command(&s, "", &args);
    let tmux = Tmux::start(&s.project(), &command);
    let screen = tmux.wait_for("Resume which session? [1-2]");
    let first = screen.find("second question").expect("the newer session is listed");
    let second = screen.find("first question").expect("the older session is listed");
    assert!(first < second, "newest first:\n{screen}");
    assert!(screen.contains("  1) ") && screen.contains("  2) "), "{screen}");
    let sent = tmux.cmd().args(["send-keys", "-t", "t", "2", "Enter"]).status().expect("send-keys");
    assert!(sent.success());
    tmux.wait_for("EXIT=0");
    let out: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.dir.path().join("out.json")).expect("output")).expect("json");
    assert_eq!(out["session_id"], older.as_str(), "the second line is the older session");
    assert_eq!(out["result"], "picked up");
    assert_ne!(older, newer);
}

#[test]
fn resume_without_an_id_and_without_a_terminal_is_a_usage_error() {
    let s = Sandbox::new();
    session(&s, "first question");
    let out = s.spine().args(["-p", "again", "--resume"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--resume needs a session id when not on a terminal"), "{}", stderr(&out));
}
