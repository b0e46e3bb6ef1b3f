//! The `init` line (`{"type":"system","subtype":"init",…}`), in the field set Claude Code
//! 2.1.328 writes (`tests/fixtures/claude-code-2.1.328/stream-json-init.jsonl`) where spine has
//! the thing it names:
//!
//! `cwd`, `session_id`, `tools` (the tools the model is offered: the visible ones, `Agent`
//! only with agent types, `Skill` only with a skill the model may load), `mcp_servers` (every
//! configured server that was to start, `{name, status}` with `connected` or `failed`),
//! `model`, `permissionMode`, `slash_commands` (what `/name` runs in print mode: the skills a
//! user may invoke, the project's and the user's custom commands, the plugins' commands as
//! `plugin:command`), `apiKeySource` (the variable the model's credential came from, `none`
//! without one), `output_style` (settings `outputStyle`, else `default`), `agents` (the
//! `subagent_type`s an `Agent` call may start), `skills` (every active skill), `plugins`
//! (`{name, path, source, version?}`, `source` being the plugin's id, `name@inline` for
//! `--plugin-dir`), `additional_directories` (the `--add-dir` roots), `uuid`; and spine's
//! `spine_version`.
//!
//! Left out, having no meaning in spine (the lists are `left_out::INIT` and
//! `left_out::INIT_MCP_SERVER`): `claude_code_version`, `terminal_slash_commands`,
//! `capabilities`, `analytics_disabled`, `product_feedback_disabled`, `memory_paths`,
//! `original_cwd`, `messaging_socket_path`, `fast_mode_state`, `fast_mode_disabled_reason`,
//! `per_turn_effort_active`, `ultrathink_available`, `ultrathink_typed_raises`, `view_mode`, and
//! the `source` of an MCP server entry.

use std::path::Path;

use serde_json::{Value, json};
use spine_core::runner::Agent;
use spine_settings::Settings;

use crate::chat::{custom, plugin_commands};

/// One loaded plugin, as `init` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitPlugin {
    /// Its name.
    pub name: String,
    /// Its directory.
    pub path: String,
    /// Its id (`name@marketplace`, `name@inline` for `--plugin-dir`).
    pub source: String,
    /// Its version, when its manifest has one.
    pub version: Option<String>,
}

/// What the `init` line says about the run, known before it starts.
#[derive(Debug, Clone, Default)]
pub struct InitInfo {
    /// The working directory.
    pub cwd: String,
    /// The tools the model is offered, by name.
    pub tools: Vec<String>,
    /// Every MCP server that was to start, with `connected` or `failed`, by name in
    /// configuration order.
    pub mcp_servers: Vec<(String, String)>,
    /// The permission mode, as written on the command line.
    pub permission_mode: String,
    /// What `/name` runs: skills a user may invoke, custom commands, plugin commands.
    pub slash_commands: Vec<String>,
    /// The agent types an `Agent` call may start.
    pub agents: Vec<String>,
    /// The active skills.
    pub skills: Vec<String>,
    /// The loaded plugins.
    pub plugins: Vec<InitPlugin>,
    /// Where the model's credential came from (`ANTHROPIC_API_KEY`, …, or `none`).
    pub api_key_source: String,
    /// The output style's name (`default` without one).
    pub output_style: String,
    /// The directories added to the workspace (`--add-dir`).
    pub additional_directories: Vec<String>,
}

