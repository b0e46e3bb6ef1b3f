//! Exit statuses, time limits, launch errors, output limits and stdin handling of command hooks.

use std::time::{Duration, Instant};

use serde_json::json;
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;

use crate::support::*;

fn pre(handlers: Vec<serde_json::Value>) -> Setup {
    Setup { layers: vec![hooks("PreToolUse", "Bash", handlers)], ..Setup::default() }
}

#[tokio::test]
async fn exit_2_blocks_and_the_model_reads_hook_blocked_with_stderr() {
    let p = Project::new();
    let marker = p.path("ran");
    let ran = run(
        &p,
        pre(vec![command("cat > /dev/null; echo 'rm is not allowed here' >&2; exit 2")]),
        vec![bash("c1", &format!("touch {marker}")), text("ok")],
    )
    .await;
    let r = &ran.results()[0];
    assert_eq!(r.content, "Error [hook_blocked]: rm is not allowed here");
    assert_eq!(r.error_code, Some(ErrorCode::HookBlocked));
    assert!(!std::path::Path::new(&marker).exists(), "the handler did not run");
    let second = &ran.script.requests()[1];
    assert!(
        second
            .iter()
            .any(|m| matches!(m, spine_protocol::message::Message::Tool(t) if t.content.contains("rm is not allowed")))
    );
}

#[tokio::test]
async fn exit_2_on_user_prompt_submit_refuses_the_prompt_without_a_model_request() {
    let p = Project::new();
    let layers = vec![hooks("UserPromptSubmit", "", vec![command("echo 'no secrets in prompts' >&2; exit 2")])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![text("never")]).await;
    assert_eq!(ran.outcome.subtype, RunSubtype::Blocked);
    assert_eq!(ran.outcome.result, "no secrets in prompts");
    assert!(ran.script.requests().is_empty());
}

