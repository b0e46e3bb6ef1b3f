//! Assembles a ready-to-run [`Agent`] from merged settings and the caller's options — the
//! model, the tools, the hooks from settings, the permission policy, skills, compaction and
//! limits — so that `spine run` and the worker's `agent_run` build agents the same way.
//!
//! Every configuration problem is found here, before anything runs, and reported as an
//! [`AssemblyError`] that names the file and field when there is one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use spine_core::hooks::{HookRegistry, HookRegistryBuilder};
use spine_core::model::ModelClient;
use spine_core::permission::{Approver, PermissionPolicy, PermissionRule, PermissionRules};
use spine_core::registry::{ToolRegistry, ToolRegistryBuilder};
use spine_core::runner::{Agent, AgentConfig};
use spine_core::skills::{SkillRoot, SkillRootKind};
use spine_core::stages::review_tool_call::Visibility;
use spine_core::tokens::WordsEstimator;
use spine_core::tool::Tool;
use spine_core::workspace::Workspace;
use spine_hooks::HookConfig;
use spine_models::http::Timeouts;
use spine_models::spec::ModelSpec;
use spine_protocol::permission::PermissionMode;
use spine_settings::trust::{McpApproval, Scope, Skipped, SkippedItem};
use spine_settings::{RuleEntry, Settings};
use spine_tools::mcp::{McpIssue, McpOptions, McpTools};
use spine_tools::web::{PrivateNetworks, WebOptions};
use spine_tools::{FamilyConfig, FamilyHandles};
use thiserror::Error;

