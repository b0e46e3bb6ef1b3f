//! SDK callback hooks through the engine: the host's callbacks join the settings' hooks after
//! them, and their failures follow `onFailure` as any hook's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use spine_core::tool::ChildEnv;
use spine_hooks::{BuildOptions, HookCallbacks, HookConfig};
use spine_protocol::tool::ErrorCode;
use tokio_util::sync::CancellationToken;

use crate::support::*;

/// A host whose every callback answers `reply` (`None`: never answers) and records its input.
struct Host {
    reply: Option<Result<Value, String>>,
    inputs: Mutex<Vec<Value>>,
}

impl Host {
    fn new(reply: Option<Result<Value, String>>) -> Arc<Host> {
        Arc::new(Host { reply, inputs: Mutex::new(Vec::new()) })
    }

    fn inputs(&self) -> Vec<Value> {
        self.inputs.lock().map(|i| i.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl HookCallbacks for Host {
    async fn call(&self, _: &str, input: Value, _: Option<String>, cancel: CancellationToken) -> Result<Value, String> {
        if let Ok(mut inputs) = self.inputs.lock() {
            inputs.push(input);
        }
        match &self.reply {
            Some(reply) => reply.clone(),
            None => {
                cancel.cancelled().await;
                Err("withdrawn".into())
            }
        }
    }
}

/// The settings' hooks of `layers`, then the SDK's `hooks`.
fn config(p: &Project, layers: &[Value], sdk: Value) -> HookConfig {
    let mut config = p.hook_config(layers);
    config.extend(HookConfig::from_sdk(&sdk).expect("valid SDK hooks"));
    config
}

async fn run_with(p: &Project, config: &HookConfig, host: &Arc<Host>, command: &str) -> Ran {
    let options = BuildOptions {
        callbacks: Some(Arc::clone(host) as Arc<dyn HookCallbacks>),
        ..BuildOptions::new(ChildEnv::default())
    };
    run_built(p, config, &options, Setup::default(), vec![bash("c1", command), text("ok")]).await
}

fn pre_tool_use(extra: Value) -> Value {
    let mut group = json!({"matcher": "Bash", "hookCallbackIds": ["hook_0"]});
    if let (Some(group), Some(extra)) = (group.as_object_mut(), extra.as_object()) {
        group.extend(extra.clone());
    }
    json!({"PreToolUse": [group]})
}

#[tokio::test]
async fn a_callback_runs_after_the_settings_hooks_and_sees_their_rewrite() {
    let p = Project::new();
    let rewrite = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "echo rewritten > out.txt"}}}'"#;
    let host = Host::new(Some(Ok(json!({}))));
    let config = config(&p, &[hooks("PreToolUse", "Bash", vec![command(rewrite)])], pre_tool_use(json!({})));
    let ran = run_with(&p, &config, &host, "echo original > out.txt").await;
    let inputs = host.inputs();
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0]["tool_input"]["command"], "echo rewritten > out.txt", "after the settings' hook");
    assert_eq!(p.read("out.txt"), "rewritten\n");
    assert_eq!(ran.outcome.result, "ok");
}

#[tokio::test]
async fn a_callbacks_error_fails_open_by_default_and_closed_with_on_failure_block() {
    let p = Project::new();
    let host = Host::new(Some(Err("host exploded".into())));
    let open = config(&p, &[], pre_tool_use(json!({})));
    let ran = run_with(&p, &open, &host, "echo ran > out.txt").await;
    assert_eq!(p.read("out.txt"), "ran\n", "fails open: the tool ran");
    assert!(
        ran.warnings().iter().any(|w| w.contains("host exploded") && w.contains("failing open")),
        "{:?}",
        ran.warnings()
    );

    let p = Project::new();
    let closed = config(&p, &[], pre_tool_use(json!({"onFailure": "block"})));
    let ran = run_with(&p, &closed, &host, "echo ran > out.txt").await;
    assert_eq!(ran.results()[0].error_code, Some(ErrorCode::HookExecutionError));
    assert_eq!(p.read("out.txt"), "", "the call did not run");
}

#[tokio::test]
async fn a_callback_that_does_not_answer_in_time_is_a_failure_that_on_failure_decides() {
    let p = Project::new();
    let host = Host::new(None);
    let closed = config(&p, &[], pre_tool_use(json!({"timeout": 0.2, "onFailure": "block"})));
    let started = std::time::Instant::now();
    let ran = run_with(&p, &closed, &host, "echo ran > out.txt").await;
    assert!(started.elapsed() < Duration::from_secs(10), "the time limit ended the wait");
    assert!(ran.results()[0].is_error(), "{:?}", ran.results());
    assert_eq!(p.read("out.txt"), "");

    let p = Project::new();
    let open = config(&p, &[], pre_tool_use(json!({"timeout": 0.2})));
    let ran = run_with(&p, &open, &host, "echo ran > out.txt").await;
    assert_eq!(p.read("out.txt"), "ran\n");
    assert!(ran.warnings().iter().any(|w| w.contains("timeout")), "{:?}", ran.warnings());
}

#[tokio::test]
async fn a_permission_decision_deny_refuses_the_call_with_its_reason() {
    let p = Project::new();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "the host says no"}});
    let host = Host::new(Some(Ok(deny)));
    let config = config(&p, &[], pre_tool_use(json!({})));
    let ran = run_with(&p, &config, &host, "echo ran > out.txt").await;
    assert!(ran.results()[0].content.contains("the host says no"), "{:?}", ran.results());
    assert_eq!(p.read("out.txt"), "");
}
