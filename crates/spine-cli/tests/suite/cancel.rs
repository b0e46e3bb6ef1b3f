//! Ctrl-C: the running tool's process group is killed, every pending call is answered
//! `Error [canceled]`, the transcript stays paired, and spine exits 130.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spine_protocol::message::Message;

use crate::support::*;

#[test]
fn ctrl_c_kills_the_running_tool_answers_pending_calls_and_exits_130() {
    let s = Sandbox::new();
    // Inside the workspace (a redirection outside it is denied) and covered by an Edit rule
    // (an allowed command's writes need one).
    let pidfile = s.project().join("sleep.pid");
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": format!("sleep 30 & echo $! > {}; wait", pidfile.display())}},
            {"id": "c2", "name": "calculator", "arguments": {"expression": "1 + 1"}}
        ]},
        {"text": "never"}
    ]));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("spine"))
        .current_dir(s.project())
        .env("SPINE_HOME", s.home())
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--settings", r#"{"permissions": {"allow": ["Bash", "Edit(sleep.pid)"]}}"#])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn spine");
    let deadline = Instant::now() + Duration::from_secs(20);
    let sleep_pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile).ok().and_then(|t| t.trim().parse().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the Bash tool never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let spine = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(spine, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "spine did not stop after Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    assert!(
        !std::path::Path::new(&format!("/proc/{sleep_pid}")).exists() || is_zombie(sleep_pid),
        "the sleep child was killed"
    );

    let session = std::fs::read_dir(s.home().join("sessions"))
        .expect("sessions")
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .expect("a transcript");
    let messages: Vec<Message> = std::fs::read_to_string(session.path())
        .expect("read")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "message")
        .filter_map(|v| serde_json::from_value(v["message"].clone()).ok())
        .collect();
    spine_protocol::pairing::validate_pairing(&messages).expect("the transcript stays paired");
    let results: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) => Some(t.content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.starts_with("Error [canceled]")), "{results:?}");
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
}
