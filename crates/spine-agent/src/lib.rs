//! Assembles a ready-to-run [`Agent`] from merged settings and the caller's options — the
//! model, the tools, the hooks from settings, the permission policy, skills, compaction and
//! limits — so that `spine run` and the worker's `agent_run` build agents the same way.
//!
//! Assembly happens once ([`assemble`]): the caller gives the model as a [`ModelChoice`] (from
//! the settings, a spec, a client, or none for single tool calls) and its code hooks in a
//! [`HookRegistryBuilder`]; the settings' hooks are registered after them, then the SDK host's
//! callbacks ([`SdkHooks`]). Nothing is patched afterwards.
//!
//! Every configuration problem is found here, before anything runs, and reported as an
//! [`AssemblyError`] that names the file and field when there is one and keeps the underlying
//! error as its source.
//!
//! One module per part: [`model`] (the model client and its timeouts), [`tools`] (the tool
//! registry and which tools the model sees), [`agents`] (the agent types `Agent` may start), [`agent_flags`] (`--agents`, `--agent`), [`agent_plugins`] (the plugins' agents), [`agent_scope`] (a definition's hooks, skills and MCP servers), [`agent_mcp`] (a definition's inline MCP servers, started per subagent), [`policy`] (permission rules, hooks, skill roots), [`skills`] (Claude Code's and Codex's skill roots, the plugins' skills, the models skills ask for), [`output_styles`] (the prompt's output style),
//! [`roots`] (the workspace roots: the project and the added directories), [`run_defaults`]
//! (compaction and token counting, read once from the settings), [`sandbox`] (the session's
//! command sandbox: policy, probe, the confinement of the tools' child environment and the
//! permission step's sandbox rules), [`verifier`] (the
//! read-only agents of `agent` hooks), [`mcp`] (the configured MCP servers and their
//! connection) and [`watch`] (the settings files and skills directories ConfigChange watches). Their functions are
//! re-exported here.

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod agent_def;
pub mod agent_flags;
pub mod agent_mcp;
pub mod agent_plugins;
pub mod agent_scope;
pub mod agents;
mod choices;
mod error;
/// What a front end needs of the model clients beyond assembly: the price table and model
/// specs (`--resume` checks a session's model is one `--model` accepts). The binary reaches
/// the providers only through this crate.
pub mod models {
    pub use spine_models::pricing;
    pub use spine_models::spec::ModelSpec;
}
pub mod mcp;
pub mod model;
pub mod output_styles;
pub mod policy;
pub mod roots;
pub mod run_defaults;
pub mod sandbox;
pub mod skills;
#[cfg(test)]
mod tests;
pub mod tools;
pub mod verifier;
pub mod watch;

use std::path::PathBuf;
use std::sync::Arc;

use spine_core::hooks::HookRegistryBuilder;
use spine_core::memory_files::MemorySources;
use spine_core::model::ModelClient;
use spine_core::permission::{Approver, PermissionPolicy, PermissionRules};
use spine_core::registry::ToolRegistry;
use spine_core::runner::{Agent, AgentConfig};
use spine_core::tool::Tool;
use spine_protocol::permission::PermissionMode;
use spine_settings::Settings;

pub use choices::SessionChoices;
pub use error::AssemblyError;
pub use mcp::{
    ConfiguredMcpServer, McpConnection, McpSelection, configured_mcp_servers, connect_mcp, connect_mcp_sandboxed,
    connect_mcp_selected, mcp_options, selected_mcp_servers, untrusted_notice, withheld_plugins, withheld_plugins_text,
};
pub use model::{MAX_OUTPUT_TOKENS_VAR, build_model, client_options, model_choice, model_timeouts};
pub use policy::{PromptModels, SdkHooks, child_env, skill_roots};
pub use roots::{WorkspaceRoot, workspace_roots};
pub use run_defaults::RunDefaults;
pub use spine_hooks::mcp_tool::HookTools;
pub use spine_tools::mcp::{McpServerStatus, SdkMcpHost};
/// What a front end needs of the tools beyond assembly: the family handles to shut down, the
/// connected MCP servers, image files for a prompt, and the built-in registry (`spine hooks
/// test`). The binary reaches tools only through this crate.
pub use spine_tools::{FamilyHandles, image, mcp::McpTools, register_builtins};
pub use tools::{build_tool_set, build_tools, visibility, web_options};

