//! The merged [`Settings`] and [`Settings::from_layers`], which merges already-read layers:
//! hook lists are appended across sources (none replaces another); scalar keys take the value
//! of the highest-precedence source that sets them; permission rule lists are appended.
//!
//! Keys spine does not use are ignored with a note (shown with `-v`), never an error; a
//! malformed value is a [`SettingsError`] naming the source, the JSON path and the reason.
//! [`crate::merge`] holds the merge of the larger keys.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use spine_protocol::compaction::{CompactStrategy, TokenEstimatorKind};
use spine_protocol::parse_memo::ParseMemo;
use spine_protocol::permission::PermissionMode;
use spine_protocol::skill_root::SkillRootKind;

use crate::claude_keys;
use crate::merge::{merge_context, merge_env_passthrough, merge_permissions, merge_skills};
use crate::source::{
    Origin, SettingsError, SettingsLayer, expect_object, expect_str, expect_str_list, expect_u32, type_name,
};
use crate::trust::{McpApproval, ProjectTrust, Scope, Skipped};
use crate::unknown::unknown_key;

/// A permission rule as written, with its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEntry {
    /// The rule as written (`Bash(git *)`).
    pub rule: String,
    /// The settings source that holds it.
    pub origin: Origin,
    /// Its JSON path, for error messages.
    pub path: String,
}

/// The `permissions` section, merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionSettings {
    /// `allow` rules, appended across sources.
    pub allow: Vec<RuleEntry>,
    /// `ask` rules.
    pub ask: Vec<RuleEntry>,
    /// `deny` rules.
    pub deny: Vec<RuleEntry>,
    /// `defaultMode`, by precedence.
    pub default_mode: Option<PermissionMode>,
    /// `additionalDirectories`: more workspace roots, a union over the sources (see
    /// `directories.rs`).
    pub additional_directories: Vec<crate::directories::AddedDirectory>,
    /// The source of `disableBypassPermissionsMode: "disable"`: no run may use
    /// `bypassPermissions` (any source that sets it disables it; the highest-precedence one is
    /// named, a managed file when managed settings set it).
    pub bypass_disabled_by: Option<Origin>,
}

/// The parse memo of a run ([`ParseMemo`]: one per project, read at its first use), shared
/// by the readers of plugin agents and skills. Any two are equal: a cache does not change what
/// the settings say.
#[derive(Debug, Clone)]
pub struct SharedMemo(pub Arc<ParseMemo>);

impl SharedMemo {
    /// The memo of `project` in spine's home `spine_home`.
    pub fn of_project(spine_home: &std::path::Path, project: &std::path::Path) -> SharedMemo {
        SharedMemo(Arc::new(ParseMemo::of_project(spine_home, project)))
    }
}

impl Default for SharedMemo {
    fn default() -> Self {
        SharedMemo(Arc::new(ParseMemo::disabled()))
    }
}

impl PartialEq for SharedMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::ops::Deref for SharedMemo {
    type Target = ParseMemo;
    fn deref(&self) -> &ParseMemo {
        &self.0
    }
}

