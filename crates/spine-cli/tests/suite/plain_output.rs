//! Quiet, plain output: no escape codes where the output is not a terminal (`spine -v -p`,
//! `spine worker`), no colour on a terminal under `NO_COLOR`, and `-v` notes that are not news
//! printed once per project.

use serde_json::json;

use crate::support::*;
use crate::worker::{Backend, example, mailbox_url};

const ESC: &str = "\x1b[";

/// `spine -v -p hi` on the scripted model `script`, which must succeed.
fn verbose_run(s: &Sandbox, script: &std::path::Path) -> std::process::Output {
    let out = s
        .spine()
        .args(["-v", "-p", "hi", "--model"])
        .arg(format!("scripted:{}", script.display()))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

#[test]
fn spine_v_p_with_stderr_piped_writes_no_escape_codes() {
    let s = Sandbox::new();
    s.write(
        ".spine/settings.json",
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}).to_string(),
    );
    s.trust();
    let script = s.script(json!([{"text": "hello"}]));
    let out = verbose_run(&s, &script);
    assert!(stderr(&out).contains("[Hook] Stop"), "the -v lines are there: {}", stderr(&out));
    assert!(!stderr(&out).contains(ESC), "{:?}", stderr(&out));
    assert!(!stdout(&out).contains(ESC), "{:?}", stdout(&out));
}

/// The stderr (piped) of a `spine worker` that logs at `info` as it drains: it is stopped
/// (SIGTERM, `--drain-timeout 200ms`) while its one item sleeps, and says it canceled it.
/// `FORCE_COLOR=1` with `force`.
fn draining_worker_stderr(force: bool) -> String {
    let s = Sandbox::new();
    let url = mailbox_url(&s, Backend::Sqlite, "lease_ms=3600000");
    let started = s.project().join("started");
    let mut item = example("slow-1");
    item["payload"]["task_payload"] = json!({"mode": "deterministic_tool_call", "tool_call": {"tool_name": "Bash",
        "arguments": {"command": format!("touch {}; sleep 600", started.display())}}});
    item["payload"]["allowed_tool_names"] = json!(["Bash"]);
    let path = s.dir.path().join("item.json");
    std::fs::write(&path, item.to_string()).expect("item file");
    let submitted = s.spine().args(["submit", "--mailbox", &url]).arg(&path).output().expect("submit");
    assert!(submitted.status.success(), "{}", stderr(&submitted));
    let mut cmd = s.spine_process();
    cmd.args(["worker", "--mailbox", &url, "--drain-timeout", "200ms", "--settings"])
        .arg(r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#)
        .env("SPINE_LOG", "info")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if force {
        cmd.env("FORCE_COLOR", "1");
    } else {
        cmd.env_remove("FORCE_COLOR");
    }
    let worker = cmd.spawn().expect("spine worker");
    spine_testkit::files::wait_for_file_blocking(&started, std::time::Duration::from_secs(60));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(worker.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let out = worker.wait_with_output().expect("the worker exits");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stderr(&out)
}

#[test]
fn spine_worker_logs_with_stderr_piped_carry_no_escape_codes_unless_forced() {
    let plain = draining_worker_stderr(false);
    assert!(plain.contains("shutdown: canceled 1 in-flight item(s)"), "the worker logged: {plain}");
    assert!(!plain.contains(ESC), "{plain:?}");
    assert!(draining_worker_stderr(true).contains(ESC), "FORCE_COLOR colours a pipe");
}

#[test]
fn no_color_leaves_the_chat_screen_without_colour() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "hello"}]));
    // An empty NO_COLOR is not set (whatever the environment the tests run in says).
    let coloured = chat_session(&s, &script, &[("NO_COLOR", "")], "");
    coloured.wait_for_last_line(">");
    assert!(coloured.screen_with_escapes().contains(ESC), "without NO_COLOR the prompt is coloured");

    let tmux = chat_session(&s, &script, &[("NO_COLOR", "1")], "");
    tmux.send_line("hi");
    tmux.wait_for("hello");
    tmux.wait_for_last_line(">");
    let screen = tmux.screen_with_escapes();
    assert!(!screen.contains(ESC), "{screen:?}");
}

#[test]
fn the_enable_all_project_mcp_servers_note_is_printed_on_the_first_v_run_and_not_the_second() {
    let s = Sandbox::new();
    s.write(".mcp.json", &json!({"mcpServers": {}}).to_string());
    s.write(".claude/settings.local.json", &json!({"enableAllProjectMcpServers": true}).to_string());
    s.trust();
    let script = s.script(json!([{"text": "hello"}, {"text": "hello"}, {"text": "hello"}]));
    let run = || stderr(&verbose_run(&s, &script));
    let note = "ignoring `enableAllProjectMcpServers`";
    let first = run();
    assert_eq!(first.matches(note).count(), 1, "{first}");
    let second = run();
    assert!(!second.contains(note), "not news the second time: {second}");
    assert!(second.contains("[Session]"), "-v still prints the run's lines: {second}");

    // Changed settings are news again.
    s.write(".claude/settings.local.json", "{}");
    assert!(!run().contains(note));
    s.write(".claude/settings.local.json", &json!({"enableAllProjectMcpServers": true}).to_string());
    assert!(run().contains(note), "back after it went away");
}
