//! Engine overhead: PreToolUse dispatch through in-process hooks, one full tool round through
//! the runner, and the pairing validator on a long history.
//!
//! Targets: ≤ 1 µs per no-op hook; ≤ 50 µs runner overhead per tool call.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::{HookContext, HookRegistryBuilder, HookRuntime, SessionInfo, hook_fn};
use spine_core::model::{FinishReason, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink};
use spine_core::observer::NullObserver;
use spine_core::permission::{DenyApprover, PermissionPolicy, PermissionRules};
use spine_core::registry::{ToolRegistry, ToolRegistryBuilder};
use spine_core::runner::{Agent, AgentConfig, RunRequest};
use spine_core::session::Transcript;
use spine_core::tokens::WordsEstimator;
use spine_core::tool::{Tool, ToolContext};
use spine_core::trace::Trace;
use spine_core::workspace::Workspace;
use spine_protocol::hook::{HookEventName, HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::pairing::validate_pairing;
use spine_protocol::permission::PermissionMode;
use spine_protocol::tool::{Effect, ToolArguments, ToolCall, ToolError, ToolSpec};

struct Noop;

#[async_trait]
impl Tool for Noop {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "noop".into(),
            description: "does nothing".into(),
            input_schema: json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}),
        }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _a: &Map<String, Value>, _c: &ToolContext) -> Result<Value, ToolError> {
        Ok(Value::Null)
    }
}

fn tools() -> Arc<ToolRegistry> {
    let mut b = ToolRegistryBuilder::new();
    b.register(Noop);
    Arc::new(b.build().expect("registry"))
}

fn hooks(n: usize) -> Arc<spine_core::hooks::HookRegistry> {
    let mut b = HookRegistryBuilder::new();
    for i in 0..n {
        b.on::<PreToolUse>(
            format!("noop-{i}"),
            hook_fn(|_c: &HookContext, _i: &PreToolUseInput| Ok(HookOutput::new(PreToolUseAction::default()))),
        );
    }
    Arc::new(b.build())
}

fn pre_tool_use_dispatch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("rt");
    let tools = tools();
    let call = ToolCall { id: "c1".into(), name: "noop".into(), arguments: ToolArguments::Json(json!({"n": 1})) };
    let cwd = std::env::temp_dir();
    let prepared = tools.prepare(&call, &cwd).expect("prepared");
    let ctx = HookContext {
        session: Arc::new(SessionInfo {
            session_id: "s".into(),
            transcript_path: "/dev/null".into(),
            cwd: cwd.clone(),
            hook_dir: cwd.clone(),
            project_dir: cwd.clone(),
            permission_mode: PermissionMode::Default,
            effort: None,
            env_file: None,
        }),
        event: HookEventName::PreToolUse,
        prompt_id: None,
        cancel: CancellationToken::new(),
        agent: None,
    };
    let mut group = c.benchmark_group("pre_tool_use_dispatch");
    for n in [0usize, 1, 10] {
        let runtime = HookRuntime::new(hooks(n), Trace::default(), Arc::new(NullObserver), cwd.clone());
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| rt.block_on(runtime.pre_tool_use(&ctx, tools.as_ref(), &prepared, &cwd)));
        });
    }
    group.finish();
}

/// A model that replies from a fixed list, refilled per run.
struct Replies(Mutex<VecDeque<AssistantMessage>>);

#[async_trait]
impl ModelClient for Replies {
    fn model(&self) -> &str {
        "bench"
    }
    async fn complete(
        &self,
        _r: ModelRequest<'_>,
        _s: &dyn StreamSink,
        _c: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        let next = self.0.lock().ok().and_then(|mut q| q.pop_front());
        match next {
            Some(message) => Ok(ModelReply { message, finish_reason: FinishReason::Stop, usage: None }),
            None => Err(ModelError::new(ModelErrorKind::Exhausted, "done")),
        }
    }
}

fn tool_round(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
    let dir = tempfile::tempdir().expect("dir");
    let workspace = Arc::new(Workspace::new(dir.path()).expect("ws"));
    let mut group = c.benchmark_group("run_with_tool_calls");
    for calls in [0usize, 1, 20] {
        group.bench_with_input(BenchmarkId::from_parameter(calls), &calls, |b, &calls| {
            b.iter_batched(
                || {
                    let batch = AssistantMessage {
                        reasoning: Vec::new(),
                        content: None,
                        tool_calls: (0..calls)
                            .map(|i| ToolCall {
                                id: format!("c{i}"),
                                name: "noop".into(),
                                arguments: ToolArguments::Json(json!({"n": i})),
                            })
                            .collect(),
                    };
                    let mut replies = VecDeque::new();
                    if calls > 0 {
                        replies.push_back(batch);
                    }
                    replies.push_back(AssistantMessage {
                        reasoning: Vec::new(),
                        content: Some("done".into()),
                        tool_calls: vec![],
                    });
                    let mut config = AgentConfig::new(Arc::clone(&workspace));
                    config.estimator = Some(Arc::new(WordsEstimator));
                    Agent {
                        model: Arc::new(Replies(Mutex::new(replies))),
                        tools: tools(),
                        hooks: hooks(1),
                        policy: PermissionPolicy::new(
                            PermissionRules::default(),
                            PermissionMode::Default,
                            dir.path().into(),
                        ),
                        approver: Arc::new(DenyApprover),
                        config,
                    }
                },
                |agent| {
                    rt.block_on(
                        agent.run(RunRequest::new("s", Transcript::discard("/dev/null")).prompt(Some("go".into()))),
                    )
                },
                criterion::BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

fn pairing(c: &mut Criterion) {
    let mut history = vec![Message::user("go")];
    let mut i = 0;
    while history.len() < 10_000 {
        history.push(Message::Assistant(AssistantMessage {
            reasoning: Vec::new(),
            content: None,
            tool_calls: vec![ToolCall {
                id: format!("c{i}"),
                name: "t".into(),
                arguments: ToolArguments::Json(json!({})),
            }],
        }));
        history.push(Message::Tool(ToolResultMessage {
            tool_call_id: format!("c{i}"),
            name: "t".into(),
            content: "ok".into(),
            error_code: None,
            images: Vec::new(),
        }));
        i += 1;
    }
    c.bench_function("validate_pairing_10000_messages", |b| b.iter(|| validate_pairing(&history)));
}

criterion_group!(benches, pre_tool_use_dispatch, tool_round, pairing);
criterion_main!(benches);
