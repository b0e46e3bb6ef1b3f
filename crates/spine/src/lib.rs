//! spine for Rust programs: build an agent in code, govern it with typed hooks, give it your
//! own tools, run it, and read what happened in its trace.
//!
//! Every tool call the model makes passes through the same stages as with the `spine` binary —
//! PreToolUse hooks, the permission policy, execution, PostToolUse hooks — and every stage and
//! hook leaves a trace entry. A Rust hook answers with its event's typed action, so an answer
//! the event does not allow does not compile. Rust hooks run before the hooks of settings files
//! (when [`AgentBuilder::settings`] gives some), as a chain, and fail closed.
//!
//! ```no_run
//! use spine::hooks::{HookOutput, PermissionSuggestion, PreToolUse, PreToolUseAction, PreToolUseInput};
//! use spine::{AgentBuilder, HookContext, RunRequest, Transcript, hook_fn};
//!
//! # async fn run() -> Result<(), spine::BuildError> {
//! let built = AgentBuilder::new("/path/to/project")
//!     .model("openai:gpt-4.1-mini") // OPENAI_BASE_URL and OPENAI_API_KEY from the environment
//!     .on::<PreToolUse>("no-force-push", hook_fn(|_ctx: &HookContext, input: &PreToolUseInput| {
//!         let command = input.tool_input["command"].as_str().unwrap_or_default();
//!         Ok(HookOutput::new(if command.contains("--force") {
//!             PreToolUseAction::Block { reason: "no force pushes".into(), additional_context: None }
//!         } else {
//!             PreToolUseAction::Proceed {
//!                 permission: PermissionSuggestion::Passthrough,
//!                 updated_input: None,
//!                 additional_context: None,
//!             }
//!         }))
//!     }))
//!     .allow("Bash(git:*)")
//!     .build()?;
//! let outcome = built
//!     .agent
//!     .run(RunRequest::new("session-1", Transcript::discard("session-1.jsonl")).prompt(Some("Push my branch".into())))
//!     .await;
//! println!("{}", outcome.result);
//! for entry in outcome.trace.entries() {
//!     println!("{}", serde_json::to_string(&entry).unwrap_or_default());
//! }
//! built.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! The pieces are re-exported from spine's crates: [`hooks`] (events, inputs, actions, the hook
//! traits), [`tools`] (the [`Tool`] trait and its context), [`models`] (model specs and the
//! client trait), the runner ([`Agent`], [`RunRequest`], [`RunOutcome`]) and the trace.

// Unit tests link the dev-dependencies of the integration tests too.
#![cfg_attr(test, allow(unused_crate_dependencies))]

use std::path::PathBuf;
use std::sync::Arc;

pub use spine_core::CancellationToken;
/// MCP elicitation: what an [`Approver::elicit`] answers, and the rules of the run's answer.
pub use spine_core::elicitation;
pub use spine_core::hooks::{Hook, HookContext, HookError, HookRegistryBuilder, async_hook_fn, hook_fn};
pub use spine_core::observer::{NullObserver, RunEvent, RunObserver};
pub use spine_core::permission::{Approval, ApprovalRequest, Approver, DenyApprover};
pub use spine_core::runner::{Agent, AgentConfig, RunOutcome, RunRequest};
pub use spine_core::session::Transcript;
pub use spine_core::tool::{Projection, Tool, ToolContext};
pub use spine_core::trace::{Trace, TraceSink};
pub use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
pub use spine_protocol::permission::PermissionMode;
pub use spine_protocol::run::RunSubtype;
pub use spine_settings::Settings;

/// Hook events, their inputs and typed actions, and the hook traits.
pub mod hooks {
    pub use spine_core::hooks::{
        FailurePolicy, Hook, HookContext, HookError, HookSpec, Late, Started, Wake, async_hook_fn, hook_fn,
    };
    pub use spine_protocol::hook::*;
    pub use spine_protocol::permission::PermissionSuggestion;
}

