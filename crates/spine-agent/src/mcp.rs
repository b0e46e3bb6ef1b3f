//! The MCP servers of a run: every configured one with its source and approval (see
//! `spine_settings::trust`), and the connection of the approved ones.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_process::ChildEnv;
use spine_settings::Settings;
use spine_settings::trust::{McpApproval, Scope, Skipped, SkippedItem};
use spine_tools::mcp::{McpIssue, McpOptions, McpTools};

use crate::AssemblyError;

/// One configured MCP server: where it is written, whether it may start, its entry.
#[derive(Debug, Clone)]
pub struct ConfiguredMcpServer {
    /// The name it is configured under (its tools are `mcp__NAME__TOOL`).
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
    /// The entry as written in its source (`command`, `args`, `env`, or `url`…).
    pub config: Value,
}

/// Every MCP server a run could start, in precedence order: `.mcp.json` in the project, then
/// each settings source's `mcpServers` (including those withheld from an untrusted project),
/// each with its approval (see [`spine_settings::trust`]).
pub fn configured_mcp_servers(settings: &Settings, project: &Path) -> Result<Vec<ConfiguredMcpServer>, AssemblyError> {
    let mut entries = Vec::new();
    let mcp_json = project.join(spine_tools::mcp::MCP_JSON);
    if let Some(Value::Object(map)) = spine_tools::mcp::load_mcp_json(project)? {
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

/// The MCP options of a run: the project as the servers' directory, `child_env` (the
/// settings' [`crate::child_env`]) as their environment, settings' `mcp.startup_timeout_ms` as
/// the default start-up limit.
pub fn mcp_options(settings: &Settings, project: &Path, child_env: &ChildEnv) -> McpOptions {
    let mut options = McpOptions::new(project, child_env.clone());
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
/// concurrently, each within its own start-up limit, their processes getting `child_env` (the
/// settings' [`crate::child_env`]). Servers that fail are reported as warnings and their tools
/// are absent; the run goes on.
pub async fn connect_mcp(
    settings: &Settings,
    project: &Path,
    child_env: &ChildEnv,
) -> Result<McpConnection, AssemblyError> {
    connect_mcp_sandboxed(settings, project, child_env, None).await
}

/// [`connect_mcp`], with the session's sandbox for the servers configured with `"sandbox":
/// true` (without one, such a server does not start: it is an issue naming why).
pub async fn connect_mcp_sandboxed(
    settings: &Settings,
    project: &Path,
    child_env: &ChildEnv,
    sandbox: Option<&crate::sandbox::SessionSandbox>,
) -> Result<McpConnection, AssemblyError> {
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
    let mut options = mcp_options(settings, project, child_env);
    options.sandboxed_env = sandbox.and_then(|s| s.mcp_env(child_env));
    let (tools, issues) = spine_tools::mcp::connect_mcp_servers(&Value::Object(servers), &options).await;
    let warnings = issues.iter().map(|i| format!("MCP: {i}")).collect();
    Ok(McpConnection { tools, warnings, issues, skipped })
}

/// The one stderr line about what an untrusted project brought and spine skipped (settings
/// files and `.mcp.json`), or `None`.
pub fn untrusted_notice(settings: &Settings, project: &Path, mcp: &McpConnection) -> Option<String> {
    let all: Vec<Skipped> = settings.skipped.iter().chain(&mcp.skipped).cloned().collect();
    spine_settings::trust::untrusted_notice(project, &all)
}
