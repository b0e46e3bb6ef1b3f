//! The agent runner: UserPromptSubmit → [model → tool round]* → Stop, with SessionStart and
//! SessionEnd once each, `max_turns`, forced continuations, cancellation, the transcript and
//! the trace. docs/architecture.md follows one tool call through these modules.
//!
//! - [`agent`]: [`Agent`] and [`AgentConfig`], and [`Agent::run`], which builds a run;
//! - [`request`]: a run's inputs ([`RunRequest`]) and its outcome ([`RunOutcome`]);
//! - `round`: the loop — SessionStart, UserPromptSubmit, model turns, tool rounds, Stop;
//! - `turn`: one model request — `prepare_request` → `compact_context` (with the compaction
//!   hooks) → pairing check → the model;
//! - `call`, `permit`, `post`: the path of one tool call; `delegate`: an `Agent` call's child run;
//!   `background`: a background `Agent` call (the child runs on, its notification comes later);
//!   `watch`: CwdChanged after a call, FileChanged and ConfigChange at the safe points;
//!   `path_rules`: the conditional rule files a call brings in; `skill_use`: the skills a run
//!   loads (what they restrict, the model they ask for);
//! - `prelude`: Setup and UserPromptExpansion, before the prompt;
//! - [`budget`]: `--max-budget-usd`; [`structured`]: `--json-schema`'s `StructuredOutput` tool
//!   and the rule that the final answer comes through it;
//! - `finish`: how a run ends — SessionEnd, reports, the outcome;
//! - `session_hooks`: hooks fired in a session outside any run (`/model`, `--init-only`);
//! - [`single`]: one tool call with no model (the worker's tool items).
//!
//! Every exit path leaves the conversation paired: every tool call the model made has exactly
//! one result, checked before every model request.

pub mod agent;
mod background;
mod batch;
pub mod budget;
mod call;
mod delegate;
mod finish;
mod path_rules;
mod permit;
mod post;
mod prelude;
pub mod request;
mod round;
mod session_hooks;
pub mod single;
mod skill_use;
pub mod structured;
mod turn;
mod watch;

pub use agent::{Agent, AgentConfig, CompactOutcome, SessionEnding};
pub use budget::Budget;
pub use request::{RunOutcome, RunRequest, SessionTurn, SubagentRun};
pub use session_hooks::{SessionHooks, SessionRef};
pub use single::{SingleCall, SingleCallOutcome};
pub use turn::CompactCause;

use std::collections::HashSet;
use std::sync::Arc;

use spine_protocol::hook::HookEventName;
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::run::ModelUsage;
use spine_protocol::tool::{ToolCall, ToolError, ToolSpec};
use tokio_util::sync::CancellationToken;

use crate::hooks::{HookContext, HookRuntime, SessionInfo};
use crate::memory_files::MemoryFiles;
use crate::model::FinishReason;
use crate::observer::{RunEvent, RunObserver};
use crate::reports::ReportCollector;
use crate::session::{ReplyMeta, Transcript, TranscriptRecord};
use crate::skills::{ActiveSkills, SkillCatalog, SkillSession};
use crate::stages::review_tool_call::Visibility;
use crate::tokens::{TokenCache, TokenEstimator};
use crate::tool::ProgressSink;
use crate::trace::Trace;

/// The state of one run.
struct Run<'a> {
    agent: &'a Agent,
    /// Shared with the elicitors of the run's tool calls ([`crate::elicitation::RunElicitor`]).
    hooks: Arc<HookRuntime>,
    hook_ctx: HookContext,
    /// The conversation so far (no system message: that is prepared per request).
    conversation: Vec<Message>,
    /// The transcript file every message is appended to.
    transcript: Transcript,
    trace: Trace,
    observer: Arc<dyn RunObserver>,
    cancel: CancellationToken,
    specs: Vec<ToolSpec>,
    num_turns: u32,
    /// Usage and cost per model id, over every request of the run.
    model_usage: std::collections::BTreeMap<String, ModelUsage>,
    progress: Option<Arc<dyn ProgressSink>>,
    reports: Option<Arc<ReportCollector>>,
    /// The messages of the last model request.
    last_request: Vec<Message>,
    /// Why the model's last reply ended.
    last_finish: Option<FinishReason>,
    skills: Arc<SkillCatalog>,
    /// The skills and variables the `Skill` tool gets in its context.
    skill_session: Arc<SkillSession>,
    /// The skills loaded so far in this run and what they restrict (`skill_use`).
    active_skills: std::sync::Mutex<ActiveSkills>,
    /// The model an active skill asked for, serving the rest of the run (`skill_use`).
    skill_model: std::sync::Mutex<Option<Arc<dyn crate::model::ModelClient>>>,
    /// The memory files (`CLAUDE.md`…), loaded once per run.
    memory: MemoryFiles,
    estimator: Arc<dyn TokenEstimator>,
    token_cache: TokenCache,
    /// The tools this run may call (the agent's, or narrower for one call).
    visibility: Visibility,
    /// Whether a PreToolUse `defer` may end this run (else it is asked).
    allow_defer: bool,
    /// Every tool-call id of the conversation so far (kept as replies arrive, not rebuilt).
    call_ids: HashSet<String>,
    /// Which part of its session the run is (whether SessionStart and SessionEnd fire).
    session_turn: SessionTurn,
    /// Set when this run is a subagent's.
    subagent: Option<request::SubagentRun>,
    /// Usage and cost of the subagents this run started, per model id (added to the run's own
    /// when it ends).
    delegated_usage: std::sync::Mutex<std::collections::BTreeMap<String, ModelUsage>>,
    /// Orders the approvals of this run's concurrent subagents.
    approvals: Arc<tokio::sync::Mutex<()>>,
    /// The conditional rule files shown so far (`path_rules`).
    rules_shown: path_rules::ShownRules,
    /// Setup's trigger, when this run starts with it ([`RunRequest::setup`]).
    setup: Option<String>,
    /// The custom command the prompt expands ([`RunRequest::expansion`]).
    expansion: Option<spine_protocol::hook::UserPromptExpansionInput>,
    /// Contexts given between runs ([`RunRequest::contexts`]), pushed after the prompt.
    carried: Vec<(HookEventName, String)>,
    /// What the session watches: the shell's directory, files, settings (`watch`).
    watch: Arc<crate::watch::SessionWatch>,
    /// Whether the shell's directory is kept between calls (not for a single call).
    keeps_shell: bool,
    /// Whether an `Agent` call may run in the background (not for a single call: no later
    /// request would read its notification).
    may_background: bool,
    /// The structured output a `StructuredOutput` call gave (`structured`).
    structured_output: Option<serde_json::Value>,
    /// Whether the model was already told to call `StructuredOutput` (`structured`).
    structured_reminded: bool,
}