/// The settings of a run: every source's layer, and the keys spine reads merged by precedence.
/// A clone shares the layers with the original ([`crate::Layers`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The sources, lowest precedence first (shared by the clones of these settings, see
    /// [`crate::Layers`]).
    pub layers: crate::Layers,
    /// `model`, by precedence.
    pub model: Option<String>,
    /// `outputStyle` (Claude Code's): the output style's name, by precedence.
    pub output_style: Option<String>,
    /// `tool_set`: `claude` offers only Claude Code's tools (`--tool-set` overrides it).
    pub tool_set: Option<spine_protocol::tool_set::ToolSetName>,
    /// `permissions`.
    pub permissions: PermissionSettings,
    /// `stop.max_forced_continuations`, by precedence.
    pub max_forced_continuations: Option<u32>,
    /// `maxTurns` / `max_turns`, by precedence.
    pub max_turns: Option<u32>,
    /// `context.compaction_threshold_tokens`, by precedence.
    pub compaction_threshold_tokens: Option<u64>,
    /// `context.compaction_strategy` (`sandwich` or `summarize`), by precedence.
    pub compaction_strategy: Option<CompactStrategy>,
    /// `context.token_estimator` (`words` or `bpe`), by precedence.
    pub token_estimator: Option<TokenEstimatorKind>,
    /// `skills.roots`, by precedence (the whole list of the highest source that sets it).
    pub skill_roots: Option<Vec<SkillRootSetting>>,
    /// `web.search_url`: a SearXNG-compatible JSON search endpoint, by precedence.
    pub web_search_url: Option<String>,
    /// `web.allow_private_networks`, by precedence: whether WebFetch and WebSearch may reach
    /// loopback, private and link-local addresses (unset: no).
    pub web_allow_private_networks: Option<bool>,
    /// `mcpServers`, merged by server name (a later source replaces a server of the same name).
    pub mcp_servers: Map<String, Value>,
    /// `env_passthrough`: provider keys (of `spine_process::secrets::PROVIDER_KEYS`) that
    /// tools, hooks and MCP servers inherit after all; the union over user and `--settings`
    /// sources (a project's own files cannot opt a key in: that is ignored with a note).
    pub env_passthrough: Vec<String>,
    /// The source of each server of [`Settings::mcp_servers`].
    pub mcp_origins: BTreeMap<String, Origin>,
    /// `mcp.startup_timeout_ms`: how long one MCP server may take to start, by precedence
    /// (a server's own `startupTimeoutMs` wins).
    pub mcp_startup_timeout_ms: Option<u64>,
    /// Project MCP servers the user's own settings (or `--settings`) enable without trusting
    /// the project: `enableAllProjectMcpServers` and `enabledMcpjsonServers`.
    pub mcp_enabled: McpEnabled,
    /// The project's trust, as given to [`Settings::discover`].
    pub trust: ProjectTrust,
    /// What the project's files set that was not applied because the project is untrusted.
    pub skipped: Vec<Skipped>,
    /// The withheld parts of the project's layers (same origins, only the skipped keys), for
    /// `spine hooks list` and `spine mcp list`.
    pub withheld: Vec<SettingsLayer>,
    /// `model_options.timeouts`, merged field by field ([`crate::model_options`]).
    pub model_timeouts: crate::model_options::ModelTimeoutSettings,
    /// The other `model_options` keys (tool choice, streaming, output limit, temperature,
    /// prices), each by precedence ([`crate::model_options`]).
    pub model_options: crate::model_options::ModelOptionSettings,
    /// `env`: variables set for every child spine starts (Bash, command runs, processes,
    /// hooks, MCP servers), merged by name (a later source replaces a variable).
    pub env: BTreeMap<String, String>,
    /// The source of each variable of [`Settings::env`].
    pub env_origins: BTreeMap<String, Origin>,
    /// Every settings file discovery looked for, lowest precedence first (empty when built
    /// with [`Settings::from_layers`] alone).
    pub files: Vec<crate::discover::SettingsFile>,
    /// The `--setting-sources` of the discovery.
    pub sources: crate::project::SettingSources,
    /// `subagents.directories`: more directories of agent definitions (`*.md`), appended
    /// across sources, each with its source (relative paths resolve against the project).
    pub subagent_directories: Vec<(String, Origin)>,
    /// `subagents.max_concurrent`: `Task` calls of one turn running at once, by precedence.
    pub subagent_max_concurrent: Option<u32>,
    /// `subagents.max_depth`: how deep subagents may nest (1: children only), by precedence.
    pub subagent_max_depth: Option<u32>,
    /// `telemetry.otlp.endpoint`: the OTLP collector's base URL, by precedence (the
    /// `OTEL_EXPORTER_OTLP_*ENDPOINT` variables win over it).
    pub telemetry_otlp_endpoint: Option<String>,
    /// `telemetry.otlp.protocol`, by precedence.
    pub telemetry_otlp_protocol: Option<TelemetryProtocol>,
    /// `sandbox`: Claude Code's sandbox settings and spine's `mode` ([`crate::sandbox`]).
    pub sandbox: crate::sandbox::SandboxSettings,
    /// What managed settings enforce ([`crate::policy`]): `allowManagedHooksOnly`,
    /// `allowManagedPermissionRulesOnly` (and the rules it kept from applying),
    /// `allowedHttpHookUrls`, `httpHookAllowedEnvVars`.
    pub managed: crate::policy::ManagedPolicy,
    /// Notes about ignored keys (shown with `-v`).
    pub notes: Vec<String>,
    /// Warnings about values spine reads but does not implement (always shown, one line
    /// each, naming the file and the value).
    pub warnings: Vec<String>,
    /// The enabled plugins ([`crate::plugins`]); their hooks and MCP servers are layers.
    pub plugins: Vec<crate::plugins::Plugin>,
    /// Where the readers of plugin files, agents and skills remember what they parsed.
    pub parse_memo: SharedMemo,
    /// Plugins an untrusted project enables, not loaded: (the settings file, the plugin id).
    pub withheld_plugins: Vec<(std::path::PathBuf, String)>,
}

