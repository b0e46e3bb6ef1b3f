//! Background processes: readiness on a port, death at start, list, output, stop, cleanup.

use std::time::{Duration, Instant};

use serde_json::json;
use spine_core::hooks::{HookContext, hook_fn};
use spine_protocol::hook::{HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;
use spine_tools::FamilyConfig;

use crate::agent::{AgentHarness, calls, projected_metadata, results, text};
use crate::direct::{Direct, eventually_none_with, free_port, marker};
use crate::support::eventually_dead;

/// A tiny HTTP service on `port` (Debian's python, not a pyenv shim).
fn http_server(port: u16) -> String {
    format!("echo starting; exec /usr/bin/python3 -m http.server {port} --bind 127.0.0.1")
}

#[tokio::test]
async fn process_exec_waits_for_the_port_and_reports_the_service() {
    let d = Direct::new();
    let port = free_port();
    let r = d
        .call("process_exec", json!({"command": http_server(port), "name": "web", "port": port}))
        .await
        .expect("started");
    assert_eq!(r["process_run_id"], json!("proc-1"));
    assert_eq!(r["ready"], json!(true));
    assert_eq!(r["status"], json!("running"));
    assert_eq!(r["port"], json!(port));
    let p = d.project("process_exec", &r);
    assert!(
        p.content.starts_with(&format!(
            "Background service started as process run proc-1. It accepts connections on 127.0.0.1:{port}."
        )),
        "{}",
        p.content
    );
    assert_eq!(p.metadata["process_run_id"], json!("proc-1"));
    assert_eq!(p.metadata["port"], json!(port));
    assert!(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok(), "it really listens");

    let list = d.call("process_list", json!({})).await.expect("list");
    assert_eq!(list["processes"][0]["name"], json!("web"));
    assert_eq!(
        d.project("process_list", &list).content,
        format!("1 background process:\n- proc-1 [running] web port {port}: {}", http_server(port))
    );
    let out = d.call("process_read_output", json!({"process_run_id": "proc-1"})).await.expect("read");
    assert!(out["stdout_tail"].as_str().expect("tail").starts_with("starting\n"), "{out}");

    let pid = r["pid"].as_u64().expect("pid") as u32;
    let stopped = d.call("process_stop", json!({"process_run_id": "proc-1"})).await.expect("stop");
    assert_eq!(stopped["was_running"], json!(true));
    assert_eq!(
        d.project("process_stop", &stopped).content.lines().next(),
        Some("Process run proc-1 was stopped and removed.")
    );
    assert!(eventually_dead(pid).await);
    assert_eq!(d.call("process_list", json!({})).await.expect("list")["processes"], json!([]));
}

#[tokio::test]
async fn a_process_that_dies_at_start_is_an_error_with_its_status_and_output() {
    let d = Direct::new();
    let port = free_port();
    let e = d
        .call("process_exec", json!({"command": "echo booting; echo bad config >&2; exit 3", "port": port}))
        .await
        .expect_err("died");
    assert_eq!(e.code, ErrorCode::RuntimeError);
    assert_eq!(
        e.message,
        "process exited with status 3 before it was ready: echo booting; echo bad config >&2; exit 3\nbooting\nstderr:\nbad config"
    );
    let response = e.response.expect("response");
    assert_eq!(response["exit_status"], json!(3));
    assert!(d.handles.processes.is_empty(), "a dead process is not kept");
    let quick =
        d.call("process_exec", json!({"command": "true"})).await.expect_err("no port: must survive the start window");
    assert!(quick.message.starts_with("process exited with status 0 before it was ready"), "{}", quick.message);
}

#[tokio::test]
async fn a_port_that_never_opens_times_out_and_the_process_is_stopped() {
    let d = Direct::new();
    let port = free_port();
    let started = Instant::now();
    let e = d
        .call("process_exec", json!({"command": "sleep 100", "port": port, "ready_timeout_ms": 400}))
        .await
        .expect_err("not ready");
    assert_eq!(e.code, ErrorCode::Timeout);
    assert!(e.message.starts_with(&format!("process did not accept connections on 127.0.0.1:{port} within 400 ms")));
    assert!(started.elapsed() < Duration::from_secs(4));
    let pid = e.response.expect("response")["pid"].as_u64().expect("pid") as u32;
    assert!(eventually_dead(pid).await);
    assert!(d.handles.processes.is_empty());
}

#[tokio::test]
async fn a_process_without_a_port_is_ready_once_it_survives_the_start_window() {
    let d = Direct::new();
    let r = d.call("process_exec", json!({"command": "sleep 100", "ready_timeout_ms": 50})).await.expect("ready");
    assert_eq!(r["port"], json!(null));
    assert_eq!(d.project("process_exec", &r).content, "Background service started as process run proc-1.");
    let sections = d.handles.operator_state().sections();
    assert_eq!(sections["processes"][0]["process_run_id"], json!("proc-1"));
    assert_eq!(sections["processes"][0]["status"], json!("running"));
}

#[tokio::test]
async fn a_process_that_dies_later_stays_listed_with_its_status() {
    let d = Direct::new();
    d.call("process_exec", json!({"command": "sleep 0.3; echo bye; exit 4", "ready_timeout_ms": 50}))
        .await
        .expect("ready");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let out = d.call("process_read_output", json!({"process_run_id": "proc-1"})).await.expect("read");
    assert_eq!(out["status"], json!("exited"));
    assert_eq!(out["exit_status"], json!(4));
    assert_eq!(
        d.project("process_read_output", &out).content,
        "Process run proc-1 exited with status 4 (stdout 4 bytes, stderr 0 bytes).\nbye"
    );
}

#[tokio::test]
async fn unknown_process_ids_are_not_found() {
    let d = Direct::new();
    for tool in ["process_read_output", "process_stop"] {
        let e = d.call(tool, json!({"process_run_id": "proc-7"})).await.expect_err(tool);
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(e.message, "no process run `proc-7` (there are none)");
    }
}

#[tokio::test]
async fn process_exec_goes_through_hooks_and_projection_in_the_runner_and_dies_with_the_run() {
    let m = marker();
    let mut h = AgentHarness::new();
    spine_tools::register_families(&mut h.tools, FamilyConfig::default());
    h.hooks
        .on_matching::<PreToolUse>(
            "process_.*",
            "name-required",
            hook_fn(|_c: &HookContext, input: &PreToolUseInput| {
                let named =
                    input.tool_input.get("name").is_some() || input.spine_tool_name.as_deref() != Some("process_exec");
                Ok(HookOutput::new(if named {
                    PreToolUseAction::default()
                } else {
                    PreToolUseAction::block("name your service")
                }))
            }),
        )
        .expect("matcher");
    let run = h
        .run(
            "serve",
            vec![
                calls(&[("c1", "process_exec", json!({"command": format!("sleep {m}")}))]),
                calls(&[(
                    "c2",
                    "process_exec",
                    json!({"command": format!("sleep {m}"), "name": "s", "ready_timeout_ms": 50}),
                )]),
                calls(&[("c3", "process_read_output", json!({"process_run_id": "proc-1"}))]),
                text("served"),
            ],
        )
        .await;
    assert_eq!(run.outcome.subtype, RunSubtype::Success);
    let r = results(&run.outcome.messages);
    assert_eq!(r[0].content, "Error [hook_blocked]: name your service");
    assert_eq!(r[1].content, "Background service started as process run proc-1.");
    assert_eq!(projected_metadata(&run.outcome, "c2")["process_run_id"], json!("proc-1"));
    assert_eq!(r[2].content, "Process run proc-1 is running (stdout 0 bytes, stderr 0 bytes).");
    assert_eq!(eventually_none_with(&m).await, Vec::<u32>::new());
}