/// Tools: the trait a custom tool implements, and the types it uses.
pub mod tools {
    pub use spine_core::tool::{ChildEnv, Projection, Tool, ToolContext};
    pub use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
}

/// Models: build a client from a spec (`openai:MODEL`, `anthropic:MODEL`,
/// `openai-responses:MODEL`, `scripted:FILE`, `claude-*`, `gpt-*`, `sonnet`…), or implement
/// [`ModelClient`](models::ModelClient) yourself.
pub mod models {
    pub use spine_core::model::{ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink};

    /// The client of `spec`, with the providers' environment variables (`OPENAI_BASE_URL`,
    /// `OPENAI_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`…) and no settings.
    pub fn from_spec(spec: &str) -> Result<std::sync::Arc<dyn ModelClient>, crate::BuildError> {
        spine_agent::build_model(Some(spec), &spine_settings::Settings::default()).map_err(crate::BuildError::from)
    }
}

/// Why an agent could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The model, a rule, the settings' hooks or the tools are invalid.
    #[error(transparent)]
    Assembly(#[from] spine_agent::AssemblyError),
    /// No spine home: `SPINE_HOME` unset and `HOME` unset, empty or relative (give one with
    /// [`AgentBuilder::spine_home`]).
    #[error("{0} (or call AgentBuilder::spine_home)")]
    NoSpineHome(#[from] spine_protocol::home::NoSpineHome),
    /// A hook matcher does not parse.
    #[error("hook matcher `{matcher}`: {reason}")]
    Matcher {
        /// The matcher as given.
        matcher: String,
        /// Why it does not parse.
        reason: String,
    },
}

/// Builds an [`Agent`] for a project directory: the built-in tools (Read, Write, Edit, Glob,
/// Grep, Bash, WebFetch, WebSearch, command runs and processes) plus yours, your hooks, your
/// rules. Nothing is read from settings files unless [`AgentBuilder::settings`] gives them.
pub struct AgentBuilder {
    project: PathBuf,
    spine_home: Option<PathBuf>,
    model: spine_agent::ModelChoice,
    hooks: HookRegistryBuilder,
    matcher_error: Option<BuildError>,
    tools: Vec<Arc<dyn Tool>>,
    allow: Vec<String>,
    deny: Vec<String>,
    permission_mode: Option<PermissionMode>,
    max_turns: Option<u32>,
    system_prompt: Option<String>,
    append_system_prompt: Option<String>,
    approver: Arc<dyn Approver>,
    settings: Settings,
}

impl AgentBuilder {
    /// A builder for an agent working in `project` (its workspace root and working directory).
    pub fn new(project: impl Into<PathBuf>) -> Self {
        AgentBuilder {
            project: project.into(),
            spine_home: None,
            model: spine_agent::ModelChoice::Configured,
            hooks: HookRegistryBuilder::new(),
            matcher_error: None,
            tools: Vec::new(),
            allow: Vec::new(),
            deny: Vec::new(),
            permission_mode: None,
            max_turns: None,
            system_prompt: None,
            append_system_prompt: None,
            approver: Arc::new(DenyApprover),
            settings: Settings::default(),
        }
    }

    /// The model, as a spec (see [`models::from_spec`]).
    pub fn model(mut self, spec: impl Into<String>) -> Self {
        self.model = spine_agent::ModelChoice::Spec(spec.into());
        self
    }

    /// The model, as a client you built.
    pub fn model_client(mut self, client: Arc<dyn spine_core::model::ModelClient>) -> Self {
        self.model = spine_agent::ModelChoice::Client(client);
        self
    }

    /// A hook for every firing of event `E`.
    pub fn on<E: spine_protocol::hook::HookEvent>(mut self, id: impl Into<String>, hook: impl Hook<E>) -> Self {
        self.hooks.on::<E>(id, hook);
        self
    }

    /// A hook for the firings of `E` whose subject (the tool name, for tool events) the
    /// matcher accepts, in settings syntax (`Bash`, `Edit|Write`, `mcp__.*`).
    pub fn on_matching<E: spine_protocol::hook::HookEvent>(
        mut self,
        matcher: &str,
        id: impl Into<String>,
        hook: impl Hook<E>,
    ) -> Self {
        if let Err(e) = self.hooks.on_matching::<E>(matcher, id, hook) {
            self.matcher_error
                .get_or_insert(BuildError::Matcher { matcher: matcher.to_owned(), reason: e.to_string() });
        }
        self
    }

    /// Gives the builder's hook registry to `f`, for hooks with full metadata (`add` with a
    /// `HookSpec`: failure policy, `if` rule, background).
    pub fn hooks(mut self, f: impl FnOnce(&mut HookRegistryBuilder)) -> Self {
        f(&mut self.hooks);
        self
    }

    /// A tool of yours, beside the built-in ones.
    pub fn tool(mut self, tool: impl Tool + 'static) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// An allow rule, in Claude Code's syntax (`Bash(npm test:*)`, `Edit(./src/**)`).
    pub fn allow(mut self, rule: impl Into<String>) -> Self {
        self.allow.push(rule.into());
        self
    }

    /// A deny rule; it wins over every allow rule and hook.
    pub fn deny(mut self, rule: impl Into<String>) -> Self {
        self.deny.push(rule.into());
        self
    }

    /// The permission mode (default: `default`, where what no rule allows is asked).
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.permission_mode = Some(mode);
        self
    }

    /// Who answers `ask` (default: nobody — an `ask` is a deny).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Model requests per run before it ends with `error_max_turns` (default 20).
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = Some(turns);
        self
    }

    /// Replaces the built-in agent prompt (the first layer of the system prompt).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Appended to the agent prompt layer, after a blank line.
    pub fn append_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.append_system_prompt = Some(prompt.into());
        self
    }

    /// Settings (read with `spine_settings::Settings::discover`, or built): their model,
    /// rules, hooks (after yours), limits and options apply.
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    /// Where user-wide skills live (default: `$SPINE_HOME`, else `~/.spine`; without either,
    /// `build` fails with [`BuildError::NoSpineHome`]).
    pub fn spine_home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spine_home = Some(dir.into());
        self
    }

    /// Builds the agent.
    pub fn build(self) -> Result<Built, BuildError> {
        if let Some(error) = self.matcher_error {
            return Err(error);
        }
        let spine_home = match self.spine_home {
            Some(dir) => dir,
            None => spine_protocol::home::require_spine_home()?,
        };
        // One assembly: the model, the tools, then the hooks — these Rust hooks first, the
        // settings' after them — and the rules, with nothing replaced afterwards.
        let options = spine_agent::AgentOptions {
            project: self.project,
            spine_home,
            model: self.model,
            hooks: self.hooks,
            permission_mode: self.permission_mode,
            max_turns: self.max_turns,
            allowed_tools: Vec::new(),
            command_line: spine_agent::CommandLine {
                allow: self.allow,
                deny: self.deny,
                system_prompt: self.system_prompt,
                append_system_prompt: self.append_system_prompt,
                ..spine_agent::CommandLine::default()
            },
            approver: self.approver,
            allow_defer: false,
            conversation_id: None,
            tools: spine_agent::Tools::Fresh(self.tools),
            sandbox: None,
            sdk_hooks: None,
            choices: Default::default(),
        };
        let assembled = spine_agent::assemble(&self.settings, options)?;
        Ok(Built { agent: assembled.agent, tools: assembled.tools })
    }
}

/// A built agent, with the command runs and processes its tools may start.
pub struct Built {
    /// The agent: [`Agent::run`] as many times as you like (concurrently, too).
    pub agent: Agent,
    tools: spine_agent::ToolSet,
}

impl Built {
    /// Ends everything the agent's tools started (background processes, command runs).
    pub async fn shutdown(self) {
        drop(self.agent);
        self.tools.families.shutdown().await;
    }
}
