//! A run's inputs ([`RunRequest`], built with [`RunRequest::new`] and setters) and how it
//! ended ([`RunOutcome`]).

use std::path::PathBuf;
use std::sync::Arc;

use spine_protocol::hook::SessionSource;
use spine_protocol::message::{ImageBlock, Message};
use spine_protocol::run::{RunSubtype, Usage};
use spine_protocol::tool::ToolCall;
use tokio_util::sync::CancellationToken;

use crate::hooks::BackgroundHooks;
use crate::model::FinishReason;
use crate::observer::{NullObserver, RunObserver};
use crate::reports::ReportCollector;
use crate::session::Transcript;
use crate::stages::handle_error::ExecutionError;
use crate::subagents::AgentIdentity;
use crate::tool::ProgressSink;
use crate::trace::Trace;

/// One run's inputs. [`RunRequest::new`] gives a fresh session with no prompt, no history, a
/// new cancel token, no observer and an in-memory trace; the setters change one input each.
pub struct RunRequest {
    pub(super) prompt: Option<String>,
    pub(super) images: Vec<ImageBlock>,
    pub(super) session_id: String,
    pub(super) transcript: Transcript,
    pub(super) history: Vec<Message>,
    pub(super) deferred: Option<ToolCall>,
    pub(super) source: SessionSource,
    pub(super) cancel: CancellationToken,
    pub(super) observer: Arc<dyn RunObserver>,
    pub(super) trace: Trace,
    pub(super) env_file: Option<PathBuf>,
    pub(super) progress: Option<Arc<dyn ProgressSink>>,
    pub(super) reports: Option<Arc<ReportCollector>>,
    pub(super) session_turn: SessionTurn,
    pub(super) subagent: Option<SubagentRun>,
    pub(super) setup: Option<String>,
    pub(super) expansion: Option<spine_protocol::hook::UserPromptExpansionInput>,
    pub(super) contexts: Vec<(spine_protocol::hook::HookEventName, String)>,
    pub(super) background: Option<BackgroundHooks>,
    pub(super) watch: Option<Arc<crate::watch::SessionWatch>>,
    pub(super) skill: Option<String>,
    pub(super) skill_limits: crate::skills::ActiveSkills,
}

/// Which part of a session a run is. SessionStart and SessionEnd hooks fire once per session:
/// a one-prompt run (`spine -p`, a worker item) is the whole session; an interactive session
/// runs one prompt after another and ends with [`Agent::end_session`](super::Agent::end_session).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionTurn {
    /// The whole session: SessionStart first, SessionEnd last.
    #[default]
    Whole,
    /// The first prompt of a session that goes on: SessionStart, no SessionEnd.
    First,
    /// A later prompt of a session that goes on: neither.
    Later,
}

/// The run of a subagent: who it is and where it sits in the tree. The runner makes one per
/// `Agent` call; a library user running an agent as a subagent of their own may too.
#[derive(Debug, Clone)]
pub struct SubagentRun {
    /// Its id and type (hook inputs' `agent_id` / `agent_type`).
    pub identity: Arc<AgentIdentity>,
    /// 1 for a child of the main agent, 2 for a grandchild…
    pub depth: u32,
    /// The `Agent` call that started it.
    pub parent_tool_use_id: String,
    /// The main session's transcript: hooks' `transcript_path` (the subagent's own is
    /// `agent_transcript_path`), and the place of the `subagents/` directory.
    pub session_transcript: PathBuf,
}

impl RunRequest {
    /// A run of session `session_id` writing to `transcript`, started fresh
    /// ([`SessionSource::Startup`]).
    pub fn new(session_id: impl Into<String>, transcript: Transcript) -> Self {
        RunRequest {
            prompt: None,
            images: Vec::new(),
            session_id: session_id.into(),
            transcript,
            history: Vec::new(),
            deferred: None,
            source: SessionSource::Startup,
            cancel: CancellationToken::new(),
            observer: Arc::new(NullObserver),
            trace: Trace::default(),
            env_file: None,
            progress: None,
            reports: None,
            session_turn: SessionTurn::Whole,
            subagent: None,
            setup: None,
            expansion: None,
            contexts: Vec::new(),
            background: None,
            watch: None,
            skill: None,
            skill_limits: crate::skills::ActiveSkills::default(),
        }
    }

    /// Which part of its session the run is (default [`SessionTurn::Whole`]).
    pub fn session_turn(mut self, turn: SessionTurn) -> Self {
        self.session_turn = turn;
        self
    }

    /// Runs the agent as a subagent: SubagentStart replaces SessionStart and UserPromptSubmit,
    /// SubagentStop replaces Stop, no SessionEnd, and hook inputs carry `agent_id` /
    /// `agent_type`.
    pub fn subagent(mut self, subagent: Option<SubagentRun>) -> Self {
        self.subagent = subagent;
        self
    }

    /// Fires Setup with `trigger` (`init` or `maintenance`) before SessionStart: `--init`,
    /// `--maintenance` (default: no Setup).
    pub fn setup(mut self, trigger: Option<String>) -> Self {
        self.setup = trigger;
        self
    }

