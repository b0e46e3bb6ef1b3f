//! What an agent definition brings to its subagent's runs besides narrowing — its own hooks,
//! its preloaded skills, the MCP servers it names — resolved once, when the session is
//! assembled ([`resolve`]).
//!
//! Contract:
//! - `hooks`: validated and built exactly as the settings' `hooks` (spine-hooks'
//!   [`HookConfig::from_agent`]: a `Stop` hook fires as `SubagentStop`, `disableAllHooks` and
//!   `allowManagedHooksOnly` apply) into one registry per agent type, which the runner puts
//!   after the session's hooks while that subagent runs; for the type the main session runs as
//!   (`--agent`, [`Scope::main_agent`]) a second registry with the hooks as written (`Stop`
//!   stays `Stop`) goes after the session's hooks of the main session. An invalid hook makes the definition
//!   unusable ([`Unusable`], naming the JSON path). A definition inside the project directory
//!   (not a user directory) is the project's: when the project is not trusted its hooks are
//!   not run, with a warning (as an untrusted project's settings hooks are withheld); a user's
//!   definition and an `--agents` entry are trusted.
//! - `skills`: each name must be an active skill of the skill roots; an unknown one is a
//!   warning and is not preloaded.
//! - `mcpServers`: each name must be a server connected for the session (one of its tools is
//!   registered); an unknown one is a warning and adds nothing. The inline servers become the
//!   definition's own ([`crate::agent_mcp`]: started with each of its subagents, their tools its
//!   only); like `hooks`, they run code, so a definition of an untrusted project does not start
//!   them (a warning naming them).
//!
//! Warnings are returned without their source; the caller prefixes the file or the flag.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use spine_core::hooks::{HookRegistry, HookRegistryBuilder};
use spine_core::registry::ToolRegistry;
use spine_core::skills::SkillCatalog;
use spine_core::subagents::{SubagentServers, is_mcp_tool_of};
use spine_hooks::config::AgentRole;
use spine_hooks::{BuildOptions, HookConfig};
use spine_settings::{Origin, Settings};

use crate::agent_def::AgentFile;

/// What the definitions are resolved against: the assembled session's parts.
pub struct Scope<'a> {
    /// The merged settings (trust, `disableAllHooks`, the managed hook policy).
    pub settings: &'a Settings,
    /// The project directory: a definition under it is the project's.
    pub project: &'a Path,
    /// The user's agent directories: a definition under one is the user's, wherever it is.
    pub user_dirs: Vec<PathBuf>,
    /// The session's tools (the MCP servers' among them).
    pub tools: &'a ToolRegistry,
    /// The skills of the session's skill roots, scanned only when a definition preloads one.
    pub skills: LazySkills<'a>,
    /// What external hooks run with (models, tools, verifiers), as the settings' hooks.
    pub hooks: &'a BuildOptions,
    /// The agent type the main session runs as (`--agent`).
    pub main_agent: Option<&'a str>,
    /// The environment of MCP servers configured with `"sandbox": true` (the session's
    /// sandbox); `None` without one, and such a server does not start.
    pub mcp_sandboxed_env: Option<spine_process::ChildEnv>,
}

/// A skill catalog scanned at its first use.
pub type LazySkills<'a> = std::cell::LazyCell<SkillCatalog, Box<dyn FnOnce() -> SkillCatalog + 'a>>;

/// A definition's resolved fields.
#[derive(Default)]
pub struct Resolved {
    /// Its own hooks, when it has any that run.
    pub hooks: Option<Arc<HookRegistry>>,
    /// The skills preloaded (the known ones).
    pub skills: Vec<String>,
    /// The MCP servers whose tools it gets (the connected ones).
    pub mcp_servers: Vec<String>,
    /// Its inline MCP servers, when it has any it may start.
    pub servers: Option<Arc<dyn SubagentServers>>,
    /// Its hooks for the main session, when it is [`Scope::main_agent`] and has any that run.
    pub main_hooks: Option<Arc<HookRegistry>>,
}

/// Why a definition cannot be used: its hooks do not validate or build. Each entry is a JSON
/// path (`hooks.PreToolUse[0].hooks[0].timeout`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unusable {
    /// The problems, in order.
    pub errors: Vec<(String, String)>,
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.errors.iter().map(|(path, reason)| format!("{path}: {reason}")).collect();
        f.write_str(&parts.join("; "))
    }
}

