//! The tools of a run (built-ins, tool families, extra tools such as MCP ones, within the
//! run's tool set) and which of them the model sees.

use std::sync::Arc;

use spine_core::registry::{ToolRegistry, ToolRegistryBuilder};
use spine_core::stages::review_tool_call::Visibility;
use spine_core::tool::Tool;
use spine_core::tool_set::ToolSetName;
use spine_settings::Settings;
use spine_tools::FamilyConfig;
use spine_tools::web::{PrivateNetworks, WebOptions};

use crate::{AssemblyError, ToolSet};

/// The tools of a run in the settings' tool set (`tool_set`, default every tool); see
/// [`build_tool_set`].
pub fn build_tools(settings: &Settings, extra: &[Arc<dyn Tool>]) -> Result<ToolSet, AssemblyError> {
    build_tool_set(settings, extra, settings.tool_set.unwrap_or_default())
}

/// The tools of a run: the built-ins, `Agent`, `Skill`, the tool families (command runs, processes, memory, web
/// with settings `web.search_url` and `web.allow_private_networks`), then `extra` (MCP tools) —
/// those of them `set` holds. A tool outside the set is not registered: the model is not
/// offered it, a call of it is an `unknown_tool`, and subagents, which share the registry,
/// do not have it either.
pub fn build_tool_set(
    settings: &Settings,
    extra: &[Arc<dyn Tool>],
    set: ToolSetName,
) -> Result<ToolSet, AssemblyError> {
    let mut builder = ToolRegistryBuilder::new();
    let (family, families) = spine_tools::families::family_tools(FamilyConfig {
        search_url: settings.web_search_url.clone(),
        web: web_options(settings),
        ..FamilyConfig::default()
    });
    // `Agent` (formerly `Task`): the runner runs its calls as subagents (the agent types come
    // with the agent).
    let agent: Arc<dyn Tool> = Arc::new(spine_core::subagents::AgentTool);
    // `Skill`: loads one of the run's skills (offered when the run has one the model may load).
    let skill: Arc<dyn Tool> = Arc::new(spine_tools::SkillTool);
    let tools =
        spine_tools::builtin_tools().into_iter().chain([agent, skill]).chain(family).chain(extra.iter().cloned());
    for tool in tools.filter(|t| set.offers(&t.spec().name)) {
        builder.register_arc(tool);
    }
    let registry = Arc::new(builder.build().map_err(AssemblyError::Tools)?);
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
