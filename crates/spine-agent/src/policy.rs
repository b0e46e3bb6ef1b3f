//! What governs a run besides its model and tools: the permission rules (with what managed
//! settings keep from applying), the hooks of the settings and of the SDK host
//! ([`SdkHooks`]), the children's environment ([`child_env`]) and the skill roots.

use std::path::Path;
use std::sync::Arc;

use spine_core::hooks::HookRegistryBuilder;
use spine_core::model::ModelClient;
use spine_core::permission::{PermissionRule, RuleOrigins, UpdateLimits};
use spine_core::skills::{SkillRoot, SkillRootKind};
use spine_core::workspace::Workspace;
use spine_hooks::agent_hook::HookAgents;
use spine_hooks::mcp_tool::HookTools;
use spine_hooks::prompt::HookModels;
use spine_hooks::{HookCallbacks, HookConfig};
use spine_protocol::permission_update::UpdateDestination;
use spine_settings::RuleEntry;
use spine_settings::{Origin, Settings};

use crate::AssemblyError;
use crate::verifier::Verifiers;

/// Parses settings rules; an error names the rule's file and JSON path.
pub(crate) fn parse_rules(entries: &[RuleEntry]) -> Result<Vec<PermissionRule>, AssemblyError> {
    entries
        .iter()
        .map(|e| {
            PermissionRule::parse(&e.rule)
                .map_err(|source| AssemblyError::Rule { at: format!("{}: {}", e.origin, e.path), source })
        })
        .collect()
}

/// The `--allowedTools` rules that apply: none when managed settings allow only their own
/// permission rules (`allowManagedPermissionRulesOnly`); with the one line saying what managed
/// settings kept from applying, if anything.
pub(crate) fn flag_allow_rules<'a>(settings: &Settings, allow: &'a [String]) -> (&'a [String], Option<String>) {
    let managed = &settings.managed;
    if managed.permission_rules_only.is_none() {
        return (allow, None);
    }
    (&[], managed.rules_notice(allow.len()))
}

/// What session permission updates may not do: where each rule came from (the settings files
/// by their destination, then `flag_allow` `--allowedTools` and `flag_deny` `--disallowedTools`
/// rules as `cliArg`; managed files and `--settings` have none), and the managed limits.
pub(crate) fn update_limits(settings: &Settings, flag_allow: usize, flag_deny: usize) -> UpdateLimits {
    let of = |entries: &[RuleEntry], flags: usize| -> Vec<Option<UpdateDestination>> {
        let files = entries.iter().map(|e| match e.origin {
            Origin::User(_) => Some(UpdateDestination::UserSettings),
            Origin::Project(_) => Some(UpdateDestination::ProjectSettings),
            Origin::Local(_) => Some(UpdateDestination::LocalSettings),
            Origin::Cli { .. } | Origin::Managed(_) | Origin::Plugin(_) | Origin::Sdk => None,
        });
        files.chain(std::iter::repeat_n(Some(UpdateDestination::CliArg), flags)).collect()
    };
    let p = &settings.permissions;
    UpdateLimits {
        origins: RuleOrigins { allow: of(&p.allow, flag_allow), ask: of(&p.ask, 0), deny: of(&p.deny, flag_deny) },
        managed_rules_only: settings.managed.permission_rules_only.as_ref().map(ToString::to_string),
        bypass_disabled_by: p.bypass_disabled_by.as_ref().map(ToString::to_string),
    }
}

/// Parses rules given on the command line; an error names the flag and the rule.
pub(crate) fn parse_flag_rules(rules: &[String], flag: &str) -> Result<Vec<PermissionRule>, AssemblyError> {
    rules
        .iter()
        .map(|rule| {
            PermissionRule::parse(rule)
                .map_err(|source| AssemblyError::Rule { at: format!("{flag}: `{rule}`"), source })
        })
        .collect()
}

/// The hook callbacks of the Agent SDK's host program: the `hooks` of its `initialize` request
/// ([`HookConfig::from_sdk`]) and who calls them (the front end's `hook_callback` requests).
///
/// Assembly registers them after the settings' hooks, in the order the host gave; they are
/// part of the session's hooks, so its subagents run them too. The settings' `disableAllHooks`
/// and managed hook policy apply to them as Claude Code applies them to SDK callbacks
/// ([`HookConfig::not_run`]).
#[derive(Clone)]
pub struct SdkHooks {
    /// The callbacks declared, by event and matcher.
    pub config: HookConfig,
    /// Calls them.
    pub callbacks: Arc<dyn HookCallbacks>,
}

