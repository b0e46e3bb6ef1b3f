//! Bash: real processes, process groups, time limits, cancellation, capped output.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use spine_core::tool::OutputStream;
use spine_protocol::tool::ErrorCode;

use crate::support::{Fixture, Recorder, eventually_dead, read_pid};

#[tokio::test]
async fn bash_runs_in_the_working_directory_and_returns_claude_codes_shape() {
    let f = Fixture::new();
    let r = f.call("Bash", json!({"command": "pwd; echo warn >&2", "description": "where"})).await.expect("bash");
    assert_eq!(
        r,
        json!({
            "stdout": f.root().display().to_string(),
            "stderr": "warn\n",
            "interrupted": false,
            "isImage": false,
            "noOutputExpected": false,
            "exit_code": 0,
        })
    );
    let p = f.project("Bash", &r);
    assert_eq!(p.content, format!("Command exited with status 0.\n{}\nstderr:\nwarn", f.root().display()));
    assert_eq!(p.metadata["exit_status"], json!(0));
    assert_eq!(p.metadata["stderr_bytes"], json!(5));
    assert_eq!(p.metadata["truncated"], json!(false));
    assert_eq!(p.metadata["interrupted"], json!(false));
}

#[tokio::test]
async fn bash_non_zero_exit_is_command_failed_keeping_output_and_code() {
    let f = Fixture::new();
    let e = f.call("Bash", json!({"command": "echo out; echo err >&2; exit 3"})).await.expect_err("exit 3");
    assert_eq!(e.code, ErrorCode::CommandFailed);
    assert_eq!(e.message, "Exit code 3\nout\nstderr:\nerr");
    assert_eq!(
        e.response,
        Some(json!({"stdout": "out", "stderr": "err\n", "interrupted": false, "isImage": false,
                   "noOutputExpected": false, "exit_code": 3}))
    );
}

#[tokio::test]
async fn bash_stdout_drops_its_trailing_newlines_as_claude_code_does_and_the_model_text_is_unchanged() {
    let f = Fixture::new();
    let r = f.call("Bash", json!({"command": "printf 'a\\n\\nb\\n\\n'; printf 'e\\n' >&2"})).await.expect("bash");
    assert_eq!(r["stdout"], json!("a\n\nb"), "inner blank lines stay, trailing newlines go");
    assert_eq!(r["stderr"], json!("e\n"));
    assert_eq!(f.project("Bash", &r).content, "Command exited with status 0.\na\n\nb\nstderr:\ne");
}

#[tokio::test]
async fn a_replaced_response_without_an_exit_code_is_projected_as_its_output() {
    let f = Fixture::new();
    // Claude Code's shape of Bash's tool_response, as a PostToolUse hook would write it.
    let replaced = json!({"stdout": "[redacted]", "stderr": "", "interrupted": false, "isImage": false});
    let p = f.project("Bash", &replaced);
    assert_eq!(p.content, "[redacted]");
    assert_eq!(p.metadata["exit_status"], json!(null));
    let silent = f.project("Bash", &json!({"stdout": "", "stderr": ""}));
    assert_eq!(silent.content, "The command printed nothing.");
    let interrupted = f.project("Bash", &json!({"stdout": "x", "interrupted": true}));
    assert_eq!(interrupted.content, "Command was interrupted.\nx");
    // The tool's own response always has `exit_code`; null there still says so.
    let signal = f.project("Bash", &json!({"stdout": "", "stderr": "", "interrupted": false, "exit_code": null}));
    assert_eq!(signal.content, "Command ended without an exit status. It printed nothing.");
}

#[tokio::test]
async fn bash_timeout_kills_the_whole_process_group() {
    let f = Fixture::new();
    let pidfile = f.root().join("child.pid");
    let started = Instant::now();
    let e = f
        .call(
            "Bash",
            json!({
                "command": format!("echo before; sleep 100 & echo $! > {}; wait", pidfile.display()),
                "timeout": 500,
            }),
        )
        .await
        .expect_err("timeout");
    let elapsed = started.elapsed();
    assert_eq!(e.code, ErrorCode::Timeout);
    assert!(e.message.starts_with("Command timed out after 500 ms\nbefore"), "{}", e.message);
    let response = e.response.expect("response");
    assert_eq!(response["interrupted"], json!(true));
    assert_eq!(response["exit_code"], json!(null));
    assert_eq!(response["stdout"], json!("before"));
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let pid = read_pid(&pidfile).await;
    assert!(eventually_dead(pid).await, "grandchild {pid} survived");
}

