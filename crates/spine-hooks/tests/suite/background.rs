//! Hooks that go on in the background: a command hook whose first stdout line is
//! `{"async": true}` (Claude Code's async form, with `asyncTimeout`), `asyncRewake` hooks that
//! wake the model when they exit 2 (and that a run about to end waits for), and
//! `suppressOutput`. Hooks wait for sentinel files, never for time to pass.

use std::sync::Arc;

use serde_json::{Value, json};
use spine_core::hooks::SessionInfo;
use spine_core::registry::ToolRegistryBuilder;
use spine_core::tool::ChildEnv;
use spine_hooks::fire::{FireRequest, TranscriptFile, fire};
use spine_hooks::record::Raw;
use spine_protocol::hook::{HookEventName, PreToolUse};
use spine_protocol::message::Message;
use spine_protocol::permission::PermissionMode;
use spine_protocol::run::RunSubtype;
use spine_protocol::trace::TraceRecord;

use crate::support::*;

/// A bash loop waiting (at most 30 s, a liveness bound) until `condition` holds.
fn until(condition: &str) -> String {
    format!("for i in $(seq 1 1500); do {condition} && break; sleep 0.02; done")
}

/// The hook entries of a run's trace, as `(hook id, decision, applied, detail)`.
fn hook_entries(ran: &Ran) -> Vec<(String, String, bool, Value)> {
    ran.outcome
        .trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::Hook(h) => Some((h.hook_id, h.decision, h.applied, h.detail)),
            _ => None,
        })
        .collect()
}

fn user_texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::User { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_hook_whose_first_line_is_async_true_goes_to_the_background_and_its_late_context_reaches_the_model() {
    let p = Project::new();
    let late = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "additionalContext": "late note"}});
    let body = format!(
        "#!/bin/bash\ncat > /dev/null\necho '{{\"async\": true}}'\n{}\nprintf '%s\\n' '{late}'\n",
        until(&format!("[ -f {} ]", p.path("go")))
    );
    let hook = json!({"type": "command", "command": p.script("late.sh", &body), "if": "Bash(touch *)"});
    let setup = Setup { layers: vec![hooks("PreToolUse", "Bash", vec![hook])], ..Setup::default() };
    // The tool the hook waits for runs: the hook did not hold the call. The next call waits
    // until the hook's entry is in the trace (its context is queued before that).
    let wait = until(&format!("grep -q 'late[ ]note' {}", p.trace_file().display()));
    let ran = run(&p, setup, vec![bash("c1", "touch go"), bash("c2", &wait), text("done")]).await;
    assert!(ran.results()[0].error_code.is_none(), "the late deny is ignored: {:?}", ran.results());
    let third = &ran.script.requests()[2];
    assert!(
        third.iter().any(|m| matches!(m, Message::Context(c) if c.content == "late note")),
        "the late context reached the model: {third:?}"
    );
    let entries = hook_entries(&ran);
    assert_eq!(entries.len(), 1, "one trace entry, when it ended: {entries:?}");
    assert_eq!((entries[0].1.as_str(), entries[0].2), ("deny", false), "recorded, not applied");
}

#[tokio::test]
async fn async_timeout_bounds_a_hook_in_the_background_instead_of_its_timeout() {
    let p = Project::new();
    let body = "#!/bin/bash\ncat > /dev/null\necho '{\"async\": true, \"asyncTimeout\": 200}'\nexec sleep 600\n";
    let hook = json!({"type": "command", "command": p.script("slow.sh", body), "timeout": 600, "if": "Bash(touch *)"});
    let setup = Setup { layers: vec![hooks("PreToolUse", "Bash", vec![hook])], ..Setup::default() };
    let wait = until(&format!("grep -q '\"decision\":\"time[o]ut\"' {}", p.trace_file().display()));
    let ran = run(&p, setup, vec![bash("c1", "touch started"), bash("c2", &wait), text("done")]).await;
    let entries = hook_entries(&ran);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].1, "timeout");
    assert!(entries[0].3.as_str().is_some_and(|d| d.contains("0.2 s")), "the asyncTimeout: {:?}", entries[0].3);
}

/// A Stop hook that logs its input to `stops.jsonl` and creates `go`.
fn stop_hook(p: &Project) -> Value {
    json!({"hooks": {"Stop": [{"hooks": [
        command(&format!("cat >> {log}; echo >> {log}; touch {go}", log = p.path("stops.jsonl"), go = p.path("go")))
    ]}]}})
}