/// Resolves `file`'s `hooks`, `skills` and `mcpServers` against `scope` (see the module
/// documentation); `label` names the definition in its hooks' sources (its file, or
/// `--agents NAME`). The warnings go to `warnings`, unprefixed.
pub fn resolve(
    file: &AgentFile,
    label: &Path,
    scope: &Scope<'_>,
    warnings: &mut Vec<String>,
) -> Result<Resolved, Unusable> {
    let hooks = match &file.hooks {
        Some(value) => own_hooks(value, file, label, scope, AgentRole::Subagent, warnings)?,
        None => None,
    };
    let main_hooks = match &file.hooks {
        // Its warnings are the subagent registry's, given already.
        Some(value) if scope.main_agent == Some(file.name.as_str()) => {
            own_hooks(value, file, label, scope, AgentRole::Main, &mut Vec::new())?
        }
        Some(_) | None => None,
    };
    let mut skills = Vec::new();
    for name in &file.skills {
        match scope.skills.get(name) {
            Some(entry) if entry.active => skills.push(name.clone()),
            Some(_) => warnings.push(format!("`skills`: skill `{name}` is not active; not preloaded")),
            None => warnings.push(format!("`skills`: no skill `{name}` in the skill roots; not preloaded")),
        }
    }
    let mut mcp_servers = Vec::new();
    for name in &file.mcp_servers {
        if scope.tools.names().any(|tool| is_mcp_tool_of(tool, name)) {
            mcp_servers.push(name.clone());
        } else {
            warnings.push(format!(
                "`mcpServers`: no MCP server `{name}` is connected for this session (.mcp.json, settings \
                 `mcpServers`); it adds no tools"
            ));
        }
    }
    let servers = inline_servers(file, scope, warnings);
    Ok(Resolved { hooks, skills, mcp_servers, servers, main_hooks })
}

/// The definition's inline MCP servers, unless it has none or is an untrusted project's.
fn inline_servers(file: &AgentFile, scope: &Scope<'_>, warnings: &mut Vec<String>) -> Option<Arc<dyn SubagentServers>> {
    if file.inline_mcp_servers.is_empty() {
        return None;
    }
    if is_project_definition(&file.source, scope) && !scope.settings.trust.is_trusted() {
        let names: Vec<&str> = file.inline_mcp_servers.iter().map(|(name, _)| name.as_str()).collect();
        warnings.push(format!(
            "`mcpServers`: inline server `{}` not started: the project is not trusted (`spine trust` trusts it)",
            names.join("`, `")
        ));
        return None;
    }
    // The hook options carry the environment assembly built for the agent's children.
    let mut options = crate::mcp::mcp_options(scope.settings, scope.project, &scope.hooks.child_env);
    options.sandboxed_env = scope.mcp_sandboxed_env.clone();
    Some(Arc::new(crate::agent_mcp::InlineServers::new(&file.inline_mcp_servers, options)))
}

/// The definition's own hooks for `role`, built; `None` when none of them runs.
fn own_hooks(
    value: &serde_json::Value,
    file: &AgentFile,
    label: &Path,
    scope: &Scope<'_>,
    role: AgentRole,
    warnings: &mut Vec<String>,
) -> Result<Option<Arc<HookRegistry>>, Unusable> {
    let project_owned = is_project_definition(&file.source, scope);
    let origin = if project_owned { Origin::Project(label.to_path_buf()) } else { Origin::User(label.to_path_buf()) };
    let config = HookConfig::from_agent(value, &origin, scope.settings, role)
        .map_err(|e| Unusable { errors: e.errors.into_iter().map(|e| (e.path, e.reason)).collect() })?;
    warnings.extend(config.warnings.iter().map(|w| format!("{}: {}", w.path, w.message)));
    let handlers = config.handler_count();
    if handlers == 0 {
        return Ok(None);
    }
    if project_owned && !scope.settings.trust.is_trusted() {
        warnings.push(format!(
            "`hooks` not applied: the project is not trusted, so its agent definitions' {handlers} hook(s) do not \
             run (`spine trust` trusts it)"
        ));
        return Ok(None);
    }
    let mut builder = HookRegistryBuilder::new();
    spine_hooks::register(&config, &mut builder, scope.hooks)
        .map_err(|e| Unusable { errors: vec![("hooks".to_owned(), e.to_string())] })?;
    Ok(Some(Arc::new(builder.build())))
}

