//! The agents of a worker: the [`AgentFactory`] seam that builds the agent of each `agent_run`
//! assignment (the flow is [`crate::flows::agent_run`]), and the agent of the single tool calls.
//!
//! [`SettingsAgents`] assembles `agent_run` agents with
//! [`spine_agent::assemble`] — the same assembly as `spine run`: the model (the task's
//! `model`, else the settings' `model`, else the provider whose API key is set), the worker's
//! shared tool set (built-ins, families and MCP tools, built once: command runs and processes
//! are shared with the worker's other assignments), the hooks and permission rules of the
//! settings — with a [`DenyApprover`] (nobody
//! answers `ask` on a worker), then applies the payload: visible tools, `prepare_turn` inputs
//! (profile, subagent, model hints, context imports), budget hints and the worker's skill
//! roots.
//!
//! Dependencies: none within the crate ([`crate::env`] holds the factory; the flows use it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use spine_agent::sandbox::SessionSandbox;
use spine_agent::{AgentOptions, ModelChoice, ToolSet, Tools, assemble};
use spine_core::hooks::HookRegistryBuilder;
use spine_core::permission::DenyApprover;
use spine_core::runner::Agent;
use spine_core::skills::SkillRoot;
use spine_core::stages::prepare_turn::TurnSettings;
use spine_core::stages::review_tool_call::Visibility;
use spine_core::workspace::Workspace;
use spine_settings::Settings;
use thiserror::Error;

/// An agent could not be built for an assignment (a configuration problem: the report is a
/// `validation_error`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct AgentBuildError(pub String);

/// What an assignment asks of its agent.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// The model spec of the task, if any.
    pub model: Option<String>,
    /// The task's turn limit, if any.
    pub max_turns: Option<u32>,
    /// `prepare_turn` inputs from the payload.
    pub turn: TurnSettings,
    /// The tools visible to the model.
    pub visibility: Visibility,
    /// The payload's budget hints.
    pub budget_hints: Option<Value>,
}

/// Builds the agent of an `agent_run` assignment.
pub trait AgentFactory: Send + Sync {
    /// An agent for one assignment.
    fn build(&self, spec: AgentSpec) -> Result<Agent, AgentBuildError>;
}

/// Agents assembled from the worker's settings (see the module documentation).
pub struct SettingsAgents {
    settings: Settings,
    workspace: Arc<Workspace>,
    spine_home: PathBuf,
    skill_roots: Vec<SkillRoot>,
    tools: ToolSet,
    calls: Arc<Agent>,
    sandbox: Option<Arc<SessionSandbox>>,
}

impl SettingsAgents {
    /// Checks the hooks of the settings once (their warnings are returned for stderr). Every
    /// agent's commands run in `sandbox` when there is one.
    pub fn new(
        settings: Settings,
        workspace: Arc<Workspace>,
        spine_home: PathBuf,
        skill_roots: Vec<SkillRoot>,
        tools: ToolSet,
        sandbox: Option<Arc<SessionSandbox>>,
    ) -> Result<(Self, Vec<String>), AgentBuildError> {
        // Assignments keep one root, their workspace: the settings' added directories
        // (`permissions.additionalDirectories`) are for `spine run`.
        let mut settings = settings;
        settings.permissions.additional_directories.clear();
        let options = AgentOptions {
            project: workspace.root().to_path_buf(),
            spine_home: spine_home.clone(),
            model: ModelChoice::ToolCallsOnly,
            hooks: HookRegistryBuilder::new(),
            permission_mode: None,
            max_turns: None,
            allowed_tools: Vec::new(),
            command_line: spine_agent::CommandLine::default(),
            approver: Arc::new(DenyApprover),
            allow_defer: false,
            conversation_id: None,
            tools: Tools::Shared(tools.clone()),
            sandbox: sandbox.clone(),
            sdk_hooks: None,
            choices: Default::default(),
        };
        // Assembled once; its warnings (hooks spine does not run…) are the worker's.
        let calls = spine_agent::assemble(&settings, options).map_err(|e| AgentBuildError(e.to_string()))?;
        let warnings = calls.warnings;
        let calls = Arc::new(calls.agent);
        Ok((SettingsAgents { settings, workspace, spine_home, skill_roots, tools, calls, sandbox }, warnings))
    }

    /// The agent that runs the worker's single tool calls (deterministic assignments and
    /// `execute_program_tool`): the settings' hooks and rules, no model, nobody to answer `ask`.
    pub fn call_agent(&self) -> Arc<Agent> {
        Arc::clone(&self.calls)
    }

    /// The task's model, else the settings'; a relative script path is relative to the
    /// workspace, not to the worker's directory.
    fn model(&self, task_model: Option<&str>) -> ModelChoice {
        let Some(text) = task_model else { return ModelChoice::Configured };
        ModelChoice::Spec(match text.strip_prefix("scripted:") {
            Some(path) if Path::new(path).is_relative() => {
                format!("scripted:{}", self.workspace.root().join(path).display())
            }
            Some(_) | None => text.to_owned(),
        })
    }
}

impl AgentFactory for SettingsAgents {
    fn build(&self, spec: AgentSpec) -> Result<Agent, AgentBuildError> {
        let options = AgentOptions {
            project: self.workspace.root().to_path_buf(),
            spine_home: self.spine_home.clone(),
            model: self.model(spec.model.as_deref()),
            hooks: HookRegistryBuilder::new(),
            permission_mode: None,
            max_turns: spec.max_turns,
            allowed_tools: Vec::new(),
            command_line: spine_agent::CommandLine::default(),
            approver: Arc::new(DenyApprover),
            allow_defer: true,
            conversation_id: spec.turn.conversation_id.clone(),
            tools: Tools::Shared(self.tools.clone()),
            sandbox: self.sandbox.clone(),
            sdk_hooks: None,
            choices: Default::default(),
        };
        let mut agent = assemble(&self.settings, options).map_err(|e| AgentBuildError(e.to_string()))?.agent;
        let config = &mut agent.config;
        let model_hint = config.turn.model_context.likely_model.take();
        config.turn = spec.turn;
        if config.turn.model_context.likely_model().is_none() {
            config.turn.model_context.likely_model = model_hint;
        }
        config.visibility = spec.visibility;
        config.budget_hints = spec.budget_hints;
        config.skill_roots = self.skill_roots.clone();
        Ok(agent)
    }
}
