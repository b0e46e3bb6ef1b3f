//! [`CallbackHook`] against an in-test host: what it sends, and what each answer means.

use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::json;
use spine_core::hooks::{HookErrorKind, SessionInfo};
use spine_protocol::hook::{
    HookEventName, HookKind, PostToolUse, PostToolUseAction, PostToolUseInput, PreToolUse, PreToolUseAction,
    PreToolUseInput, Stop, StopAction, StopInput,
};
use spine_protocol::permission::{PermissionMode, PermissionSuggestion};

use super::*;
use crate::record::{AnswerRecord, AnswerSink};

/// What the host's callback does when called.
#[derive(Clone)]
enum Reply {
    /// Answers this value.
    Value(Value),
    /// Answers an error response.
    Error(&'static str),
    /// Never answers (until canceled).
    Hang,
}

/// A host with one behaviour for every callback; it records each call and whether the call's
/// token was canceled by the time it returned.
struct Host {
    reply: Reply,
    calls: Mutex<Vec<(String, Value, Option<String>)>>,
    canceled: Mutex<Vec<CancellationToken>>,
}

impl Host {
    fn new(reply: Reply) -> Arc<Host> {
        Arc::new(Host { reply, calls: Mutex::new(Vec::new()), canceled: Mutex::new(Vec::new()) })
    }

    fn calls(&self) -> Vec<(String, Value, Option<String>)> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The tokens of the calls made.
    fn tokens(&self) -> Vec<CancellationToken> {
        self.canceled.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl HookCallbacks for Host {
    async fn call(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
        cancel: CancellationToken,
    ) -> Result<Value, String> {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push((callback_id.to_owned(), input, tool_use_id));
        }
        if let Ok(mut tokens) = self.canceled.lock() {
            tokens.push(cancel.clone());
        }
        match &self.reply {
            Reply::Value(v) => Ok(v.clone()),
            Reply::Error(e) => Err((*e).to_owned()),
            Reply::Hang => {
                cancel.cancelled().await;
                Err("withdrawn".to_owned())
            }
        }
    }
}

#[derive(Default)]
struct Records(Mutex<Vec<AnswerRecord>>);

impl AnswerSink for Records {
    fn record(&self, record: AnswerRecord) {
        if let Ok(mut records) = self.0.lock() {
            records.push(record);
        }
    }
}

fn meta(sink: Option<Arc<dyn AnswerSink>>) -> Arc<HookMeta> {
    Arc::new(HookMeta {
        hook_id: "hook_0".into(),
        path: "initialize.hooks.PreToolUse[0].hookCallbackIds[0]".into(),
        source: "the SDK host".into(),
        kind: HookKind::Callback,
        sink,
    })
}

fn hook(host: &Arc<Host>) -> CallbackHook {
    let callbacks: Arc<dyn HookCallbacks> = Arc::clone(host) as Arc<dyn HookCallbacks>;
    CallbackHook::new("hook_0", Some(callbacks), Duration::from_secs(5), meta(None))
}

fn context(event: HookEventName) -> HookContext {
    let dir = PathBuf::from("/project");
    HookContext {
        session: Arc::new(SessionInfo {
            session_id: "s1".into(),
            transcript_path: dir.join("t.jsonl"),
            cwd: dir.clone(),
            hook_dir: dir.clone(),
            project_dir: dir,
            permission_mode: PermissionMode::Default,
            effort: None,
            env_file: None,
        }),
        event,
        prompt_id: Some(Arc::from("p1")),
        cancel: CancellationToken::new(),
        agent: None,
    }
}

fn bash(command: &str) -> PreToolUseInput {
    PreToolUseInput {
        tool_name: "Bash".into(),
        spine_tool_name: None,
        tool_input: json!({"command": command}),
        tool_use_id: "toolu_1".into(),
    }
}

async fn pre_tool_use(host: &Arc<Host>) -> Result<HookOutput<PreToolUseAction>, HookError> {
    Hook::<PreToolUse>::call(&hook(host), &context(HookEventName::PreToolUse), &bash("rm -rf /")).await
}

#[tokio::test]
async fn the_callback_gets_the_command_hooks_event_json_and_the_tool_use_id() {
    let host = Host::new(Reply::Value(json!({})));
    let ctx = context(HookEventName::PreToolUse);
    let output = Hook::<PreToolUse>::call(&hook(&host), &ctx, &bash("ls")).await.expect("answered");
    assert_eq!(output.action, PreToolUseAction::default(), "{{}} is no opinion");
    let calls = host.calls();
    assert_eq!(calls.len(), 1);
    let (id, input, tool_use_id) = &calls[0];
    assert_eq!(id, "hook_0");
    assert_eq!(*input, input::to_value::<PreToolUse>(&ctx, &bash("ls")), "what a command hook reads on stdin");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"], json!({"command": "ls"}));
    assert_eq!(tool_use_id.as_deref(), Some("toolu_1"));
}

#[tokio::test]
async fn an_event_without_a_tool_call_sends_no_tool_use_id() {
    let host = Host::new(Reply::Value(json!({})));
    let input = StopInput { stop_hook_active: false, last_assistant_message: "done".into() };
    Hook::<Stop>::call(&hook(&host), &context(HookEventName::Stop), &input).await.expect("answered");
    assert_eq!(host.calls()[0].2, None);
}

#[tokio::test]
async fn a_pre_tool_use_deny_in_permission_decision_is_a_deny_with_its_reason() {
    let host = Host::new(Reply::Value(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "no rm"}})));
    let output = pre_tool_use(&host).await.expect("answered");
    let PreToolUseAction::Proceed { permission, .. } = output.action else { panic!("{:?}", output.action) };
    assert_eq!(permission, PermissionSuggestion::Deny { reason: Some("no rm".into()) });
}