/// A configuration problem found while assembling an agent.
#[derive(Debug, Error)]
pub enum AssemblyError {
    /// No model was given and none can be chosen from the environment.
    #[error(
        "no model configured: pass --model scripted:FILE | openai:MODEL | anthropic:MODEL, \
         set `model` in a settings file, or set ANTHROPIC_API_KEY or OPENAI_API_KEY"
    )]
    NoModel,
    /// The model spec or its client is invalid.
    #[error("{0}")]
    Model(String),
    /// A permission rule does not parse (names its file and JSON path).
    #[error("{0}")]
    Rule(String),
    /// The hooks of the settings are invalid (names the file and JSON path).
    #[error("{0}")]
    Hooks(String),
    /// The tool registry could not be built.
    #[error("tool registry: {0}")]
    Tools(String),
    /// `allowed tools` names a tool that does not exist.
    #[error("unknown tool `{name}` in the allowed tools (known: {known})")]
    UnknownTool {
        /// The unknown name.
        name: String,
        /// The registered names.
        known: String,
    },
    /// `.mcp.json` could not be read.
    #[error("{0}")]
    Mcp(String),
    /// The workspace directory is unusable.
    #[error("workspace {path}: {reason}")]
    Workspace {
        /// The directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// What the caller decides beyond the settings.
pub struct AgentOptions {
    /// The project directory: workspace root and working directory.
    pub project: PathBuf,
    /// `SPINE_HOME` (user-wide skills live under it).
    pub spine_home: PathBuf,
    /// A model spec overriding settings (`--model`).
    pub model: Option<String>,
    /// A permission mode overriding settings (`--permission-mode`).
    pub permission_mode: Option<PermissionMode>,
    /// A turn limit overriding settings (`--max-turns`).
    pub max_turns: Option<u32>,
    /// Tools visible to the model (empty: all).
    pub allowed_tools: Vec<String>,
    /// Who answers `ask`.
    pub approver: Arc<dyn Approver>,
    /// Whether a PreToolUse `defer` may end the run.
    pub allow_defer: bool,
    /// The conversation (for its summary file).
    pub conversation_id: Option<String>,
    /// The tools: a set built once and shared (a worker's), or `Fresh` with extra tools (MCP
    /// servers connected with [`connect_mcp`]) to build a set for this agent alone.
    pub tools: Tools,
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
    /// The tools.
    pub registry: Arc<ToolRegistry>,
    /// The command runs and processes behind the family tools; everything they started is
    /// killed when the last handle goes, or by [`FamilyHandles::shutdown`].
    pub families: FamilyHandles,
}

/// An assembled agent and what the caller should show the user.
pub struct Assembled {
    /// The agent.
    pub agent: Agent,
    /// Warnings (hooks spine does not run, disabled hooks…), for stderr.
    pub warnings: Vec<String>,
    /// The agent's tools (shut the families down at the end of the run).
    pub tools: ToolSet,
}

/// Builds an agent.
pub fn assemble(settings: &Settings, options: AgentOptions) -> Result<Assembled, AssemblyError> {
    apply_env_passthrough(settings);
    let model = build_model(options.model.as_deref(), settings)?;
    assemble_with(settings, options, model)
}

/// Builds an agent with no model, for single tool calls (`Agent::run_tool_call`): the same
/// tools, hooks, rules and mode as [`assemble`]; `options.model` is ignored.
pub fn assemble_for_calls(settings: &Settings, options: AgentOptions) -> Result<Assembled, AssemblyError> {
    assemble_with(settings, options, Arc::new(spine_core::model::NoModel))
}

fn assemble_with(
    settings: &Settings,
    options: AgentOptions,
    model: Arc<dyn ModelClient>,
) -> Result<Assembled, AssemblyError> {
    let tool_set = match options.tools {
        Tools::Fresh(extra) => build_tools(settings, &extra)?,
        Tools::Shared(set) => set,
    };
    let visibility = visibility(&options.allowed_tools, &tool_set.registry)?;
    let mode = options.permission_mode.or(settings.permissions.default_mode).unwrap_or_default();
    let rules = PermissionRules {
        allow: parse_rules(&settings.permissions.allow)?,
        ask: parse_rules(&settings.permissions.ask)?,
        deny: parse_rules(&settings.permissions.deny)?,
    };
    let (hooks, warnings) = build_hooks(settings)?;
    let workspace = Workspace::new(&options.project)
        .map_err(|e| AssemblyError::Workspace { path: options.project.clone(), reason: e.to_string() })?;
    let mut config = AgentConfig::new(Arc::new(workspace));
    config.max_turns = options.max_turns.or(settings.max_turns).unwrap_or(20);
    config.max_forced_continuations = settings.max_forced_continuations.unwrap_or(1);
    config.turn.model_context.likely_model = Some(model.model().to_owned());
    config.turn.conversation_id = options.conversation_id;
    config.turn.allowed_tool_names = visibility.names().to_vec();
    config.visibility = visibility;
    config.skill_roots = skill_roots(settings, &options.spine_home, &options.project);
    config.compaction_threshold = settings.compaction_threshold_tokens;
    config.compaction_strategy = settings.compaction_strategy.unwrap_or_default();
    if settings.token_estimator.as_deref() == Some("words") {
        config.estimator = Some(Arc::new(WordsEstimator));
    }
    config.allow_defer = options.allow_defer;
    config.operator_state = Some(tool_set.families.operator_state());
    let agent = Agent {
        model,
        tools: Arc::clone(&tool_set.registry),
        hooks: Arc::new(hooks),
        policy: PermissionPolicy::new(rules, mode, options.project),
        approver: options.approver,
        config,
    };
    Ok(Assembled { agent, warnings, tools: tool_set })
}

/// Makes the settings' `env_passthrough` the process's: the provider keys that tools, hooks
/// and MCP servers inherit after all (every other provider key is removed from children by
/// `spine_process::secrets`). Called by [`assemble`] and [`connect_mcp`].
pub fn apply_env_passthrough(settings: &Settings) {
    spine_process::secrets::set_passthrough(settings.env_passthrough.iter().cloned());
}

/// The model: `--model`, else settings `model`, else the provider whose API key is set, with
/// the timeouts of settings `model_options.timeouts`. An error names where the spec came from:
/// `--model`, or the settings file and its `model` key.
pub fn build_model(flag: Option<&str>, settings: &Settings) -> Result<Arc<dyn ModelClient>, AssemblyError> {
    let (spec, from) = match (flag, settings.model.as_deref()) {
        (Some(text), _) => (parse_spec(text, "--model")?, "--model".to_owned()),
        (None, Some(text)) => {
            let from = match settings.last("model") {
                Some((origin, _)) => format!("{origin}: model"),
                None => "settings: model".to_owned(),
            };
            (parse_spec(text, &from)?, from)
        }
        (None, None) => (spine_models::default_spec_from_env().ok_or(AssemblyError::NoModel)?, String::new()),
    };
    let options = spine_models::ClientOptions { timeouts: model_timeouts(settings) };
    spine_models::client_with(&spec, &options).map_err(|e| match from.as_str() {
        "" => AssemblyError::Model(e.to_string()),
        from => AssemblyError::Model(format!("{from}: {e}")),
    })
}

fn parse_spec(text: &str, from: &str) -> Result<ModelSpec, AssemblyError> {
    text.parse().map_err(|e| AssemblyError::Model(format!("{from}: {e}")))
}

/// The client timeouts: settings `model_options.timeouts` over the defaults.
pub fn model_timeouts(settings: &Settings) -> Timeouts {
    let set = settings.model_timeouts;
    let default = Timeouts::default();
    Timeouts {
        connect: set.connect.unwrap_or(default.connect),
        first_byte: set.first_byte.unwrap_or(default.first_byte),
        idle: set.idle.unwrap_or(default.idle),
        total: set.total.unwrap_or(default.total),
    }
}

/// The tools of a run: the built-ins, the tool families (command runs, processes, memory, web
/// with settings `web.search_url` and `web.allow_private_networks`), then `extra` (MCP tools).
pub fn build_tools(settings: &Settings, extra: &[Arc<dyn Tool>]) -> Result<ToolSet, AssemblyError> {
    let mut builder = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut builder);
    let families = spine_tools::register_families(
        &mut builder,
        FamilyConfig {
            search_url: settings.web_search_url.clone(),
            web: web_options(settings),
            ..FamilyConfig::default()
        },
    );
    for tool in extra {
        builder.register_arc(Arc::clone(tool));
    }
    let registry = Arc::new(builder.build().map_err(|e| AssemblyError::Tools(e.to_string()))?);
    Ok(ToolSet { registry, families })
}

