//! The MCP servers of a run: every configured one with its source and approval (see
//! `spine_settings::trust`), and the connection of the approved ones.
//!
//! The command line adds its own ([`McpSelection`], `--mcp-config`): they are the user's, like
//! `--settings`, so no project trust or approval applies to them; they come after the
//! configured servers and replace a configured server of the same name. With
//! `--strict-mcp-config` they are the only ones (settings, `.mcp.json` and plugins ignored).
//! SDK servers (`"type": "sdk"`) are served by [`McpSelection::sdk_host`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use spine_process::ChildEnv;
use spine_settings::Settings;
use spine_settings::trust::{McpApproval, Scope, Skipped, SkippedItem};
use spine_tools::mcp::{McpIssue, McpOptions, McpTools, SdkMcpHost};

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
    /// The plugin that brings it (`name@marketplace`): its name is `plugin:<plugin>:<server>`.
    pub plugin: Option<String>,
}

/// Every MCP server a run could start, in precedence order: `.mcp.json` in the project, then
/// each settings source's `mcpServers` (including those withheld from an untrusted project),
/// then the enabled plugins' (named `plugin:<plugin>:<server>`, approved as the settings file
/// that enabled the plugin), each with its approval (see [`spine_settings::trust`]).
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
                plugin: None,
            });
        }
    }
    let kept = settings.all("mcpServers").map(|(origin, v)| (origin, v, false));
    let withheld = settings.withheld.iter().filter_map(|l| l.value.get("mcpServers").map(|v| (&l.origin, v, true)));
    for (origin, value, was_withheld) in kept.chain(withheld) {
        let Value::Object(map) = value else { continue };
        for (name, config) in map {
            let plugin = origin.plugin().map(|p| p.id.clone());
            // A plugin's server is written under its own name in the plugin's file.
            let written = match &plugin {
                Some(id) => {
                    let prefix = format!("plugin:{}:", spine_settings::plugins::split_id(id).0);
                    name.strip_prefix(prefix.as_str()).unwrap_or(name)
                }
                None => name,
            };
            entries.push(ConfiguredMcpServer {
                name: name.clone(),
                file: origin.path().map(Path::to_path_buf),
                source: format!("{origin} mcpServers.{written}"),
                approval: if was_withheld {
                    McpApproval::Untrusted
                } else {
                    settings.mcp_approval(origin.scope(), name)
                },
                effective: false,
                config: config.clone(),
                plugin,
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
    connect_mcp_selected(settings, project, child_env, sandbox, &McpSelection::default()).await
}

/// The MCP servers the command line adds or chooses, and who serves SDK servers.
#[derive(Clone, Default)]
pub struct McpSelection {
    /// `--mcp-config` values, in order: files or inline JSON `{"mcpServers": {...}}`.
    pub configs: Vec<String>,
    /// `--strict-mcp-config`: only the servers of `configs`.
    pub strict: bool,
    /// The program driving spine (stream-json input), serving the `"type": "sdk"` servers;
    /// without one such a server is a failed server with an issue.
    pub sdk_host: Option<Arc<dyn SdkMcpHost>>,
}

impl std::fmt::Debug for McpSelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSelection")
            .field("configs", &self.configs)
            .field("strict", &self.strict)
            .field("sdk_host", &self.sdk_host.is_some())
            .finish()
    }
}

/// The servers a run starts, by name in order: the approved configured ones (unless
/// `selection.strict`), then the command line's, replacing a configured one of the same name;
/// and the project's `.mcp.json` servers skipped because the project is untrusted. A
/// `--mcp-config` value that cannot be used is an error naming it.
pub fn selected_mcp_servers(
    settings: &Settings,
    project: &Path,
    selection: &McpSelection,
) -> Result<(Map<String, Value>, Vec<Skipped>), AssemblyError> {
    let from_command_line =
        spine_tools::mcp::load_mcp_config_args(&selection.configs).map_err(spine_tools::mcp::McpConfigError::from)?;
    let mut servers = Map::new();
    let mut skipped = Vec::new();
    if !selection.strict {
        let mcp_json = project.join(spine_tools::mcp::MCP_JSON);
        for server in configured_mcp_servers(settings, project)? {
            if server.effective {
                servers.insert(server.name, server.config);
            } else if server.approval == McpApproval::Untrusted && server.file.as_deref() == Some(mcp_json.as_path()) {
                skipped.push(Skipped { file: mcp_json.clone(), item: SkippedItem::McpServer(server.name) });
            }
        }
    }
    for (name, config) in from_command_line {
        servers.shift_remove(&name);
        servers.insert(name, config);
    }
    Ok((servers, skipped))
}

/// [`connect_mcp_sandboxed`] with the command line's servers and SDK host ([`McpSelection`]):
/// the servers of [`selected_mcp_servers`], connected. Every server connected or failed is in
/// [`McpTools::statuses`] of the connection's `tools`.
pub async fn connect_mcp_selected(
    settings: &Settings,
    project: &Path,
    child_env: &ChildEnv,
    sandbox: Option<&crate::sandbox::SessionSandbox>,
    selection: &McpSelection,
) -> Result<McpConnection, AssemblyError> {
    let (servers, skipped) = selected_mcp_servers(settings, project, selection)?;
    if servers.is_empty() {
        return Ok(McpConnection { tools: McpTools::empty(), warnings: Vec::new(), issues: Vec::new(), skipped });
    }
    let mut options = mcp_options(settings, project, child_env);
    options.sandboxed_env = sandbox.and_then(|s| s.mcp_env(child_env));
    options.sdk_host = selection.sdk_host.clone();
    let (tools, issues) = spine_tools::mcp::connect_mcp_servers(&Value::Object(servers), &options).await;
    let warnings = issues.iter().map(|i| format!("MCP: {i}")).collect();
    Ok(McpConnection { tools, warnings, issues, skipped })
}

/// The one stderr line about what an untrusted project brought and spine skipped (settings
/// files and `.mcp.json`), joined by the plugins it enables that were not loaded
/// ([`withheld_plugins_text`]), or `None`.
pub fn untrusted_notice(settings: &Settings, project: &Path, mcp: &McpConnection) -> Option<String> {
    let all: Vec<Skipped> = settings.skipped.iter().chain(&mcp.skipped).cloned().collect();
    let skipped = spine_settings::trust::untrusted_notice(project, &all);
    let plugins = withheld_plugins_text(settings);
    match (skipped, plugins) {
        (Some(notice), Some(plugins)) => Some(format!("{notice}; also {plugins}")),
        (Some(notice), None) => Some(notice),
        (None, Some(plugins)) => Some(format!(
            "spine: {plugins}: the project is not trusted — run `spine trust {}` to trust it (or pass --trust for \
             one run)",
            project.display()
        )),
        (None, None) => None,
    }
}

/// The plugins an untrusted project enables and spine did not load, in one phrase:
/// `plugin guard@market (enabled by /p/.claude/settings.json) not loaded`; `None` without any.
/// A plugin the project enables that loads all the same (the user installed or enabled it) is
/// not named.
pub fn withheld_plugins_text(settings: &Settings) -> Option<String> {
    let named: Vec<String> =
        withheld_plugins(settings).map(|(file, id)| format!("{id} (enabled by {})", file.display())).collect();
    if named.is_empty() {
        return None;
    }
    let plural = if named.len() == 1 { "" } else { "s" };
    Some(format!("plugin{plural} {} not loaded", named.join(", ")))
}

/// The plugins an untrusted project enables that spine did not load: the file that enables
/// each, and its id (one the user installed or enabled, which loads all the same, is left out).
pub fn withheld_plugins(settings: &Settings) -> impl Iterator<Item = &(PathBuf, String)> {
    settings.withheld_plugins.iter().filter(|(_, id)| !settings.plugins.iter().any(|p| &p.id == id))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;
    use spine_settings::trust::ProjectTrust;
    use spine_settings::{Origin, PluginOrigin, SettingsLayer};

    use super::*;

    fn no_connection() -> McpConnection {
        McpConnection { tools: McpTools::empty(), warnings: Vec::new(), issues: Vec::new(), skipped: Vec::new() }
    }

    fn untrusted(withheld_plugins: Vec<(PathBuf, String)>, skipped: Vec<Skipped>) -> Settings {
        Settings { trust: ProjectTrust::Untrusted, withheld_plugins, skipped, ..Settings::default() }
    }

    /// A project whose `.mcp.json` has servers `a` and `b`, a user settings file with server
    /// `mine`, and its settings (`trust`).
    fn project_with_servers(trust: ProjectTrust) -> (tempfile::TempDir, PathBuf, Settings) {
        let dir = tempfile::tempdir().expect("tmp");
        let (home, project) = (dir.path().join("home"), dir.path().join("project"));
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&project).expect("project");
        let mcp_json = json!({"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}});
        std::fs::write(project.join(".mcp.json"), mcp_json.to_string()).expect("write");
        std::fs::write(home.join("settings.json"), r#"{"mcpServers": {"mine": {"command": "m"}}}"#).expect("write");
        let settings = Settings::discover(&home, &project, &[], trust).expect("settings");
        (dir, project, settings)
    }

    fn selection(configs: &[Value], strict: bool) -> McpSelection {
        McpSelection { configs: configs.iter().map(Value::to_string).collect(), strict, sdk_host: None }
    }

    fn names(servers: &Map<String, Value>) -> Vec<&str> {
        servers.keys().map(String::as_str).collect()
    }

    #[test]
    fn command_line_servers_come_after_the_configured_ones_and_replace_one_of_the_same_name() {
        let (_dir, project, settings) = project_with_servers(ProjectTrust::Flag);
        let flag = json!({"mcpServers": {"a": {"command": "from-flag"}, "calc": {"type": "sdk", "name": "calc"}}});
        let (servers, skipped) = selected_mcp_servers(&settings, &project, &selection(&[flag], false)).expect("ok");
        assert_eq!(names(&servers), ["b", "mine", "a", "calc"]);
        assert_eq!(servers["a"]["command"], "from-flag");
        assert!(skipped.is_empty());
        let (servers, _) = selected_mcp_servers(&settings, &project, &McpSelection::default()).expect("ok");
        assert_eq!(names(&servers), ["a", "b", "mine"], "without the flag: the configured servers");
    }

    #[test]
    fn command_line_servers_start_in_an_untrusted_project_whose_own_servers_are_skipped() {
        let (_dir, project, settings) = project_with_servers(ProjectTrust::Untrusted);
        let flag = json!({"mcpServers": {"a": {"command": "from-flag"}}});
        let (servers, skipped) = selected_mcp_servers(&settings, &project, &selection(&[flag], false)).expect("ok");
        assert_eq!(names(&servers), ["mine", "a"]);
        assert_eq!(servers["a"]["command"], "from-flag");
        let skipped: Vec<_> = skipped.iter().map(|s| s.item.clone()).collect();
        assert_eq!(skipped, [SkippedItem::McpServer("a".into()), SkippedItem::McpServer("b".into())]);
    }

    #[test]
    fn strict_mcp_config_starts_only_the_command_lines_servers() {
        let (_dir, project, settings) = project_with_servers(ProjectTrust::Untrusted);
        let flag = json!({"mcpServers": {"x": {"command": "x"}}});
        let (servers, skipped) = selected_mcp_servers(&settings, &project, &selection(&[flag], true)).expect("ok");
        assert_eq!(names(&servers), ["x"]);
        assert!(skipped.is_empty(), "nothing of the project was considered: {skipped:?}");
        let (servers, _) = selected_mcp_servers(&settings, &project, &selection(&[], true)).expect("ok");
        assert!(servers.is_empty(), "strict without --mcp-config: no server");
    }

    #[test]
    fn a_bad_mcp_config_value_is_an_error_naming_the_flag_and_its_position() {
        let (_dir, project, settings) = project_with_servers(ProjectTrust::Flag);
        let good = json!({"mcpServers": {}});
        let bad = json!({"mcpServers": {"x": {"command": ""}}});
        let error = selected_mcp_servers(&settings, &project, &selection(&[good, bad], false)).expect_err("bad");
        assert!(matches!(error, AssemblyError::Mcp(_)), "{error:?}");
        assert_eq!(
            error.to_string(),
            "--mcp-config #2 (inline JSON): mcpServers.x.command: a stdio server needs a non-empty `command`"
        );
    }

    #[cfg(feature = "mcp")]
    #[tokio::test]
    async fn without_a_host_an_sdk_server_of_the_command_line_is_a_failed_status_and_a_warning() {
        let (_dir, project, settings) = project_with_servers(ProjectTrust::Untrusted);
        let flag = json!({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}});
        let child_env = crate::child_env(&settings);
        let connection = connect_mcp_selected(&settings, &project, &child_env, None, &selection(&[flag], true))
            .await
            .expect("connects");
        assert_eq!(connection.tools.statuses(), [("calc".to_owned(), spine_tools::mcp::McpServerStatus::Failed)]);
        assert_eq!(connection.warnings.len(), 1, "{:?}", connection.warnings);
        assert!(connection.warnings[0].contains("--input-format stream-json"), "{:?}", connection.warnings);
    }

    #[test]
    fn an_untrusted_projects_plugins_are_named_with_their_file_and_how_to_trust() {
        let settings = untrusted(vec![(PathBuf::from("/p/.claude/settings.json"), "guard@market".into())], Vec::new());
        let notice = untrusted_notice(&settings, Path::new("/p"), &no_connection()).expect("a notice");
        assert_eq!(
            notice,
            "spine: plugin guard@market (enabled by /p/.claude/settings.json) not loaded: the project is not trusted \
             — run `spine trust /p` to trust it (or pass --trust for one run)"
        );
    }

    #[test]
    fn withheld_plugins_join_the_untrusted_projects_one_notice() {
        let skipped = vec![Skipped { file: PathBuf::from("/p/.claude/settings.json"), item: SkippedItem::Hooks(1) }];
        let plugins = vec![
            (PathBuf::from("/p/.claude/settings.json"), "guard@market".into()),
            (PathBuf::from("/p/.spine/settings.json"), "lint@market".into()),
        ];
        let notice = untrusted_notice(&untrusted(plugins, skipped), Path::new("/p"), &no_connection()).expect("notice");
        assert!(!notice.contains('\n'), "one line: {notice}");
        assert!(notice.starts_with("spine: untrusted project /p: skipped 1 hook"), "{notice}");
        assert!(
            notice.ends_with(
                "; also plugins guard@market (enabled by /p/.claude/settings.json), lint@market (enabled by \
                 /p/.spine/settings.json) not loaded"
            ),
            "{notice}"
        );
        assert_eq!(untrusted_notice(&untrusted(Vec::new(), Vec::new()), Path::new("/p"), &no_connection()), None);
    }

    #[test]
    fn a_plugin_the_project_enables_that_loads_all_the_same_is_not_named_as_withheld() {
        let mut settings =
            untrusted(vec![(PathBuf::from("/p/.claude/settings.json"), "guard@market".into())], Vec::new());
        settings.plugins.push(spine_settings::plugins::Plugin {
            id: "guard@market".into(),
            name: "guard".into(),
            marketplace: Some("market".into()),
            root: PathBuf::from("/plug"),
            data: PathBuf::from("/data"),
            version: None,
            description: None,
            default_enabled: None,
            enabled_by: "installed (user scope)".into(),
            scope: Scope::User,
            commands: Vec::new(),
            agents: Vec::new(),
            skills: Vec::new(),
            output_styles: Vec::new(),
            hook_files: Vec::new(),
            mcp_servers: Vec::new(),
        });
        assert_eq!(withheld_plugins_text(&settings), None, "the user installed it: it is loaded");
        assert_eq!(untrusted_notice(&settings, Path::new("/p"), &no_connection()), None);
    }

    #[test]
    fn a_plugins_mcp_server_is_listed_with_its_plugin_and_the_name_it_has_in_the_plugins_file() {
        let origin = Origin::Plugin(std::sync::Arc::new(PluginOrigin {
            id: "tools@inline".into(),
            file: PathBuf::from("/plug/.mcp.json"),
            root: PathBuf::from("/plug"),
            data: PathBuf::from("/data"),
            enabled_by: Scope::CommandLine,
        }));
        let value = json!({"mcpServers": {"plugin:tools:echo": {"command": "echo-server"}}});
        let layer = SettingsLayer { origin, value: value.as_object().cloned().expect("object") };
        let settings = Settings::from_layers(vec![layer]).expect("settings");
        let dir = tempfile::tempdir().expect("tmp");
        let servers = configured_mcp_servers(&settings, dir.path()).expect("servers");
        assert_eq!(servers.len(), 1);
        let server = &servers[0];
        assert_eq!(server.name, "plugin:tools:echo");
        assert_eq!(server.plugin.as_deref(), Some("tools@inline"));
        assert_eq!(server.source, "/plug/.mcp.json (plugin tools@inline) mcpServers.echo");
        assert!(server.effective && server.approval.starts(), "enabled by the command line: {:?}", server.approval);
    }
}