#[tokio::test]
async fn updated_input_rewrites_the_call() {
    let host = Host::new(Reply::Value(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}})));
    let output = pre_tool_use(&host).await.expect("answered");
    let PreToolUseAction::Proceed { updated_input, .. } = output.action else { panic!("{:?}", output.action) };
    assert_eq!(updated_input.map(Value::Object), Some(json!({"command": "ls -la"})));
}

#[tokio::test]
async fn decision_block_on_post_tool_use_and_stop_means_what_it_means_for_a_command_hook() {
    let host = Host::new(Reply::Value(json!({"decision": "block", "reason": "check the output"})));
    let input = PostToolUseInput {
        tool_name: "Bash".into(),
        spine_tool_name: None,
        tool_input: json!({"command": "ls"}),
        tool_use_id: "toolu_1".into(),
        tool_response: json!({"stdout": "a"}),
        duration_ms: 1,
    };
    let post = Hook::<PostToolUse>::call(&hook(&host), &context(HookEventName::PostToolUse), &input).await;
    let expected = PostToolUseAction { block_reason: Some("check the output".into()), ..PostToolUseAction::default() };
    assert_eq!(post.expect("answered").action, expected);
    let stop = StopInput { stop_hook_active: false, last_assistant_message: "done".into() };
    let stop = Hook::<Stop>::call(&hook(&host), &context(HookEventName::Stop), &stop).await;
    assert_eq!(stop.expect("answered").action, StopAction::force_continue("check the output"));
}

#[tokio::test]
async fn continue_false_halts_with_the_stop_reason() {
    let host = Host::new(Reply::Value(json!({"continue": false, "stopReason": "host says stop"})));
    let output = pre_tool_use(&host).await.expect("answered");
    assert_eq!(output.halt.and_then(|h| h.stop_reason).as_deref(), Some("host says stop"));
}

#[tokio::test]
async fn the_async_form_is_no_opinion() {
    let host = Host::new(Reply::Value(json!({"async": true, "asyncTimeout": 1000})));
    let output = pre_tool_use(&host).await.expect("answered");
    assert_eq!((output.action, output.halt), (PreToolUseAction::default(), None));
}

