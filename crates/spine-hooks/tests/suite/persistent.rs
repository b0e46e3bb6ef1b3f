//! Persistent hooks: one process per run, one line in and one line out per event; restarts.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::{HookContext, HookErrorKind, HookRegistryBuilder, SessionInfo};
use spine_hooks::BuildOptions;
use spine_protocol::hook::{HookEventName, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::permission::PermissionMode;

use crate::support::*;

const ECHO_HOOK: &str = r#"
import json, os, sys, time
open(sys.argv[1], 'a').write(f"{os.getpid()}\n")
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
        print(json.dumps({'decision': 'block', 'reason': 'blocked by ' + str(os.getpid())}), flush=True)
        continue
    print('{}', flush=True)
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
        spine_hooks::register(&config, &mut builder, &BuildOptions::default()).expect("build");
        let ctx = HookContext {
            session: Arc::new(SessionInfo {
                session_id: "s1".into(),
                transcript_path: p.transcript(),
                cwd: p.root.clone(),
                project_dir: p.root.clone(),
                permission_mode: PermissionMode::Default,
                env_file: None,
            }),
            event: HookEventName::PreToolUse,
            prompt_id: None,
            cancel: CancellationToken::new(),
        };
        Direct { registry: builder.build(), ctx }
    }

    async fn call(&self, command: &str) -> Result<PreToolUseAction, spine_core::hooks::HookError> {
        let input = PreToolUseInput {
            tool_name: "Bash".into(),
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
async fn a_line_that_is_not_json_fails_the_event_and_the_process_keeps_serving() {
    let p = Project::new();
    let (hook, pids) = persistent(&p, 10.0);
    let direct = Direct::new(&p, hook);
    assert_eq!(direct.call("garbage").await.expect_err("garbage").kind, HookErrorKind::Failed);
    assert!(matches!(direct.call("block").await, Ok(PreToolUseAction::Block { .. })));
    assert_eq!(std::fs::read_to_string(&pids).expect("pids").lines().count(), 1);
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
