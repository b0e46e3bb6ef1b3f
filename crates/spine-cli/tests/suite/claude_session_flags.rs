//! The session flags Claude Code users type — `--continue`, `--resume`, `--session-id`,
//! `--no-session-persistence` — and the turn limit, through the binary with the scripted model.

use crate::support::*;
use serde_json::{Value, json};
use std::process::Output;

use crate::claude_flags::{answer, scripted, spine_json, tool_result, two_shell_calls};

fn session_of(out: &Output) -> String {
    json(out)["session_id"].as_str().expect("session_id").to_owned()
}

fn user_prompts(v: &Value) -> Vec<String> {
    v["messages"]
        .as_array()
        .map(|m| {
            m.iter().filter(|m| m["role"] == "user").filter_map(|m| m["content"].as_str().map(str::to_owned)).collect()
        })
        .unwrap_or_default()
}

#[test]
fn continue_picks_the_most_recent_session_of_this_project() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    let first = s
        .spine()
        .args(["-p", "first", "--model", &scripted(&script), "--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    let first_id = session_of(&first);
    // A later session of another project is not this project's.
    let other = s.dir.path().join("other");
    std::fs::create_dir_all(&other).expect("other");
    let elsewhere = s
        .spine()
        .args(["-p", "elsewhere", "--cwd", other.to_str().expect("utf8"), "--model", &scripted(&script)])
        .args(["--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_ne!(session_of(&elsewhere), first_id);
    for flag in ["-c", "--continue"] {
        let out = spine_json(&s, &script, &[flag, "-p", "again"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(session_of(&out), first_id, "{flag}");
        let prompts = user_prompts(&json(&out));
        assert_eq!(prompts.first().map(String::as_str), Some("first"), "{flag}: {prompts:?}");
        assert_eq!(prompts.last().map(String::as_str), Some("again"), "{flag}: {prompts:?}");
    }
}

#[test]
fn continue_without_a_session_of_this_project_exits_2() {
    let s = Sandbox::new();
    let out = s.run(&s.script(answer("x")), &["--continue"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--continue: no session of"), "{}", stderr(&out));
}

#[test]
fn session_id_names_the_new_session_and_is_validated() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let out = s.run(&script, &["--session-id", &id.to_uppercase(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(session_of(&out), id);
    assert!(s.session_file(id, "jsonl").is_some_and(|p| p.is_file()));

    let out = s.run(&script, &["--session-id", id]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("already in use"), "{}", stderr(&out));
    let out = s.run(&script, &["--session-id", "../../etc/passwd"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a UUID"), "{}", stderr(&out));
    let out = s.run(&script, &["--session-id", id, "--resume", id]);
    assert_eq!(out.status.code(), Some(2), "the flags conflict");
}

#[test]
fn no_session_persistence_writes_no_transcript() {
    let s = Sandbox::new();
    let script = s.script(answer("ok"));
    let out = s.run(&script, &["--no-session-persistence", "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = session_of(&out);
    assert_eq!(s.session_files(), Vec::<std::path::PathBuf>::new(), "nothing written for {id}");
    let out = s.resume(&id, "again", &script);
    assert_eq!(out.status.code(), Some(2), "nothing to resume: {}", stderr(&out));
}

#[test]
fn resume_restores_the_sessions_model() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![anthropic_text("one"), anthropic_text("two")]);
    let base = format!("http://{}", server.addr);
    let run = |args: &[&str]| {
        s.spine()
            .env("ANTHROPIC_BASE_URL", &base)
            .args(args)
            .args(["--output-format", "json", "--include-messages"])
            .output()
            .expect("runs")
    };
    let first = run(&["-p", "hi", "--model", "opus"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let id = session_of(&first);
    let second = run(&["-p", "more", "--resume", &id]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let models: Vec<Value> = server.bodies().into_iter().map(|b| b["model"].clone()).collect();
    assert_eq!(models, [json!(spine_models::spec::OPUS), json!(spine_models::spec::OPUS)]);
}

#[test]
fn resume_restores_the_sessions_directory() {
    let s = Sandbox::new();
    s.write("README.md", "hello from the project\n");
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Read", "arguments": {"file_path": "README.md"}}]},
        {"text": "done"}
    ]));
    let first = s.run(&script, &["--output-format", "json", "--include-messages"]);
    let id = session_of(&first);
    let out = s
        .spine()
        .current_dir(s.dir.path())
        .args([
            "-p",
            "again",
            "--resume",
            &id,
            "--model",
            &scripted(&script),
            "--output-format",
            "json",
            "--include-messages",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let last_read = v["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "tool"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(last_read.contains("hello from the project"), "{last_read}");
}

fn calculator_turns(n: usize) -> Value {
    let mut turns: Vec<Value> = (0..n)
        .map(|i| json!({"tool_calls": [{"id": format!("c{i}"), "name": "calculator", "arguments": {"expression": "1 + 1"}}]}))
        .collect();
    turns.push(json!({"text": "done"}));
    Value::Array(turns)
}

#[test]
fn max_turns_has_no_default_limit() {
    let s = Sandbox::new();
    let out = s.run(&s.script(calculator_turns(25)), &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!((v["subtype"].as_str(), v["num_turns"].as_u64()), (Some("success"), Some(26)));
}

#[test]
fn a_max_turns_setting_is_a_safety_limit_and_the_flag_overrides_it() {
    let s = Sandbox::new();
    let script = s.script(calculator_turns(3));
    let out = s.run(&script, &["--settings", r#"{"maxTurns": 2}"#, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["subtype"], "error_max_turns");
    let out = s.run(
        &script,
        &["--settings", r#"{"maxTurns": 2}"#, "--max-turns", "10", "--output-format", "json", "--include-messages"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn an_open_silent_stdin_does_not_hold_a_run_that_has_a_prompt() {
    let s = Sandbox::new();
    let script = s.script(answer("went on"));
    let mut child = s
        .spine_process()
        .args(["-p", "hi", "--model", &scripted(&script)])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn spine");
    // The write end stays open (and silent) until the run has ended.
    let stdin = child.stdin.take();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        assert!(std::time::Instant::now() < deadline, "spine waited for stdin for a minute");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(stdin);
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "went on");
    assert!(stderr(&out).contains("no stdin data received"), "{}", stderr(&out));
}

#[test]
fn list_flags_take_every_word_up_to_the_next_flag_as_in_claude_code() {
    let s = Sandbox::new();
    let script = s.script(two_shell_calls());
    let out = s
        .spine()
        .args(["-p", "go", "--allowedTools", "Bash(echo allowed)", "Bash(echo a,b)", "--model", &scripted(&script)])
        .args(["--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert!(tool_result(&v, 3).contains("allowed") && tool_result(&v, 4).contains("a,b"), "{v}");

    // A prompt after the list is one more rule, as in Claude Code: no prompt is left.
    let out = s
        .spine()
        .args(["--model", &scripted(&script), "-p", "--allowedTools", "Read", "summarize the notes"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no prompt") && stderr(&out).contains("put the prompt before them"),
        "{}",
        stderr(&out)
    );
}
