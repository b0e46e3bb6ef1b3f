//! The cost of starting a subagent: a whole run on the scripted model whose one tool
//! call is an `Agent` call (the child answers at once, no tool calls), against the same run
//! whose one call is a plain in-process tool, and a run with no call at all. The difference
//! between the first two is the overhead of a subagent: its agent, transcript (discarded here,
//! as in the parent), trace, SubagentStart/SubagentStop and one model request.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use spine_core::hooks::HookRegistryBuilder;
use spine_core::permission::{DenyApprover, PermissionPolicy, PermissionRules};
use spine_core::registry::ToolRegistryBuilder;
use spine_core::runner::{Agent, AgentConfig, RunRequest};
use spine_core::session::Transcript;
use spine_core::subagents::{AGENT_TOOL, AgentTool, SubagentDefinition, Subagents};
use spine_core::tool::{Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_protocol::message::AssistantMessage;
use spine_protocol::permission::PermissionMode;
use spine_protocol::tool::{Effect, ToolError, ToolSpec};
use spine_testkit::{Script, calls, text};

/// A tool that answers at once.
struct Echo;

#[async_trait]
impl Tool for Echo {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: "echo".into(), description: "echoes".into(), input_schema: json!({"type": "object"}) }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _a: &Map<String, Value>, _c: &ToolContext) -> Result<Value, ToolError> {
        Ok(json!("echo"))
    }
}

/// One run of an agent answering `parent`, whose `Agent` calls start a child answering "done".
async fn run(workspace: &Arc<Workspace>, parent: Vec<AssistantMessage>) {
    let mut tools = ToolRegistryBuilder::new();
    tools.register(AgentTool);
    tools.register(Echo);
    let child =
        SubagentDefinition { model: Some(Script::new(vec![text("done")])), ..SubagentDefinition::general_purpose() };
    let mut config = AgentConfig::new(Arc::clone(workspace));
    config.subagents = Some(Arc::new(Subagents { definitions: vec![child], ..Subagents::default() }));
    let agent = Agent {
        model: Script::new(parent),
        tools: Arc::new(tools.build().expect("tools")),
        hooks: Arc::new(HookRegistryBuilder::new().build()),
        policy: PermissionPolicy::new(PermissionRules::default(), PermissionMode::Default, PathBuf::from("/")),
        approver: Arc::new(DenyApprover),
        config,
    };
    let transcript = Transcript::discard(workspace.root().join("s.jsonl"));
    let outcome = agent.run(RunRequest::new("s", transcript).prompt(Some("go".into()))).await;
    assert_eq!(outcome.result, "ok", "{outcome:?}");
}

fn subagent_start(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("dir");
    let workspace = Arc::new(Workspace::new(dir.path()).expect("workspace"));
    let task = json!({"description": "d", "prompt": "p", "subagent_type": "general-purpose"});
    let mut group = c.benchmark_group("subagent_start");
    group.bench_function("run_without_tool_calls", |b| b.iter(|| rt.block_on(run(&workspace, vec![text("ok")]))));
    group.bench_function("run_with_one_plain_tool_call", |b| {
        b.iter(|| rt.block_on(run(&workspace, vec![calls(&[("c1", "echo", json!({}))]), text("ok")])))
    });
    group.bench_function("run_with_one_task_call", |b| {
        b.iter(|| rt.block_on(run(&workspace, vec![calls(&[("c1", AGENT_TOOL, task.clone())]), text("ok")])))
    });
    group.finish();
}

criterion_group!(benches, subagent_start);
criterion_main!(benches);