/// The web tools' options from settings: `web.allow_private_networks` (default: refused).
pub fn web_options(settings: &Settings) -> WebOptions {
    let private_networks = match settings.web_allow_private_networks {
        Some(true) => PrivateNetworks::Allow,
        Some(false) | None => PrivateNetworks::Refuse,
    };
    WebOptions { private_networks, ..WebOptions::default() }
}

/// One configured MCP server: where it is written, whether it may start, its entry.
#[derive(Debug, Clone)]
pub struct ConfiguredMcpServer {
    /// The configured name.
    pub name: String,
    /// The file that configures it (absent for inline `--settings` JSON).
    pub file: Option<PathBuf>,
    /// Where, for people: `/p/.mcp.json mcpServers.fs`, `--settings #1 (inline JSON) mcpServers.fs`.
    pub source: String,
    /// Whether it may start, and why.
    pub approval: McpApproval,
    /// Whether it is the one that starts under its name (a later approved entry of the same
    /// name replaces it; a skipped one never does).
    pub effective: bool,
    /// The entry.
    pub config: Value,
}

/// Every MCP server a run could start, in precedence order: `.mcp.json` in the project, then
/// each settings source's `mcpServers` (including those withheld from an untrusted project),
/// each with its approval (see [`spine_settings::trust`]).
pub fn configured_mcp_servers(settings: &Settings, project: &Path) -> Result<Vec<ConfiguredMcpServer>, AssemblyError> {
    let mut entries = Vec::new();
    let mcp_json = project.join(spine_tools::mcp::MCP_JSON);
    if let Some(Value::Object(map)) =
        spine_tools::mcp::load_mcp_json(project).map_err(|e| AssemblyError::Mcp(e.to_string()))?
    {
        for (name, config) in map {
            entries.push(ConfiguredMcpServer {
                source: format!("{} mcpServers.{name}", mcp_json.display()),
                file: Some(mcp_json.clone()),
                approval: settings.mcp_approval(Scope::Project, &name),
                effective: false,
                name,
                config,
            });
        }
    }
    let kept = settings.all("mcpServers").map(|(origin, v)| (origin, v, false));
    let withheld = settings.withheld.iter().filter_map(|l| l.value.get("mcpServers").map(|v| (&l.origin, v, true)));
    for (origin, value, was_withheld) in kept.chain(withheld) {
        let Value::Object(map) = value else { continue };
        for (name, config) in map {
            entries.push(ConfiguredMcpServer {
                name: name.clone(),
                file: origin.path().map(Path::to_path_buf),
                source: format!("{origin} mcpServers.{name}"),
                approval: if was_withheld {
                    McpApproval::Untrusted
                } else {
                    settings.mcp_approval(origin.scope(), name)
                },
                effective: false,
                config: config.clone(),
            });
        }
    }
    let mut winner: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        if e.approval.starts() {
            winner.insert(e.name.clone(), i);
        }
    }
    for (i, e) in entries.iter_mut().enumerate() {
        e.effective = winner.get(&e.name) == Some(&i);
    }
    Ok(entries)
}

