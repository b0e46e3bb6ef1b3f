//! Subagents through the library API: an `Agent` call (the grandchild tests use its former name
//! `Task`) runs a child agent with its own scripted model, under the parent's hooks and rules;
//! its answer is the call's result, its usage is the parent's too, its trace nests under it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::model::{ModelClient, ModelError, ModelReply, ModelRequest, StreamSink};
use spine_core::subagents::{AGENT_TOOL, AgentTool, SubagentDefinition, Subagents, TASK_TOOL};
use spine_core::tool::{Tool, ToolContext};
use spine_protocol::hook::{
    ContextAction, HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput, Stop, StopAction, StopInput,
    SubagentStart, SubagentStartInput, SubagentStop, SubagentStopInput,
};
use spine_protocol::message::{AssistantMessage, Message};
use spine_protocol::run::{RunSubtype, Usage};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
use spine_protocol::trace::TraceRecord;

use crate::support::*;

/// A definition of `name` answering from `model`.
fn definition(name: &str, model: Arc<dyn ModelClient>) -> SubagentDefinition {
    SubagentDefinition {
        name: name.to_owned(),
        description: format!("the {name} agent"),
        prompt: format!("You are the {name} subagent."),
        model: Some(model),
        source: PathBuf::from(format!("{name}.md")),
        ..SubagentDefinition::general_purpose()
    }
}

fn task(id: &str, agent_type: &str, prompt: &str) -> (String, String, Value) {
    (
        id.to_owned(),
        AGENT_TOOL.to_owned(),
        json!({"description": "a task", "prompt": prompt, "subagent_type": agent_type}),
    )
}

fn task_calls(list: &[(String, String, Value)]) -> AssistantMessage {
    let borrowed: Vec<(&str, &str, Value)> = list.iter().map(|(i, n, a)| (i.as_str(), n.as_str(), a.clone())).collect();
    calls(&borrowed)
}

#[tokio::test]
async fn a_task_call_runs_a_child_whose_final_answer_is_the_result() {
    let child = Script::new(vec![calls(&[("k1", "value", json!({"value": 7}))]), text("seven")]);
    let mut h = with_subagents(vec![definition("counter", child.clone())]);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    h.hooks.on::<PreToolUse>(
        "who",
        hook_fn(move |c: &HookContext, i: &PreToolUseInput| {
            let common = c.common_input();
            record.lock().expect("seen").push((i.tool_name.clone(), common.agent_id, common.agent_type));
            Ok(HookOutput::new(PreToolUseAction::default()))
        }),
    );
    // The harness's directory goes with the run: the transcript is read while the child ends.
    let transcript = Arc::new(std::sync::Mutex::new((PathBuf::new(), String::new())));
    let keep = Arc::clone(&transcript);
    h.hooks.on::<SubagentStop>(
        "read-transcript",
        hook_fn(move |_c: &HookContext, i: &SubagentStopInput| {
            let text = std::fs::read_to_string(&i.agent_transcript_path).unwrap_or_default();
            *keep.lock().expect("keep") = (i.agent_transcript_path.clone(), text);
            Ok(HookOutput::new(StopAction::default()))
        }),
    );
    let dir = h.dir.path().to_path_buf();
    let (outcome, parent, log) =
        h.run("go", vec![task_calls(&[task("t1", "counter", "count to seven")]), text("parent done")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    assert_eq!(outcome.result, "parent done");
    let r = results(&outcome.messages);
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].name.as_str(), r[0].content.as_str(), r[0].error_code), (AGENT_TOOL, "seven", None));
    assert_eq!(log.take(), vec!["handler:value:7"]);
    // The child started fresh: its system prompt has the definition's body and no operator
    // layer, then the prompt alone.
    let first = &child.requests()[0];
    let Message::System { content } = &first[0] else { panic!("system first: {first:?}") };
    assert!(content.contains("You are the counter subagent."), "{content}");
    let operator = spine_core::stages::prepare_turn::OPERATOR_PROMPT;
    assert!(!content.contains(operator), "no operator layers in a subagent: {content}");
    let Message::System { content: parent_system } = &parent.requests()[0][0] else { panic!("parent system") };
    assert!(parent_system.contains(operator), "the main agent has them: {parent_system}");
    assert_eq!(first[1], Message::user("count to seven"));
    assert_eq!(first.len(), 2, "nothing of the parent's conversation: {first:?}");
    assert_eq!(parent.requests().len(), 2);
    // Hooks saw the parent's Agent call without, and the child's call with, the agent fields.
    let seen = seen.lock().expect("seen").clone();
    assert_eq!(seen[0], (AGENT_TOOL.to_owned(), None, None));
    assert_eq!(seen[1].0, "value");
    assert_eq!(seen[1].2.as_deref(), Some("counter"));
    let agent_id = seen[1].1.clone().expect("agent_id inside the subagent");
    // Its transcript: <session>/subagents/agent-<id>.jsonl, sidechain lines with agentId.
    let (path, text) = transcript.lock().expect("transcript").clone();
    assert_eq!(path, dir.join("session").join("subagents").join(format!("agent-{agent_id}.jsonl")));
    assert!(text.lines().count() >= 4, "session, prompt, call, result, answer: {text}");
    for line in text.lines() {
        let line: Value = serde_json::from_str(line).expect("json line");
        assert_eq!(line["isSidechain"], true, "{line}");
        assert_eq!(line["agentId"], agent_id.as_str(), "{line}");
        assert_eq!(line["sessionId"], "s1", "{line}");
    }
}

