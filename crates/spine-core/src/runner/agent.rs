//! [`Agent`]: what stays the same across runs — the model, the frozen tools and hooks, the
//! permission policy, the approver, the limits — and [`Agent::run`], which builds one run and
//! drives it to its [`RunOutcome`].

use std::path::PathBuf;
use std::sync::Arc;

use spine_protocol::tool::ToolSpec;

use super::request::{RunOutcome, RunRequest};
use super::{Run, RunParts};
use crate::hooks::{HookRegistry, HookRuntime, SessionInfo};
use crate::memory_files::{self, MemorySources};
use crate::model::ModelClient;
use crate::permission::{Approver, PermissionPolicy};
use crate::registry::ToolRegistry;
use crate::skills::{SkillCatalog, SkillRoot};
use crate::stages::compact_context::CompactStrategy;
use crate::stages::prepare_turn::{OperatorStateSource, TurnSettings};
use crate::stages::review_tool_call::Visibility;
use crate::subagents::{Subagents, TASK_TOOL};
use crate::tokens::{TokenEstimator, estimator_for};
use crate::workspace::Workspace;

/// Everything that stays the same across runs of one agent.
pub struct Agent {
    /// The model.
    pub model: Arc<dyn ModelClient>,
    /// The frozen tools.
    pub tools: Arc<ToolRegistry>,
    /// The frozen hooks.
    pub hooks: Arc<HookRegistry>,
    /// Decides each call before it runs.
    pub policy: PermissionPolicy,
    /// Who answers `ask`.
    pub approver: Arc<dyn Approver>,
    /// Limits and settings.
    pub config: AgentConfig,
}

/// Limits and settings of an agent.
#[derive(Clone)]
pub struct AgentConfig {
    /// Model requests per run before it ends with `error_max_turns` (default 20).
    pub max_turns: u32,
    /// Stop force-continues honoured in a row (default 1).
    pub max_forced_continuations: u32,
    /// The workspace boundary.
    pub workspace: Arc<Workspace>,
    /// The working directory (hooks' `cwd`, relative paths).
    pub cwd: PathBuf,
    /// The tools visible to the model.
    pub visibility: Visibility,
    /// Inputs of `prepare_turn`.
    pub turn: TurnSettings,
    /// Whether a PreToolUse `defer` may end the run (non-interactive runs).
    pub allow_defer: bool,
    /// Skill roots, scanned once per run.
    pub skill_roots: Vec<SkillRoot>,
    /// Budget hints of an assignment (`advisory_hints.recommended_compaction_threshold`, …).
    pub budget_hints: Option<serde_json::Value>,
    /// `context.compaction_threshold_tokens` from settings.
    pub compaction_threshold: Option<u64>,
    /// How `compact_context` shrinks a request.
    pub compaction_strategy: CompactStrategy,
    /// The token estimator (default: BPE of the model family, or words when unknown).
    pub estimator: Option<Arc<dyn TokenEstimator>>,
    /// Extra operator-state sections (command runs, processes).
    pub operator_state: Option<Arc<dyn OperatorStateSource>>,
    /// Whether runs load memory files (`CLAUDE.md`, `AGENTS.md`…) and from which home
    /// (default: off).
    pub memory_files: MemorySources,
    /// The agent types `Task` may start and the limits of delegation (default: none, and the
    /// `Task` tool is not shown).
    pub subagents: Option<Arc<Subagents>>,
}

impl AgentConfig {
    /// Defaults for a workspace: 20 turns, one forced continuation, every tool visible, no
    /// memory files.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        let cwd = workspace.root().to_path_buf();
        AgentConfig {
            max_turns: 20,
            max_forced_continuations: 1,
            workspace,
            cwd,
            visibility: Visibility::All,
            turn: TurnSettings::default(),
            allow_defer: true,
            skill_roots: Vec::new(),
            budget_hints: None,
            compaction_threshold: None,
            compaction_strategy: CompactStrategy::Sandwich,
            estimator: None,
            operator_state: None,
            memory_files: MemorySources::Off,
            subagents: None,
        }
    }
}

impl Agent {
    /// Runs one prompt to its end. Never panics on bad input: every failure is an outcome.
    pub async fn run(&self, request: RunRequest) -> RunOutcome {
        let session = Arc::new(SessionInfo {
            session_id: request.session_id.clone(),
            transcript_path: match &request.subagent {
                Some(sub) => sub.session_transcript.clone(),
                None => request.transcript.path().to_path_buf(),
            },
            cwd: self.config.cwd.clone(),
            project_dir: self.config.workspace.root().to_path_buf(),
            permission_mode: self.policy.mode(),
            env_file: request.env_file.clone(),
        });
        let hooks = HookRuntime::new(
            Arc::clone(&self.hooks),
            request.trace.clone(),
            Arc::clone(&request.observer),
            self.config.workspace.root().to_path_buf(),
        );
        let specs: Vec<ToolSpec> = self
            .tools
            .specs()
            .filter(|s| self.config.visibility.allows(&s.name))
            .filter_map(|s| match (s.name == TASK_TOOL, &self.config.subagents) {
                (false, _) => Some(s.clone()),
                // The model reads the agent types it may start; no types, no Task.
                (true, Some(subagents)) => Some(ToolSpec { description: subagents.task_description(), ..s.clone() }),
                (true, None) => None,
            })
            .collect();
        let (skills, issues) = SkillCatalog::scan(&self.config.skill_roots);
        for issue in issues {
            request.trace.warn(format!("skill `{}` skipped: {}", issue.name, issue.reason), None);
        }
        let (memory, warnings) =
            memory_files::load(&self.config.memory_files, &self.config.workspace, &self.config.cwd);
        for warning in warnings {
            request.trace.warn(warning, None);
        }
        let estimator = self.config.estimator.clone().unwrap_or_else(|| estimator_for(Some(self.model.model())));
        let mut run = Run::new(
            self,
            RunParts {
                hooks,
                session,
                conversation: request.history,
                transcript: request.transcript,
                trace: request.trace,
                observer: request.observer,
                cancel: request.cancel,
                progress: request.progress,
                reports: request.reports,
                visibility: self.config.visibility.clone(),
                subagent: request.subagent,
            },
        );
        run.specs = specs;
        run.skills = skills;
        run.memory = memory;
        run.estimator = estimator;
        if let Some(r) = &run.reports {
            r.started();
        }
        let end = run.drive(request.prompt, request.images, request.deferred, request.source).await;
        run.finish(end).await
    }
}
