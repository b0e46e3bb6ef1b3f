//! Persistent hooks: one process per run, one line in and one line out per event; restarts.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::{HookContext, HookErrorKind, HookRegistryBuilder, SessionInfo};
use spine_core::tool::ChildEnv;
use spine_hooks::BuildOptions;
use spine_protocol::hook::{HookEventName, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::permission::{PermissionMode, PermissionSuggestion};

use crate::support::*;

const ECHO_HOOK: &str = r#"
import json, os, sys, time
open(sys.argv[1], 'a').write(f"{os.getpid()}\n")
def answer(ev, obj):
    obj['spine_seq'] = ev['spine_seq']
    print(json.dumps(obj), flush=True)
ALLOW = {'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'permissionDecision': 'allow'}}
for line in sys.stdin:
    ev = json.loads(line)
    cmd = ev.get('tool_input', {}).get('command', '')
    if cmd == 'crash':
        sys.exit(1)
    if cmd == 'slow':
        time.sleep(30)
    if cmd == 'garbage':
        print('not json', flush=True)
        continue
    if cmd == 'block':
        answer(ev, {'decision': 'block', 'reason': 'blocked by ' + str(os.getpid())})
        continue
    if cmd.startswith('say '):
        answer(ev, {'decision': 'block', 'reason': cmd})
        continue
    if cmd.startswith('twice '):
        answer(ev, dict(ALLOW))
        answer(ev, dict(ALLOW))
        continue
    if cmd.startswith('chatty '):
        print('debug: looking at ' + cmd, flush=True)
        answer(ev, {'decision': 'block', 'reason': cmd})
        continue
    if cmd == 'no-seq':
        print('{}', flush=True)
        continue
    answer(ev, {})
"#;

fn persistent(p: &Project, timeout: f64) -> (Value, String) {
    let script = p.script("persist.py", ECHO_HOOK);
    let pids = p.path("pids.log");
    let hook = json!({
        "type": "command",
        "command": format!("/usr/bin/python3 {script} {pids}"),
        "persistent": true,
        "timeout": timeout,
    });
    (hook, pids)
}

struct Direct {
    registry: spine_core::hooks::HookRegistry,
    ctx: HookContext,
}

impl Direct {
    fn new(p: &Project, hook: Value) -> Self {
        let config = p.hook_config(&[hooks("PreToolUse", "", vec![hook])]);
        let mut builder = HookRegistryBuilder::new();
        spine_hooks::register(&config, &mut builder, &BuildOptions::new(ChildEnv::default())).expect("build");
        let ctx = HookContext {
            session: Arc::new(SessionInfo {
                session_id: "s1".into(),
                transcript_path: p.transcript(),
                cwd: p.root.clone(),
                hook_dir: p.root.clone(),
                project_dir: p.root.clone(),
                permission_mode: PermissionMode::Default,
                effort: None,
                env_file: None,
            }),
            event: HookEventName::PreToolUse,
            prompt_id: None,
            cancel: CancellationToken::new(),
            agent: None,
        };
        Direct { registry: builder.build(), ctx }
    }

    async fn call(&self, command: &str) -> Result<PreToolUseAction, spine_core::hooks::HookError> {
        let input = PreToolUseInput {
            tool_name: "Bash".into(),
            spine_tool_name: None,
            tool_input: json!({"command": command}),
            tool_use_id: "t".into(),
        };
        let hook = &self.registry.groups::<PreToolUse>()[0].hooks[0].hook;
        hook.call(&self.ctx, &input).await.map(|o| o.action)
    }
}

#[tokio::test]
async fn a_persistent_hook_serves_a_thousand_events_survives_one_crash_and_gives_up_after_the_second() {
    let p = Project::new();
    let (hook, pids) = persistent(&p, 10.0);
    let direct = Direct::new(&p, hook);
    for i in 0..500 {
        assert_eq!(direct.call("ok").await, Ok(PreToolUseAction::default()), "event {i}");
    }
    let crash = direct.call("crash").await.expect_err("the process died mid-event");
    assert_eq!(crash.kind, HookErrorKind::Failed);
    assert!(crash.detail.contains("restarted once"), "{}", crash.detail);
    for i in 0..499 {
        assert_eq!(direct.call("ok").await, Ok(PreToolUseAction::default()), "event {i} after the restart");
    }
    assert_eq!(std::fs::read_to_string(&pids).expect("pids").lines().count(), 2, "started twice");
    let second = direct.call("crash").await.expect_err("second crash");
    assert!(second.detail.contains("not restarted"), "{}", second.detail);
    let after = direct.call("ok").await.expect_err("failed for the rest of the run");
    assert_eq!(after.kind, HookErrorKind::Failed);
    assert_eq!(std::fs::read_to_string(&pids).expect("pids").lines().count(), 2, "no third start");
}

#[tokio::test]
async fn a_line_that_is_not_json_fails_the_event_and_a_fresh_process_serves_the_next() {
    let p = Project::new();
    let (hook, pids) = persistent(&p, 10.0);
    let direct = Direct::new(&p, hook);
    let garbage = direct.call("garbage").await.expect_err("garbage");
    assert_eq!(garbage.kind, HookErrorKind::Failed);
    assert!(garbage.detail.contains("out of step"), "{}", garbage.detail);
    assert!(matches!(direct.call("block").await, Ok(PreToolUseAction::Block { .. })));
    assert_eq!(std::fs::read_to_string(&pids).expect("pids").lines().count(), 2, "restarted once");
    let no_seq = direct.call("no-seq").await.expect_err("an answer must echo spine_seq");
    assert!(no_seq.detail.contains("the answer has none"), "{}", no_seq.detail);
}

fn reason(action: Result<PreToolUseAction, spine_core::hooks::HookError>) -> String {
    match action {
        Ok(PreToolUseAction::Block { reason, .. }) => reason,
        other => panic!("expected a block, got {other:?}"),
    }
}

/// One surplus answer line must never shift a decision onto another event: the event whose
/// exchange reads it fails (and the process is restarted), later events get their own answers.
#[tokio::test]
async fn a_surplus_line_fails_only_the_event_that_reads_it_and_never_shifts_an_answer() {
    let p = Project::new();
    let (hook, pids) = persistent(&p, 10.0);
    let direct = Direct::new(&p, hook);
    let allowed = direct.call("twice one").await.expect("its own answer");
    assert!(matches!(allowed, PreToolUseAction::Proceed { permission: PermissionSuggestion::Allow { .. }, .. }));
    // The second `allow` line of event 1 is read by event 2: it fails instead of being allowed.
    let shifted = direct.call("rm victim").await.expect_err("the surplus allow does not land here");
    assert_eq!(shifted.kind, HookErrorKind::Failed);
    assert!(shifted.detail.contains("expected \"spine_seq\": 2, got 1"), "{}", shifted.detail);
    assert_eq!(reason(direct.call("say three").await), "say three");
    // A stray line before the answer fails that event only.
    let chatty = direct.call("chatty four").await.expect_err("stray line first");
    assert!(chatty.detail.contains("debug: looking at chatty four"), "{}", chatty.detail);
    assert_eq!(reason(direct.call("say five").await), "say five");
    assert_eq!(reason(direct.call("say six").await), "say six");
    assert_eq!(std::fs::read_to_string(&pids).expect("pids").lines().count(), 3, "one restart per stray line");
}

#[tokio::test]
async fn a_time_out_kills_the_process_and_the_next_event_restarts_it() {
    let p = Project::new();
    let (hook, pids) = persistent(&p, 0.5);
    let direct = Direct::new(&p, hook);
    assert_eq!(direct.call("ok").await, Ok(PreToolUseAction::default()));
    let first: u32 = std::fs::read_to_string(&pids).expect("pids").trim().parse().expect("pid");
    assert_eq!(direct.call("slow").await.expect_err("timeout").kind, HookErrorKind::Timeout);
    assert!(eventually_dead(first).await, "timed-out process {first} survived");
    assert_eq!(direct.call("ok").await, Ok(PreToolUseAction::default()));
    assert_eq!(direct.call("ok").await, Ok(PreToolUseAction::default()), "time-outs do not use up the restart");
    assert_eq!(std::fs::read_to_string(&pids).expect("pids").lines().count(), 2);
}

#[tokio::test]
async fn a_persistent_hook_blocks_through_the_runner_from_one_process_killed_at_the_end() {
    let p = Project::new();
    let (hook, pids) = persistent(&p, 10.0);
    let layers = vec![json!({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [hook.clone()]}],
        "PostToolUse": [{"hooks": [hook]}],
    }})];
    let replies = vec![bash("c1", "echo one"), bash("c2", "block"), bash("c3", "echo three"), text("ok")];
    let ran = run(&p, Setup { layers, ..Setup::default() }, replies).await;
    let text = std::fs::read_to_string(&pids).expect("pids");
    let pid: u32 = text.trim().parse().expect("exactly one process served both events");
    let r = ran.results();
    assert_eq!(r[1].content, format!("Error [hook_blocked]: blocked by {pid}"));
    assert!(r[2].content.contains("three"));
    drop(ran);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(eventually_dead(pid).await, "the persistent process outlived the run");
}
