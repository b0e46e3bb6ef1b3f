//! Test support: a project directory with hook scripts, settings layers, a scripted model that
//! records every request, and a runner that drives `spine_core::runner::Agent` with the real
//! built-in tools and the external hooks built from the settings.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::hooks::HookRegistryBuilder;
use spine_core::model::ModelClient;
use spine_core::permission::{DenyApprover, PermissionPolicy, PermissionRule, PermissionRules};
use spine_core::registry::ToolRegistryBuilder;
use spine_core::runner::{Agent, AgentConfig, RunOutcome, RunRequest};
use spine_core::session::Transcript;
use spine_core::tool::{ChildEnv, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_hooks::{BuildOptions, HookConfig};
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::pairing::validate_pairing;
use spine_protocol::permission::PermissionMode;
use spine_protocol::tool::{Effect, ToolError, ToolSpec};
use spine_protocol::trace::TraceRecord;
use spine_settings::{Origin, Settings, SettingsLayer};
pub use spine_testkit::{Script, calls, results, roles, text};

pub use spine_testkit::files::json_lines;
pub use spine_testkit::procs::eventually_dead;

pub fn bash(id: &str, command: &str) -> AssistantMessage {
    calls(&[(id, "Bash", json!({"command": command}))])
}

/// `mcp__memory__store {key}`: stands in for an MCP tool.
pub struct McpStore;

#[async_trait]
impl Tool for McpStore {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "mcp__memory__store".into(),
            description: "stores a key".into(),
            input_schema: json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}),
        }
    }
    fn effect(&self) -> Effect {
        Effect::Read
    }
    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        Ok(json!({"stored": args.get("key").cloned().unwrap_or(Value::Null)}))
    }
}

/// A project directory (canonical) and a private home for transcripts and the env file.
pub struct Project {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
}

impl Project {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        let root = base.join("project");
        let home = base.join("home");
        std::fs::create_dir_all(&root).expect("project");
        std::fs::create_dir_all(&home).expect("home");
        Project { _dir: dir, root, home }
    }

    /// Writes a file under the project.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        spine_testkit::files::write_file(&self.root, rel, text)
    }

    /// Writes an executable script under `hooks/` and returns its absolute path.
    pub fn script(&self, name: &str, body: &str) -> String {
        spine_testkit::files::write_executable(&self.root, &format!("hooks/{name}"), body).display().to_string()
    }

    /// A path under the project, as a string.
    pub fn path(&self, rel: &str) -> String {
        self.root.join(rel).display().to_string()
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap_or_default()
    }

    pub fn env_file(&self) -> PathBuf {
        self.home.join("session.env")
    }

    pub fn transcript(&self) -> PathBuf {
        self.home.join("session.jsonl")
    }

    /// Where a run's trace entries are written, one JSON line each, as they are recorded.
    pub fn trace_file(&self) -> PathBuf {
        self.home.join("trace.jsonl")
    }

    /// Settings from layers, each as if passed with `--settings FILE` (file `settings-N.json`).
    pub fn settings(&self, layers: &[Value]) -> Settings {
        let layers = layers
            .iter()
            .enumerate()
            .map(|(i, v)| SettingsLayer {
                origin: Origin::Cli { index: i + 1, path: Some(self.root.join(format!("settings-{}.json", i + 1))) },
                value: v.as_object().cloned().expect("settings object"),
            })
            .collect();
        Settings::from_layers(layers).expect("settings")
    }

    pub fn hook_config(&self, layers: &[Value]) -> HookConfig {
        HookConfig::from_settings(&self.settings(layers)).expect("valid hook config")
    }
}

/// `{"hooks": {EVENT: [{"matcher": M, "hooks": [HANDLER…]}]}}`.
pub fn hooks(event: &str, matcher: &str, handlers: Vec<Value>) -> Value {
    json!({"hooks": {event: [{"matcher": matcher, "hooks": handlers}]}})
}

/// A command handler.
pub fn command(cmd: &str) -> Value {
    json!({"type": "command", "command": cmd})
}

/// How a run is set up.
pub struct Setup {
    pub layers: Vec<Value>,
    pub mode: PermissionMode,
    pub ask: Vec<&'static str>,
    pub max_forced: u32,
    pub max_turns: u32,
    pub prompt: &'static str,
    /// Cancels the run.
    pub cancel: Option<tokio_util::sync::CancellationToken>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            layers: vec![],
            mode: PermissionMode::BypassPermissions,
            ask: vec![],
            max_forced: 1,
            max_turns: 20,
            prompt: "go",
            cancel: None,
        }
    }
}