#[tokio::test]
async fn an_async_rewake_hook_that_exits_2_keeps_the_run_going() {
    let p = Project::new();
    let body = format!(
        "#!/bin/bash\ncat > /dev/null\n{}\necho '2 tests failed' >&2\nexit 2\n",
        until(&format!("[ -f {} ]", p.path("go")))
    );
    let tests = p.script("tests.sh", &body);
    let hook = json!({"type": "command", "command": tests, "asyncRewake": true});
    let setup = Setup { layers: vec![hooks("PostToolUse", "Bash", vec![hook]), stop_hook(&p)], ..Setup::default() };
    // The hook ends only once Stop ran: the run waits for it instead of ending with "done".
    let ran = run(&p, setup, vec![bash("c1", "echo hi"), text("done"), text("fixed")]).await;
    assert_eq!((ran.outcome.subtype, ran.outcome.result.as_str()), (RunSubtype::Success, "fixed"));
    let requests = ran.script.requests();
    assert_eq!(requests.len(), 3, "woken once");
    let woke = user_texts(&requests[2]).pop().unwrap_or_default();
    assert_eq!(woke, format!("PostToolUse hook blocking error from command \"{tests}\": 2 tests failed"));
    let stops = json_lines(&p.root.join("stops.jsonl"));
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[1]["stop_hook_active"], true, "the second Stop knows the loop was sent on");
    let entries = hook_entries(&ran);
    assert!(entries.iter().any(|(id, decision, applied, _)| id == &tests && decision == "wake" && *applied));
}

#[tokio::test]
async fn an_async_rewake_hook_that_exits_0_or_1_does_not_wake_the_model_but_the_run_waits_for_it() {
    let p = Project::new();
    let waits = until(&format!("[ -f {} ]", p.path("go")));
    let ok = p.script("ok.sh", &format!("#!/bin/bash\ncat > /dev/null\n{waits}\ntouch ok.done\nexit 0\n"));
    let failed = p.script("failed.sh", &format!("#!/bin/bash\ncat > /dev/null\n{waits}\ntouch failed.done\nexit 1\n"));
    let handlers = vec![
        json!({"type": "command", "command": ok, "asyncRewake": true}),
        json!({"type": "command", "command": failed, "asyncRewake": true}),
    ];
    let setup = Setup { layers: vec![hooks("PostToolUse", "Bash", handlers), stop_hook(&p)], ..Setup::default() };
    let ran = run(&p, setup, vec![bash("c1", "echo hi"), text("done"), text("never asked")]).await;
    assert_eq!(ran.outcome.result, "done");
    assert_eq!(ran.script.requests().len(), 2, "no wake");
    assert!(p.root.join("ok.done").exists() && p.root.join("failed.done").exists(), "both ran to their end");
}

#[tokio::test]
async fn a_rewake_message_leads_what_the_model_reads() {
    let p = Project::new();
    let body = format!("#!/bin/bash\ncat > /dev/null\n{}\necho 'test_x failed' >&2\nexit 2\n", until("[ -f go ]"));
    let hook = json!({"type": "command", "command": p.script("t.sh", &body), "asyncRewake": true,
        "rewakeMessage": "The background tests failed; fix them:", "rewakeSummary": "tests failed"});
    let setup = Setup { layers: vec![hooks("PostToolUse", "Bash", vec![hook]), stop_hook(&p)], ..Setup::default() };
    let ran = run(&p, setup, vec![bash("c1", "echo hi"), text("done"), text("fixed")]).await;
    let woke = user_texts(&ran.script.requests()[2]).pop().unwrap_or_default();
    assert_eq!(woke, "The background tests failed; fix them: test_x failed");
}

#[tokio::test]
async fn a_canceled_run_stops_waiting_for_its_rewake_hooks_and_kills_them() {
    let p = Project::new();
    let body = format!("#!/bin/bash\ncat > /dev/null\necho $$ > {}\nexec sleep 600\n", p.path("pid"));
    let hook =
        json!({"type": "command", "command": p.script("forever.sh", &body), "asyncRewake": true, "timeout": 600});
    let cancel = tokio_util::sync::CancellationToken::new();
    // Stop creates `go` once the hook's process runs.
    let stop =
        command(&format!("cat > /dev/null; {}; touch {}", until(&format!("[ -s {} ]", p.path("pid"))), p.path("go")));
    let setup = Setup {
        layers: vec![hooks("PostToolUse", "Bash", vec![hook]), hooks("Stop", "", vec![stop])],
        cancel: Some(cancel.clone()),
        ..Setup::default()
    };
    let go = p.root.join("go");
    let canceler = tokio::spawn(async move {
        // Stop ran: the run is about to wait for the hook (or already does).
        for _ in 0..1500 {
            if go.exists() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        cancel.cancel();
    });
    let ran = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        run(&p, setup, vec![bash("c1", "echo hi"), text("done"), text("never asked")]),
    )
    .await
    .expect("the run ends when canceled (liveness bound)");
    canceler.await.expect("canceler");
    assert_eq!(ran.outcome.subtype, RunSubtype::Canceled);
    let pid = spine_testkit::procs::read_pid(&p.root.join("pid")).await.expect("pid");
    assert!(eventually_dead(pid).await, "the hook's process was killed");
}