/// Whether a definition file is the project's: inside the project directory and not in one of
/// the user's agent directories (an `--agents` entry is neither: it is the user's).
fn is_project_definition(source: &Path, scope: &Scope<'_>) -> bool {
    source.is_absolute()
        && source.starts_with(scope.project)
        && !scope.user_dirs.iter().any(|dir| source.starts_with(dir))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use spine_core::registry::ToolRegistryBuilder;
    use spine_core::skills::{SkillRoot, SkillRootKind};
    use spine_settings::trust::ProjectTrust;

    use super::*;

    fn agent(source: &str, extra: serde_json::Value) -> AgentFile {
        let mut fields = json!({"name": "r", "description": "d"});
        if let (Some(f), Some(e)) = (fields.as_object_mut(), extra.as_object()) {
            f.extend(e.clone());
        }
        let map = fields.as_object().cloned().unwrap_or_default();
        let origin = crate::agent_def::Origin::File { body: "P", path: Path::new(source) };
        crate::agent_def::read_fields(&map, origin).expect("valid").0
    }

    struct Fixture {
        settings: Settings,
        tools: ToolRegistry,
        options: BuildOptions,
        skills: tempfile::TempDir,
    }

    impl Fixture {
        fn new(trust: ProjectTrust) -> Self {
            let skills = tempfile::tempdir().expect("tmp");
            std::fs::create_dir_all(skills.path().join("notes")).expect("dir");
            std::fs::write(skills.path().join("notes/SKILL.md"), "Take notes.").expect("write");
            let settings = Settings { trust, ..Settings::default() };
            let tools = ToolRegistryBuilder::new().build().expect("tools");
            Fixture { settings, tools, options: BuildOptions::new(spine_process::ChildEnv::default()), skills }
        }

        fn scope(&self) -> Scope<'_> {
            let root = SkillRoot { path: self.skills.path().to_path_buf(), kind: SkillRootKind::Live };
            Scope {
                settings: &self.settings,
                project: Path::new("/p"),
                user_dirs: vec![PathBuf::from("/home/u/.claude/agents")],
                tools: &self.tools,
                skills: LazySkills::new(Box::new(move || SkillCatalog::scan(&[root]).0)),
                hooks: &self.options,
                main_agent: Some("r"),
                mcp_sandboxed_env: None,
            }
        }
    }

    fn resolved(file: &AgentFile, fixture: &Fixture) -> (Result<Resolved, Unusable>, Vec<String>) {
        let mut warnings = Vec::new();
        let result = resolve(file, &file.source, &fixture.scope(), &mut warnings);
        (result, warnings)
    }

    const HOOKS: &str = r#"{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}]}"#;

    #[test]
    fn an_untrusted_projects_agent_hooks_do_not_run_and_a_users_do() {
        let hooks: serde_json::Value = serde_json::from_str(HOOKS).expect("json");
        let project = agent("/p/.claude/agents/r.md", json!({"hooks": hooks}));
        let (result, warnings) = resolved(&project, &Fixture::new(ProjectTrust::Untrusted));
        assert!(result.expect("usable").hooks.is_none());
        assert!(warnings[0].contains("the project is not trusted"), "{warnings:?}");
        let (trusted, _) = resolved(&project, &Fixture::new(ProjectTrust::Flag));
        let trusted = trusted.expect("usable");
        assert!(trusted.hooks.is_some() && trusted.main_hooks.is_some(), "`--agent r` runs them too");
        let user = agent("/home/u/.claude/agents/r.md", json!({"hooks": hooks}));
        let (result, warnings) = resolved(&user, &Fixture::new(ProjectTrust::Untrusted));
        assert!(result.expect("usable").hooks.is_some() && warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn an_untrusted_projects_inline_mcp_servers_are_not_started_and_a_users_are() {
        let inline = json!({"mcpServers": [{"own": {"command": "python3"}}]});
        let project = agent("/p/.claude/agents/r.md", inline.clone());
        let (result, warnings) = resolved(&project, &Fixture::new(ProjectTrust::Untrusted));
        assert!(result.expect("usable").servers.is_none());
        assert_eq!(
            warnings,
            ["`mcpServers`: inline server `own` not started: the project is not trusted (`spine trust` trusts it)"]
        );
        let (trusted, warnings) = resolved(&project, &Fixture::new(ProjectTrust::Flag));
        let servers = trusted.expect("usable").servers.expect("a trusted project's start");
        assert_eq!((servers.names(), warnings.len()), (vec!["own".to_owned()], 0));
        let user = agent("/home/u/.claude/agents/r.md", inline);
        let (result, _) = resolved(&user, &Fixture::new(ProjectTrust::Untrusted));
        assert!(result.expect("usable").servers.is_some(), "a user's definition is trusted");
    }

    #[test]
    fn an_invalid_agent_hook_makes_the_definition_unusable_naming_the_json_path() {
        let file =
            agent("/home/u/.claude/agents/r.md", json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "nope"}]}]}}));
        let (result, _) = resolved(&file, &Fixture::new(ProjectTrust::Flag));
        let err = result.err().expect("unusable");
        assert!(err.to_string().starts_with("hooks.PreToolUse[0].hooks[0].type: "), "{err}");
    }

    #[test]
    fn unknown_skills_and_mcp_servers_are_warnings_and_are_dropped() {
        let file = agent("/p/.claude/agents/r.md", json!({"skills": ["notes", "nope"], "mcpServers": ["peer"]}));
        let (result, warnings) = resolved(&file, &Fixture::new(ProjectTrust::Untrusted));
        let resolved = result.expect("usable");
        assert_eq!(resolved.skills, ["notes"]);
        assert!(resolved.mcp_servers.is_empty());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains("no skill `nope`") && warnings[1].contains("no MCP server `peer`"),
            "{warnings:?}"
        );
    }
}