/// What the caller decides beyond the settings.
pub struct AgentOptions {
    /// The project directory: workspace root and working directory.
    pub project: PathBuf,
    /// `SPINE_HOME` (user-wide skills live under it).
    pub spine_home: PathBuf,
    /// The model: from the settings, a spec overriding them (`--model`), a client, or none.
    pub model: ModelChoice,
    /// Hooks registered in code (the library's typed hooks); the settings' hooks are added
    /// after them, so code hooks run first. `HookRegistryBuilder::new()` for none.
    pub hooks: HookRegistryBuilder,
    /// A permission mode overriding settings (`--permission-mode`).
    pub permission_mode: Option<PermissionMode>,
    /// A turn limit overriding settings (`--max-turns`).
    pub max_turns: Option<u32>,
    /// Tools visible to the model (empty: all): `--tools`.
    pub allowed_tools: Vec<String>,
    /// What the command line adds to the settings: permission rules and the agent prompt.
    pub command_line: CommandLine,
    /// Who answers `ask`.
    pub approver: Arc<dyn Approver>,
    /// Whether a PreToolUse `defer` may end the run.
    pub allow_defer: bool,
    /// The conversation (for its summary file).
    pub conversation_id: Option<String>,
    /// The tools: a set built once and shared (a worker's), or `Fresh` with extra tools (MCP
    /// servers connected with [`connect_mcp`]) to build a set for this agent alone.
    pub tools: Tools,
    /// The session's command sandbox ([`sandbox::SessionSandbox::start`]): the agent's tools
    /// get its confinement, its permission step its rules; hooks stay outside. `None`: no
    /// sandbox.
    pub sandbox: Option<Arc<sandbox::SessionSandbox>>,
    /// The SDK host's hook callbacks (stream-json input), registered after the settings' hooks.
    pub sdk_hooks: Option<SdkHooks>,
    /// What the session's flags choose beyond the settings (reasoning, fallback models, budget,
    /// structured output), applied last.
    pub choices: SessionChoices,
}

/// Where an agent's model comes from.
#[derive(Clone, Default)]
pub enum ModelChoice {
    /// `ANTHROPIC_MODEL`, else the settings' `model`, else the provider whose key is set
    /// ([`build_model`]).
    #[default]
    Configured,
    /// A spec overriding the settings (`--model`, a worker task's model), built with the
    /// settings' client options.
    Spec(String),
    /// A client the caller built.
    Client(Arc<dyn ModelClient>),
    /// No model: the agent answers single tool calls only (`Agent::run_tool_call`: the
    /// worker's deterministic assignments, `spine hooks check`).
    ToolCallsOnly,
}

impl ModelChoice {
    /// The client of this choice (`settings` gives the spec and client options when needed),
    /// and whether the caller chose it (so an `--agent` definition's own model does not
    /// replace it).
    fn resolve(self, settings: &Settings) -> Result<(Arc<dyn ModelClient>, bool), AssemblyError> {
        Ok(match self {
            ModelChoice::Configured => (build_model(None, settings)?, false),
            ModelChoice::Spec(spec) => (build_model(Some(&spec), settings)?, true),
            ModelChoice::Client(client) => (client, true),
            ModelChoice::ToolCallsOnly => (Arc::new(spine_core::model::NoModel), false),
        })
    }
}