/// The MCP options of a run: the project as the servers' directory, settings'
/// `mcp.startup_timeout_ms` as the default start-up limit.
pub fn mcp_options(settings: &Settings, project: &Path) -> McpOptions {
    let mut options = McpOptions::new(project);
    if let Some(ms) = settings.mcp_startup_timeout_ms {
        options.startup_timeout = std::time::Duration::from_millis(ms);
    }
    options
}

/// The MCP servers of a run, connected.
pub struct McpConnection {
    /// The connections and their tools; keep for the whole run, then `shutdown`.
    pub tools: McpTools,
    /// Servers that failed (bad entry, no start, over their start-up limit), for stderr.
    pub warnings: Vec<String>,
    /// The same problems, typed (server, tool, kind).
    pub issues: Vec<McpIssue>,
    /// Project servers of `.mcp.json` that were skipped because the project is untrusted
    /// (those of project settings files are in [`Settings::skipped`]).
    pub skipped: Vec<Skipped>,
}

/// Connects the approved MCP servers of a project (see [`configured_mcp_servers`]),
/// concurrently, each within its own start-up limit. Servers that fail are reported as
/// warnings and their tools are absent; the run goes on.
pub async fn connect_mcp(settings: &Settings, project: &Path) -> Result<McpConnection, AssemblyError> {
    apply_env_passthrough(settings);
    let configured = configured_mcp_servers(settings, project)?;
    let mut servers = Map::new();
    let mut skipped = Vec::new();
    let mcp_json = project.join(spine_tools::mcp::MCP_JSON);
    for server in configured {
        if server.effective {
            servers.insert(server.name, server.config);
        } else if server.approval == McpApproval::Untrusted && server.file.as_deref() == Some(mcp_json.as_path()) {
            skipped.push(Skipped { file: mcp_json.clone(), item: SkippedItem::McpServer(server.name) });
        }
    }
    if servers.is_empty() {
        return Ok(McpConnection { tools: McpTools::empty(), warnings: Vec::new(), issues: Vec::new(), skipped });
    }
    let (tools, issues) =
        spine_tools::mcp::connect_mcp_servers(&Value::Object(servers), &mcp_options(settings, project)).await;
    let warnings = issues.iter().map(|i| format!("MCP: {i}")).collect();
    Ok(McpConnection { tools, warnings, issues, skipped })
}

/// The one stderr line about what an untrusted project brought and spine skipped (settings
/// files and `.mcp.json`), or `None`.
pub fn untrusted_notice(settings: &Settings, project: &Path, mcp: &McpConnection) -> Option<String> {
    let all: Vec<Skipped> = settings.skipped.iter().chain(&mcp.skipped).cloned().collect();
    spine_settings::trust::untrusted_notice(project, &all)
}

/// The visible tools; every name must be registered.
pub fn visibility(names: &[String], tools: &ToolRegistry) -> Result<Visibility, AssemblyError> {
    let names: Vec<String> = names.iter().map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).collect();
    if names.is_empty() {
        return Ok(Visibility::All);
    }
    if let Some(name) = names.iter().find(|n| tools.lookup(n).is_none()) {
        let known: Vec<&str> = tools.names().collect();
        return Err(AssemblyError::UnknownTool { name: name.clone(), known: known.join(", ") });
    }
    Ok(Visibility::Only(names))
}

