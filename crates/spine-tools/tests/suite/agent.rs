//! The runner harness (the pattern of spine-core's test support): a scripted model that
//! answers from a list and records every request, and an agent built around the tools under
//! test, so calls go review → PreToolUse → permission → execute → project → PostToolUse.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use spine_core::CancellationToken;
use spine_core::hooks::HookRegistryBuilder;
use spine_core::model::ModelClient;
use spine_core::permission::{Approval, ApprovalRequest, Approver, PermissionPolicy, PermissionRules};
use spine_core::registry::ToolRegistryBuilder;
use spine_core::runner::{Agent, AgentConfig, RunOutcome, RunRequest};
use spine_core::session::Transcript;
use spine_core::stages::prepare_turn::OperatorStateSource;
use spine_core::workspace::Workspace;
use spine_protocol::message::AssistantMessage;
use spine_protocol::pairing::validate_pairing;
use spine_protocol::permission::PermissionMode;
use spine_protocol::trace::TraceRecord;
pub use spine_testkit::{Script, calls, results, text};

use crate::support::Recorder;

/// An approver that allows everything (the permission stage still runs).
pub struct AllowAll;

#[async_trait]
impl Approver for AllowAll {
    async fn approve(&self, _request: &ApprovalRequest<'_>) -> Approval {
        Approval::Allow
    }
}

/// An agent around the tools under test.
pub struct AgentHarness {
    pub tools: ToolRegistryBuilder,
    pub hooks: HookRegistryBuilder,
    pub dir: tempfile::TempDir,
    pub operator_state: Option<Arc<dyn OperatorStateSource>>,
    pub cancel: CancellationToken,
    /// The permission rules (default: none).
    pub rules: PermissionRules,
    /// Who answers `ask` (default: allow all).
    pub approver: Arc<dyn Approver>,
}

/// What a run produced.
pub struct AgentRun {
    pub outcome: RunOutcome,
    pub script: Arc<Script>,
    pub progress: Arc<Recorder>,
    /// The workspace, kept until the run is dropped.
    pub dir: tempfile::TempDir,
}

impl AgentHarness {
    pub fn new() -> Self {
        AgentHarness {
            tools: ToolRegistryBuilder::new(),
            hooks: HookRegistryBuilder::new(),
            dir: tempfile::tempdir().expect("tempdir"),
            operator_state: None,
            cancel: CancellationToken::new(),
            rules: PermissionRules::default(),
            approver: Arc::new(AllowAll),
        }
    }

    /// The canonical workspace root.
    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().expect("root")
    }

    /// Runs one prompt; the agent (and so the tool registry) is dropped before this returns.
    pub async fn run(self, prompt: &str, replies: Vec<AssistantMessage>) -> AgentRun {
        let script = Script::new(replies);
        let progress = Arc::new(Recorder::default());
        let workspace = Arc::new(Workspace::new(self.dir.path()).expect("workspace"));
        let mut config = AgentConfig::new(Arc::clone(&workspace));
        config.operator_state = self.operator_state;
        let agent = Agent {
            model: Arc::clone(&script) as Arc<dyn ModelClient>,
            tools: Arc::new(self.tools.build().expect("tools")),
            hooks: Arc::new(self.hooks.build()),
            policy: PermissionPolicy::new(self.rules, PermissionMode::Default, workspace.root().to_path_buf()),
            approver: self.approver,
            config,
        };
        let transcript = Transcript::open(self.dir.path().join("session.jsonl")).expect("transcript");
        let outcome = agent
            .run(
                RunRequest::new("s1", transcript)
                    .prompt(Some(prompt.to_owned()))
                    .cancel(self.cancel.clone())
                    .progress(Some(Arc::clone(&progress) as Arc<dyn spine_core::tool::ProgressSink>)),
            )
            .await;
        validate_pairing(&outcome.messages).expect("the final conversation is paired");
        drop(agent);
        AgentRun { outcome, script, progress, dir: self.dir }
    }
}

/// The metadata of `project_tool_result` for one call, from the trace.
pub fn projected_metadata(outcome: &RunOutcome, call_id: &str) -> serde_json::Map<String, Value> {
    outcome
        .trace
        .entries()
        .into_iter()
        .find_map(|e| match e.record {
            TraceRecord::Stage(s) if s.hook == "project_tool_result" && s.tool_use_id.as_deref() == Some(call_id) => {
                s.fields.get("metadata").and_then(Value::as_object).cloned()
            }
            _ => None,
        })
        .unwrap_or_default()
}