    /// The prompt is the expansion of a custom command: UserPromptExpansion fires before
    /// UserPromptSubmit, with `expansion.prompt` the command line as typed.
    pub fn expansion(mut self, expansion: Option<spine_protocol::hook::UserPromptExpansionInput>) -> Self {
        self.expansion = expansion;
        self
    }

    /// Contexts hooks gave between runs of a session (PostModelSwitch's after `/model`), each
    /// with its event: the model reads them after the prompt, and the transcript keeps them.
    pub fn contexts(mut self, contexts: Vec<(spine_protocol::hook::HookEventName, String)>) -> Self {
        self.contexts = contexts;
        self
    }

    /// The prompt; none when resuming only to settle a deferred call.
    pub fn prompt(mut self, prompt: Option<String>) -> Self {
        self.prompt = prompt;
        self
    }

    /// Images attached to the prompt (`--image`): they follow its text in the user turn.
    /// UserPromptSubmit hooks still see the text alone as `prompt`.
    pub fn images(mut self, images: Vec<ImageBlock>) -> Self {
        self.images = images;
        self
    }

    /// The conversation so far (from `--resume`).
    pub fn history(mut self, history: Vec<Message>) -> Self {
        self.history = history;
        self
    }

    /// A call a deferral left pending (from `--resume`), settled before the prompt's turn.
    pub fn deferred(mut self, deferred: Option<ToolCall>) -> Self {
        self.deferred = deferred;
        self
    }

    /// Why the session starts (SessionStart's `source`).
    pub fn source(mut self, source: SessionSource) -> Self {
        self.source = source;
        self
    }

    /// The token that cancels the run.
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Receives live events.
    pub fn observer(mut self, observer: Arc<dyn RunObserver>) -> Self {
        self.observer = observer;
        self
    }

    /// The run's trace (create it with a sink to stream entries).
    pub fn trace(mut self, trace: Trace) -> Self {
        self.trace = trace;
        self
    }

    /// The file SessionStart hooks append `export` lines to.
    pub fn env_file(mut self, env_file: Option<PathBuf>) -> Self {
        self.env_file = env_file;
        self
    }

    /// Where streamed tool output goes (defaults to the report collector when there is one).
    pub fn progress(mut self, progress: Option<Arc<dyn ProgressSink>>) -> Self {
        self.progress = progress;
        self
    }

    /// Receives the run's reports.
    pub fn reports(mut self, reports: Option<Arc<ReportCollector>>) -> Self {
        self.reports = reports;
        self
    }

    /// Background hooks shared by the runs of an interactive session: they outlive this run,
    /// which does not wait for them when it ends (default: the run's own, waited for when they
    /// may wake the model, and ended with the run). A wake they deliver starts the session's
    /// next run (whose prompt may be none).
    pub fn background(mut self, background: Option<BackgroundHooks>) -> Self {
        self.background = background;
        self
    }

    /// What the session watches — its shell's directory, files, settings — shared by the runs
    /// of an interactive session (default: the run's own, starting in the agent's directory
    /// and stopped with the run; see [`crate::watch`]).
    pub fn watch(mut self, watch: Option<Arc<crate::watch::SessionWatch>>) -> Self {
        self.watch = watch;
        self
    }

    /// The skill the user ran (`/name` in a chat, whose rendered body is the prompt): it is
    /// active from the run's start — its `allowed-tools` narrow the run, its `model` serves it
    /// (see `skills::ActiveSkills`). Default: none.
    pub fn invoked_skill(mut self, skill: Option<String>) -> Self {
        self.skill = skill;
        self
    }

    /// The skills active in the parent of a subagent's run: their restrictions hold in the
    /// child too.
    pub(super) fn skill_limits(mut self, limits: crate::skills::ActiveSkills) -> Self {
        self.skill_limits = limits;
        self
    }
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// How the run ended, as `spine run` prints it.
    pub subtype: RunSubtype,
    /// The final text: the answer, the blocking reason, or the error.
    pub result: String,
    /// The session, for `--resume`.
    pub session_id: String,
    /// Model requests made.
    pub num_turns: u32,
    /// The conversation as sent to the model: system message, then the transcript.
    pub messages: Vec<Message>,
    /// Token usage, summed over the run's model requests; `None` when no request reported
    /// any (a server that sends no usage is not shown as 0 tokens).
    pub usage: Option<Usage>,
    /// Usage and cost per model id (every request counted, with or without usage).
    pub model_usage: std::collections::BTreeMap<String, spine_protocol::run::ModelUsage>,
    /// The sum of the known costs, in US dollars; `None` when no cost is known (an unpriced
    /// model, or no usage reported).
    pub total_cost_usd: Option<f64>,
    /// Every stage, hook and decision entry of the run.
    pub trace: Trace,
    /// The call left pending by a deferral.
    pub deferred: Option<ToolCall>,
    /// A hook's `stopReason`, when a hook ended the run.
    pub stop_reason: Option<String>,
    /// Why the model's last reply ended (none when no reply came).
    pub finish_reason: Option<FinishReason>,
    /// The error, when the run failed or was canceled.
    pub error: Option<ExecutionError>,
    /// The input of the `StructuredOutput` call that answered (`--json-schema`, see
    /// [`super::structured`]).
    pub structured_output: Option<serde_json::Value>,
}