/// What a [`Run`] is made of, besides its agent.
struct RunParts {
    hooks: HookRuntime,
    session: Arc<SessionInfo>,
    conversation: Vec<Message>,
    transcript: Transcript,
    trace: Trace,
    observer: Arc<dyn RunObserver>,
    cancel: CancellationToken,
    progress: Option<Arc<dyn ProgressSink>>,
    reports: Option<Arc<ReportCollector>>,
    visibility: Visibility,
    session_turn: SessionTurn,
    subagent: Option<request::SubagentRun>,
}

impl<'a> Run<'a> {
    /// A run with no model turns yet; streamed tool output goes to `progress`, else to the
    /// report collector.
    fn new(agent: &'a Agent, parts: RunParts) -> Self {
        let progress = parts.progress.or_else(|| parts.reports.clone().map(|r| r as Arc<dyn ProgressSink>));
        let call_ids = parts
            .conversation
            .iter()
            .filter_map(|m| match m {
                Message::Assistant(a) => Some(a.tool_calls.iter().map(|c| c.id.clone())),
                _ => None,
            })
            .flatten()
            .collect();
        Run {
            agent,
            hooks: Arc::new(parts.hooks),
            hook_ctx: HookContext {
                session: parts.session,
                event: HookEventName::SessionStart,
                prompt_id: None,
                cancel: parts.cancel.clone(),
                agent: parts.subagent.as_ref().map(|s| Arc::clone(&s.identity)),
            },
            conversation: parts.conversation,
            transcript: parts.transcript,
            trace: parts.trace,
            observer: parts.observer,
            cancel: parts.cancel,
            specs: Vec::new(),
            num_turns: 0,
            model_usage: std::collections::BTreeMap::new(),
            progress,
            reports: parts.reports,
            last_request: Vec::new(),
            last_finish: None,
            skills: Arc::default(),
            skill_session: Arc::default(),
            active_skills: std::sync::Mutex::default(),
            skill_model: std::sync::Mutex::default(),
            memory: MemoryFiles::default(),
            estimator: Arc::new(crate::tokens::WordsEstimator),
            token_cache: TokenCache::new(),
            visibility: parts.visibility,
            allow_defer: agent.config.allow_defer,
            call_ids,
            session_turn: parts.session_turn,
            subagent: parts.subagent,
            delegated_usage: std::sync::Mutex::new(std::collections::BTreeMap::new()),
            approvals: Arc::new(tokio::sync::Mutex::new(())),
            rules_shown: Default::default(),
            setup: None,
            expansion: None,
            carried: Vec::new(),
            watch: Arc::new(crate::watch::SessionWatch::new(agent.config.cwd.clone())),
            keeps_shell: true,
            may_background: true,
            structured_output: None,
            structured_reminded: false,
        }
    }

    /// Appends a message to the conversation and the transcript file.
    fn push(&mut self, message: Message) {
        self.record(&TranscriptRecord::Message { message: message.clone() });
        self.observer.on_event(&RunEvent::Message { message: &message });
        self.conversation.push(message);
    }

    /// Appends a model turn, with its model, usage and stop reason in the transcript.
    fn push_reply(&mut self, reply: AssistantMessage, meta: ReplyMeta) {
        self.record(&TranscriptRecord::Reply { message: reply.clone(), meta });
        let message = Message::Assistant(reply);
        self.observer.on_event(&RunEvent::Message { message: &message });
        self.conversation.push(message);
    }

    /// Writes a transcript record; a failure is a warning (the run goes on).
    fn record(&self, record: &TranscriptRecord) {
        if let Err(e) = self.transcript.append(record) {
            let text = format!("could not write the transcript {}: {e}", self.transcript.path().display());
            self.trace.warn(text.clone(), None);
            self.observer.on_event(&RunEvent::Warning { text: &text });
        }
    }

    /// Appends hook contexts of `event` as context messages.
    fn push_contexts(&mut self, event: HookEventName, contexts: Vec<String>) {
        for text in contexts {
            self.push(Message::context(event, text));
        }
    }
}

/// The result message for a call that got an error.
fn error_result(call: &ToolCall, error: &ToolError) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        name: call.name.clone(),
        content: error.render(),
        error_code: Some(error.code),
        images: Vec::new(),
    }
}
