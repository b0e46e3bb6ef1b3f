//! Background subagents and a definition's own servers through the library API: an `Agent`
//! call with `run_in_background: true` (or of a `background: true` definition) answers at once,
//! its child runs on, and its `<task-notification>` reaches the parent before a later request;
//! a parent about to end waits for it; a definition's own servers start and stop with each of
//! its subagents and their tools are that subagent's only. Children wait on gates the test
//! opens, never on time.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::subagents::{
    AGENT_TOOL, AgentTool, RunningServers, StartedServers, SubagentDefinition, SubagentServers, Subagents,
};
use spine_core::tool::{Tool, ToolContext};
use spine_protocol::hook::{
    ContextAction, HookOutput, Stop, StopAction, StopInput, SubagentStart, SubagentStartInput, SubagentStop,
    SubagentStopInput,
};
use spine_protocol::message::Message;
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
use tokio::sync::Notify;

use crate::support::*;

fn agent_call(id: &str, agent_type: &str, background: Option<bool>) -> spine_protocol::message::AssistantMessage {
    let mut args = json!({"description": "slow work", "prompt": "work", "subagent_type": agent_type});
    if let Some(background) = background {
        args["run_in_background"] = json!(background);
    }
    calls(&[(id, AGENT_TOOL, args)])
}

/// A tool that waits until its gate is opened.
struct GateTool(Arc<Notify>);

#[async_trait]
impl Tool for GateTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: "gate".into(), description: "waits".into(), input_schema: json!({"type": "object"}) }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _a: &Map<String, Value>, _c: &ToolContext) -> Result<Value, ToolError> {
        self.0.notified().await;
        Ok(json!("opened"))
    }
}

/// Opens `gate` when Stop fires (the parent is about to end, its launch long answered).
fn open_at_stop(h: &mut Harness, gate: &Arc<Notify>) {
    let gate = Arc::clone(gate);
    h.hooks.on::<Stop>(
        "open-gate",
        hook_fn(move |_c: &HookContext, _i: &StopInput| {
            gate.notify_one();
            Ok(HookOutput::new(StopAction::default()))
        }),
    );
}

