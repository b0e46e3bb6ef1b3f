//! The tools of a run (built-ins, tool families, extra tools such as MCP ones) and which of
//! them the model sees.

use std::sync::Arc;

use spine_core::registry::{ToolRegistry, ToolRegistryBuilder};
use spine_core::stages::review_tool_call::Visibility;
use spine_core::tool::Tool;
use spine_settings::Settings;
use spine_tools::FamilyConfig;
use spine_tools::web::{PrivateNetworks, WebOptions};

use crate::{AssemblyError, ToolSet};

/// The tools of a run: the built-ins, `Agent`, the tool families (command runs, processes, memory, web
/// with settings `web.search_url` and `web.allow_private_networks`), then `extra` (MCP tools).
pub fn build_tools(settings: &Settings, extra: &[Arc<dyn Tool>]) -> Result<ToolSet, AssemblyError> {
    let mut builder = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut builder);
    // `Agent` (formerly `Task`): the runner runs its calls as subagents (the agent types come
    // with the agent).
    builder.register(spine_core::subagents::AgentTool);
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
