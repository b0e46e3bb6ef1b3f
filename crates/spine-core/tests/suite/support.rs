//! Test support: a scripted model that records requests, small tools, and a harness.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::HookRegistryBuilder;
use spine_core::model::ModelClient;
use spine_core::permission::{
    Approval, ApprovalRequest, Approver, DenyApprover, PermissionPolicy, PermissionRule, PermissionRules,
};
use spine_core::registry::ToolRegistryBuilder;
use spine_core::runner::{Agent, AgentConfig, RunOutcome, RunRequest};
use spine_core::session::Transcript;
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_protocol::message::{AssistantMessage, Message};
use spine_protocol::pairing::validate_pairing;
use spine_protocol::permission::PermissionMode;
use spine_protocol::tool::{Effect, ErrorCode, ToolCall, ToolError, ToolSpec};
pub use spine_testkit::{Script, calls, raw_call, results, roles, text};

/// Shared log of what ran, in order.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().expect("log").push(s.into());
    }
    pub fn take(&self) -> Vec<String> {
        self.0.lock().expect("log").clone()
    }
}

/// `value {value: integer}` → "value=N"; records each execution in the log.
pub struct ValueTool {
    pub name: &'static str,
    pub effect: Effect,
    pub log: Log,
}

#[async_trait]
impl Tool for ValueTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.to_owned(),
            description: "returns value=N".into(),
            input_schema: json!({"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"], "additionalProperties": false}),
        }
    }
    fn effect(&self) -> Effect {
        self.effect
    }
    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let v = args.get("value").cloned().unwrap_or(Value::Null);
        self.log.push(format!("handler:{}:{v}", self.name));
        Ok(json!({"value": v}))
    }
    fn project(&self, response: &Value) -> Projection {
        Projection::plain(format!("value={}", response["value"]))
    }
}

/// A tool that fails with a runtime error.
pub struct FailTool;

#[async_trait]
impl Tool for FailTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: "fail".into(), description: "fails".into(), input_schema: json!({"type": "object"}) }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _a: &Map<String, Value>, _c: &ToolContext) -> Result<Value, ToolError> {
        Err(ToolError::new(ErrorCode::RuntimeError, "it broke"))
    }
}

/// A tool that runs until canceled, logging start and stop.
pub struct SlowTool {
    pub log: Log,
}

#[async_trait]
impl Tool for SlowTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: "slow".into(), description: "waits".into(), input_schema: json!({"type": "object"}) }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, _a: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        self.log.push("slow:start");
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(30)) => Ok(json!("finished")),
            () = ctx.cancel.cancelled() => {
                self.log.push("slow:killed");
                Err(ToolError::new(ErrorCode::Canceled, "canceled"))
            }
        }
    }
}

/// An approver that records what it was asked and answers a fixed way.
pub struct RecordingApprover {
    pub seen: Mutex<Vec<Value>>,
    pub answer: Approval,
    pub log: Log,
}

#[async_trait]
impl Approver for RecordingApprover {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        self.log.push(format!("approver:{}", request.tool_name));
        self.seen.lock().expect("seen").push(Value::Object(request.args.clone()));
        self.answer.clone()
    }
}

/// A change to the agent configuration before the run.
pub type Configure = Box<dyn FnOnce(&mut AgentConfig)>;

/// Builds and runs an agent.
pub struct Harness {
    pub log: Log,
    pub hooks: HookRegistryBuilder,
    pub tools: ToolRegistryBuilder,
    pub allow: Vec<&'static str>,
    pub ask: Vec<&'static str>,
    pub deny: Vec<&'static str>,
    pub mode: PermissionMode,
    pub approver: Arc<dyn Approver>,
    pub max_turns: u32,
    pub dir: tempfile::TempDir,
    pub cancel: CancellationToken,
    pub reports: Option<Arc<spine_core::reports::ReportCollector>>,
    pub configure: Option<Configure>,
    pub observer: Option<Arc<dyn spine_core::observer::RunObserver>>,
}

