//! [`Agent`]: what stays the same across runs — the model, the frozen tools and hooks, the
//! permission policy, the approver, the limits — and [`Agent::run`], which builds one run and
//! drives it to its [`RunOutcome`].

use std::path::PathBuf;
use std::sync::Arc;

use spine_protocol::parse_memo::ParseMemo;
use spine_protocol::tool::ToolSpec;
use spine_protocol::trace::{RunStartTrace, TraceRecord};

use spine_protocol::hook::{SessionEnd, SessionEndInput, SessionEndReason, SessionSource};
use spine_protocol::message::{Effort, Message, ReasoningEffort};

use super::budget::Budget;
use super::request::{RunOutcome, RunRequest};
use super::structured::StructuredOutput;
use super::turn::CompactCause;
use super::{Run, RunParts};
use crate::hooks::{HookRegistry, HookRuntime, SessionInfo};
use crate::memory_files::{self, MemorySources};
use crate::model::ModelClient;
use crate::model_reasoning::EffortLevel;
use crate::observer::RunObserver;
use crate::permission::{Approver, PermissionPolicy, PermissionStore};
use crate::registry::ToolRegistry;
use crate::skills::{PluginSkills, SKILL_TOOL, SkillCatalog, SkillModels, SkillRoot, SkillSession, SkillVars};
use crate::stages::compact_context::CompactStrategy;
use crate::stages::prepare_turn::{OperatorStateSource, TurnSettings};
use crate::stages::review_tool_call::Visibility;
use crate::subagents::{AGENT_TOOL, Subagents};
use crate::tokens::{TokenEstimator, estimator_for};
use crate::tool::ChildEnv;
use crate::trace::Trace;
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
    /// The enabled plugins' skills (`<plugin>:<skill>`), scanned after the roots.
    pub plugin_skills: Vec<PluginSkills>,
    /// Where the skills' parsed SKILL.md files are remembered across runs (default: nowhere).
    pub parse_memo: Arc<ParseMemo>,
    /// Builds the model a skill's `model:` front matter asks for (default: none, and such a
    /// skill leaves the run on its model, with a warning saying so).
    pub skill_models: Option<Arc<dyn SkillModels>>,
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
    /// The agent types `Agent` may start and the limits of delegation (default: none, and the
    /// `Agent` tool is not shown).
    pub subagents: Option<Arc<Subagents>>,
    /// The reasoning effort set for the run (`model_options.reasoning_effort`), which hooks
    /// read as `effort` (default: none, and the field is absent).
    pub effort: Option<ReasoningEffort>,
    /// `--effort`: what hooks read as `effort` in place of [`AgentConfig::effort`] (its own
    /// word, `max` included); a subagent whose definition sets an effort has none (default:
    /// none).
    pub effort_flag: Option<EffortLevel>,
    /// `--max-budget-usd`: a run ends with `error_max_budget_usd` once the session's
    /// estimated cost reaches the budget ([`Budget`]; default: none).
    pub budget: Option<Arc<Budget>>,
    /// `--json-schema`: the final answer comes through the `StructuredOutput` tool (set by
    /// [`Agent::with_structured_output`]; default: none).
    pub structured_output: Option<Arc<StructuredOutput>>,
    /// Where permission updates of PermissionRequest hooks whose destination is a settings
    /// file are saved (default: none: they hold for the session only).
    pub permission_store: Option<Arc<dyn PermissionStore>>,
    /// The tools of this agent's own servers (a subagent's inline `mcpServers`): visible to
    /// it, never to the subagents it starts (default: none).
    pub own_tools: Vec<String>,
    /// What every process the run's tools start gets of its environment (the settings' `env`,
    /// the provider keys passed through), handed to each call's
    /// [`ToolContext`](crate::tool::ToolContext); subagents inherit it. Default: nothing set,
    /// nothing passed through (an agent configured without settings; spine-agent's assembly
    /// sets the settings' own).
    pub child_env: ChildEnv,
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
            plugin_skills: Vec::new(),
            parse_memo: Arc::new(ParseMemo::disabled()),
            skill_models: None,
            budget_hints: None,
            compaction_threshold: None,
            compaction_strategy: CompactStrategy::Sandwich,
            estimator: None,
            operator_state: None,
            memory_files: MemorySources::Off,
            subagents: None,
            effort: None,
            effort_flag: None,
            budget: None,
            structured_output: None,
            permission_store: None,
            own_tools: Vec::new(),
            // No settings here: an agent configured in code starts with none (see the field).
            child_env: ChildEnv::default(),
        }
    }
}