#[tokio::test]
async fn bash_cancellation_returns_canceled_fast_and_kills_the_group() {
    let f = Arc::new(Fixture::new());
    let pidfile = f.root().join("child.pid");
    let command = format!("sleep 100 & echo $! > {}; wait", pidfile.display());
    let task = {
        let f = Arc::clone(&f);
        tokio::spawn(async move { f.call("Bash", json!({"command": command})).await })
    };
    let pid = read_pid(&pidfile).await;
    let canceled_at = Instant::now();
    f.ctx.cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), task).await.expect("returns after cancel").expect("join");
    let e = result.expect_err("canceled");
    assert_eq!(e.code, ErrorCode::Canceled);
    assert!(canceled_at.elapsed() < Duration::from_secs(3), "cancel took {:?}", canceled_at.elapsed());
    assert_eq!(e.response.expect("response")["interrupted"], json!(true));
    assert!(eventually_dead(pid).await, "grandchild {pid} survived");
}

#[tokio::test]
async fn bash_a_canceled_run_does_not_start_the_command() {
    let f = Fixture::new();
    f.ctx.cancel.cancel();
    let marker = f.root().join("ran");
    let e = f.call("Bash", json!({"command": format!("touch {}", marker.display())})).await.expect_err("canceled");
    assert_eq!(e.code, ErrorCode::Canceled);
    assert!(!marker.exists());
}

#[tokio::test]
async fn bash_background_children_do_not_outlive_the_command_or_hold_it() {
    let f = Fixture::new();
    let pidfile = f.root().join("bg.pid");
    let started = Instant::now();
    let r = f
        .call("Bash", json!({"command": format!("sleep 100 & echo $! > {}; echo done", pidfile.display())}))
        .await
        .expect("bash");
    assert_eq!(r["stdout"], json!("done"));
    assert!(started.elapsed() < Duration::from_secs(5));
    let pid = read_pid(&pidfile).await;
    assert!(eventually_dead(pid).await, "background child {pid} survived");
}

#[tokio::test]
async fn bash_output_over_30000_characters_keeps_head_and_tail_around_a_marker() {
    let f = Fixture::new();
    let r = f.call("Bash", json!({"command": "seq 1 20000"})).await.expect("bash");
    let stdout = r["stdout"].as_str().expect("stdout");
    let full: String = (1..=20000).map(|i| format!("{i}\n")).collect();
    let omitted = full.len() - 30_000;
    assert!(stdout.starts_with("1\n2\n3\n"));
    assert!(stdout.ends_with("19999\n20000"), "the kept tail without its trailing newline");
    assert!(
        stdout.contains(&format!("\n... [output truncated: {omitted} characters omitted] ...\n")),
        "marker missing"
    );
    let marker_len = format!("\n... [output truncated: {omitted} characters omitted] ...\n").len();
    assert_eq!(stdout.len(), 30_000 + marker_len - 1);
    let p = f.project("Bash", &r);
    assert_eq!(p.metadata["truncated"], json!(true));
}

#[tokio::test]
async fn bash_output_cap_is_shared_so_a_small_stderr_survives_a_flood() {
    let f = Fixture::new();
    let r = f
        .call("Bash", json!({"command": "head -c 100000 /dev/zero | tr '\\0' a; echo 'the real error' >&2"}))
        .await
        .expect("bash");
    assert_eq!(r["stderr"], json!("the real error\n"));
    let stdout = r["stdout"].as_str().expect("stdout");
    let kept = 30_000 - "the real error\n".len();
    let marker = format!("\n... [output truncated: {} characters omitted] ...\n", 100_000 - kept);
    assert!(stdout.contains(&marker), "marker missing");
    assert_eq!(stdout.len() - marker.len(), kept);
}