/// Blocks until `parties` calls are inside it at once.
struct BarrierTool(Arc<tokio::sync::Barrier>);

#[async_trait]
impl Tool for BarrierTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: "barrier".into(), description: "meets".into(), input_schema: json!({"type": "object"}) }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _a: &Map<String, Value>, _c: &ToolContext) -> Result<Value, ToolError> {
        self.0.wait().await;
        Ok(json!("met"))
    }
}

#[tokio::test]
async fn task_calls_of_one_turn_run_concurrently() {
    // Each child's tool waits until both children are inside it: run one after the other,
    // the first would wait forever.
    let a = Script::new(vec![calls(&[("a1", "barrier", json!({}))]), text("A")]);
    let b = Script::new(vec![calls(&[("b1", "barrier", json!({}))]), text("B")]);
    let mut h = with_subagents(vec![definition("a", a), definition("b", b)]);
    h.tools.register(BarrierTool(Arc::new(tokio::sync::Barrier::new(2))));
    let run = h.run("go", vec![task_calls(&[task("t1", "a", "one"), task("t2", "b", "two")]), text("both")]);
    let (outcome, _parent, _log) = tokio::time::timeout(Duration::from_secs(60), run).await.expect("not serialised");
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    let r = results(&outcome.messages);
    let answers: Vec<(&str, &str)> = r.iter().map(|t| (t.tool_call_id.as_str(), t.content.as_str())).collect();
    assert_eq!(answers, [("t1", "A"), ("t2", "B")], "results keep the calls' order");
}