fn session(p: &Project) -> SessionInfo {
    SessionInfo {
        session_id: "s1".into(),
        transcript_path: p.transcript(),
        cwd: p.root.clone(),
        hook_dir: p.root.clone(),
        project_dir: p.root.clone(),
        permission_mode: PermissionMode::Default,
        effort: None,
        env_file: None,
    }
}

async fn fire_pre_tool_use(p: &Project, handler: Value) -> spine_hooks::fire::FireReport {
    let mut tools = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut tools);
    let config = p.hook_config(&[hooks("PreToolUse", "Bash", vec![handler])]);
    let request = FireRequest {
        event: HookEventName::PreToolUse,
        tool: Some("Bash".into()),
        input: Some(json!({"tool_input": {"command": "ls"}})),
        session: session(p),
        tools: Arc::new(tools.build().expect("tools")),
        transcript: TranscriptFile::Existing,
        models: None,
        agents: None,
        child_env: ChildEnv::default(),
    };
    fire(&config, request).await.expect("fired")
}

#[tokio::test]
async fn hooks_test_waits_for_a_hook_that_prints_async_true_and_shows_the_answer_after_that_line() {
    let p = Project::new();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}});
    let report = fire_pre_tool_use(&p, command(&format!("echo '{{\"async\": true}}'; printf '%s\\n' '{deny}'"))).await;
    let output = report.answers[0].outcome.clone().expect("an answer");
    assert!(output.to_string().contains("deny"), "{output}");
}

#[tokio::test]
async fn suppress_output_hides_the_raw_stdout_from_hooks_test_and_the_decision_still_applies() {
    let p = Project::new();
    let answer = json!({"suppressOutput": true, "terminalSequence": "raw-only-marker",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}});
    let guard = command(&format!("cat > /dev/null; printf '%s\\n' '{answer}'"));
    let report = fire_pre_tool_use(&p, guard.clone()).await;
    let a = &report.answers[0];
    assert!(a.suppressed);
    assert!(matches!(&a.raw, Raw::Exit { stdout, exit_code: Some(0), .. } if stdout.is_empty()), "{:?}", a.raw);
    let output = a.outcome.clone().expect("an answer");
    assert_eq!(output["suppress_output"], true, "{output}");
    assert!(output.to_string().contains("deny") && !output.to_string().contains("raw-only-marker"), "{output}");
    // In a run the deny applies.
    let setup = Setup { layers: vec![hooks("PreToolUse", "Bash", vec![guard])], ..Setup::default() };
    let ran = run(&p, setup, vec![bash("c1", "echo hi"), text("done")]).await;
    assert_eq!(ran.results()[0].content, "Error [permission_denied]: no");
}

#[test]
fn a_whole_answer_in_the_async_form_is_no_opinion() {
    let parsed = spine_hooks::wire::answer::parse::<PreToolUse>(r#"{"async": true, "asyncTimeout": 10}"#);
    assert_eq!(parsed, Ok(spine_protocol::hook::HookOutput::default()));
    let http = spine_hooks::wire::decide::from_http::<PreToolUse>(200, r#"{"async": true}"#);
    assert_eq!(http, Ok(spine_protocol::hook::HookOutput::default()));
}

#[test]
fn async_rewake_is_a_background_hook_that_may_wake_and_does_not_apply_to_persistent_hooks() {
    let p = Project::new();
    let rewake = json!({"type": "command", "command": "true", "asyncRewake": true, "rewakeMessage": "m"});
    let config = p.hook_config(&[hooks("PostToolUse", "Bash", vec![rewake])]);
    assert!(config.warnings.is_empty(), "no warning any more: {:?}", config.warnings);
    assert!(config.can_wake());
    let handler = &config.groups[0].handlers[0];
    assert_eq!(handler.rewake.as_ref().and_then(|r| r.message.as_deref()), Some("m"));
    assert_eq!(handler.run, spine_core::hooks::RunMode::Background);
    let plain = p.hook_config(&[hooks(
        "PostToolUse",
        "Bash",
        vec![json!({"type": "command", "command": "true", "async": true})],
    )]);
    assert!(!plain.can_wake());
    let persistent = json!({"type": "command", "command": "true", "asyncRewake": true, "persistent": true});
    let errors = match spine_hooks::HookConfig::from_settings(&p.settings(&[hooks("Stop", "", vec![persistent])])) {
        Ok(_) => Vec::new(),
        Err(e) => e.errors.iter().map(ToString::to_string).collect(),
    };
    assert!(errors.iter().any(|e| e.contains("`asyncRewake` does not apply to `persistent` hooks")), "{errors:?}");
}