fn parse_rules(entries: &[RuleEntry]) -> Result<Vec<PermissionRule>, AssemblyError> {
    entries
        .iter()
        .map(|e| {
            PermissionRule::parse(&e.rule)
                .map_err(|err| AssemblyError::Rule(format!("{}: {}: {err}", e.origin, e.path)))
        })
        .collect()
}

/// The hooks of the settings, and the warnings about what will not run.
pub fn build_hooks(settings: &Settings) -> Result<(HookRegistry, Vec<String>), AssemblyError> {
    let hooks = HookConfig::from_settings(settings).map_err(|e| AssemblyError::Hooks(e.to_string()))?;
    let mut warnings: Vec<String> = hooks.warnings.iter().map(ToString::to_string).collect();
    if let Some(origin) = &hooks.disabled_by {
        warnings.push(format!("every hook is disabled by `disableAllHooks` in {origin}"));
    }
    let mut builder = HookRegistryBuilder::new();
    spine_hooks::register(&hooks, &mut builder, &spine_hooks::BuildOptions::default())
        .map_err(|e| AssemblyError::Hooks(e.to_string()))?;
    Ok((builder.build(), warnings))
}

/// `skills.roots` from settings, else `$SPINE_HOME/skills` (system) and `.spine/skills` (live).
pub fn skill_roots(settings: &Settings, spine_home: &Path, project: &Path) -> Vec<SkillRoot> {
    match &settings.skill_roots {
        Some(roots) => {
            roots.iter().map(|r| SkillRoot { path: Workspace::normalize(&r.path, project), kind: r.kind }).collect()
        }
        None => vec![
            SkillRoot { path: spine_home.join("skills"), kind: SkillRootKind::System },
            SkillRoot { path: project.join(".spine").join("skills"), kind: SkillRootKind::Live },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spine_core::permission::DenyApprover;

    fn options(dir: &Path) -> AgentOptions {
        AgentOptions {
            project: dir.to_path_buf(),
            spine_home: dir.join("home"),
            model: None,
            permission_mode: None,
            max_turns: None,
            allowed_tools: vec![],
            approver: Arc::new(DenyApprover),
            allow_defer: true,
            conversation_id: None,
            tools: Tools::Fresh(vec![]),
        }
    }

    fn settings(json: &str) -> Settings {
        let layer = spine_settings::SettingsLayer {
            origin: spine_settings::Origin::Cli { index: 1, path: None },
            value: serde_json::from_str(json).expect("json"),
        };
        Settings::from_layers(vec![layer]).expect("settings")
    }

    #[test]
    fn model_timeouts_come_from_settings_over_the_defaults() {
        let s = settings(r#"{"model_options": {"timeouts": {"first_byte_ms": 1500, "total_ms": 90000}}}"#);
        let t = model_timeouts(&s);
        assert_eq!(t.first_byte, std::time::Duration::from_millis(1500));
        assert_eq!(t.total, std::time::Duration::from_secs(90));
        assert_eq!((t.connect, t.idle), (Timeouts::default().connect, Timeouts::default().idle));
    }

    #[test]
    fn model_spec_errors_name_the_flag_or_the_settings_source_and_key() {
        let s = settings(r#"{"model": "gpt-4.1"}"#);
        let from_settings = build_model(None, &s).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(from_settings.starts_with("--settings #1 (inline JSON): model: invalid model spec"), "{from_settings}");
        let from_flag = build_model(Some("nope"), &s).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(from_flag.starts_with("--model: invalid model spec `nope`"), "{from_flag}");
    }

    #[test]
    fn settings_decide_model_limits_and_mode_unless_options_override() {
        let dir = tempfile::tempdir().expect("dir");
        let script = dir.path().join("s.json");
        std::fs::write(&script, r#"{"turns": [{"text": "x"}]}"#).expect("w");
        let s = settings(&format!(
            r#"{{"model": "scripted:{}", "maxTurns": 7, "permissions": {{"defaultMode": "plan"}}}}"#,
            script.display()
        ));
        let a = assemble(&s, options(dir.path())).expect("assembled");
        assert_eq!(a.agent.config.max_turns, 7);
        assert_eq!(a.agent.policy.mode(), PermissionMode::Plan);
        assert_eq!(a.agent.model.model(), "scripted");
        let mut o = options(dir.path());
        o.max_turns = Some(2);
        o.permission_mode = Some(PermissionMode::BypassPermissions);
        let a = assemble(&s, o).expect("assembled");
        assert_eq!((a.agent.config.max_turns, a.agent.policy.mode()), (2, PermissionMode::BypassPermissions));
    }

    #[test]
    fn private_networks_are_refused_unless_settings_allow_them() {
        assert_eq!(web_options(&settings("{}")).private_networks, PrivateNetworks::Refuse);
        let on = settings(r#"{"web": {"allow_private_networks": true}}"#);
        assert_eq!(web_options(&on).private_networks, PrivateNetworks::Allow);
        let off = settings(r#"{"web": {"allow_private_networks": false}}"#);
        assert_eq!(web_options(&off).private_networks, PrivateNetworks::Refuse);
    }

    #[test]
    fn bad_rules_unknown_tools_and_missing_models_are_errors_naming_what_is_wrong() {
        let dir = tempfile::tempdir().expect("dir");
        let s = settings(r#"{"model": "scripted:/nope.json"}"#);
        assert!(matches!(assemble(&s, options(dir.path())), Err(AssemblyError::Model(m)) if m.contains("/nope.json")));
        let script = dir.path().join("s.json");
        std::fs::write(&script, r#"{"turns": [{"text": "x"}]}"#).expect("w");
        let s =
            settings(&format!(r#"{{"model": "scripted:{}", "permissions": {{"ask": ["Bash(x"]}}}}"#, script.display()));
        let err = assemble(&s, options(dir.path())).err().expect("rule error");
        assert!(err.to_string().contains("permissions.ask[0]"), "{err}");
        let s = settings(&format!(r#"{{"model": "scripted:{}"}}"#, script.display()));
        let mut o = options(dir.path());
        o.allowed_tools = vec!["Nope".into()];
        assert!(matches!(assemble(&s, o), Err(AssemblyError::UnknownTool { name, .. }) if name == "Nope"));
    }

    #[test]
    fn configured_mcp_servers_carry_source_and_approval_and_a_skipped_entry_never_replaces_an_approved_one() {
        let dir = tempfile::tempdir().expect("dir");
        let (home, project) = (dir.path().join("home"), dir.path().join("project"));
        std::fs::create_dir_all(&home).expect("mkdir");
        std::fs::create_dir_all(project.join(".spine")).expect("mkdir");
        std::fs::write(
            project.join(".mcp.json"),
            r#"{"mcpServers": {"fs": {"command": "evil"}, "docs": {"command": "d"}, "ok": {"command": "o"}}}"#,
        )
        .expect("w");
        std::fs::write(
            home.join("settings.json"),
            r#"{"mcpServers": {"fs": {"command": "mine"}}, "enabledMcpjsonServers": ["ok"]}"#,
        )
        .expect("w");
        let s = Settings::discover(&home, &project, &[], spine_settings::ProjectTrust::Untrusted).expect("settings");
        let servers = configured_mcp_servers(&s, &project).expect("servers");
        let row = |name: &str, command: &str| {
            servers.iter().find(|c| c.name == name && c.config["command"] == command).expect("listed").clone()
        };
        assert_eq!(row("fs", "evil").approval, McpApproval::Untrusted);
        assert!(row("fs", "evil").source.ends_with(".mcp.json mcpServers.fs"));
        assert!(row("fs", "mine").effective, "the user's server keeps its name");
        assert_eq!(row("fs", "mine").approval, McpApproval::UserConfigured);
        assert!(!row("docs", "d").effective);
        assert!(matches!(row("ok", "o").approval, McpApproval::Enabled { .. }) && row("ok", "o").effective);
        let trusted = Settings::discover(&home, &project, &[], spine_settings::ProjectTrust::Flag).expect("settings");
        let servers = configured_mcp_servers(&trusted, &project).expect("servers");
        assert!(servers.iter().filter(|c| c.effective).count() == 3);
        let fs = servers.iter().find(|c| c.name == "fs" && c.effective).expect("fs");
        assert_eq!(fs.config["command"], "mine", "settings replace .mcp.json entries of the same name");
    }
}