#[tokio::test]
async fn an_error_answer_and_a_non_object_answer_are_failures_and_a_stray_field_a_contract_error() {
    let error = pre_tool_use(&Host::new(Reply::Error("boom"))).await.expect_err("error answer");
    assert_eq!(error.kind, HookErrorKind::Failed);
    assert!(error.detail.contains("callback `hook_0` failed: boom"), "{}", error.detail);
    for answer in [json!(null), json!("deny"), json!([1])] {
        let error = pre_tool_use(&Host::new(Reply::Value(answer.clone()))).await.expect_err("not an object");
        assert_eq!(error.kind, HookErrorKind::Failed, "{answer}");
    }
    let stray = pre_tool_use(&Host::new(Reply::Value(json!({"permissionDecision": "deny"})))).await;
    assert_eq!(stray.expect_err("a top-level permissionDecision").kind, HookErrorKind::Contract);
}

#[tokio::test]
async fn no_answer_within_the_timeout_is_a_time_out_and_withdraws_the_call() {
    let host = Host::new(Reply::Hang);
    let callbacks: Arc<dyn HookCallbacks> = Arc::clone(&host) as Arc<dyn HookCallbacks>;
    let hook = CallbackHook::new("hook_0", Some(callbacks), Duration::from_millis(50), meta(None));
    let error = Hook::<PreToolUse>::call(&hook, &context(HookEventName::PreToolUse), &bash("ls")).await;
    let error = error.expect_err("timed out");
    assert_eq!(error.kind, HookErrorKind::Timeout);
    assert!(error.detail.contains("within 0.1 s"), "{}", error.detail);
    assert!(host.tokens()[0].is_cancelled(), "the host may stop waiting too");
}

#[tokio::test]
async fn a_canceled_run_cancels_the_call_and_fails_it() {
    let host = Host::new(Reply::Hang);
    let ctx = context(HookEventName::PreToolUse);
    let cancel = ctx.cancel.clone();
    let canceler = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        cancel.cancel();
    });
    let error = Hook::<PreToolUse>::call(&hook(&host), &ctx, &bash("ls")).await.expect_err("canceled");
    canceler.await.expect("canceler");
    assert_eq!(error.kind, HookErrorKind::Failed);
    assert!(error.detail.contains("canceled"), "{}", error.detail);
    assert!(host.tokens()[0].is_cancelled());
}

#[tokio::test]
async fn without_an_sdk_host_each_firing_is_a_launch_error() {
    let hook = CallbackHook::new("hook_0", None, Duration::from_secs(5), meta(None));
    let error = Hook::<PreToolUse>::call(&hook, &context(HookEventName::PreToolUse), &bash("ls")).await;
    let error = error.expect_err("no host");
    assert_eq!(error.kind, HookErrorKind::Launch);
    assert!(error.detail.contains("no SDK host"), "{}", error.detail);
}

#[tokio::test]
async fn the_answer_is_recorded_as_its_json_text_and_an_error_as_no_answer() {
    let records = Arc::new(Records::default());
    let sink: Arc<dyn AnswerSink> = Arc::clone(&records) as Arc<dyn AnswerSink>;
    let answer = json!({"systemMessage": "seen"});
    for host in [Host::new(Reply::Value(answer.clone())), Host::new(Reply::Error("boom"))] {
        let callbacks: Arc<dyn HookCallbacks> = host;
        let hook = CallbackHook::new("hook_0", Some(callbacks), Duration::from_secs(5), meta(Some(Arc::clone(&sink))));
        let _ = Hook::<PreToolUse>::call(&hook, &context(HookEventName::PreToolUse), &bash("ls")).await;
    }
    let records = records.0.lock().map(|r| r.clone()).unwrap_or_default();
    assert_eq!(records.len(), 2);
    assert_eq!((records[0].kind, records[0].event), (HookKind::Callback, HookEventName::PreToolUse));
    assert_eq!(records[0].raw, Raw::Reply { text: answer.to_string() });
    assert!(records[0].outcome.is_ok());
    assert_eq!(records[1].raw, Raw::None);
    assert!(records[1].outcome.as_ref().is_err_and(|e| e.kind == HookErrorKind::Failed));
}