/// What the command line adds to the settings, as Claude Code's flags do. The worker passes
/// the default (nothing added).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// `--allowedTools` permission rules, added to the settings' `permissions.allow` (none
    /// apply when managed settings set `allowManagedPermissionRulesOnly`).
    pub allow: Vec<String>,
    /// `--disallowedTools` permission rules, added to the settings' `permissions.deny`.
    pub deny: Vec<String>,
    /// `--system-prompt`: replaces the built-in agent prompt layer.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`: appended to the agent prompt layer (after a blank line).
    pub append_system_prompt: Option<String>,
    /// `--add-dir`: workspace roots added after the settings' `additionalDirectories`.
    pub add_dirs: Vec<spine_settings::AddedDirectory>,
    /// `--agents`: agent types (JSON) defined for the session, before the files'.
    pub agents: Option<String>,
    /// `--agent`: the agent type the main session runs as.
    pub agent: Option<String>,
    /// `--tool-set`: the tools the run has, over the settings' `tool_set` (a set built
    /// earlier, [`Tools::Shared`], keeps its own).
    pub tool_set: Option<spine_core::tool_set::ToolSetName>,
}

/// Where an agent's tools come from.
pub enum Tools {
    /// Build a set for this agent: built-ins, families, then these extra tools.
    Fresh(Vec<Arc<dyn Tool>>),
    /// Use a set built earlier (its command runs and processes are shared with its other users).
    Shared(ToolSet),
}

/// A frozen tool registry and the registries of its families.
#[derive(Clone)]
pub struct ToolSet {
    /// The frozen registry, shared by every agent built on this set.
    pub registry: Arc<ToolRegistry>,
    /// The command runs and processes behind the family tools; everything they started is
    /// killed when the last handle goes, or by [`FamilyHandles::shutdown`].
    pub families: FamilyHandles,
}

/// An assembled agent and what the caller should show the user.
pub struct Assembled {
    /// The agent, ready to run.
    pub agent: Agent,
    /// Warnings (hooks spine does not run, disabled hooks…), for stderr.
    pub warnings: Vec<String>,
    /// The agent's tools (shut the families down at the end of the run).
    pub tools: ToolSet,
}