/// Project MCP servers enabled by the user's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpEnabled {
    /// The source of `enableAllProjectMcpServers: true`, by precedence.
    pub all: Option<Origin>,
    /// `enabledMcpjsonServers` names, appended across sources, with their source.
    pub names: Vec<(String, Origin)>,
}

/// A skill root as configured: a path (relative ones resolve against the project directory)
/// and its kind (`system`, `live` — the default — or `curated`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRootSetting {
    /// The path as written.
    pub path: String,
    /// `system`, `live` (when not written) or `curated`.
    pub kind: SkillRootKind,
}

/// `telemetry.otlp.protocol`: how traces reach the collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TelemetryProtocol {
    /// `http/protobuf` (the default; port 4318).
    HttpProtobuf,
    /// `grpc` (port 4317).
    Grpc,
}

/// Top-level keys spine reads.
const KNOWN_KEYS: &[&str] = &[
    "$schema",
    "hooks",
    "permissions",
    "model",
    "tool_set",
    "stop",
    "maxTurns",
    "max_turns",
    "context",
    "skills",
    "web",
    "mcpServers",
    "env",
    "disableAllHooks",
    "env_passthrough",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "mcp",
    "subagents",
    "telemetry",
    "sandbox",
];

impl Settings {
    /// How a project MCP server named `name` from a source of `scope` stands: servers of the
    /// user's or the command line's settings are the user's own; a project's run when the
    /// project is trusted or the user's settings enable them.
    pub fn mcp_approval(&self, scope: Scope, name: &str) -> McpApproval {
        match scope {
            Scope::User | Scope::CommandLine => McpApproval::UserConfigured,
            Scope::Managed => McpApproval::Managed,
            Scope::Project if self.trust.is_trusted() => McpApproval::Trusted,
            Scope::Project => match self.mcp_enabled.enabling(name) {
                Some(by) => McpApproval::Enabled { by },
                None => McpApproval::Untrusted,
            },
        }
    }

