//! Ctrl-C, SIGTERM and SIGHUP: the running tool's process group is killed, every pending call is
//! answered `Error [canceled]`, the transcript stays paired, and spine exits 128 + the signal
//! (130, 143, 129). A transcript a killed run left unanswered is repaired by `--resume`.

use std::time::{Duration, Instant};

use serde_json::json;
use spine_core::session::Transcript;
use spine_protocol::message::Message;

use crate::support::*;

use nix::sys::signal::Signal;

#[test]
fn ctrl_c_kills_the_running_tool_answers_pending_calls_and_exits_130() {
    cancels_the_running_tool_and_answers_pending_calls(Signal::SIGINT, 130);
}

#[test]
fn sigterm_kills_the_running_tool_answers_pending_calls_and_exits_143() {
    cancels_the_running_tool_and_answers_pending_calls(Signal::SIGTERM, 143);
}

#[test]
fn sighup_kills_the_running_tool_answers_pending_calls_and_exits_129() {
    cancels_the_running_tool_and_answers_pending_calls(Signal::SIGHUP, 129);
}

/// Starts a run whose Bash call sleeps; returns spine, the sleep's pid and the sandbox.
fn run_with_a_sleeping_tool(s: &Sandbox) -> (std::process::Child, i32) {
    let pidfile = s.project().join("sleep.pid");
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "Bash", "arguments": {"command": format!("sleep 30 & echo $! > {}; wait", pidfile.display())}},
            {"id": "c2", "name": "calculator", "arguments": {"expression": "1 + 1"}}
        ]},
        {"text": "never"}
    ]));
    let child = s
        .spine_process()
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--permission-mode", "bypassPermissions"])
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
    (child, sleep_pid)
}

fn cancels_the_running_tool_and_answers_pending_calls(signal: Signal, code: i32) {
    let s = Sandbox::new();
    let (mut child, sleep_pid) = run_with_a_sleeping_tool(&s);
    let spine = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(spine, signal).expect("signal");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "spine did not stop after {signal}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(code), "{signal}");
    assert!(
        !std::path::Path::new(&format!("/proc/{sleep_pid}")).exists() || is_zombie(sleep_pid),
        "the sleep child was killed"
    );

    let loaded = Transcript::load(&session_file(&s)).expect("a readable transcript");
    assert_eq!(loaded.repaired, Vec::<String>::new(), "the transcript stays paired");
    let results: Vec<&str> = loaded
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) => Some(t.content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.starts_with("Error [canceled]")), "{results:?}");
}

fn session_file(s: &Sandbox) -> std::path::PathBuf {
    s.session_files().into_iter().find(|p| p.extension().is_some_and(|x| x == "jsonl")).expect("a transcript")
}

/// The calls the transcript left unanswered (the reader answers them `Error [canceled]` and
/// lists them; a transcript that stayed paired lists none).
fn unanswered_calls(s: &Sandbox) -> Vec<String> {
    Transcript::load(&session_file(s)).expect("a readable transcript").repaired
}

#[test]
fn a_sigkilled_spine_leaves_no_running_tool_behind() {
    let s = Sandbox::new();
    let (mut child, sleep_pid) = run_with_a_sleeping_tool(&s);
    child.kill().expect("SIGKILL spine");
    let _ = child.wait();
    // spine had no chance to clean up: its guard process kills the tool's group.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{sleep_pid}")).exists() && !is_zombie(sleep_pid) {
        if Instant::now() > deadline {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(sleep_pid), Signal::SIGKILL);
            panic!("the tool's sleep {sleep_pid} outlived the SIGKILLed spine");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn resume_answers_the_calls_a_killed_run_left_unanswered_and_goes_on() {
    let s = Sandbox::new();
    let (mut child, sleep_pid) = run_with_a_sleeping_tool(&s);
    child.kill().expect("SIGKILL spine");
    let _ = child.wait();
    // Should the guard be slow, do not leave the tool running after the test.
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(sleep_pid), Signal::SIGKILL);
    assert_eq!(unanswered_calls(&s), ["c1", "c2"], "the killed run left calls open");

    let session_id = session_file(&s).file_stem().expect("stem").to_string_lossy().into_owned();
    let script = s.script(json!([{"text": "picked up where we left off"}]));
    let out = s.resume(&session_id, "go on", &script);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "picked up where we left off");
    assert!(stderr(&out).contains("2 unanswered tool call(s) (c1, c2)"), "{}", stderr(&out));
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
}

#[test]
fn a_setsid_grandchild_that_left_the_tool_group_is_killed_when_the_run_ends() {
    let s = Sandbox::new();
    let pidfile = s.project().join("escaped.pid");
    let command = format!("setsid sleep 300 > /dev/null 2>&1 & echo $! > {}", pidfile.display());
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": command}}]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--permission-mode", "bypassPermissions"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pid: i32 = std::fs::read_to_string(&pidfile).expect("pid").trim().parse().expect("pid number");
    let gone = !std::path::Path::new(&format!("/proc/{pid}")).exists() || is_zombie(pid);
    if !gone {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }
    assert!(gone, "the setsid sleep {pid} outlived the run");
}

#[test]
fn sigterm_during_a_model_stream_ends_the_run_with_143_and_a_resumable_transcript() {
    use std::io::{Read, Write};
    let s = Sandbox::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (streaming, started) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut conn, _)) = listener.accept() else { return };
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        let event =
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"thinking\"},\"finish_reason\":null}]}\n\n";
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        let chunk = format!("{head}{:x}\r\n{event}\r\n", event.len());
        if conn.write_all(chunk.as_bytes()).and_then(|()| conn.flush()).is_ok() {
            let _ = streaming.send(());
        }
        // The stream stalls: no more bytes until spine goes away (reads drain the request body).
        while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
    });
    let child = s
        .spine_process()
        .env("OPENAI_BASE_URL", format!("http://{addr}/v1"))
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "-p", "go", "--model", "openai:gpt-test"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn spine");
    started.recv_timeout(Duration::from_secs(30)).expect("the model stream started");
    let spine = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(spine, Signal::SIGTERM).expect("SIGTERM");
    let out = child.wait_with_output().expect("spine ends");
    assert_eq!(out.status.code(), Some(143), "{}", String::from_utf8_lossy(&out.stderr));

    assert_eq!(unanswered_calls(&s), Vec::<String>::new(), "the transcript stays paired");
    let session_id = session_file(&s).file_stem().expect("stem").to_string_lossy().into_owned();
    let script = s.script(json!([{"text": "resumed"}]));
    let resumed = s.resume(&session_id, "again", &script);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(stdout(&resumed).trim(), "resumed");
}