/// Builds an agent, once: its model, tools, hooks (the caller's code hooks, then the
/// settings', then the SDK host's), rules, mode, subagents, skills, child environment, run
/// defaults and the session's flag choices. Nothing is patched afterwards.
pub fn assemble(settings: &Settings, options: AgentOptions) -> Result<Assembled, AssemblyError> {
    let (model, model_chosen) = options.model.resolve(settings)?;
    let home = spine_protocol::home::user_home();
    let tool_set = match options.tools {
        Tools::Fresh(extra) => {
            let set = options.command_line.tool_set.or(settings.tool_set).unwrap_or_default();
            build_tool_set(settings, &extra, set)
        }
        Tools::Shared(set) => Ok(set),
    };
    let agent_files = agents::AgentFiles::read(settings, &options.project, &options.spine_home, home.as_deref());
    let tool_set = tool_set?;
    let visibility = visibility(&options.allowed_tools, &tool_set.registry)?;
    let mode = options.permission_mode.or(settings.permissions.default_mode).unwrap_or_default();
    if mode == PermissionMode::BypassPermissions
        && let Some(origin) = &settings.permissions.bypass_disabled_by
    {
        return Err(AssemblyError::BypassDisabled { origin: origin.to_string() });
    }
    let mut rules = PermissionRules {
        allow: policy::parse_rules(&settings.permissions.allow)?,
        ask: policy::parse_rules(&settings.permissions.ask)?,
        deny: policy::parse_rules(&settings.permissions.deny)?,
    };
    let (flag_allow, managed_rules_notice) = policy::flag_allow_rules(settings, &options.command_line.allow);
    rules.allow.extend(policy::parse_flag_rules(flag_allow, "--allowedTools")?);
    rules.deny.extend(policy::parse_flag_rules(&options.command_line.deny, "--disallowedTools")?);
    let workspace = Arc::new(roots::workspace(settings, &options.command_line, &options.project)?);
    let hook_tools = HookTools { registry: Arc::clone(&tool_set.registry), workspace: Arc::clone(&workspace) };
    let (sdk_hooks, callbacks) = options.sdk_hooks.map(|sdk| (sdk.config, sdk.callbacks)).unzip();
    let hook_options = policy::hook_options(settings, Arc::clone(&model), Some(hook_tools), callbacks);
    let mut hooks = options.hooks;
    let hook_warnings = policy::register_hooks(settings, &hook_options, &mut hooks, sdk_hooks)?;
    let hooks = hooks.build();
    // Values the settings hold that spine does not implement (`defaultMode`), the rules managed
    // settings keep from applying, then the hooks'.
    let mut warnings: Vec<String> =
        settings.warnings.iter().cloned().chain(managed_rules_notice).chain(hook_warnings).collect();
    let mut config = AgentConfig::new(workspace);
    config.max_turns = options.max_turns.or(settings.max_turns).unwrap_or(20);
    config.max_forced_continuations = settings.max_forced_continuations.unwrap_or(1);
    config.turn.model_context.likely_model = Some(model.model().to_owned());
    config.turn.conversation_id = options.conversation_id;
    config.turn.agent_prompt = agent_prompt(&options.command_line);
    config.turn.allowed_tool_names = visibility.names().to_vec();
    config.visibility = visibility;
    config.skill_roots = skill_roots(settings, &options.spine_home, &options.project);
    warnings.extend(skills::configure(&mut config, settings, &options.project, model.as_ref()));
    let defaults = RunDefaults::of(settings);
    config.compaction_threshold = defaults.compaction_threshold;
    config.compaction_strategy = defaults.compaction_strategy;
    config.estimator = defaults.estimator();
    config.allow_defer = options.allow_defer;
    config.operator_state = Some(tool_set.families.operator_state());
    config.effort = settings.model_options.reasoning_effort;
    // The tools' commands run in the session's sandbox; hooks keep the unconfined environment.
    config.child_env = match &options.sandbox {
        Some(sandbox) => sandbox.confine(hook_options.child_env.clone()),
        None => hook_options.child_env.clone(),
    };
    let (skill_roots, plugin_skills) = (config.skill_roots.clone(), config.plugin_skills.clone());
    let memo = Arc::clone(&config.parse_memo);
    let scope = agent_scope::Scope {
        settings,
        project: &options.project,
        user_dirs: agents::user_agent_directories(&options.spine_home, home.as_deref()),
        tools: &tool_set.registry,
        skills: agent_scope::LazySkills::new(Box::new(move || {
            spine_core::skills::SkillCatalog::scan_all(&skill_roots, &plugin_skills, &memo).0
        })),
        hooks: &hook_options,
        main_agent: options.command_line.agent.as_deref(),
        mcp_sandboxed_env: options.sandbox.as_ref().and_then(|s| s.mcp_env(&hook_options.child_env)),
    };
    let agent_types = agents::subagents(settings, options.command_line.agents.as_deref(), agent_files, &scope)?;
    drop(scope);
    let subagents = agent_types.subagents;
    warnings.extend(agent_types.warnings);
    // `--agent`: its own hooks after the session's (its subagents get the session's alone).
    let hooks = Arc::new(hooks);
    let hooks = match &agent_types.main_hooks {
        Some(own) => Arc::new(spine_core::hooks::HookRegistry::scoped(&hooks, own)),
        None => hooks,
    };
    let main = agent_flags::MainSession { model, mode, model_chosen };
    let main =
        agent_flags::run_as(options.command_line.agent.as_deref(), &subagents, &tool_set.registry, &mut config, main)?;
    config.subagents = Some(Arc::new(subagents));
    config.memory_files = MemorySources::Load { home };
    // What PermissionRequest hooks' `updatedPermissions` may change, and where they are saved.
    let limits = policy::update_limits(settings, flag_allow.len(), options.command_line.deny.len());
    config.permission_store = Some(Arc::new(spine_settings::SettingsStore::new(
        options.project.clone(),
        options.spine_home.clone(),
        limits.managed_rules_only.clone(),
    )));
    let agent = Agent {
        model: main.model,
        tools: Arc::clone(&tool_set.registry),
        hooks,
        policy: with_sandbox_rules(
            PermissionPolicy::new(rules, main.mode, options.project)
                .with_limits(limits)
                .with_trusted_project(settings.trust.is_trusted()),
            options.sandbox.as_deref(),
        ),
        approver: options.approver,
        config,
    };
    let agent = options.choices.apply(agent, settings)?;
    Ok(Assembled { agent, warnings, tools: tool_set })
}