#[tokio::test]
async fn bash_env_file_exports_reach_the_command() {
    let mut f = Fixture::new();
    let env = f.root().join("env.sh");
    std::fs::write(&env, "# from SessionStart\nexport GREETING='hello world'\nCOUNT=3\nnot valid\n").expect("write");
    f.ctx.env_file = Some(env);
    let r = f.call("Bash", json!({"command": "echo \"$GREETING|$COUNT\""})).await.expect("bash");
    assert_eq!(r["stdout"], json!("hello world|3"));
    // A missing env file is no error.
    f.ctx.env_file = Some(f.root().join("missing.sh"));
    let r = f.call("Bash", json!({"command": "echo ok"})).await.expect("bash");
    assert_eq!(r["stdout"], json!("ok"));
}

#[tokio::test]
async fn bash_streams_output_chunks_to_the_progress_sink() {
    let mut f = Fixture::new();
    let recorder = Arc::new(Recorder::default());
    f.ctx.progress = Some(recorder.clone());
    f.ctx.call_id = "call-42".into();
    f.call("Bash", json!({"command": "echo hello; echo oops >&2"})).await.expect("bash");
    let chunks = recorder.chunks.lock().expect("lock").clone();
    let text = |s: OutputStream| -> String { chunks.iter().filter(|c| c.2 == s).map(|c| c.3.as_str()).collect() };
    assert_eq!(text(OutputStream::Stdout), "hello\n");
    assert_eq!(text(OutputStream::Stderr), "oops\n");
    assert!(chunks.iter().all(|c| c.0 == "call-42" && c.1 == "Bash"));
}

#[tokio::test]
async fn bash_streams_output_before_the_command_ends() {
    let mut f = Fixture::new();
    let recorder = Arc::new(Recorder::default());
    f.ctx.progress = Some(recorder.clone());
    let f = Arc::new(f);
    let task = {
        let f = Arc::clone(&f);
        tokio::spawn(async move { f.call("Bash", json!({"command": "echo early; sleep 2"})).await })
    };
    let mut seen = false;
    for _ in 0..150 {
        if !recorder.chunks.lock().expect("lock").is_empty() {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(seen, "no chunk while the command ran");
    assert!(!task.is_finished());
    task.await.expect("join").expect("bash");
}

#[tokio::test]
async fn bash_run_in_background_is_refused_with_a_pointer_to_exec_command() {
    let f = Fixture::new();
    let e = f.call("Bash", json!({"command": "true", "run_in_background": true})).await.expect_err("refused");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert!(e.message.contains("exec_command") && e.message.contains("process_exec"), "{}", e.message);
    f.call("Bash", json!({"command": "true", "run_in_background": false})).await.expect("foreground is fine");
}

#[tokio::test]
async fn bash_signal_death_has_a_null_exit_code_and_a_missing_cwd_is_a_runtime_error() {
    let mut f = Fixture::new();
    let e = f.call("Bash", json!({"command": "kill -9 $$"})).await.expect_err("killed");
    assert_eq!(e.code, ErrorCode::CommandFailed);
    assert_eq!(e.response.expect("response")["exit_code"], json!(null));
    f.ctx.cwd = f.root().join("does-not-exist");
    let e = f.call("Bash", json!({"command": "true"})).await.expect_err("no cwd");
    assert_eq!(e.code, ErrorCode::RuntimeError);
}

#[tokio::test]
async fn bash_dropping_the_call_midway_kills_the_group() {
    let f = Arc::new(Fixture::new());
    let pidfile = f.root().join("child.pid");
    let command = format!("sleep 100 & echo $! > {}; wait", pidfile.display());
    let task = {
        let f = Arc::clone(&f);
        tokio::spawn(async move { f.call("Bash", json!({"command": command})).await })
    };
    let pid = read_pid(&pidfile).await;
    task.abort();
    let _ = task.await;
    assert!(eventually_dead(pid).await, "grandchild {pid} survived");
}