/// A finished run.
pub struct Ran {
    pub outcome: RunOutcome,
    pub script: Arc<Script>,
}

impl Ran {
    pub fn results(&self) -> Vec<ToolResultMessage> {
        results(&self.outcome.messages)
    }

    /// Context messages as `Event: text`.
    pub fn contexts(&self) -> Vec<String> {
        self.outcome
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::Context(c) => Some(format!("{}: {}", c.event, c.content)),
                _ => None,
            })
            .collect()
    }

    /// Roles, with context messages as `context:<Event>`.
    pub fn roles(&self) -> Vec<String> {
        roles(&self.outcome.messages)
    }

    pub fn warnings(&self) -> Vec<String> {
        self.outcome
            .trace
            .entries()
            .into_iter()
            .filter_map(|e| match e.record {
                TraceRecord::Warning(w) => Some(w.message),
                _ => None,
            })
            .collect()
    }
}

/// Runs an agent over the project with the built-in tools (plus `mcp__memory__store`).
pub async fn run(project: &Project, setup: Setup, replies: Vec<AssistantMessage>) -> Ran {
    let config = project.hook_config(&setup.layers);
    run_config(project, &config, setup, replies).await
}

/// [`run`] with a hook configuration built by the caller (`setup.layers` is not read).
pub async fn run_config(project: &Project, config: &HookConfig, setup: Setup, replies: Vec<AssistantMessage>) -> Ran {
    run_built(project, config, &BuildOptions::new(ChildEnv::default()), setup, replies).await
}

/// [`run_config`] with the caller's build options (an SDK host's callbacks).
pub async fn run_built(
    project: &Project,
    config: &HookConfig,
    options: &BuildOptions,
    setup: Setup,
    replies: Vec<AssistantMessage>,
) -> Ran {
    let mut hooks = HookRegistryBuilder::new();
    spine_hooks::register(config, &mut hooks, options).expect("hooks build");
    let mut tools = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut tools);
    tools.register(McpStore);
    let workspace = Arc::new(Workspace::new(&project.root).expect("workspace"));
    let mut agent_config = AgentConfig::new(Arc::clone(&workspace));
    agent_config.max_forced_continuations = setup.max_forced;
    agent_config.max_turns = setup.max_turns;
    let ask = setup.ask.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect();
    let script = Script::new(replies);
    let agent = Agent {
        model: Arc::clone(&script) as Arc<dyn ModelClient>,
        tools: Arc::new(tools.build().expect("tools")),
        hooks: Arc::new(hooks.build()),
        policy: PermissionPolicy::new(
            PermissionRules { allow: vec![], ask, deny: vec![] },
            setup.mode,
            workspace.root().to_path_buf(),
        ),
        approver: Arc::new(DenyApprover),
        config: agent_config,
    };
    std::fs::write(project.env_file(), "").expect("env file");
    let sink = TraceLines(std::sync::Mutex::new(std::fs::File::create(project.trace_file()).expect("trace file")));
    let request = RunRequest::new("s1", Transcript::open(project.transcript()).expect("transcript"))
        .prompt(Some(setup.prompt.to_owned()))
        .trace(spine_core::trace::Trace::new(Some(Arc::new(sink))))
        .env_file(Some(project.env_file()));
    let request = match setup.cancel {
        Some(cancel) => request.cancel(cancel),
        None => request,
    };
    let outcome = agent.run(request).await;
    validate_pairing(&outcome.messages).expect("the final conversation is paired");
    Ran { outcome, script }
}

/// Writes each trace entry as one JSON line as soon as it is recorded (a hook or a tool may wait
/// for an entry).
struct TraceLines(std::sync::Mutex<std::fs::File>);

impl spine_core::trace::TraceSink for TraceLines {
    fn record(&self, entry: &Arc<spine_protocol::trace::TraceEntry>) {
        use std::io::Write;
        if let (Ok(mut file), Ok(line)) = (self.0.lock(), serde_json::to_string(entry.as_ref())) {
            let _ = writeln!(file, "{line}");
        }
    }
}

/// The sorted keys of a JSON object.
pub fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}