impl Agent {
    /// Runs one prompt to its end. Never panics on bad input: every failure is an outcome.
    pub async fn run(&self, request: RunRequest) -> RunOutcome {
        request.trace.record(TraceRecord::RunStart(RunStartTrace {
            session_id: request.session_id.clone(),
            model: self.model.model().to_owned(),
            prompt: request.prompt.clone(),
            started_at: crate::session::timestamp_now(),
            cwd: Some(self.config.cwd.display().to_string()),
        }));
        let (mut run, pending) = self.start(request);
        if let Some(r) = &run.reports {
            r.started();
        }
        let end = run.drive(pending.prompt, pending.images, pending.deferred, pending.source).await;
        run.finish(end).await
    }

    /// Compacts a session's conversation now (`/compact [instructions]` of an interactive
    /// session): PreCompact (trigger `manual`, the instructions as `custom_instructions`) → a
    /// model-written summary that follows the instructions (the sandwich note when the summary
    /// request fails) → PostCompact → SessionStart(`compact`), as an automatic compaction does,
    /// and the transcript records the boundary. The request's prompt is ignored.
    pub async fn compact(&self, request: RunRequest, instructions: Option<String>) -> CompactOutcome {
        let (mut run, _) = self.start(request);
        let prepared = run.prepare_request();
        let before = run.conversation.len();
        let likely_model = prepared.likely_model.clone().unwrap_or_else(|| self.model.model().to_owned());
        let messages = &prepared.turn.messages;
        let compacted = if crate::stages::compact_context::can_compact(messages) {
            run.compact(messages, &likely_model, &CompactCause::Manual { instructions }).await
        } else {
            false
        };
        run.hooks.shutdown();
        let (usage, total_cost_usd) = spine_protocol::run::ModelUsage::totals(&run.model_usage);
        CompactOutcome {
            compacted,
            before,
            messages: std::mem::take(&mut run.conversation),
            usage,
            model_usage: std::mem::take(&mut run.model_usage),
            total_cost_usd,
        }
    }

    /// Ends a session whose prompts ran as [`SessionTurn::First`](super::SessionTurn::First) and
    /// [`SessionTurn::Later`](super::SessionTurn::Later):
    /// fires SessionEnd with `reason` (an interactive session's exit or `/clear`).
    pub async fn end_session(&self, ending: SessionEnding) {
        let hooks = self.session_hooks(super::SessionRef {
            session_id: ending.session_id,
            transcript_path: ending.transcript_path,
            env_file: ending.env_file,
            trace: ending.trace,
            observer: ending.observer,
        });
        hooks.runtime.observe::<SessionEnd>(&hooks.ctx, SessionEndInput { reason: ending.reason }).await;
        hooks.runtime.shutdown();
    }

    /// The names of the tools a run of this agent offers the model, in registry order
    /// (stream-json's `init` `tools`): the visible ones, `Agent` only with agent types, `Skill`
    /// only with a skill the model may load.
    pub fn offered_tool_names(&self) -> Vec<String> {
        let (skills, _) =
            SkillCatalog::scan_all(&self.config.skill_roots, &self.config.plugin_skills, &self.config.parse_memo);
        self.offered_specs(&skills).into_iter().map(|s| s.name).collect()
    }

    /// The tool specs a run offers the model, given its skills (see [`Agent::offered_tool_names`]).
    fn offered_specs(&self, skills: &SkillCatalog) -> Vec<ToolSpec> {
        // No skill the model may load: no `Skill` tool to offer.
        let offers_skills = skills.model_invocable().next().is_some();
        self.tools
            .specs()
            .filter(|s| self.config.visibility.allows(&s.name))
            .filter_map(|s| match (s.name == AGENT_TOOL, &self.config.subagents) {
                (false, _) => Some(s.clone()),
                // The model reads the agent types it may start; no types, no Agent tool.
                (true, Some(subagents)) => Some(ToolSpec { description: subagents.tool_description(), ..s.clone() }),
                (true, None) => None,
            })
            .filter(|s| offers_skills || s.name != SKILL_TOOL)
            .collect()
    }

