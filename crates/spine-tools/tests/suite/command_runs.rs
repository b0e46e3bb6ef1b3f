//! Command runs: exec_command, write_stdin, command_run_* — direct calls for the edge cases,
//! the runner for the whole path (hooks, permission, projection), the process table for
//! cleanup.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::tool::OutputStream;
use spine_protocol::hook::{HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;
use spine_tools::FamilyConfig;
use spine_tools::command_runs::CommandRunOptions;

use crate::agent::{AgentHarness, calls, projected_metadata, results, text};
use crate::direct::{Direct, eventually_none_with, marker, processes_with};
use crate::support::{Recorder, eventually_dead, read_pid};

#[tokio::test]
async fn exec_command_that_ends_within_yield_returns_exit_status_and_output() {
    let d = Direct::new();
    let r = d.call("exec_command", json!({"command": "echo hello"})).await.expect("exec");
    assert_eq!(r["command_run_id"], json!("cmd-1"));
    assert_eq!(r["exit_status"], json!(0));
    assert_eq!(r["session_closed"], json!(true));
    assert_eq!(r["stdout_tail"], json!("hello\n"));
    assert_eq!(r["stdout_bytes"], json!(6));
    assert_eq!(r["stderr_bytes"], json!(0));
    assert_eq!(r["truncated"], json!(false));
    assert_eq!(r["output_streamed"], json!(true));
    let p = d.project("exec_command", &r);
    assert_eq!(p.content, "Command exited with status 0 after streaming output.\nhello");
    assert_eq!(
        p.metadata.keys().cloned().collect::<Vec<_>>(),
        vec![
            "exit_status",
            "command_run_id",
            "stdout_bytes",
            "stderr_bytes",
            "session_closed",
            "truncated",
            "status",
            "output_streamed"
        ]
    );
    assert!(!Value::Object(p.metadata).to_string().contains("hello"), "no raw output in the metadata");
}

#[tokio::test]
async fn a_non_zero_exit_is_a_result_with_its_status_and_stderr() {
    let d = Direct::new();
    let r = d.call("exec_command", json!({"command": "echo oops >&2; exit 3"})).await.expect("a result");
    assert_eq!(r["exit_status"], json!(3));
    assert_eq!(r["stderr_tail"], json!("oops\n"));
    assert_eq!(
        d.project("exec_command", &r).content,
        "Command exited with status 3 after streaming output.\nstderr:\noops"
    );
    let quiet = d.call("exec_command", json!({"command": "true"})).await.expect("true");
    assert_eq!(d.project("exec_command", &quiet).content, "Command exited with status 0 with no output.");
}

#[tokio::test]
async fn exec_command_past_yield_returns_a_run_id_and_the_output_so_far() {
    let d = Direct::new();
    let started = Instant::now();
    let r = d
        .call("exec_command", json!({"command": "echo first; sleep 30; echo second", "yield_ms": 300}))
        .await
        .expect("exec");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(r["session_closed"], json!(false));
    assert_eq!(r["status"], json!("running"));
    assert_eq!(r["exit_status"], json!(null));
    assert_eq!(r["stdout_tail"], json!("first\n"));
    let p = d.project("exec_command", &r);
    assert!(p.content.starts_with("Command is still running as command run cmd-1 after "), "{}", p.content);
    assert!(p.content.ends_with("\nfirst"), "{}", p.content);
    let t = d.call("command_run_terminate", json!({"command_run_id": "cmd-1"})).await.expect("terminate");
    assert_eq!(t["status"], json!("terminated"));
}

#[tokio::test]
async fn exec_command_streams_output_as_progress_chunks_while_it_waits() {
    let d = Direct::new();
    let recorder = Arc::new(Recorder::default());
    let mut ctx = d.ctx.clone();
    ctx.call_id = "c-stream".into();
    ctx.progress = Some(Arc::clone(&recorder) as Arc<dyn spine_core::tool::ProgressSink>);
    let r = d
        .call_with("exec_command", json!({"command": "echo a; sleep 0.1; echo b >&2; sleep 0.1; echo c"}), &ctx)
        .await
        .expect("exec");
    assert_eq!(r["output_streamed"], json!(true));
    let chunks = recorder.chunks.lock().expect("lock").clone();
    let seen: Vec<(OutputStream, String)> = chunks.iter().map(|(_, _, s, t)| (*s, t.clone())).collect();
    assert_eq!(
        seen,
        vec![
            (OutputStream::Stdout, "a\n".to_owned()),
            (OutputStream::Stderr, "b\n".to_owned()),
            (OutputStream::Stdout, "c\n".to_owned())
        ]
    );
    assert!(chunks.iter().all(|(call, tool, _, _)| call == "c-stream" && tool == "exec_command"));
}

/// Seed test A.10 #8: pty `cat`, write_stdin hello, list, read_output, eof, wait.
#[tokio::test]
async fn pty_cat_echoes_input_and_ends_on_eof() {
    let d = Direct::new();
    let r = d.call("exec_command", json!({"command": "cat", "pty": true, "yield_ms": 0})).await.expect("exec");
    assert_eq!(r["pty"], json!(true));
    assert_eq!(r["session_closed"], json!(false));
    let w = d.call("write_stdin", json!({"command_run_id": "cmd-1", "text": "hello\n"})).await.expect("write");
    assert_eq!(w["bytes_written"], json!(6));
    assert_eq!(w["session_closed"], json!(false));
    let list = d.call("command_run_list", json!({})).await.expect("list");
    assert_eq!(list["command_runs"][0]["command_run_id"], json!("cmd-1"));
    assert_eq!(list["command_runs"][0]["status"], json!("running"));
    let out = d.call("command_run_read_output", json!({"command_run_id": "cmd-1"})).await.expect("read");
    assert_eq!(out["stdout_tail"], json!("hello\n"), "no echo, no \\r\\n translation");
    d.call("write_stdin", json!({"command_run_id": "cmd-1", "eof": true})).await.expect("eof");
    let waited =
        d.call("command_run_wait", json!({"command_run_id": "cmd-1", "timeout_ms": 5000})).await.expect("wait");
    assert_eq!(waited["session_closed"], json!(true));
    assert_eq!(waited["exit_status"], json!(0));
    assert_eq!(waited["timed_out"], json!(false));
}

#[tokio::test]
async fn pipe_stdin_round_trip_and_eof_close_the_input() {
    let d = Direct::new();
    d.call("exec_command", json!({"command": "while read l; do echo \"got $l\"; done; echo bye", "yield_ms": 0}))
        .await
        .expect("exec");
    let w = d.call("write_stdin", json!({"command_run_id": "cmd-1", "text": "one\n"})).await.expect("write");
    assert_eq!(w["stdout_tail"], json!("got one\n"));
    assert_eq!(
        d.project("write_stdin", &w).content,
        "Wrote 4 bytes to command run cmd-1. It is still running.\ngot one"
    );
    let e = d.call("write_stdin", json!({"command_run_id": "cmd-1", "text": "two\n", "eof": true})).await.expect("eof");
    assert_eq!(e["session_closed"], json!(true));
    assert_eq!(e["stdout_tail"], json!("got one\ngot two\nbye\n"));
}

#[tokio::test]
async fn a_finished_one_shot_run_can_still_be_read_and_waited() {
    let d = Direct::new();
    d.call("exec_command", json!({"command": "echo done"})).await.expect("exec");
    let read = d.call("command_run_read_output", json!({"command_run_id": "cmd-1"})).await.expect("read");
    assert_eq!(read["stdout_tail"], json!("done\n"));
    assert_eq!(read["exit_status"], json!(0));
    let waited = d.call("command_run_wait", json!({"command_run_id": "cmd-1"})).await.expect("wait");
    assert_eq!(waited["session_closed"], json!(true));
    assert_eq!(waited["output_streamed"], json!(false), "nothing new while this call waited");
    assert_eq!(d.project("command_run_wait", &waited).content, "Command exited with status 0.\ndone");
}

#[tokio::test]
async fn writing_to_a_finished_run_or_after_eof_is_a_validation_error() {
    let d = Direct::new();
    d.call("exec_command", json!({"command": "exit 0"})).await.expect("exec");
    let e = d.call("write_stdin", json!({"command_run_id": "cmd-1", "text": "x"})).await.expect_err("finished");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert_eq!(
        e.message,
        "cannot write to command run cmd-1: it has ended (exited with status 0); it cannot read input"
    );
    d.call("exec_command", json!({"command": "cat", "yield_ms": 0})).await.expect("exec");
    d.call("write_stdin", json!({"command_run_id": "cmd-2", "eof": true, "yield_ms": 0})).await.expect("eof");
    let run = d.handles.command_runs.len();
    assert_eq!(run, 2);
    let again = d.call("write_stdin", json!({"command_run_id": "cmd-2", "text": "late"})).await.expect_err("closed");
    assert_eq!(again.code, ErrorCode::ValidationError);
    assert!(
        again.message.contains("its input was already closed") || again.message.contains("it has ended"),
        "{}",
        again.message
    );
}

#[tokio::test]
async fn unknown_run_ids_are_not_found() {
    let d = Direct::new();
    for (tool, args) in [
        ("write_stdin", json!({"command_run_id": "cmd-9", "text": "x"})),
        ("command_run_wait", json!({"command_run_id": "cmd-9"})),
        ("command_run_read_output", json!({"command_run_id": "cmd-9"})),
        ("command_run_terminate", json!({"command_run_id": "cmd-9"})),
    ] {
        let e = d.call(tool, args).await.expect_err(tool);
        assert_eq!(e.code, ErrorCode::NotFound, "{tool}");
        assert_eq!(e.message, "no command run `cmd-9` (there are none)");
    }
}

#[tokio::test]
async fn terminate_kills_the_process_group_and_removes_the_run() {
    let d = Direct::new();
    let pidfile = d.root().join("bg.pid");
    let command = format!("sleep 100 & echo $! > {}; wait", pidfile.display());
    d.call("exec_command", json!({"command": command, "yield_ms": 0})).await.expect("exec");
    let grandchild = read_pid(&pidfile).await;
    let t = d.call("command_run_terminate", json!({"command_run_id": "cmd-1"})).await.expect("terminate");
    assert_eq!(t["session_closed"], json!(true));
    assert_eq!(t["was_running"], json!(true));
    let p = d.project("command_run_terminate", &t);
    assert_eq!(p.metadata["terminated"], json!(true));
    assert!(p.content.starts_with("Command run cmd-1 was terminated and removed."), "{}", p.content);
    assert!(eventually_dead(grandchild).await, "the group's background child died too");
    let list = d.call("command_run_list", json!({})).await.expect("list");
    assert_eq!(list["command_runs"], json!([]));
    let gone = d.call("command_run_read_output", json!({"command_run_id": "cmd-1"})).await.expect_err("removed");
    assert_eq!(gone.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn output_beyond_the_ring_keeps_the_tail_and_counts_every_byte() {
    let config = FamilyConfig {
        command_runs: CommandRunOptions { ring_cap: 1000, tail_bytes: 100, max_runs: 4 },
        ..FamilyConfig::default()
    };
    let d = Direct::with(config);
    let r = d.call("exec_command", json!({"command": "seq 1 10000"})).await.expect("exec");
    assert_eq!(r["stdout_bytes"], json!(48_894));
    assert_eq!(r["truncated"], json!(true));
    let tail = r["stdout_tail"].as_str().expect("tail");
    assert_eq!(tail.len(), 100);
    assert!(tail.ends_with("9999\n10000\n"), "{tail}");
    let p = d.project("exec_command", &r);
    assert!(p.content.contains("[last 100 of 48894 bytes]"), "{}", p.content);
    assert_eq!(p.metadata["truncated"], json!(true));
}

#[tokio::test]
async fn a_full_registry_evicts_the_oldest_ended_run_and_refuses_when_all_run() {
    let config = FamilyConfig {
        command_runs: CommandRunOptions { max_runs: 2, ..CommandRunOptions::default() },
        ..FamilyConfig::default()
    };
    let d = Direct::with(config);
    d.call("exec_command", json!({"command": "true"})).await.expect("1");
    d.call("exec_command", json!({"command": "sleep 30", "yield_ms": 0})).await.expect("2");
    d.call("exec_command", json!({"command": "sleep 30", "yield_ms": 0})).await.expect("3 evicts 1");
    let ids: Vec<Value> = d.call("command_run_list", json!({})).await.expect("list")["command_runs"]
        .as_array()
        .expect("list")
        .iter()
        .map(|r| r["command_run_id"].clone())
        .collect();
    assert_eq!(ids, vec![json!("cmd-2"), json!("cmd-3")]);
    let e = d.call("exec_command", json!({"command": "true"})).await.expect_err("full");
    assert_eq!(e.code, ErrorCode::ValidationError);
    d.handles.shutdown().await;
    assert!(d.handles.command_runs.is_empty());
}

#[tokio::test]
async fn cancellation_of_a_waiting_call_terminates_its_run() {
    let d = Arc::new(Direct::new());
    let m = marker();
    let task = {
        let d = Arc::clone(&d);
        let command = format!("sleep {m}");
        tokio::spawn(async move { d.call("exec_command", json!({"command": command})).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!processes_with(&m).is_empty(), "the command runs");
    let canceled_at = Instant::now();
    d.ctx.cancel.cancel();
    let e = task.await.expect("join").expect_err("canceled");
    assert_eq!(e.code, ErrorCode::Canceled);
    assert!(canceled_at.elapsed() < Duration::from_secs(3));
    assert_eq!(eventually_none_with(&m).await, Vec::<u32>::new());
    assert!(d.handles.command_runs.is_empty(), "the canceled run was removed");
}

#[tokio::test]
async fn dropping_the_registry_kills_every_run() {
    let m = marker();
    {
        let d = Direct::new();
        d.call("exec_command", json!({"command": format!("sleep {m} & sleep {m}"), "yield_ms": 0}))
            .await
            .expect("exec");
        d.call("exec_command", json!({"command": format!("sleep {m}"), "pty": true, "yield_ms": 0}))
            .await
            .expect("pty");
        for _ in 0..100 {
            if processes_with(&m).len() >= 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(processes_with(&m).len() >= 3, "{:?}", processes_with(&m));
    }
    assert_eq!(eventually_none_with(&m).await, Vec::<u32>::new());
}

#[tokio::test]
async fn operator_state_lists_command_runs_without_output() {
    let d = Direct::new();
    d.call("exec_command", json!({"command": "echo secret-output"})).await.expect("exec");
    let sections = d.handles.operator_state().sections();
    let runs = sections["command_runs"].as_array().expect("runs");
    assert_eq!(runs[0]["command_run_id"], json!("cmd-1"));
    assert_eq!(runs[0]["status"], json!("exited"));
    assert_eq!(runs[0]["exit_status"], json!(0));
    assert_eq!(sections["processes"], json!([]));
    assert!(!Value::Object(sections).to_string().contains("secret-output\n"));
}

/// The attached-helper flow through the runner: every call goes through review,
/// PreToolUse (a hook matching `exec_command` sees the input and one blocks
/// `command_run_terminate`), the permission stage, execution and projection.
#[tokio::test]
async fn command_runs_go_through_hooks_permission_and_projection_in_the_runner() {
    let mut h = AgentHarness::new();
    let handles = spine_tools::register_families(&mut h.tools, FamilyConfig::default());
    h.operator_state = Some(handles.operator_state());
    drop(handles);
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    {
        let seen = Arc::clone(&seen);
        h.hooks
            .on_matching::<PreToolUse>(
                "exec_command",
                "watch-exec",
                hook_fn(move |_c: &HookContext, input: &PreToolUseInput| {
                    seen.lock().expect("seen").push(input.tool_input.clone());
                    Ok(HookOutput::new(PreToolUseAction::default()))
                }),
            )
            .expect("matcher");
        h.hooks
            .on_matching::<PreToolUse>(
                "command_run_terminate",
                "no-terminate",
                hook_fn(|_c: &HookContext, _i: &PreToolUseInput| {
                    Ok(HookOutput::new(PreToolUseAction::block("terminating is reserved")))
                }),
            )
            .expect("matcher");
    }
    let run = h
        .run(
            "talk to cat",
            vec![
                calls(&[("c1", "exec_command", json!({"command": "echo hello"}))]),
                calls(&[("c2", "exec_command", json!({"command": "cat", "pty": true, "yield_ms": 0}))]),
                calls(&[("c3", "write_stdin", json!({"command_run_id": "cmd-2", "text": "hello\n"}))]),
                calls(&[
                    ("c4", "command_run_list", json!({})),
                    ("c5", "command_run_read_output", json!({"command_run_id": "cmd-2"})),
                ]),
                calls(&[("c6", "write_stdin", json!({"command_run_id": "cmd-2", "eof": true}))]),
                calls(&[
                    ("c7", "command_run_wait", json!({"command_run_id": "cmd-2"})),
                    ("c8", "command_run_terminate", json!({"command_run_id": "cmd-2"})),
                ]),
                text("cat is done"),
            ],
        )
        .await;
    assert_eq!(run.outcome.subtype, RunSubtype::Success, "{}", run.outcome.result);
    let r = results(&run.outcome.messages);
    assert_eq!(r[0].content, "Command exited with status 0 after streaming output.\nhello");
    let meta = projected_metadata(&run.outcome, "c1");
    assert_eq!(meta["exit_status"], json!(0));
    assert_eq!(meta["stdout_bytes"], json!(6));
    assert_eq!(meta["output_streamed"], json!(true));
    assert_eq!(meta["session_closed"], json!(true));
    assert!(r[1].content.starts_with("Command is still running as command run cmd-2"), "{}", r[1].content);
    assert_eq!(r[2].content, "Wrote 6 bytes to command run cmd-2. It is still running.\nhello");
    assert_eq!(r[3].content, "2 command runs:\n- cmd-1 [exited 0] echo hello\n- cmd-2 [running] cat");
    assert_eq!(r[4].content, "Command run cmd-2 is still running (stdout 6 bytes, stderr 0 bytes).\nhello");
    assert_eq!(r[6].content, "Command exited with status 0.\nhello");
    assert_eq!(projected_metadata(&run.outcome, "c7")["session_closed"], json!(true));
    assert_eq!(r[7].content, "Error [hook_blocked]: terminating is reserved");
    assert_eq!(
        *seen.lock().expect("seen"),
        vec![json!({"command": "echo hello"}), json!({"command": "cat", "pty": true, "yield_ms": 0})]
    );
    let streamed: Vec<String> = run
        .progress
        .chunks
        .lock()
        .expect("chunks")
        .iter()
        .filter(|(call, ..)| call == "c1")
        .map(|(.., t)| t.clone())
        .collect();
    assert_eq!(streamed, vec!["hello\n".to_owned()]);
    // The operator state of the last request lists both runs.
    let last = run.script.requests().pop().expect("requests");
    let system = last[0].text().expect("system").to_owned();
    assert!(system.contains("\"command_run_id\": \"cmd-2\""), "{system}");
}

#[tokio::test]
async fn no_process_is_left_behind_after_a_run() {
    let m = marker();
    let mut h = AgentHarness::new();
    spine_tools::register_families(&mut h.tools, FamilyConfig::default());
    let run = h
        .run(
            "start things and leave",
            vec![
                calls(&[
                    ("c1", "exec_command", json!({"command": format!("sleep {m} & sleep {m}"), "yield_ms": 100})),
                    ("c2", "exec_command", json!({"command": format!("sleep {m}"), "pty": true, "yield_ms": 0})),
                    ("c3", "process_exec", json!({"command": format!("sleep {m}"), "name": "sleeper"})),
                ]),
                calls(&[("c4", "process_list", json!({}))]),
                text("bye"),
            ],
        )
        .await;
    assert_eq!(run.outcome.subtype, RunSubtype::Success, "{}", run.outcome.result);
    let r = results(&run.outcome.messages);
    assert!(r[2].content.starts_with("Background service started as process run proc-1."), "{}", r[2].content);
    assert!(r[3].content.contains("proc-1 [running] sleeper"), "{}", r[3].content);
    assert_eq!(eventually_none_with(&m).await, Vec::<u32>::new(), "every command run and process was killed");
}
