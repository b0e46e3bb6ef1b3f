//! The [`Tool`] contract: a definition (name, description, JSON Schema, effect), an executor
//! and a projector.
//!
//! The runner gives a tool only arguments that passed its schema, were shown to PreToolUse
//! hooks, and were approved — the same frozen value throughout. A tool returns its structured
//! response (Claude Code's `tool_response` shape) or a [`ToolError`]; its projector turns the
//! response into the short text the model reads plus machine-readable metadata.
//!
//! A response in Claude Code's image shape (`{"type":"image","file":{"base64","type",
//! "originalSize","dimensions"?}}`, what `Read` returns for an image file) also carries the
//! image to the model: [`response_images`] reads it, and the runner attaches it to the tool
//! result after the projection's text.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_protocol::message::ImageBlock;
use spine_protocol::tool::{Effect, ToolError, ToolSpec};
use tokio_util::sync::CancellationToken;

/// The environment a run gives the processes its tools start (see [`ToolContext::child_env`]).
pub use spine_process::ChildEnv;

use crate::watch::ShellCwd;
use crate::workspace::Workspace;

/// Arguments after validation: immutable, shared by the policy, the approver and the handler.
pub type Args = Arc<Map<String, Value>>;

/// Something the model can call: its definition, what it does to the world, how it runs, and
/// how its response reads to the model.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// Name, description and input schema (read once, at registration).
    fn spec(&self) -> ToolSpec;

    /// What the tool does to the world.
    fn effect(&self) -> Effect;

    /// The argument holding the one path this tool touches (`file_path`, `path`), if any.
    /// File tools declare it; the default [`normalize`](Tool::normalize) and
    /// [`workspace_paths`](Tool::workspace_paths) use it.
    fn path_argument(&self) -> Option<&'static str> {
        None
    }

    /// The argument holding a command line this tool has a shell run (`command`), or writes to
    /// a running program's input (`write_stdin`'s `text`). Such a tool is `Bash` to hooks
    /// ([`crate::hooks::tool_view`]), so a guard on `Bash` sees every command the model runs.
    /// Every tool that starts a program must declare it.
    fn command_argument(&self) -> Option<&'static str> {
        None
    }

    /// Normalises arguments before hooks see them. By default the path argument is made
    /// absolute and lexically normal, so hooks see exactly the path that will be touched.
    fn normalize(&self, args: &mut Map<String, Value>, cwd: &Path) {
        if let Some(key) = self.path_argument()
            && let Some(Value::String(path)) = args.get_mut(key)
        {
            *path = Workspace::normalize(path, cwd).to_string_lossy().into_owned();
        }
    }

    /// The paths this call will touch, which must lie inside the workspace (checked by the
    /// permission stage as a hard deny). By default the path argument, when present; tools
    /// that are not confined return nothing.
    fn workspace_paths(&self, args: &Map<String, Value>) -> Vec<String> {
        match self.path_argument().and_then(|key| args.get(key)) {
            Some(Value::String(path)) => vec![path.clone()],
            _ => Vec::new(),
        }
    }

    /// How long one call may run. The runner stops a call that runs longer: it cancels the
    /// call's [`ToolContext::cancel`] token, gives the tool a short grace to stop, and answers
    /// with a `timeout` error. `None` (the default) sets no limit of the runner's own; tools
    /// that keep their own time limit (Bash's `timeout` argument) leave it so.
    fn time_limit(&self) -> Option<Duration> {
        None
    }

    /// Runs the tool.
    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError>;

    /// Turns a structured response into what the model reads. The default renders strings as
    /// they are and anything else as JSON.
    fn project(&self, response: &Value) -> Projection {
        Projection::plain(match response {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }
}

/// What the model reads of a result, and the machine-readable fields kept beside it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Projection {
    /// Short narrative (and, where the model needs it, the payload) for the model.
    pub content: String,
    /// Structured fields for reports and traces (exit status, byte counts, paths…).
    pub metadata: Map<String, Value>,
}

impl Projection {
    /// A projection with no metadata.
    pub fn plain(content: impl Into<String>) -> Self {
        Projection { content: content.into(), metadata: Map::new() }
    }

    /// Adds a metadata field.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }
}

/// The images a tool response carries: one for a response in Claude Code's image shape
/// (`{"type":"image","file":{"base64","type":<media type>,"dimensions":{"displayWidth",
/// "displayHeight"}?}}`), none otherwise.
pub fn response_images(response: &Value) -> Vec<ImageBlock> {
    if response.get("type").and_then(Value::as_str) != Some("image") {
        return Vec::new();
    }
    let file = &response["file"];
    let (Some(data), Some(media_type)) = (file["base64"].as_str(), file["type"].as_str()) else {
        return Vec::new();
    };
    let dimension = |key: &str| file["dimensions"][key].as_u64().and_then(|n| u32::try_from(n).ok());
    vec![ImageBlock {
        width: dimension("displayWidth"),
        height: dimension("displayHeight"),
        ..ImageBlock::new(media_type, data)
    }]
}