/// The user messages of a request.
fn user_texts(request: &[Message]) -> Vec<String> {
    request
        .iter()
        .filter_map(|m| match m {
            Message::User { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_background_call_answers_at_once_and_a_parent_about_to_end_waits_for_its_notification() {
    let gate = Arc::new(Notify::new());
    let child = Script::new(vec![calls(&[("k1", "gate", json!({}))]), text("gated work done")]);
    let mut h = with_subagents(vec![definition("worker", child)]);
    h.tools.register(GateTool(Arc::clone(&gate)));
    open_at_stop(&mut h, &gate);
    let replies = vec![agent_call("t1", "worker", Some(true)), text("waiting"), text("done")];
    let (outcome, parent, _log) = h.run("go", replies).await;
    assert_eq!((outcome.subtype, outcome.result.as_str()), (RunSubtype::Success, "done"));
    let requests = parent.requests();
    assert_eq!(requests.len(), 3, "the notification sent the loop on after `waiting`");
    let launched = &results(&requests[1])[0];
    assert!(launched.content.starts_with("Async agent launched successfully."), "{}", launched.content);
    assert_eq!(launched.error_code, None);
    assert!(user_texts(&requests[1]).iter().all(|t| !t.contains("<task-notification>")));
    let Some(Message::User { content, .. }) = requests[2].last() else { panic!("{:?}", requests[2]) };
    assert!(content.starts_with("<task-notification>\n<task-id>"), "{content}");
    assert!(content.contains("<tool-use-id>t1</tool-use-id>\n<status>completed</status>"), "{content}");
    assert!(content.contains("<summary>Agent \"slow work\" finished</summary>"), "{content}");
    assert!(content.contains("<result>gated work done</result>"), "{content}");
    assert!(content.contains("<tool_uses>1</tool_uses>"), "{content}");
    assert_eq!(results(&outcome.messages).len(), 1, "one result for the call: the launch");
}

#[tokio::test]
async fn a_background_definition_always_runs_in_the_background() {
    let gate = Arc::new(Notify::new());
    let child = Script::new(vec![calls(&[("k1", "gate", json!({}))]), text("late")]);
    let mut worker = definition("worker", child);
    worker.background = true;
    let mut h = with_subagents(vec![worker]);
    h.tools.register(GateTool(Arc::clone(&gate)));
    open_at_stop(&mut h, &gate);
    let replies = vec![agent_call("t1", "worker", Some(false)), text("waiting"), text("done")];
    let (outcome, parent, _log) = h.run("go", replies).await;
    assert_eq!(outcome.result, "done");
    assert!(results(&parent.requests()[1])[0].content.starts_with("Async agent launched"), "even when false");
}

#[tokio::test]
async fn a_background_subagent_fires_subagent_start_and_subagent_stop() {
    let child = Script::new(vec![text("quick")]);
    let mut h = with_subagents(vec![definition("worker", child)]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (start, stop) = (Arc::clone(&seen), Arc::clone(&seen));
    h.hooks.on::<SubagentStart>(
        "start",
        hook_fn(move |_c: &HookContext, i: &SubagentStartInput| {
            start.lock().expect("seen").push(format!("start:{}", i.agent_type));
            Ok(HookOutput::new(ContextAction::default()))
        }),
    );
    h.hooks.on::<SubagentStop>(
        "stop",
        hook_fn(move |_c: &HookContext, i: &SubagentStopInput| {
            stop.lock().expect("seen").push(format!("stop:{}", i.last_assistant_message));
            Ok(HookOutput::new(StopAction::default()))
        }),
    );
    let (outcome, _parent, _log) =
        h.run("go", vec![agent_call("t1", "worker", Some(true)), text("waiting"), text("done")]).await;
    assert_eq!(outcome.result, "done");
    assert_eq!(seen.lock().expect("seen").clone(), ["start:worker", "stop:quick"]);
}

#[tokio::test]
async fn a_failed_background_subagent_notifies_its_failure() {
    let child = Script::new(vec![]);
    let h = with_subagents(vec![definition("worker", child)]);
    let (outcome, parent, _log) =
        h.run("go", vec![agent_call("t1", "worker", Some(true)), text("waiting"), text("done")]).await;
    assert_eq!(outcome.result, "done");
    let last = user_texts(&parent.requests()[2]).pop().unwrap_or_default();
    assert!(last.contains("<status>failed</status>"), "{last}");
    assert!(last.contains("Agent \"slow work\" failed: the worker subagent ended without an answer"), "{last}");
    assert!(!last.contains("<result>"), "{last}");
}

#[tokio::test]
async fn canceling_a_parent_that_waits_for_its_background_subagent_ends_both() {
    let child = Script::new(vec![calls(&[("k1", "slow", json!({}))]), text("never")]);
    let h = with_subagents(vec![definition("sleeper", child)]);
    let cancel = h.cancel.clone();
    let log = h.log.clone();
    tokio::spawn(async move {
        loop {
            if log.take().iter().any(|l| l == "slow:start") {
                cancel.cancel();
                return;
            }
            tokio::task::yield_now().await;
        }
    });
    let replies = vec![agent_call("t1", "sleeper", Some(true)), text("waiting"), text("never reached")];
    let (outcome, parent, _log) = h.run("go", replies).await;
    assert_eq!(outcome.subtype, RunSubtype::Canceled);
    assert_eq!(parent.requests().len(), 2, "no request after the cancellation");
}

/// Own servers of a definition: one tool `own_ping` (and `value`, a name the session has),
/// logging starts and stops.
struct FakeServers(Log);

struct FakeRunning(Log);

#[async_trait]
impl SubagentServers for FakeServers {
    fn names(&self) -> Vec<String> {
        vec!["own".into()]
    }
    async fn start(&self) -> StartedServers {
        self.0.push("servers:start");
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(ValueTool { name: "own_ping", effect: Effect::Read, log: self.0.clone() }),
            Arc::new(ValueTool { name: "value", effect: Effect::Read, log: self.0.clone() }),
        ];
        StartedServers {
            tools,
            warnings: vec!["MCP: MCP server `broken`: did not start".into()],
            running: Box::new(FakeRunning(self.0.clone())),
        }
    }
}

#[async_trait]
impl RunningServers for FakeRunning {
    async fn stop(self: Box<Self>) {
        self.0.push("servers:stop");
    }
}

#[tokio::test]
async fn own_servers_start_with_their_subagent_their_tools_are_its_only_and_they_stop_when_it_ends() {
    let child = Script::new(vec![calls(&[("k1", "own_ping", json!({"value": 1}))]), text("pinged")]);
    let log = Log::default();
    let pinger =
        SubagentDefinition { servers: Some(Arc::new(FakeServers(log.clone()))), ..definition("pinger", child) };
    let h = with_subagents(vec![pinger]);
    let replies =
        vec![agent_call("t1", "pinger", None), calls(&[("p1", "own_ping", json!({"value": 2}))]), text("done")];
    let (outcome, parent, _log) = h.run("go", replies).await;
    assert_eq!(outcome.result, "done");
    assert_eq!(
        log.take(),
        ["servers:start", "handler:own_ping:1", "servers:stop"],
        "stopped before the parent went on"
    );
    let parent_results = results(&parent.requests()[2]);
    assert_eq!(parent_results[1].error_code, Some(ErrorCode::UnknownTool), "not the parent's: {parent_results:?}");
    let warnings: Vec<String> = outcome
        .trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            spine_protocol::trace::TraceRecord::Warning(w) => Some(w.message),
            _ => None,
        })
        .collect();
    assert!(warnings.iter().any(|w| w.ends_with("MCP: MCP server `broken`: did not start")), "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("tool value skipped: the session has a tool of that name")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn a_single_tool_call_runs_a_background_agent_call_in_the_foreground() {
    use spine_core::permission::{DenyApprover, PermissionPolicy, PermissionRules};
    use spine_core::registry::ToolRegistryBuilder;
    use spine_core::runner::{Agent, AgentConfig, SingleCall};
    use spine_core::workspace::Workspace;
    use spine_protocol::tool::{ToolArguments, ToolCall};

    let dir = tempfile::tempdir().expect("tmp");
    let workspace = Arc::new(Workspace::new(dir.path()).expect("workspace"));
    let mut config = AgentConfig::new(Arc::clone(&workspace));
    let child = Script::new(vec![text("answered in place")]);
    config.subagents =
        Some(Arc::new(Subagents { definitions: vec![definition("worker", child)], ..Subagents::default() }));
    let mut tools = ToolRegistryBuilder::new();
    tools.register(AgentTool);
    let agent = Agent {
        model: Arc::new(spine_core::model::NoModel),
        tools: Arc::new(tools.build().expect("tools")),
        hooks: Arc::new(spine_core::hooks::HookRegistryBuilder::new().build()),
        policy: PermissionPolicy::new(PermissionRules::default(), Default::default(), dir.path().to_path_buf()),
        approver: Arc::new(DenyApprover),
        config,
    };
    let args = json!({"description": "d", "prompt": "p", "subagent_type": "worker", "run_in_background": true});
    let outcome = agent
        .run_tool_call(SingleCall {
            call: ToolCall { id: "t1".into(), name: AGENT_TOOL.into(), arguments: ToolArguments::Json(args) },
            session_id: "s1".into(),
            transcript_path: dir.path().join("session.jsonl"),
            visibility: None,
            cancel: Default::default(),
            observer: Arc::new(spine_core::observer::NullObserver),
            trace: Default::default(),
            progress: None,
            reports: None,
        })
        .await;
    assert_eq!(outcome.result.content, "answered in place", "no later request would read a notification");
}

#[tokio::test]
async fn own_servers_tools_are_not_passed_to_the_subagents_it_starts() {
    let inner = Script::new(vec![calls(&[("g1", "own_ping", json!({"value": 3}))]), text("could not")]);
    let outer = Script::new(vec![
        calls(&[("c1", AGENT_TOOL, json!({"description": "d", "prompt": "p", "subagent_type": "inner"}))]),
        text("outer done"),
    ]);
    let log = Log::default();
    let pinger = SubagentDefinition {
        servers: Some(Arc::new(FakeServers(log.clone()))),
        tools: Some(vec![AGENT_TOOL.to_owned()]),
        ..definition("pinger", outer)
    };
    let h = with_subagents(vec![pinger, definition("inner", inner.clone())]);
    let (outcome, _parent, _log) = h.run("go", vec![agent_call("t1", "pinger", None), text("done")]).await;
    assert_eq!(outcome.result, "done");
    let grandchild = results(&inner.requests()[1]);
    assert_eq!(grandchild[0].error_code, Some(ErrorCode::ToolNotAllowed), "{grandchild:?}");
    assert!(!log.take().iter().any(|l| l.starts_with("handler:own_ping")), "never ran");
}
