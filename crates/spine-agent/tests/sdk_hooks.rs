//! The Agent SDK host's hook callbacks through spine-agent's public API: declared by the
//! host's `initialize` hooks, given as [`spine_agent::SdkHooks`], they run after the settings'
//! hooks on the session and its subagents, receive what a command hook reads on stdin, and
//! their answer decides as a command hook's would.

// Test targets link every dependency of the package; each one is used by the library or here.
#![allow(unused_crate_dependencies)]

mod common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{options, settings, tool_results};
use serde_json::{Value, json};
use spine_agent::{ModelChoice, SdkHooks, assemble};
use spine_core::CancellationToken;
use spine_core::runner::RunRequest;
use spine_core::session::Transcript;
use spine_hooks::{HookCallbacks, HookConfig};
use spine_testkit::script::{Script, calls, text};

/// One call the host received.
#[derive(Debug, Clone)]
struct Call {
    callback_id: String,
    input: Value,
    tool_use_id: Option<String>,
}

/// A host whose callbacks deny every call, recording what they receive.
#[derive(Default)]
struct DenyingHost {
    calls: Mutex<Vec<Call>>,
}

impl DenyingHost {
    fn calls(&self) -> Vec<Call> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl HookCallbacks for DenyingHost {
    async fn call(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
        _cancel: CancellationToken,
    ) -> Result<Value, String> {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(Call { callback_id: callback_id.to_owned(), input, tool_use_id });
        }
        Ok(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "the host refuses Bash"}}))
    }
}

/// What the SDK sends for `hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[deny])]}`.
fn sdk_hooks(host: &Arc<DenyingHost>) -> SdkHooks {
    let initialize = json!({"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 30}]});
    let config = HookConfig::from_sdk(&initialize).expect("valid SDK hooks");
    SdkHooks { config, callbacks: Arc::clone(host) as Arc<dyn HookCallbacks> }
}

#[tokio::test]
async fn a_callback_pre_tool_use_hook_denies_bash_after_the_settings_hooks_and_gets_the_event_json() {
    let dir = tempfile::tempdir().expect("dir");
    let s = settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo settings-hook >> \"$CLAUDE_PROJECT_DIR/order.log\""}
        ]}]}
    }));
    let host = Arc::new(DenyingHost::default());
    let script =
        Script::new(vec![calls(&[("toolu_1", "Bash", json!({"command": "echo ran > out.txt"}))]), text("done")]);
    let mut o = options(dir.path(), ModelChoice::Client(script));
    o.sdk_hooks = Some(sdk_hooks(&host));

    let assembled = assemble(&s, o).expect("assembled");
    let outcome =
        assembled.agent.run(RunRequest::new("s1", Transcript::discard("s1.jsonl")).prompt(Some("go".to_owned()))).await;

    let results = tool_results(&outcome.messages);
    assert!(results[0].contains("the host refuses Bash"), "{results:?}");
    assert!(!dir.path().join("out.txt").exists(), "the denied call did not run");
    let order = std::fs::read_to_string(dir.path().join("order.log")).unwrap_or_default();
    assert_eq!(order, "settings-hook\n", "the settings' hook ran too");
    let calls = host.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let call = &calls[0];
    assert_eq!(call.callback_id, "hook_0");
    assert_eq!(call.tool_use_id.as_deref(), Some("toolu_1"));
    assert_eq!(call.input["hook_event_name"], "PreToolUse");
    assert_eq!(call.input["tool_name"], "Bash");
    assert_eq!(call.input["tool_input"]["command"], "echo ran > out.txt");
    assert_eq!(call.input["tool_use_id"], "toolu_1");
    assert_eq!(call.input["session_id"], "s1");
    assembled.tools.families.shutdown().await;
}

#[tokio::test]
async fn a_subagent_runs_the_sdk_hosts_callbacks_too() {
    let dir = tempfile::tempdir().expect("dir");
    let s = settings(json!({"permissions": {"allow": ["Bash", "Agent"]}}));
    let host = Arc::new(DenyingHost::default());
    let task = json!({"description": "d", "prompt": "run it", "subagent_type": "general-purpose"});
    let script = Script::new(vec![
        calls(&[("toolu_agent", "Agent", task)]),
        calls(&[("toolu_child", "Bash", json!({"command": "echo ran > out.txt"}))]),
        text("child done"),
        text("done"),
    ]);
    let mut o = options(dir.path(), ModelChoice::Client(script));
    o.sdk_hooks = Some(sdk_hooks(&host));

    let assembled = assemble(&s, o).expect("assembled");
    let outcome =
        assembled.agent.run(RunRequest::new("s1", Transcript::discard("s1.jsonl")).prompt(Some("go".to_owned()))).await;

    assert_eq!(outcome.result, "done", "{:?}", tool_results(&outcome.messages));
    assert!(!dir.path().join("out.txt").exists(), "the subagent's call was denied");
    let calls = host.calls();
    assert_eq!(calls.len(), 1, "only the Bash call matches: {calls:?}");
    assert_eq!(calls[0].tool_use_id.as_deref(), Some("toolu_child"));
    assert!(calls[0].input["agent_id"].is_string(), "fired inside the subagent: {}", calls[0].input);
    assembled.tools.families.shutdown().await;
}