/// `policy` with the session's sandbox rules, when its commands run in a sandbox.
fn with_sandbox_rules(policy: PermissionPolicy, sandbox: Option<&sandbox::SessionSandbox>) -> PermissionPolicy {
    match sandbox.and_then(sandbox::SessionSandbox::rules) {
        Some(rules) => policy.with_sandbox(rules.clone()),
        None => policy,
    }
}

/// The agent prompt layer: `--system-prompt` (else the built-in prompt, left to the turn when
/// nothing is appended), with `--append-system-prompt` after a blank line.
fn agent_prompt(command_line: &CommandLine) -> Option<String> {
    match (&command_line.system_prompt, &command_line.append_system_prompt) {
        (base, None) => base.clone(),
        (base, Some(extra)) => {
            let base = base.as_deref().unwrap_or(spine_core::stages::prepare_turn::DEFAULT_AGENT_PROMPT);
            Some(format!("{base}\n\n{extra}"))
        }
    }
}

/// A problem [`validate`] found: the source and JSON path when it has one, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The settings source (file or `--settings #n`), when known.
    pub origin: Option<String>,
    /// The JSON path in it (`permissions.allow[2]`), when known.
    pub path: Option<String>,
    /// Why, in one line.
    pub message: String,
}

/// Validates settings exactly as a run does, without starting anything: every permission
/// rule is parsed (each bad one reported), then, when they all parse, the agent is assembled
/// without a model (tools, hooks with their `if` rules, workspace) and
/// `.mcp.json` is read. `spine hooks check` uses this, so it passes exactly what `run` accepts.
pub fn validate(settings: &Settings, project: &std::path::Path, spine_home: &std::path::Path) -> Vec<Invalid> {
    let mut out = Vec::new();
    let perms = &settings.permissions;
    for entry in perms.allow.iter().chain(&perms.ask).chain(&perms.deny) {
        if let Err(e) = spine_core::permission::PermissionRule::parse(&entry.rule) {
            out.push(Invalid {
                origin: Some(entry.origin.to_string()),
                path: Some(entry.path.clone()),
                message: e.to_string(),
            });
        }
    }
    if !out.is_empty() {
        return out;
    }
    let options = AgentOptions {
        project: project.to_path_buf(),
        spine_home: spine_home.to_path_buf(),
        model: ModelChoice::ToolCallsOnly,
        hooks: HookRegistryBuilder::new(),
        permission_mode: None,
        max_turns: None,
        allowed_tools: Vec::new(),
        approver: Arc::new(spine_core::permission::DenyApprover),
        allow_defer: false,
        conversation_id: None,
        tools: Tools::Fresh(Vec::new()),
        command_line: CommandLine::default(),
        sandbox: None,
        sdk_hooks: None,
        choices: SessionChoices::default(),
    };
    // Assembled and dropped: nothing was started, and dropping the families ends them.
    if let Err(e) = assemble(settings, options) {
        out.push(Invalid { origin: None, path: None, message: e.to_string() });
    }
    if let Err(e) = configured_mcp_servers(settings, project) {
        out.push(Invalid { origin: None, path: None, message: e.to_string() });
    }
    out
}