impl Harness {
    /// Tools `value` (read) and `write_value` (write); policy default mode.
    pub fn new() -> Self {
        let log = Log::default();
        let mut tools = ToolRegistryBuilder::new();
        tools.register(ValueTool { name: "value", effect: Effect::Read, log: log.clone() });
        tools.register(ValueTool { name: "write_value", effect: Effect::Write, log: log.clone() });
        tools.register(FailTool);
        tools.register(SlowTool { log: log.clone() });
        Harness {
            log,
            hooks: HookRegistryBuilder::new(),
            tools,
            allow: vec![],
            ask: vec![],
            deny: vec![],
            mode: PermissionMode::Default,
            approver: Arc::new(DenyApprover),
            max_turns: 20,
            dir: tempfile::tempdir().expect("tempdir"),
            cancel: CancellationToken::new(),
            reports: None,
            configure: None,
            observer: None,
        }
    }

    pub async fn run(self, prompt: &str, replies: Vec<AssistantMessage>) -> (RunOutcome, Arc<Script>, Log) {
        let script = Script::new(replies);
        let outcome = self.run_with(prompt, Arc::clone(&script) as Arc<dyn ModelClient>, None, vec![]).await;
        (outcome.0, script, outcome.1)
    }

    pub async fn run_with(
        self,
        prompt: &str,
        model: Arc<dyn ModelClient>,
        deferred: Option<ToolCall>,
        history: Vec<Message>,
    ) -> (RunOutcome, Log) {
        let parse = |v: &[&str]| v.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect();
        let workspace = Arc::new(Workspace::new(self.dir.path()).expect("workspace"));
        let mut config = AgentConfig::new(Arc::clone(&workspace));
        config.max_turns = self.max_turns;
        if let Some(configure) = self.configure {
            configure(&mut config);
        }
        let agent = Agent {
            model,
            tools: Arc::new(self.tools.build().expect("tools")),
            hooks: Arc::new(self.hooks.build()),
            policy: PermissionPolicy::new(
                PermissionRules { allow: parse(&self.allow), ask: parse(&self.ask), deny: parse(&self.deny) },
                self.mode,
                workspace.root().to_path_buf(),
            ),
            approver: self.approver,
            config,
        };
        let transcript = Transcript::open(self.dir.path().join("session.jsonl")).expect("transcript");
        let mut request = RunRequest::new("s1", transcript)
            .prompt(if prompt.is_empty() { None } else { Some(prompt.to_owned()) })
            .history(history)
            .deferred(deferred)
            .cancel(self.cancel.clone())
            .reports(self.reports.clone());
        if let Some(observer) = self.observer {
            request = request.observer(observer);
        }
        let outcome = agent.run(request).await;
        match (validate_pairing(&outcome.messages), &outcome.deferred) {
            (Ok(()), None) => {}
            (Err(spine_protocol::pairing::PairingError::Unanswered { role: "end", pending, .. }), Some(call))
                if pending == call.id => {}
            (other, deferred) => {
                panic!("the final conversation is paired (deferred: {deferred:?}): {other:?}")
            }
        }
        (outcome, self.log)
    }
}

/// A definition of the agent type `name` answering from `model` (otherwise general-purpose).
pub fn definition(name: &str, model: Arc<dyn ModelClient>) -> spine_core::subagents::SubagentDefinition {
    spine_core::subagents::SubagentDefinition {
        name: name.to_owned(),
        description: format!("the {name} agent"),
        model: Some(model),
        source: std::path::PathBuf::from(format!("{name}.md")),
        ..spine_core::subagents::SubagentDefinition::general_purpose()
    }
}

/// A harness with the `Agent` tool and these agent types.
pub fn with_subagents(definitions: Vec<spine_core::subagents::SubagentDefinition>) -> Harness {
    let mut h = Harness::new();
    h.tools.register(spine_core::subagents::AgentTool);
    let subagents = Arc::new(spine_core::subagents::Subagents { definitions, ..Default::default() });
    h.configure = Some(Box::new(move |config| config.subagents = Some(subagents)));
    h
}