impl InitInfo {
    /// What the run of `agent` will offer, from its configuration and `settings` (custom
    /// commands are read from the project's and `spine_home`'s folders and the user's
    /// `~/.claude/commands`); no MCP server ([`InitInfo::with_mcp_servers`] adds them).
    pub fn new(agent: &Agent, settings: &Settings, project: &Path, spine_home: &Path) -> Self {
        let config = &agent.config;
        let (catalog, _) =
            spine_core::skills::SkillCatalog::scan_all(&config.skill_roots, &config.plugin_skills, &config.parse_memo);
        let user_home = spine_protocol::home::user_home();
        let dirs = custom::command_dirs(project, spine_home, user_home.as_deref());
        let (mut commands, _) = custom::load(&dirs, settings.trust.is_trusted());
        let _ = plugin_commands::add(&mut commands, &settings.plugins, project);
        let mut slash_commands: Vec<String> =
            catalog.active().filter(|s| s.meta.user_invocable).map(|s| s.name.clone()).collect();
        for command in commands {
            if !slash_commands.contains(&command.name) {
                slash_commands.push(command.name);
            }
        }
        InitInfo {
            cwd: config.cwd.display().to_string(),
            tools: agent.offered_tool_names(),
            mcp_servers: Vec::new(),
            permission_mode: agent.policy.mode().as_str().to_owned(),
            slash_commands,
            agents: config
                .subagents
                .as_ref()
                .map(|s| s.definitions.iter().map(|d| d.name.clone()).collect())
                .unwrap_or_default(),
            skills: catalog.active().map(|s| s.name.clone()).collect(),
            plugins: settings
                .plugins
                .iter()
                .map(|p| InitPlugin {
                    name: p.name.clone(),
                    path: p.root.display().to_string(),
                    source: p.id.clone(),
                    version: p.version.clone(),
                })
                .collect(),
            api_key_source: agent.model.api_key_source().to_owned(),
            output_style: settings.output_style.clone().unwrap_or_else(|| "default".to_owned()),
            additional_directories: config.workspace.added_roots().map(|r| r.display().to_string()).collect(),
        }
    }

    /// The same, listing `servers` (name and status) as `mcp_servers`.
    pub fn with_mcp_servers(mut self, servers: Vec<(String, String)>) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// The `init` line of session `session_id` on `model`.
    pub fn line(&self, session_id: &str, model: &str) -> Value {
        let mcp: Vec<Value> =
            self.mcp_servers.iter().map(|(name, status)| json!({"name": name, "status": status})).collect();
        let plugins: Vec<Value> = self
            .plugins
            .iter()
            .map(|p| {
                let mut plugin = json!({"name": p.name, "path": p.path, "source": p.source});
                if let (Some(version), Some(map)) = (&p.version, plugin.as_object_mut()) {
                    map.insert("version".into(), json!(version));
                }
                plugin
            })
            .collect();
        json!({
            "type": "system",
            "subtype": "init",
            "cwd": self.cwd,
            "session_id": session_id,
            "tools": self.tools,
            "mcp_servers": mcp,
            "model": model,
            "permissionMode": self.permission_mode,
            "slash_commands": self.slash_commands,
            "apiKeySource": self.api_key_source,
            "output_style": self.output_style,
            "agents": self.agents,
            "skills": self.skills,
            "plugins": plugins,
            "uuid": uuid::Uuid::new_v4().to_string(),
            "additional_directories": self.additional_directories,
            "spine_version": env!("CARGO_PKG_VERSION"),
        })
    }
}

/// The MCP servers of a run for `init`: every server that was to start, by name in
/// configuration order, `connected` or `failed`.
pub fn mcp_statuses(mcp: &spine_agent::McpTools) -> Vec<(String, String)> {
    mcp.statuses().iter().map(|(name, status)| (name.clone(), status.as_str().to_owned())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_init_line_has_none_of_claude_codes_fields_that_spine_leaves_out() {
        let line = InitInfo::default().line("s", "m");
        for field in crate::render::stream_json::left_out::INIT {
            assert!(line.get(field).is_none(), "{field}");
        }
    }

    #[test]
    fn the_init_line_lists_every_server_with_its_status_and_a_plugin_version_only_when_known() {
        let info = InitInfo {
            mcp_servers: vec![("good".into(), "connected".into()), ("bad".into(), "failed".into())],
            plugins: vec![
                InitPlugin { name: "kit".into(), path: "/p".into(), source: "kit@inline".into(), version: None },
                InitPlugin { name: "k2".into(), path: "/q".into(), source: "k2@m".into(), version: Some("1.0".into()) },
            ],
            ..InitInfo::default()
        };
        let line = info.line("s", "m");
        assert_eq!(
            line["mcp_servers"],
            json!([{"name": "good", "status": "connected"}, {"name": "bad", "status": "failed"}])
        );
        assert_eq!(line["plugins"][0], json!({"name": "kit", "path": "/p", "source": "kit@inline"}));
        assert_eq!(line["plugins"][1]["version"], "1.0");
        assert_eq!(line["spine_version"], env!("CARGO_PKG_VERSION"));
    }
}