#[tokio::test]
async fn exit_1_fails_open_by_default_and_closed_on_request() {
    let p = Project::new();
    let ran = run(&p, pre(vec![command("echo broken >&2; exit 1")]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"), "fails open: the tool ran");
    assert!(
        ran.warnings().iter().any(|w| w.contains("failed: exit status 1: broken; failing open")),
        "{:?}",
        ran.warnings()
    );

    let closed = json!({"type": "command", "command": "echo broken >&2; exit 1", "onFailure": "closed"});
    let ran = run(&p, pre(vec![closed]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [hook_execution_error]: PreToolUse hook failed");
}

#[tokio::test]
async fn exit_2_where_the_event_cannot_block_is_a_non_blocking_failure() {
    let p = Project::new();
    let layers = vec![hooks("PostToolUseFailure", "", vec![command("echo nope >&2; exit 2")])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![bash("c1", "exit 4"), text("ok")]).await;
    assert!(ran.results()[0].content.starts_with("Error [command_failed]: Exit code 4"));
    assert!(ran.warnings().iter().any(|w| w.contains("PostToolUseFailure hook") && w.contains("failing open")));
    assert_eq!(ran.outcome.result, "ok");
}

#[tokio::test]
async fn a_missing_command_is_a_launch_error_closed_or_a_warning_open() {
    let p = Project::new();
    let missing = json!({"type": "command", "command": "definitely-not-installed-xyz", "onFailure": "closed"});
    let ran = run(&p, pre(vec![missing]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [hook_launch_error]: PreToolUse hook could not be started");

    let exec = json!({"type": "command", "args": ["/no/such/program", "x"], "onFailure": "closed"});
    let ran = run(&p, pre(vec![exec]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].error_code, Some(ErrorCode::HookLaunchError));

    let ran =
        run(&p, pre(vec![command("definitely-not-installed-xyz")]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"));
    assert!(ran.warnings().iter().any(|w| w.contains("launch_error")), "{:?}", ran.warnings());
}

#[tokio::test]
async fn python_with_a_missing_script_exits_2_yet_is_a_launch_error_not_a_block() {
    let p = Project::new();
    let ran =
        run(&p, pre(vec![command("/usr/bin/python3 hooks/missing.py")]), vec![bash("c1", "echo ran"), text("ok")])
            .await;
    assert!(ran.results()[0].content.contains("ran"), "not blocked: {}", ran.results()[0].content);
    assert!(ran.warnings().iter().any(|w| w.contains("launch_error")), "{:?}", ran.warnings());
}

/// A guard that quotes the command it refuses (and so prints "can't open file") still blocks:
/// exit 2 is a block whatever stderr says.
#[tokio::test]
async fn exit_2_blocks_even_when_stderr_says_cant_open_file() {
    let p = Project::new();
    let marker = p.path("victim");
    std::fs::write(&marker, "keep me").expect("victim");
    let guard = p.script(
        "guard.py",
        "import json, sys\nev = json.load(sys.stdin)\nsys.stderr.write('blocked: ' + ev['tool_input']['command'])\nsys.exit(2)\n",
    );
    let ran = run(
        &p,
        pre(vec![command(&format!("/usr/bin/python3 {guard}"))]),
        vec![bash("c1", &format!("rm {marker} # can't open file")), text("ok")],
    )
    .await;
    let r = &ran.results()[0];
    assert_eq!(r.error_code, Some(ErrorCode::HookBlocked), "{}", r.content);
    assert_eq!(r.content, format!("Error [hook_blocked]: blocked: rm {marker} # can't open file"));
    assert!(std::path::Path::new(&marker).exists(), "rm did not run");
}

/// A script path that does not exist is a launch error, found from the path before spawning.
#[tokio::test]
async fn a_missing_script_is_a_launch_error_found_from_its_path() {
    let p = Project::new();
    let closed = json!({"type": "command", "command": "/usr/bin/python3 /nonexistent/x.py", "onFailure": "closed"});
    let ran = run(&p, pre(vec![closed]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [hook_launch_error]: PreToolUse hook could not be started");
    let exec = json!({"type": "command", "args": ["/usr/bin/python3", "/nonexistent/x.py"], "onFailure": "closed"});
    let ran = run(&p, pre(vec![exec]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].error_code, Some(ErrorCode::HookLaunchError));
}

#[tokio::test]
async fn a_time_out_kills_the_hook_and_its_children() {
    let p = Project::new();
    let pidfile = p.path("child.pid");
    let hook = json!({
        "type": "command",
        "command": format!("sleep 100 & echo $! > {pidfile}; wait"),
        "timeout": 0.5,
    });
    let started = Instant::now();
    let ran = run(&p, pre(vec![hook]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert!(ran.results()[0].content.contains("ran"), "a time-out fails open by default");
    assert!(ran.warnings().iter().any(|w| w.contains("(timeout)")), "{:?}", ran.warnings());
    let pid: u32 = p.read("child.pid").trim().parse().expect("pid");
    assert!(eventually_dead(pid).await, "child {pid} survived the time-out");
}

#[tokio::test]
async fn invalid_json_on_stdout_is_a_failure_not_an_answer() {
    let p = Project::new();
    let hook = json!({"type": "command", "command": "echo '{\"decision\": '", "onFailure": "closed"});
    let ran = run(&p, pre(vec![hook]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [hook_execution_error]: PreToolUse hook failed");
    let ran = run(&p, pre(vec![command("echo '{not json'")]), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"));
    assert!(ran.warnings().iter().any(|w| w.contains("failing open")));
}

#[tokio::test]
async fn a_hook_that_never_reads_its_large_input_does_not_break_the_run() {
    let p = Project::new();
    let big = "x".repeat(2 << 20);
    let layers = vec![hooks("PreToolUse", "Write", vec![command("true")])];
    let mut replies = Vec::new();
    for i in 0..5 {
        replies.push(calls(&[(
            &format!("c{i}"),
            "Write",
            json!({"file_path": format!("big{i}.txt"), "content": big}),
        )]));
    }
    replies.push(text("ok"));
    let ran = run(&p, Setup { layers, ..Setup::default() }, replies).await;
    assert!(ran.warnings().is_empty(), "{:?}", ran.warnings());
    assert!(ran.results().iter().all(|r| r.error_code.is_none()));
    assert_eq!(p.read("big4.txt").len(), 2 << 20);
}

#[tokio::test]
async fn plain_stdout_is_context_for_user_prompt_submit_and_ignored_for_pre_tool_use() {
    let p = Project::new();
    let layers = vec![json!({"hooks": {
        "UserPromptSubmit": [{"hooks": [command("echo 'Today is Tuesday.'")]}],
        "PreToolUse": [{"hooks": [command("echo 'just chatter'")]}],
    }})];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.contexts(), vec!["UserPromptSubmit: Today is Tuesday."]);
    assert!(ran.warnings().is_empty());
}

#[tokio::test]
async fn exit_2_on_stop_forces_one_more_round_with_stderr_as_the_instruction() {
    let p = Project::new();
    let log = p.path("stop.jsonl");
    let hook = p.script(
        "stop.sh",
        &format!(
            "#!/bin/bash\ninput=$(cat)\necho \"$input\" >> {log}\n\
             if echo \"$input\" | grep -q '\"stop_hook_active\":true'; then exit 0; fi\n\
             echo 'run the tests first' >&2\nexit 2\n"
        ),
    );
    let layers = vec![hooks("Stop", "", vec![command(&hook)])];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![text("done?"), text("tests pass")]).await;
    assert_eq!(ran.outcome.result, "tests pass");
    let lines = json_lines(std::path::Path::new(&log));
    assert_eq!(lines.iter().map(|l| l["stop_hook_active"].clone()).collect::<Vec<_>>(), [json!(false), json!(true)]);
    let second = &ran.script.requests()[1];
    assert!(
        matches!(second.last(), Some(spine_protocol::message::Message::User { content, .. }) if content == "run the tests first")
    );
}