#[tokio::test]
async fn a_deny_rule_of_the_parent_holds_inside_a_subagent() {
    let child = Script::new(vec![calls(&[("k1", "write_value", json!({"value": 1}))]), text("could not")]);
    let mut h = with_subagents(vec![definition("writer", child.clone())]);
    h.allow = vec!["write_value"];
    h.deny = vec!["write_value"];
    let (outcome, _parent, log) = h.run("go", vec![task_calls(&[task("t1", "writer", "write")]), text("ok")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success);
    assert!(log.take().is_empty(), "the denied handler never ran");
    let child_results = results(&child.requests()[1]);
    assert_eq!(child_results[0].error_code, Some(ErrorCode::PermissionDenied), "{child_results:?}");
}

#[tokio::test]
async fn subagent_stop_forces_one_more_child_turn_and_stop_is_not_fired_in_the_child() {
    let child = Script::new(vec![text("first"), text("second")]);
    let mut h = with_subagents(vec![definition("worker", child.clone())]);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    h.hooks.on::<SubagentStop>(
        "verify",
        hook_fn(move |_c: &HookContext, i: &SubagentStopInput| {
            record.lock().expect("seen").push(format!("SubagentStop:{}:{}", i.agent_type, i.last_assistant_message));
            Ok(HookOutput::new(match i.stop_hook_active {
                false => StopAction::force_continue("check again"),
                true => StopAction::default(),
            }))
        }),
    );
    let record = Arc::clone(&seen);
    h.hooks.on::<Stop>(
        "parent-stop",
        hook_fn(move |_c: &HookContext, i: &StopInput| {
            record.lock().expect("seen").push(format!("Stop:{}", i.last_assistant_message));
            Ok(HookOutput::new(StopAction::default()))
        }),
    );
    let (outcome, _parent, _log) = h.run("go", vec![task_calls(&[task("t1", "worker", "work")]), text("parent")]).await;
    assert_eq!(results(&outcome.messages)[0].content, "second");
    assert_eq!(
        seen.lock().expect("seen").clone(),
        ["SubagentStop:worker:first", "SubagentStop:worker:second", "Stop:parent"]
    );
    assert_eq!(child.requests()[1].last(), Some(&Message::user("check again")));
}

#[tokio::test]
async fn subagent_start_adds_context_to_the_child() {
    let child = Script::new(vec![text("done")]);
    let mut h = with_subagents(vec![definition("worker", child.clone())]);
    h.hooks.on::<SubagentStart>(
        "brief",
        hook_fn(|_c: &HookContext, i: &SubagentStartInput| {
            Ok(HookOutput::new(ContextAction::context(format!("you are {}", i.agent_type))))
        }),
    );
    let (_outcome, parent, _log) = h.run("go", vec![task_calls(&[task("t1", "worker", "work")]), text("p")]).await;
    assert_eq!(roles(&child.requests()[0]), ["system", "user", "context:SubagentStart"]);
    assert!(roles(&parent.requests()[1]).iter().all(|r| r != "context:SubagentStart"), "not the parent's");
}

#[tokio::test]
async fn canceling_the_parent_kills_the_childs_running_tool() {
    let child = Script::new(vec![calls(&[("k1", "slow", json!({}))]), text("never")]);
    let h = with_subagents(vec![definition("sleeper", child)]);
    let cancel = h.cancel.clone();
    let log = h.log.clone();
    tokio::spawn(async move {
        for _ in 0..2000 {
            if log.take().iter().any(|l| l == "slow:start") {
                cancel.cancel();
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let (outcome, _parent, log) = h.run("go", vec![task_calls(&[task("t1", "sleeper", "sleep")]), text("no")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Canceled);
    assert_eq!(log.take(), ["slow:start", "slow:killed"]);
    assert_eq!(results(&outcome.messages)[0].error_code, Some(ErrorCode::Canceled));
}

/// A script that reports usage and prices it at one dollar per token.
struct Priced {
    name: &'static str,
    script: Arc<Script>,
    usage: Usage,
}

#[async_trait]
impl ModelClient for Priced {
    fn model(&self) -> &str {
        self.name
    }
    async fn complete(
        &self,
        request: ModelRequest<'_>,
        stream: &dyn StreamSink,
        cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let mut reply = self.script.complete(request, stream, cancel).await?;
        reply.usage = Some(self.usage);
        Ok(reply)
    }
    fn cost_usd(&self, usage: &Usage) -> Option<f64> {
        Some((usage.input_tokens + usage.output_tokens) as f64)
    }
}

#[tokio::test]
async fn the_childs_usage_and_cost_are_added_to_the_parents() {
    let usage = |i, o| Usage { input_tokens: i, output_tokens: o, ..Usage::default() };
    let child =
        Arc::new(Priced { name: "child-model", script: Script::new(vec![text("answer")]), usage: usage(10, 2) });
    let h = with_subagents(vec![definition("c", child)]);
    let parent = Arc::new(Priced {
        name: "parent-model",
        script: Script::new(vec![task_calls(&[task("t1", "c", "x")]), text("done")]),
        usage: usage(100, 20),
    });
    let (outcome, _log) = h.run_with("go", parent, None, vec![]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    assert_eq!(outcome.model_usage["parent-model"].requests, 2);
    assert_eq!(outcome.model_usage["child-model"].requests, 1);
    assert_eq!(outcome.model_usage["child-model"].cost_usd, Some(12.0));
    let total = outcome.usage.expect("usage");
    assert_eq!((total.input_tokens, total.output_tokens), (210, 42));
    assert_eq!(outcome.total_cost_usd, Some(252.0));
}

#[tokio::test]
async fn an_unknown_subagent_type_is_a_tool_error_listing_the_known_types() {
    let h = with_subagents(vec![definition("known", Script::new(vec![]))]);
    let (outcome, _parent, _log) = h.run("go", vec![task_calls(&[task("t1", "nope", "x")]), text("ok")]).await;
    let r = results(&outcome.messages);
    assert_eq!(r[0].error_code, Some(ErrorCode::InvalidArguments));
    assert!(r[0].content.contains("unknown subagent_type `nope`"), "{}", r[0].content);
    assert!(r[0].content.ends_with("the known agent types are: known"), "{}", r[0].content);
}

#[tokio::test]
async fn a_child_cannot_start_a_grandchild_unless_its_definition_lists_task() {
    let grandchild = Script::new(vec![text("grandchild answer")]);
    let plain = Script::new(vec![
        calls(&[("k1", TASK_TOOL, json!({"description": "d", "prompt": "p", "subagent_type": "leaf"}))]),
        text("no"),
    ]);
    let delegating = Script::new(vec![
        calls(&[("k1", TASK_TOOL, json!({"description": "d", "prompt": "p", "subagent_type": "leaf"}))]),
        text("yes"),
    ]);
    let mut may = definition("delegating", delegating.clone());
    may.tools = Some(vec![TASK_TOOL.to_owned(), "value".to_owned()]);
    let h = with_subagents(vec![definition("plain", plain.clone()), may, definition("leaf", grandchild.clone())]);
    let (outcome, _parent, _log) = h
        .run(
            "go",
            vec![task_calls(&[task("t1", "plain", "x")]), task_calls(&[task("t2", "delegating", "y")]), text("ok")],
        )
        .await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    let refused = &results(&plain.requests()[1])[0];
    assert_eq!(refused.error_code, Some(ErrorCode::ToolNotAllowed), "{refused:?}");
    let allowed = &results(&delegating.requests()[1])[0];
    assert_eq!((allowed.content.as_str(), allowed.error_code), ("grandchild answer", None));
}

#[tokio::test]
async fn the_depth_limit_refuses_a_task_call_below_it() {
    let leaf = Script::new(vec![text("unreachable")]);
    let child = Script::new(vec![
        calls(&[("k1", TASK_TOOL, json!({"description": "d", "prompt": "p", "subagent_type": "leaf"}))]),
        text("stopped"),
    ]);
    let mut may = definition("delegating", child.clone());
    may.tools = Some(vec![TASK_TOOL.to_owned()]);
    let mut h = with_subagents(vec![]);
    let subagents = Arc::new(Subagents {
        definitions: vec![may, definition("leaf", leaf.clone())],
        max_concurrent: 4,
        max_depth: 1,
    });
    h.configure = Some(Box::new(move |config| config.subagents = Some(subagents)));
    let (outcome, _parent, _log) = h.run("go", vec![task_calls(&[task("t1", "delegating", "x")]), text("ok")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success);
    assert_eq!(results(&child.requests()[1])[0].error_code, Some(ErrorCode::ToolNotAllowed));
    assert!(leaf.requests().is_empty());
}

#[tokio::test]
async fn the_childs_trace_entries_nest_under_the_task_call() {
    let child = Script::new(vec![calls(&[("k1", "value", json!({"value": 1}))]), text("one")]);
    let h = with_subagents(vec![definition("c", child)]);
    let (outcome, _parent, _log) = h.run("go", vec![task_calls(&[task("t1", "c", "x")]), text("ok")]).await;
    let entries = outcome.trace.entries();
    let nested: Vec<_> = entries.iter().filter(|e| e.subagent.is_some()).collect();
    assert!(!nested.is_empty());
    for e in &nested {
        let tag = e.subagent.as_ref().expect("tag");
        assert_eq!((tag.parent_tool_use_id.as_str(), tag.agent_type.as_str(), tag.depth), ("t1", "c", 1));
    }
    assert!(
        nested.iter().any(|e| matches!(&e.record, TraceRecord::ToolDecision(d) if d.tool_use_id == "k1")),
        "the child's call is in the parent's trace"
    );
    let parent_decision = entries
        .iter()
        .position(|e| matches!(&e.record, TraceRecord::ToolDecision(d) if d.tool_use_id == "t1"))
        .expect("the Task call's decision");
    let first_nested = entries.iter().position(|e| e.subagent.is_some()).expect("nested");
    assert!(first_nested < parent_decision, "the child ran inside the Task call");
    assert!(entries.iter().filter(|e| e.subagent.is_none()).all(|e| e.seq < entries.len() as u64));
}

#[tokio::test]
async fn a_delegating_assignment_reports_the_start_and_end_of_each_child() {
    use spine_core::reports::{MemorySink, ReportCollector, WorkIdentity};
    use spine_protocol::report::{ProgressPayload, ReportBody};
    let a = Script::new(vec![text("A")]);
    let b = Script::new(vec![text("B")]);
    let mut h = with_subagents(vec![definition("a", a), definition("b", b)]);
    let sink = Arc::new(MemorySink::default());
    h.reports = Some(Arc::new(ReportCollector::new(WorkIdentity::default(), sink.clone())));
    let (outcome, _parent, _log) =
        h.run("go", vec![task_calls(&[task("t1", "a", "one"), task("t2", "b", "two")]), text("both")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success);
    let reports = sink.0.lock().expect("sink").clone();
    let mut children: Vec<(String, String, String, Option<String>)> = reports
        .iter()
        .filter_map(|r| match &r.body {
            ReportBody::ExecutionProgress { progress_payload: ProgressPayload::Subagent { subagent } } => Some((
                subagent.call_id.clone(),
                subagent.event.clone(),
                subagent.agent_type.clone(),
                subagent.result.clone(),
            )),
            _ => None,
        })
        .collect();
    children.sort();
    let expected = [
        ("t1", "completed", "a", Some("A")),
        ("t1", "started", "a", None),
        ("t2", "completed", "b", Some("B")),
        ("t2", "started", "b", None),
    ];
    let expected: Vec<(String, String, String, Option<String>)> = expected
        .iter()
        .map(|(c, e, t, r)| ((*c).to_owned(), (*e).to_owned(), (*t).to_owned(), r.map(str::to_owned)))
        .collect();
    assert_eq!(children, expected);
    let methods: Vec<&str> = reports.iter().map(|r| r.body.method_id()).collect();
    assert_eq!(methods.first(), Some(&"execution_started"));
    assert_eq!(
        methods.iter().filter(|m| **m == "execution_complete").count(),
        1,
        "the children send no terminal report"
    );
}

/// Records when each approval starts and ends, and lets other tasks run in between.
struct Interleaving(std::sync::Mutex<Vec<String>>);

#[async_trait]
impl spine_core::permission::Approver for Interleaving {
    async fn approve(&self, request: &spine_core::permission::ApprovalRequest<'_>) -> spine_core::permission::Approval {
        self.0.lock().expect("log").push(format!("enter:{}", request.tool_use_id));
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        self.0.lock().expect("log").push(format!("exit:{}", request.tool_use_id));
        spine_core::permission::Approval::Allow
    }
}

#[tokio::test]
async fn concurrent_children_ask_the_approver_one_at_a_time() {
    let a = Script::new(vec![calls(&[("a1", "write_value", json!({"value": 1}))]), text("A")]);
    let b = Script::new(vec![calls(&[("b1", "write_value", json!({"value": 2}))]), text("B")]);
    let mut h = with_subagents(vec![definition("a", a), definition("b", b)]);
    let approver = Arc::new(Interleaving(std::sync::Mutex::new(Vec::new())));
    h.approver = approver.clone();
    let (outcome, _parent, log) =
        h.run("go", vec![task_calls(&[task("t1", "a", "one"), task("t2", "b", "two")]), text("both")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success);
    assert_eq!(log.take().len(), 2, "both approved writes ran");
    let asked = approver.0.lock().expect("log").clone();
    assert_eq!(asked.len(), 4);
    assert!(asked[0].starts_with("enter:") && asked[1].starts_with("exit:"), "{asked:?}");
    assert_eq!(asked[0][6..], asked[1][5..], "the first ask ends before the second starts: {asked:?}");
}

/// Counts the calls inside it at once and keeps the highest count.
#[derive(Default)]
struct Gauge {
    inside: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

struct GaugeTool(Arc<Gauge>);

#[async_trait]
impl Tool for GaugeTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: "gauge".into(), description: "counts".into(), input_schema: json!({"type": "object"}) }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _a: &Map<String, Value>, _c: &ToolContext) -> Result<Value, ToolError> {
        use std::sync::atomic::Ordering::SeqCst;
        let now = self.0.inside.fetch_add(1, SeqCst) + 1;
        self.0.most.fetch_max(now, SeqCst);
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        self.0.inside.fetch_sub(1, SeqCst);
        Ok(json!("counted"))
    }
}

/// The most children inside the gauge at once, for three Task calls under `max_concurrent`.
async fn most_at_once(max_concurrent: usize) -> usize {
    let child = |n: &str| Script::new(vec![calls(&[(n, "gauge", json!({}))]), text("ok")]);
    let definitions = vec![definition("a", child("a1")), definition("b", child("b1")), definition("c", child("c1"))];
    let mut h = Harness::new();
    h.tools.register(AgentTool);
    let gauge = Arc::new(Gauge::default());
    h.tools.register(GaugeTool(Arc::clone(&gauge)));
    let subagents = Arc::new(Subagents { definitions, max_concurrent, ..Subagents::default() });
    h.configure = Some(Box::new(move |config| config.subagents = Some(subagents)));
    let turn = task_calls(&[task("t1", "a", "x"), task("t2", "b", "y"), task("t3", "c", "z")]);
    let (outcome, _parent, _log) = h.run("go", vec![turn, text("done")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    gauge.most.load(std::sync::atomic::Ordering::SeqCst)
}

#[tokio::test]
async fn max_concurrent_bounds_the_children_running_at_once() {
    assert_eq!(most_at_once(1).await, 1);
    assert_eq!(most_at_once(2).await, 2);
    assert_eq!(most_at_once(4).await, 3);
}