    /// Merges already-read layers (lowest precedence first), then applies
    /// `allowManagedPermissionRulesOnly` ([`crate::policy`]): it is a property of the layers,
    /// not of how they were found.
    pub fn from_layers(layers: Vec<SettingsLayer>) -> Result<Settings, SettingsError> {
        let mut s = Settings::default();
        for layer in &layers {
            let origin = &layer.origin;
            for (key, value) in &layer.value {
                match key.as_str() {
                    "model" => s.model = Some(expect_str(origin, "model", value)?.to_owned()),
                    "outputStyle" => s.output_style = Some(expect_str(origin, key, value)?.to_owned()),
                    "tool_set" => {
                        let name = expect_str(origin, "tool_set", value)?;
                        s.tool_set = Some(name.parse().map_err(|e: String| SettingsError::at(origin, "tool_set", e))?);
                    }
                    "permissions" => merge_permissions(&mut s, origin, value)?,
                    "stop" => {
                        let obj = expect_object(origin, "stop", value)?;
                        for (k, v) in obj {
                            match k.as_str() {
                                "max_forced_continuations" => {
                                    s.max_forced_continuations =
                                        Some(expect_u32(origin, "stop.max_forced_continuations", v)?);
                                }
                                other => s.warnings.push(unknown_key(
                                    origin,
                                    &format!("stop.{other}"),
                                    other,
                                    ["max_forced_continuations"],
                                )?),
                            }
                        }
                    }
                    "maxTurns" | "max_turns" => s.max_turns = Some(expect_u32(origin, key, value)?),
                    "context" => merge_context(&mut s, origin, value)?,
                    "skills" => merge_skills(&mut s, origin, value)?,
                    "web" => {
                        for (k, v) in expect_object(origin, "web", value)? {
                            match k.as_str() {
                                "search_url" => {
                                    s.web_search_url = Some(expect_str(origin, "web.search_url", v)?.to_owned())
                                }
                                "allow_private_networks" => {
                                    s.web_allow_private_networks = Some(v.as_bool().ok_or_else(|| {
                                        SettingsError::at(
                                            origin,
                                            "web.allow_private_networks",
                                            format!("expected true or false, found {v}"),
                                        )
                                    })?)
                                }
                                other => s.warnings.push(unknown_key(
                                    origin,
                                    &format!("web.{other}"),
                                    other,
                                    ["search_url", "allow_private_networks"],
                                )?),
                            }
                        }
                    }
                    "env_passthrough" => merge_env_passthrough(&mut s, origin, value)?,
                    "model_options" => {
                        crate::model_options::merge(&mut s.model_timeouts, &mut s.model_options, origin, value)?;
                    }
                    "env" => {
                        for (name, v) in expect_object(origin, "env", value)? {
                            let text = match v {
                                Value::String(t) => t.clone(),
                                Value::Number(n) => n.to_string(),
                                Value::Bool(b) => b.to_string(),
                                other => {
                                    return Err(SettingsError::at(
                                        origin,
                                        format!("env.{name}"),
                                        format!("expected a string, found {}", type_name(other)),
                                    ));
                                }
                            };
                            if name.is_empty() || name.contains('=') || name.contains('\0') || text.contains('\0') {
                                return Err(SettingsError::at(
                                    origin,
                                    format!("env.{name}"),
                                    "not a valid environment variable (empty name, `=` or NUL)",
                                ));
                            }
                            s.env.insert(name.clone(), text);
                            s.env_origins.insert(name.clone(), origin.clone());
                        }
                    }
                    "mcpServers" => {
                        for (name, server) in expect_object(origin, "mcpServers", value)? {
                            expect_object(origin, &format!("mcpServers.{name}"), server)?;
                            s.mcp_servers.insert(name.clone(), server.clone());
                            s.mcp_origins.insert(name.clone(), origin.clone());
                        }
                    }
                    "enableAllProjectMcpServers" | "enabledMcpjsonServers" if origin.scope() == Scope::Project => {
                        s.notes.push(format!(
                            "{origin}: ignoring `{key}` (only your own settings or --settings may enable project MCP servers)"
                        ));
                    }
                    "enableAllProjectMcpServers" => {
                        s.mcp_enabled.all = match value {
                            Value::Bool(true) => Some(origin.clone()),
                            Value::Bool(false) => None,
                            other => {
                                return Err(SettingsError::at(
                                    origin,
                                    key,
                                    format!("expected a boolean, found {}", type_name(other)),
                                ));
                            }
                        };
                    }
                    "enabledMcpjsonServers" => {
                        for name in expect_str_list(origin, key, value)? {
                            s.mcp_enabled.names.push((name, origin.clone()));
                        }
                    }
                    "subagents" => {
                        for (k, v) in expect_object(origin, "subagents", value)? {
                            let path = format!("subagents.{k}");
                            match k.as_str() {
                                "directories" => {
                                    for dir in expect_str_list(origin, &path, v)? {
                                        s.subagent_directories.push((dir, origin.clone()));
                                    }
                                }
                                "max_concurrent" | "max_depth" => {
                                    let n = expect_u32(origin, &path, v)?;
                                    if n == 0 {
                                        return Err(SettingsError::at(origin, path, "expected at least 1"));
                                    }
                                    match k.as_str() {
                                        "max_concurrent" => s.subagent_max_concurrent = Some(n),
                                        _ => s.subagent_max_depth = Some(n),
                                    }
                                }
                                other => s.warnings.push(unknown_key(
                                    origin,
                                    &path,
                                    other,
                                    ["directories", "max_concurrent", "max_depth"],
                                )?),
                            }
                        }
                    }
                    "mcp" => {
                        for (k, v) in expect_object(origin, "mcp", value)? {
                            match k.as_str() {
                                "startup_timeout_ms" => {
                                    let ms = v.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                                        SettingsError::at(
                                            origin,
                                            "mcp.startup_timeout_ms",
                                            format!("expected a positive integer, found {v}"),
                                        )
                                    })?;
                                    s.mcp_startup_timeout_ms = Some(ms);
                                }
                                other => s.warnings.push(unknown_key(
                                    origin,
                                    &format!("mcp.{other}"),
                                    other,
                                    ["startup_timeout_ms"],
                                )?),
                            }
                        }
                    }
                    "telemetry" => merge_telemetry(&mut s, origin, value)?,
                    // Read by `plugins::load` (before the merge) and by `spine plugin`.
                    "enabledPlugins" | "extraKnownMarketplaces" => {}
                    "sandbox" => crate::sandbox::merge(&mut s.sandbox, &mut s.warnings, &mut s.notes, origin, value)?,
                    k if crate::policy::POLICY_KEYS.contains(&k) => crate::policy::merge_key(&mut s, origin, k, value)?,
                    k if KNOWN_KEYS.contains(&k) => {}
                    other => ignored_top_level(&mut s, origin, other)?,
                }
            }
        }
        crate::policy::drop_unmanaged_rules(&mut s);
        s.layers = layers.into();
        Ok(s)
    }

    /// The values of a top-level key in every layer that sets it, lowest precedence first.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = (&'a Origin, &'a Value)> + 'a {
        self.layers.iter().filter_map(move |l| l.value.get(key).map(|v| (&l.origin, v)))
    }

    /// The value of a top-level key in the highest-precedence layer that sets it.
    pub fn last<'a>(&'a self, key: &'a str) -> Option<(&'a Origin, &'a Value)> {
        self.all(key).last()
    }
}