    pub(super) fn session_info(
        &self,
        session_id: &str,
        transcript_path: PathBuf,
        env_file: Option<PathBuf>,
    ) -> Arc<SessionInfo> {
        Arc::new(SessionInfo {
            session_id: session_id.to_owned(),
            transcript_path,
            cwd: self.config.cwd.clone(),
            hook_dir: self.config.cwd.clone(),
            project_dir: self.config.workspace.root().to_path_buf(),
            permission_mode: self.policy.mode(),
            effort: self.config.effort_flag.map(EffortLevel::hook_effort).or(self.config.effort.map(Effort::from)),
            env_file,
        })
    }

    /// A run of `request`, ready to drive: its hooks, tools, skills, memory files and
    /// estimator; the rest of the request is returned for the driver.
    fn start(&self, request: RunRequest) -> (Run<'_>, Pending) {
        // A subagent's hooks see the main session's transcript (its own is
        // `agent_transcript_path`).
        let transcript_path = match &request.subagent {
            Some(sub) => sub.session_transcript.clone(),
            None => request.transcript.path().to_path_buf(),
        };
        let session = self.session_info(&request.session_id, transcript_path, request.env_file.clone());
        let hooks = HookRuntime::new(
            Arc::clone(&self.hooks),
            request.trace.clone(),
            Arc::clone(&request.observer),
            self.config.workspace.root().to_path_buf(),
        );
        let hooks = match request.background {
            Some(shared) => hooks.with_background(shared),
            None => hooks,
        };
        let (skills, issues) =
            SkillCatalog::scan_all(&self.config.skill_roots, &self.config.plugin_skills, &self.config.parse_memo);
        self.config.parse_memo.save();
        for issue in issues {
            request.trace.warn(format!("skill `{}` skipped: {}", issue.name, issue.reason), None);
        }
        for note in skills.notes() {
            request.trace.warn(format!("skill `{}`: {}", note.name, note.reason), None);
        }
        let specs = self.offered_specs(&skills);
        let skills = Arc::new(skills);
        let vars = SkillVars {
            session_id: request.session_id.clone(),
            project_dir: self.config.workspace.root().to_path_buf(),
        };
        let skill_session = Arc::new(SkillSession { catalog: Arc::clone(&skills), vars });
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
                session_turn: request.session_turn,
                subagent: request.subagent,
            },
        );
        run.specs = specs;
        run.skills = skills;
        run.skill_session = skill_session;
        run.inherit_skill_limits(request.skill_limits);
        if let Some(name) = request.skill {
            run.activate_skill(&name, None);
        }
        run.memory = memory;
        run.estimator = estimator;
        run.setup = request.setup;
        run.expansion = request.expansion;
        run.reset_structured_output();
        run.carried = request.contexts;
        if let Some(watch) = request.watch {
            run.use_watch(watch);
        }
        let pending = Pending {
            prompt: request.prompt,
            images: request.images,
            deferred: request.deferred,
            source: request.source,
        };
        (run, pending)
    }
}

/// The parts of a request the driver takes.
struct Pending {
    prompt: Option<String>,
    images: Vec<spine_protocol::message::ImageBlock>,
    deferred: Option<spine_protocol::tool::ToolCall>,
    source: SessionSource,
}

/// How a manual compaction ended ([`Agent::compact`]).
#[derive(Debug, Clone)]
pub struct CompactOutcome {
    /// Whether the conversation changed (false: too short to compact, or a PreCompact hook
    /// blocked it — the trace says which).
    pub compacted: bool,
    /// Messages before.
    pub before: usize,
    /// The conversation after (no system message), to continue the session with.
    pub messages: Vec<Message>,
    /// The summary request's usage, when one was sent and reported.
    pub usage: Option<spine_protocol::run::Usage>,
    /// Usage and cost per model id.
    pub model_usage: std::collections::BTreeMap<String, spine_protocol::run::ModelUsage>,
    /// The summary request's cost, when known.
    pub total_cost_usd: Option<f64>,
}

/// A session to end ([`Agent::end_session`]).
pub struct SessionEnding {
    /// The session.
    pub session_id: String,
    /// Its transcript (hooks' `transcript_path`).
    pub transcript_path: PathBuf,
    /// Its environment file.
    pub env_file: Option<PathBuf>,
    /// Why it ends.
    pub reason: SessionEndReason,
    /// Where the hooks' entries go.
    pub trace: Trace,
    /// Who sees the hooks' messages.
    pub observer: Arc<dyn RunObserver>,
}