/// Adds the hooks of the settings to `builder` (after what it holds: code hooks run first),
/// then the SDK host's `sdk` callbacks, with the models, tools, verifiers and callbacks of
/// `options` ([`hook_options`]); returns the warnings about what will not run.
pub(crate) fn register_hooks(
    settings: &Settings,
    options: &spine_hooks::BuildOptions,
    builder: &mut HookRegistryBuilder,
    sdk: Option<HookConfig>,
) -> Result<Vec<String>, AssemblyError> {
    let mut hooks = HookConfig::from_settings(settings)?;
    if let Some(sdk) = sdk {
        hooks.extend(sdk);
    }
    let mut warnings: Vec<String> = hooks.warnings.iter().map(ToString::to_string).collect();
    if let Some(message) = hooks.disabled_message() {
        warnings.push(message);
    }
    spine_hooks::register(&hooks, builder, options)?;
    Ok(warnings)
}

/// What external hooks run with: their processes get the settings' [`child_env`] (assembly
/// hands the same value to the agent's config), prompt hooks ask their own `model` or
/// `session_model`, mcp_tool hooks call the MCP tools of `tools`, agent hooks run read-only
/// verifiers over `tools`, callback hooks call the SDK host's `callbacks`. The settings' hooks
/// and agent definitions' own hooks share them.
pub(crate) fn hook_options(
    settings: &Settings,
    session_model: Arc<dyn ModelClient>,
    tools: Option<HookTools>,
    callbacks: Option<Arc<dyn HookCallbacks>>,
) -> spine_hooks::BuildOptions {
    let models: Arc<dyn HookModels> = Arc::new(PromptModels::new(settings, session_model));
    let agents = tools.as_ref().map(|t| {
        let verifiers = Verifiers::new(Arc::clone(&models), Arc::clone(&t.registry), Arc::clone(&t.workspace));
        Arc::new(verifiers) as Arc<dyn HookAgents>
    });
    spine_hooks::BuildOptions {
        models: Some(models),
        tools,
        agents,
        callbacks,
        ..spine_hooks::BuildOptions::new(child_env(settings))
    }
}

/// The environment the settings give every child of an agent (Bash, command runs, processes,
/// hooks, MCP servers): their `env`, and the provider keys of their `env_passthrough` that
/// children inherit after all (every other one is removed, see `spine_process::secrets`).
/// Assembly puts it on the agent's config and hook options; [`crate::connect_mcp`] takes it.
pub fn child_env(settings: &Settings) -> spine_process::ChildEnv {
    spine_process::ChildEnv::new(settings.env.clone(), settings.env_passthrough.iter().cloned())
}

/// `skills.roots` from settings, else `$SPINE_HOME/skills` (system) and `.spine/skills` (live);
/// then Claude Code's and Codex's skill directories, the user's and the project's
/// ([`crate::skills::claude_and_codex_roots`]).
pub fn skill_roots(settings: &Settings, spine_home: &Path, project: &Path) -> Vec<SkillRoot> {
    let mut roots = match &settings.skill_roots {
        Some(roots) => {
            roots.iter().map(|r| SkillRoot { path: Workspace::normalize(&r.path, project), kind: r.kind }).collect()
        }
        None => vec![
            SkillRoot { path: spine_home.join("skills"), kind: SkillRootKind::System },
            SkillRoot { path: project.join(".spine").join("skills"), kind: SkillRootKind::Live },
        ],
    };
    let home = spine_protocol::home::user_home();
    roots.extend(crate::skills::claude_and_codex_roots(home.as_deref(), project));
    roots
}

/// The models of prompt hooks: a hook's `model` spec, built with the settings' client options
/// as `--model` would be, or the session's model.
pub struct PromptModels {
    models: crate::model::SpecModels,
    session: Arc<dyn ModelClient>,
}

impl PromptModels {
    /// Models for the hooks of `settings`, with `session` as the session's model.
    pub fn new(settings: &Settings, session: Arc<dyn ModelClient>) -> Self {
        PromptModels { models: crate::model::SpecModels::new(settings), session }
    }
}

impl HookModels for PromptModels {
    fn model(&self, spec: Option<&str>) -> Result<Arc<dyn ModelClient>, String> {
        match spec {
            None => Ok(Arc::clone(&self.session)),
            Some(spec) => self.models.build(spec).map_err(|e| e.to_string()),
        }
    }
}