/// A top-level key spine does not read: a Claude Code key (a note, or a warning when leaving
/// it out matters), or an unknown one ([`crate::unknown`]).
fn ignored_top_level(s: &mut Settings, origin: &Origin, key: &str) -> Result<(), SettingsError> {
    if !claude_keys::SETTINGS_KEYS.contains(&key) {
        let known = KNOWN_KEYS.iter().chain(claude_keys::SETTINGS_KEYS).copied();
        s.warnings.push(unknown_key(origin, key, key, known)?);
        return Ok(());
    }
    if let Some((_, why)) = claude_keys::WARN_WHEN_IGNORED.iter().find(|(k, _)| *k == key) {
        s.warnings.push(format!("{origin}: `{key}` is not applied ({why})"));
    } else {
        s.notes.push(format!("{origin}: ignoring `{key}` (a Claude Code setting spine does not use)"));
    }
    Ok(())
}

impl McpEnabled {
    /// What enables a project server named `name` (`enableAllProjectMcpServers in FILE`…).
    pub fn enabling(&self, name: &str) -> Option<String> {
        if let Some(origin) = &self.all {
            return Some(format!("enableAllProjectMcpServers in {origin}"));
        }
        self.names.iter().find(|(n, _)| n == name).map(|(_, origin)| format!("enabledMcpjsonServers in {origin}"))
    }
}

/// The `telemetry` key: `{"otlp": {"endpoint": URL, "protocol": "http/protobuf" | "grpc"}}`.
fn merge_telemetry(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    for (k, v) in expect_object(origin, "telemetry", value)? {
        if k != "otlp" {
            s.warnings.push(unknown_key(origin, &format!("telemetry.{k}"), k, ["otlp"])?);
            continue;
        }
        for (field, v) in expect_object(origin, "telemetry.otlp", v)? {
            match field.as_str() {
                "endpoint" => {
                    s.telemetry_otlp_endpoint = Some(expect_str(origin, "telemetry.otlp.endpoint", v)?.to_owned());
                }
                "protocol" => {
                    s.telemetry_otlp_protocol = Some(match expect_str(origin, "telemetry.otlp.protocol", v)? {
                        "http/protobuf" => TelemetryProtocol::HttpProtobuf,
                        "grpc" => TelemetryProtocol::Grpc,
                        other => {
                            return Err(SettingsError::at(
                                origin,
                                "telemetry.otlp.protocol",
                                format!("expected \"http/protobuf\" or \"grpc\", found \"{other}\""),
                            ));
                        }
                    });
                }
                other => s.warnings.push(unknown_key(
                    origin,
                    &format!("telemetry.otlp.{other}"),
                    other,
                    ["endpoint", "protocol"],
                )?),
            }
        }
    }
    Ok(())
}