/// A chunk of output streamed while a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl OutputStream {
    /// The stream's name.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputStream::Stdout => "stdout",
            OutputStream::Stderr => "stderr",
        }
    }
}

/// Receives output chunks as a tool produces them (reports' `tool_output` progress).
pub trait ProgressSink: Send + Sync {
    /// One chunk of one stream of one call.
    fn output(&self, call_id: &str, tool_name: &str, stream: OutputStream, text: &str);
}

/// Decides the URLs a network tool reaches on its own, beyond the one it was called with (the
/// hops of a redirect): `Ok` to follow, `Err(reason)` to refuse. The runner puts one backed by
/// the run's permission policy in the context ([`crate::permission::PolicyUrlGate`]).
pub trait UrlGate: Send + Sync {
    /// Whether the tool may fetch `url`.
    fn check(&self, url: &url::Url) -> Result<(), String>;
}

/// The sandbox's lines about one call ([`ToolContext::sandbox_report`]); clones share them.
#[derive(Debug, Clone, Default)]
pub struct SandboxReport(Arc<std::sync::Mutex<Vec<String>>>);

impl SandboxReport {
    /// Adds `lines`.
    pub fn extend(&self, lines: impl IntoIterator<Item = String>) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).extend(lines);
    }

    /// The lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// What a running tool may use.
#[derive(Clone)]
pub struct ToolContext {
    /// The model's id for this call (`tool_use_id` in hooks and traces).
    pub call_id: String,
    /// The registered name the call named.
    pub tool_name: String,
    /// The workspace boundary.
    pub workspace: Arc<Workspace>,
    /// The working directory: where the agent's shell is ([`ShellCwd`]), else the run's.
    pub cwd: PathBuf,
    /// The agent's shell directory, kept between calls: a shell tool starts in `cwd` and
    /// [`ShellCwd::settle`]s where the command left the shell. `None` (direct calls): every
    /// command starts in `cwd` and nothing is kept.
    pub shell_cwd: Option<Arc<ShellCwd>>,
    /// Canceled when the run is canceled, or when the call outlives the tool's
    /// [`Tool::time_limit`]; tools stop and kill what they started.
    pub cancel: CancellationToken,
    /// A file of `export NAME=value` lines (written by SessionStart hooks) applied to the
    /// environment of commands the tool runs.
    pub env_file: Option<PathBuf>,
    /// What every process the tool starts gets of its environment: the agent's settings'
    /// `env` and the provider keys it passes through
    /// ([`AgentConfig::child_env`](crate::runner::AgentConfig::child_env)). A tool that starts
    /// a process hands it to the spawn.
    pub child_env: ChildEnv,
    /// Why this call's commands run outside the session's sandbox although the agent's
    /// [`child_env`](Self::child_env) is confined (`excludedCommands: …`, an approved
    /// `dangerouslyDisableSandbox`): the runner then gives the call the unconfined environment
    /// and the `execute` trace entry records this. `None` otherwise.
    pub sandbox_exemption: Option<String>,
    /// What the sandbox said about this call's commands (a denial it explains, a destination
    /// its proxy refused, a protected path undone): a command tool adds the lines it also
    /// shows the model, and the call's `execute` trace entry lists them (`sandbox_notes`).
    pub sandbox_report: SandboxReport,
    /// Where streamed output goes.
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Decides redirect hops of network tools; `None` outside a run with a policy (direct
    /// calls), where only the tool's own checks apply.
    pub url_gate: Option<Arc<dyn UrlGate>>,
    /// Answers what an MCP server asks during this call (`elicitation/create`); `None` outside
    /// a run, where every elicitation is declined.
    pub elicitor: Option<Arc<dyn crate::elicitation::Elicitor>>,
    /// The run's skills, which the `Skill` tool loads; `None` outside a run (direct calls),
    /// where no skill is known.
    pub skills: Option<Arc<crate::skills::SkillSession>>,
}

impl ToolContext {
    /// A context for direct calls (tests, a hook calling a tool) whose processes get
    /// `child_env`.
    pub fn new(
        workspace: Arc<Workspace>,
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        child_env: ChildEnv,
    ) -> Self {
        let cwd = workspace.root().to_path_buf();
        ToolContext {
            call_id: call_id.into(),
            tool_name: tool_name.into(),
            workspace,
            cwd,
            shell_cwd: None,
            cancel: CancellationToken::new(),
            env_file: None,
            child_env,
            sandbox_exemption: None,
            sandbox_report: SandboxReport::default(),
            progress: None,
            url_gate: None,
            elicitor: None,
            skills: None,
        }
    }

    /// Reports an output chunk, if anyone listens.
    pub fn emit(&self, stream: OutputStream, text: &str) {
        if let Some(p) = &self.progress {
            p.output(&self.call_id, &self.tool_name, stream, text);
        }
    }
}
