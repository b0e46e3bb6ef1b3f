//! Settings files: found, read, and merged in precedence order.
//!
//! Sources, lowest precedence first: `$SPINE_HOME/settings.json` (user, `SPINE_HOME` defaults
//! to `~/.spine`), `<project>/.spine/settings.json`, `<project>/.spine/settings.local.json`,
//! then each `--settings FILE|JSON` in order. Hook lists are appended across sources (none
//! replaces another); scalar keys take the value of the highest-precedence source that sets
//! them; permission rule lists are appended.
//!
//! `discover` applies project trust (see [`crate::trust`]): when the project is not trusted,
//! what its own files set that could run code or loosen permissions is moved out of the
//! layers into [`Settings::withheld`] and listed in [`Settings::skipped`]; [`Settings::from_layers`]
//! itself only merges.
//!
//! The shape is Claude Code's, so a `.claude/settings.json` passed with `--settings` works as it
//! is: keys spine does not use are ignored with a note (shown with `-v`), never an error. A
//! malformed value is an error naming the file, the JSON path and the reason.
//!
//! A settings file must be a regular file of at most 4 MiB ([`CONFIG_FILE_CAP`]): a FIFO,
//! socket, device or directory in its place is an error naming the file (`(file)`: why), never
//! a hang.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_core::config_file::{CONFIG_FILE_CAP, read_config_file};
use spine_core::skills::SkillRootKind;
use spine_core::stages::compact_context::CompactStrategy;
use spine_protocol::permission::PermissionMode;
use thiserror::Error;

use crate::trust::{McpApproval, ProjectTrust, Scope, Skipped, SkippedItem};

/// Where a settings value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `$SPINE_HOME/settings.json`.
    User(PathBuf),
    /// `.spine/settings.json`.
    Project(PathBuf),
    /// `.spine/settings.local.json`.
    Local(PathBuf),
    /// The n-th `--settings` (1-based), a file or inline JSON.
    Cli {
        /// Position on the command line.
        index: usize,
        /// The file, when it was one.
        path: Option<PathBuf>,
    },
}

impl Origin {
    /// The file of this source, if it is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Origin::User(p) | Origin::Project(p) | Origin::Local(p) => Some(p),
            Origin::Cli { path, .. } => path.as_deref(),
        }
    }

    /// Who stands behind this source: the user, the project, or the command line. Every file
    /// found inside the project directory is [`Scope::Project`].
    pub fn scope(&self) -> Scope {
        match self {
            Origin::User(_) => Scope::User,
            Origin::Project(_) | Origin::Local(_) => Scope::Project,
            Origin::Cli { .. } => Scope::CommandLine,
        }
    }

    /// The directory relative paths of this source resolve against (its file's directory, or
    /// the current directory for inline JSON).
    pub fn base_dir(&self) -> Option<&Path> {
        self.path().and_then(Path::parent)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::User(p) | Origin::Project(p) | Origin::Local(p) => write!(f, "{}", p.display()),
            Origin::Cli { index, path: Some(p) } => write!(f, "{} (--settings #{index})", p.display()),
            Origin::Cli { index, path: None } => write!(f, "--settings #{index} (inline JSON)"),
        }
    }
}

/// A settings error: which source, which JSON path, why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{origin}: {path}: {reason}")]
pub struct SettingsError {
    /// The source (file name or `--settings #n`).
    pub origin: String,
    /// The JSON path of the offending value (`permissions.allow[2]`), or `(file)`.
    pub path: String,
    /// Why.
    pub reason: String,
}

impl SettingsError {
    /// An error at a JSON path of a source.
    pub fn at(origin: &Origin, path: impl Into<String>, reason: impl Into<String>) -> Self {
        SettingsError { origin: origin.to_string(), path: path.into(), reason: reason.into() }
    }
}

/// One source's parsed object.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsLayer {
    /// Where it came from.
    pub origin: Origin,
    /// Its top-level object.
    pub value: Map<String, Value>,
}

/// A permission rule as written, with its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEntry {
    /// The rule text.
    pub rule: String,
    /// Its source.
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
}

/// The merged settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// The sources, lowest precedence first.
    pub layers: Vec<SettingsLayer>,
    /// `model`, by precedence.
    pub model: Option<String>,
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
    pub token_estimator: Option<String>,
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
    /// Notes about ignored keys (shown with `-v`).
    pub notes: Vec<String>,
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
    /// The kind.
    pub kind: SkillRootKind,
}

/// Top-level keys spine reads.
const KNOWN_KEYS: &[&str] = &[
    "$schema",
    "hooks",
    "permissions",
    "model",
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
];

impl Settings {
    /// Finds and merges the settings of a run, applying the project's trust: an untrusted
    /// project's files lose what [`crate::trust`] lists.
    pub fn discover(
        spine_home: &Path,
        project_dir: &Path,
        cli: &[String],
        trust: ProjectTrust,
    ) -> Result<Settings, SettingsError> {
        let mut layers = Vec::new();
        let user = spine_home.join("settings.json");
        let candidates = [
            Origin::User(user.clone()),
            Origin::Project(project_dir.join(".spine").join("settings.json")),
            Origin::Local(project_dir.join(".spine").join("settings.local.json")),
        ];
        let user_canonical = user.canonicalize().ok();
        for origin in candidates {
            let Some(path) = origin.path() else { continue };
            // Run from the home directory, `.spine/settings.json` is the user's own file: read once.
            if origin.scope() == Scope::Project
                && user_canonical.is_some()
                && path.canonicalize().ok() == user_canonical
            {
                continue;
            }
            if let Some(text) = read_settings_file(&origin, path, Missing::Skip)? {
                layers.push(parse_layer(origin, &text)?);
            }
        }
        for (i, arg) in cli.iter().enumerate() {
            layers.push(read_cli(i + 1, arg)?);
        }
        let mut withheld = Vec::new();
        let mut skipped = Vec::new();
        if !trust.is_trusted() {
            let enabled = mcp_enabled(&layers)?;
            for layer in &mut layers {
                if layer.origin.scope() == Scope::Project
                    && let Some(w) = withhold(layer, &enabled, &mut skipped)
                {
                    withheld.push(w);
                }
            }
        }
        let mut settings = Self::from_layers(layers)?;
        settings.trust = trust;
        settings.skipped = skipped;
        settings.withheld = withheld;
        Ok(settings)
    }

    /// How a project MCP server named `name` from a source of `scope` stands: servers of the
    /// user's or the command line's settings are the user's own; a project's run when the
    /// project is trusted or the user's settings enable them.
    pub fn mcp_approval(&self, scope: Scope, name: &str) -> McpApproval {
        match scope {
            Scope::User | Scope::CommandLine => McpApproval::UserConfigured,
            Scope::Project if self.trust.is_trusted() => McpApproval::Trusted,
            Scope::Project => match self.mcp_enabled.enabling(name) {
                Some(by) => McpApproval::Enabled { by },
                None => McpApproval::Untrusted,
            },
        }
    }

    /// Merges already-read layers (lowest precedence first).
    pub fn from_layers(layers: Vec<SettingsLayer>) -> Result<Settings, SettingsError> {
        let mut s = Settings::default();
        for layer in &layers {
            let origin = &layer.origin;
            for (key, value) in &layer.value {
                match key.as_str() {
                    "model" => s.model = Some(expect_str(origin, "model", value)?.to_owned()),
                    "permissions" => merge_permissions(&mut s, origin, value)?,
                    "stop" => {
                        let obj = expect_object(origin, "stop", value)?;
                        for (k, v) in obj {
                            match k.as_str() {
                                "max_forced_continuations" => {
                                    s.max_forced_continuations =
                                        Some(expect_u32(origin, "stop.max_forced_continuations", v)?);
                                }
                                other => {
                                    return Err(SettingsError::at(origin, format!("stop.{other}"), "unknown field"));
                                }
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
                                other => {
                                    return Err(SettingsError::at(origin, format!("web.{other}"), "unknown field"));
                                }
                            }
                        }
                    }
                    "env_passthrough" => merge_env_passthrough(&mut s, origin, value)?,
                    "model_options" => crate::model_options::merge(&mut s.model_timeouts, origin, value)?,
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
                                other => {
                                    return Err(SettingsError::at(origin, format!("mcp.{other}"), "unknown field"));
                                }
                            }
                        }
                    }
                    k if KNOWN_KEYS.contains(&k) => {}
                    other => s.notes.push(format!("{origin}: ignoring `{other}` (not used by spine)")),
                }
            }
        }
        s.layers = layers;
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

fn read_cli(index: usize, arg: &str) -> Result<SettingsLayer, SettingsError> {
    let trimmed = arg.trim_start();
    if trimmed.starts_with('{') {
        return parse_layer(Origin::Cli { index, path: None }, arg);
    }
    let path = PathBuf::from(arg);
    let origin = Origin::Cli { index, path: Some(path.clone()) };
    let text = read_settings_file(&origin, &path, Missing::Fail)?.unwrap_or_default();
    parse_layer(origin, &text)
}

/// What a settings file that does not exist means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// Nothing (a discovered location): `Ok(None)`.
    Skip,
    /// An error (a file named with `--settings`).
    Fail,
}

/// Reads one settings file: a regular file of at most [`CONFIG_FILE_CAP`] bytes, opened
/// without blocking and checked by descriptor, so a FIFO, a socket or a device (`/dev/zero`)
/// is refused instead of hanging the run or filling memory.
fn read_settings_file(origin: &Origin, path: &Path, missing: Missing) -> Result<Option<String>, SettingsError> {
    match read_config_file(path, CONFIG_FILE_CAP) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() && missing == Missing::Skip => Ok(None),
        Err(e) => Err(SettingsError::at(origin, "(file)", e.to_string())),
    }
}

fn parse_layer(origin: Origin, text: &str) -> Result<SettingsLayer, SettingsError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        SettingsError::at(&origin, format!("line {}, column {}", e.line(), e.column()), format!("invalid JSON: {e}"))
    })?;
    match value {
        Value::Object(map) => Ok(SettingsLayer { origin, value: map }),
        other => {
            Err(SettingsError::at(&origin, "(root)", format!("expected a JSON object, found {}", type_name(&other))))
        }
    }
}

fn merge_permissions(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    let obj = expect_object(origin, "permissions", value)?;
    for (key, v) in obj {
        let list = match key.as_str() {
            "allow" => &mut s.permissions.allow,
            "ask" => &mut s.permissions.ask,
            "deny" => &mut s.permissions.deny,
            "defaultMode" => {
                let text = expect_str(origin, "permissions.defaultMode", v)?;
                let mode = text
                    .parse::<PermissionMode>()
                    .map_err(|e| SettingsError::at(origin, "permissions.defaultMode", e))?;
                s.permissions.default_mode = Some(mode);
                continue;
            }
            "additionalDirectories" | "disableBypassPermissionsMode" => {
                s.notes.push(format!("{origin}: ignoring `permissions.{key}` (not used by spine)"));
                continue;
            }
            other => {
                return Err(SettingsError::at(
                    origin,
                    format!("permissions.{other}"),
                    "unknown field (expected allow, ask, deny, defaultMode)",
                ));
            }
        };
        let Value::Array(items) = v else {
            return Err(SettingsError::at(
                origin,
                format!("permissions.{key}"),
                format!("expected an array of rules, found {}", type_name(v)),
            ));
        };
        for (i, item) in items.iter().enumerate() {
            let path = format!("permissions.{key}[{i}]");
            let rule = expect_str(origin, &path, item)?;
            list.push(RuleEntry { rule: rule.to_owned(), origin: origin.clone(), path });
        }
    }
    Ok(())
}

fn merge_context(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    for (k, v) in expect_object(origin, "context", value)? {
        let path = format!("context.{k}");
        match k.as_str() {
            "compaction_threshold_tokens" => {
                let n = v.as_u64().ok_or_else(|| {
                    SettingsError::at(origin, &path, format!("expected a non-negative integer, found {v}"))
                })?;
                s.compaction_threshold_tokens = Some(n);
            }
            "compaction_strategy" => {
                s.compaction_strategy = Some(match expect_str(origin, &path, v)? {
                    "sandwich" => CompactStrategy::Sandwich,
                    "summarize" => CompactStrategy::Summarize,
                    other => {
                        return Err(SettingsError::at(
                            origin,
                            &path,
                            format!("unknown strategy `{other}` (sandwich or summarize)"),
                        ));
                    }
                });
            }
            "token_estimator" => {
                let e = expect_str(origin, &path, v)?;
                if !matches!(e, "words" | "bpe") {
                    return Err(SettingsError::at(origin, &path, format!("unknown estimator `{e}` (words or bpe)")));
                }
                s.token_estimator = Some(e.to_owned());
            }
            other => return Err(SettingsError::at(origin, format!("context.{other}"), "unknown field")),
        }
    }
    Ok(())
}

fn merge_skills(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    for (k, v) in expect_object(origin, "skills", value)? {
        match k.as_str() {
            "roots" => {
                let Value::Array(items) = v else {
                    return Err(SettingsError::at(
                        origin,
                        "skills.roots",
                        format!("expected an array, found {}", type_name(v)),
                    ));
                };
                let mut roots = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let path = format!("skills.roots[{i}]");
                    roots.push(match item {
                        Value::String(p) => SkillRootSetting { path: p.clone(), kind: SkillRootKind::Live },
                        Value::Object(o) => {
                            let p = o.get("path").and_then(Value::as_str).ok_or_else(|| {
                                SettingsError::at(origin, format!("{path}.path"), "expected a string")
                            })?;
                            let kind = match o.get("kind").and_then(Value::as_str).unwrap_or("live") {
                                "system" => SkillRootKind::System,
                                "live" => SkillRootKind::Live,
                                "curated" => SkillRootKind::Curated,
                                other => {
                                    return Err(SettingsError::at(
                                        origin,
                                        format!("{path}.kind"),
                                        format!("unknown kind `{other}` (system, live or curated)"),
                                    ));
                                }
                            };
                            SkillRootSetting { path: p.to_owned(), kind }
                        }
                        other => {
                            return Err(SettingsError::at(
                                origin,
                                &path,
                                format!("expected a path or {{path, kind}}, found {}", type_name(other)),
                            ));
                        }
                    });
                }
                s.skill_roots = Some(roots);
            }
            other => return Err(SettingsError::at(origin, format!("skills.{other}"), "unknown field")),
        }
    }
    Ok(())
}

/// `env_passthrough`: a list of provider key names. Every entry must be one of the keys spine
/// removes from children; a project's own settings files cannot opt keys in (a cloned
/// repository would hand your key to its own hooks), so there the key is ignored with a note.
fn merge_env_passthrough(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    let list = value.as_array().ok_or_else(|| {
        SettingsError::at(
            origin,
            "env_passthrough",
            format!("expected an array of key names, found {}", type_name(value)),
        )
    })?;
    let mut names = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let path = format!("env_passthrough[{i}]");
        let name = expect_str(origin, &path, entry)?;
        if !spine_process::secrets::is_provider_key(name) {
            return Err(SettingsError::at(
                origin,
                path,
                format!(
                    "{name:?} is not a provider key spine keeps from tools and hooks (known: {})",
                    spine_process::secrets::PROVIDER_KEYS.join(", ")
                ),
            ));
        }
        names.push(name.to_owned());
    }
    match origin {
        Origin::User(_) | Origin::Cli { .. } => {
            for name in names {
                if !s.env_passthrough.contains(&name) {
                    s.env_passthrough.push(name);
                }
            }
        }
        Origin::Project(_) | Origin::Local(_) => s.notes.push(format!(
            "{origin}: ignoring `env_passthrough` (only user settings and --settings may hand provider keys to tools and hooks)"
        )),
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

/// The MCP enablement of the user's and the command line's layers (a project's own layers
/// never count).
fn mcp_enabled(layers: &[SettingsLayer]) -> Result<McpEnabled, SettingsError> {
    let trusted: Vec<SettingsLayer> = layers
        .iter()
        .filter(|l| l.origin.scope() != Scope::Project)
        .map(|l| SettingsLayer {
            origin: l.origin.clone(),
            value: l
                .value
                .iter()
                .filter(|(k, _)| matches!(k.as_str(), "enableAllProjectMcpServers" | "enabledMcpjsonServers"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
        .collect();
    Ok(Settings::from_layers(trusted)?.mcp_enabled)
}

/// Moves what an untrusted project layer may not set out of it (see [`crate::trust`]);
/// returns the withheld part, if any, and records each item in `skipped`.
fn withhold(layer: &mut SettingsLayer, enabled: &McpEnabled, skipped: &mut Vec<Skipped>) -> Option<SettingsLayer> {
    let file = layer.origin.path().map(Path::to_path_buf).unwrap_or_default();
    let mut out = Map::new();
    let mut skip = |item: SkippedItem| skipped.push(Skipped { file: file.clone(), item });
    if let Some(hooks) = layer.value.remove("hooks") {
        let n = count_hook_handlers(&hooks);
        if n > 0 {
            skip(SkippedItem::Hooks(n));
        }
        out.insert("hooks".to_owned(), hooks);
    }
    if let Some(disable) = layer.value.remove("disableAllHooks") {
        if disable == Value::Bool(true) {
            skip(SkippedItem::DisableAllHooks);
        }
        out.insert("disableAllHooks".to_owned(), disable);
    }
    if let Some(Value::Object(perms)) = layer.value.get_mut("permissions") {
        let mut withheld_perms = Map::new();
        if let Some(allow) = perms.remove("allow") {
            let n = allow.as_array().map_or(1, Vec::len);
            if n > 0 {
                skip(SkippedItem::AllowRules(n));
            }
            withheld_perms.insert("allow".to_owned(), allow);
        }
        let loosening =
            perms.get("defaultMode").and_then(Value::as_str).and_then(|m| m.parse::<PermissionMode>().ok()).filter(
                |m| match m {
                    PermissionMode::AcceptEdits | PermissionMode::BypassPermissions => true,
                    PermissionMode::Default | PermissionMode::Plan => false,
                },
            );
        if let Some(mode) = loosening
            && let Some(v) = perms.remove("defaultMode")
        {
            skip(SkippedItem::DefaultMode(mode));
            withheld_perms.insert("defaultMode".to_owned(), v);
        }
        if !withheld_perms.is_empty() {
            out.insert("permissions".to_owned(), Value::Object(withheld_perms));
        }
    }
    if let Some(Value::Object(servers)) = layer.value.get_mut("mcpServers") {
        let names: Vec<String> = servers.keys().filter(|n| enabled.enabling(n).is_none()).cloned().collect();
        let mut withheld_servers = Map::new();
        for name in names {
            if let Some(v) = servers.remove(&name) {
                skip(SkippedItem::McpServer(name.clone()));
                withheld_servers.insert(name, v);
            }
        }
        if !withheld_servers.is_empty() {
            out.insert("mcpServers".to_owned(), Value::Object(withheld_servers));
        }
    }
    if let Some(Value::Object(skills)) = layer.value.get_mut("skills")
        && let Some(roots) = skills.remove("roots")
    {
        skip(SkippedItem::SkillRoots);
        out.insert("skills".to_owned(), serde_json::json!({ "roots": roots }));
    }
    if let Some(Value::Object(web)) = layer.value.get_mut("web") {
        let mut withheld_web = Map::new();
        if let Some(url) = web.remove("search_url") {
            skip(SkippedItem::WebSearchUrl);
            withheld_web.insert("search_url".to_owned(), url);
        }
        // A project may keep private networks closed, never open them.
        if web.get("allow_private_networks") == Some(&Value::Bool(true))
            && let Some(open) = web.remove("allow_private_networks")
        {
            skip(SkippedItem::WebPrivateNetworks);
            withheld_web.insert("allow_private_networks".to_owned(), open);
        }
        if !withheld_web.is_empty() {
            out.insert("web".to_owned(), Value::Object(withheld_web));
        }
    }
    if out.is_empty() { None } else { Some(SettingsLayer { origin: layer.origin.clone(), value: out }) }
}

/// Handlers in a `hooks` value (malformed parts count as one each, so they are still named).
fn count_hook_handlers(hooks: &Value) -> usize {
    let Value::Object(events) = hooks else { return 1 };
    events
        .values()
        .map(|groups| match groups {
            Value::Array(groups) => {
                groups.iter().map(|g| g.get("hooks").and_then(Value::as_array).map_or(1, Vec::len)).sum()
            }
            _ => 1,
        })
        .sum()
}

fn expect_str_list(origin: &Origin, path: &str, v: &Value) -> Result<Vec<String>, SettingsError> {
    let Value::Array(items) = v else {
        return Err(SettingsError::at(origin, path, format!("expected an array of strings, found {}", type_name(v))));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| expect_str(origin, &format!("{path}[{i}]"), item).map(str::to_owned))
        .collect()
}

fn expect_object<'a>(origin: &Origin, path: &str, v: &'a Value) -> Result<&'a Map<String, Value>, SettingsError> {
    v.as_object().ok_or_else(|| SettingsError::at(origin, path, format!("expected an object, found {}", type_name(v))))
}

fn expect_str<'a>(origin: &Origin, path: &str, v: &'a Value) -> Result<&'a str, SettingsError> {
    v.as_str().ok_or_else(|| SettingsError::at(origin, path, format!("expected a string, found {}", type_name(v))))
}

fn expect_u32(origin: &Origin, path: &str, v: &Value) -> Result<u32, SettingsError> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| SettingsError::at(origin, path, format!("expected a non-negative integer, found {v}")))
}

/// The JSON type of a value, for messages.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(origin: Origin, v: Value) -> SettingsLayer {
        SettingsLayer { origin, value: v.as_object().cloned().unwrap_or_default() }
    }

    #[test]
    fn scalar_keys_take_the_highest_precedence_and_rule_lists_append() {
        let s = Settings::from_layers(vec![
            layer(
                Origin::User("/h/settings.json".into()),
                json!({"model": "openai:a", "permissions": {"allow": ["Read"]}}),
            ),
            layer(
                Origin::Project("/p/.spine/settings.json".into()),
                json!({"model": "openai:b", "permissions": {"allow": ["Bash(git *)"], "defaultMode": "plan"}}),
            ),
            layer(Origin::Cli { index: 1, path: None }, json!({"permissions": {"deny": ["Bash(rm *)"]}})),
        ])
        .expect("valid");
        assert_eq!(s.model.as_deref(), Some("openai:b"));
        assert_eq!(s.permissions.allow.iter().map(|r| r.rule.as_str()).collect::<Vec<_>>(), ["Read", "Bash(git *)"]);
        assert_eq!(s.permissions.deny[0].rule, "Bash(rm *)");
        assert_eq!(s.permissions.default_mode, Some(PermissionMode::Plan));
    }

    #[test]
    fn mcp_servers_merge_by_name_and_web_search_url_takes_precedence() {
        let s = Settings::from_layers(vec![
            layer(Origin::User("/h/settings.json".into()), json!({"mcpServers": {"fs": {"command": "a"}, "git": {"command": "g"}}, "web": {"search_url": "http://one"}})),
            layer(Origin::Cli { index: 1, path: None }, json!({"mcpServers": {"fs": {"command": "b"}}, "web": {"search_url": "http://two"}})),
        ])
        .expect("valid");
        assert_eq!(s.mcp_servers["fs"]["command"], "b");
        assert_eq!(s.mcp_servers["git"]["command"], "g");
        assert_eq!(s.web_search_url.as_deref(), Some("http://two"));
        assert_eq!(s.mcp_origins["git"], Origin::User("/h/settings.json".into()));
        let s = Settings::from_layers(vec![layer(
            Origin::Cli { index: 1, path: None },
            json!({"mcp": {"startup_timeout_ms": 2500}}),
        )])
        .expect("valid");
        assert_eq!(s.mcp_startup_timeout_ms, Some(2500));
        let err = Settings::from_layers(vec![layer(
            Origin::Cli { index: 1, path: None },
            json!({"mcpServers": {"fs": "x"}}),
        )])
        .expect_err("bad");
        assert_eq!(err.path, "mcpServers.fs");
    }

    #[test]
    fn web_allow_private_networks_is_a_boolean_by_precedence_and_unset_by_default() {
        let unset = Settings::from_layers(vec![layer(Origin::Cli { index: 1, path: None }, json!({}))]).expect("ok");
        assert_eq!(unset.web_allow_private_networks, None);
        let s = Settings::from_layers(vec![
            layer(Origin::User("/h/settings.json".into()), json!({"web": {"allow_private_networks": true}})),
            layer(Origin::Cli { index: 1, path: None }, json!({"web": {"allow_private_networks": false}})),
        ])
        .expect("valid");
        assert_eq!(s.web_allow_private_networks, Some(false));
        let err = Settings::from_layers(vec![layer(
            Origin::Cli { index: 1, path: None },
            json!({"web": {"allow_private_networks": "yes"}}),
        )])
        .expect_err("not a boolean");
        assert_eq!(err.path, "web.allow_private_networks");
    }

    #[test]
    fn claude_only_keys_are_ignored_with_a_note() {
        let s = Settings::from_layers(vec![layer(
            Origin::Cli { index: 1, path: Some("c.json".into()) },
            json!({"statusLine": {}, "permissions": {"additionalDirectories": []}}),
        )])
        .expect("valid");
        assert_eq!(s.notes.len(), 2, "{:?}", s.notes);
        assert!(s.notes[0].contains("statusLine"));
    }

    #[test]
    fn malformed_values_name_file_path_and_reason() {
        let err = Settings::from_layers(vec![layer(
            Origin::Project("/p/.spine/settings.json".into()),
            json!({"permissions": {"allow": ["Read", 3]}}),
        )])
        .expect_err("invalid");
        assert_eq!(err.origin, "/p/.spine/settings.json");
        assert_eq!(err.path, "permissions.allow[1]");
        assert!(err.reason.contains("expected a string"), "{}", err.reason);
        let err = parse_layer(Origin::Cli { index: 2, path: None }, "{\"model\": ").expect_err("bad json");
        assert!(err.origin.contains("--settings #2"));
        assert!(err.path.starts_with("line 1"));
    }

    #[test]
    fn env_passthrough_takes_provider_keys_from_user_and_cli_settings_only() {
        let s = Settings::from_layers(vec![
            layer(Origin::User("/h/settings.json".into()), json!({"env_passthrough": ["OPENAI_API_KEY"]})),
            layer(Origin::Project("/p/.spine/settings.json".into()), json!({"env_passthrough": ["ANTHROPIC_API_KEY"]})),
            layer(Origin::Cli { index: 1, path: None }, json!({"env_passthrough": ["OPENAI_API_KEY", "GROQ_API_KEY"]})),
        ])
        .expect("settings");
        assert_eq!(s.env_passthrough, vec!["OPENAI_API_KEY".to_owned(), "GROQ_API_KEY".to_owned()]);
        assert!(s.notes.iter().any(|n| n.contains("/p/.spine/settings.json") && n.contains("env_passthrough")));
    }

    #[test]
    fn env_passthrough_refuses_unknown_names_and_non_lists_naming_file_and_field() {
        let origin = Origin::User("/h/settings.json".into());
        let err = Settings::from_layers(vec![layer(origin.clone(), json!({"env_passthrough": ["PATH"]}))])
            .expect_err("unknown key");
        assert_eq!((err.origin.as_str(), err.path.as_str()), ("/h/settings.json", "env_passthrough[0]"));
        assert!(err.reason.contains("not a provider key"), "{}", err.reason);
        let err = Settings::from_layers(vec![layer(origin.clone(), json!({"env_passthrough": "OPENAI_API_KEY"}))])
            .expect_err("not a list");
        assert_eq!(err.path, "env_passthrough");
        let err =
            Settings::from_layers(vec![layer(origin, json!({"env_passthrough": [1]}))]).expect_err("not a string");
        assert_eq!(err.path, "env_passthrough[0]");
    }

    #[test]
    fn untrusted_project_files_lose_hooks_allow_rules_loosening_mode_and_servers_but_keep_deny_and_ask() {
        let dir = tempfile::tempdir().expect("tmp");
        let (home, project) = (dir.path().join("home"), dir.path().join("project"));
        std::fs::create_dir_all(project.join(".spine")).expect("mkdir");
        std::fs::create_dir_all(&home).expect("mkdir");
        std::fs::write(home.join("settings.json"), r#"{"enabledMcpjsonServers": ["ok"]}"#).expect("write");
        let project_file = json!({
            "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}]}]},
            "permissions": {"allow": ["Bash"], "deny": ["Bash(rm *)"], "ask": ["Write"], "defaultMode": "bypassPermissions"},
            "mcpServers": {"ok": {"command": "x"}, "evil": {"command": "y"}},
            "enableAllProjectMcpServers": true,
            "disableAllHooks": true,
            "skills": {"roots": ["/"]},
            "web": {"search_url": "http://attacker.example/search", "allow_private_networks": true},
            "maxTurns": 4
        });
        std::fs::write(project.join(".spine/settings.local.json"), project_file.to_string()).expect("write");
        let s = Settings::discover(&home, &project, &[], ProjectTrust::Untrusted).expect("ok");
        assert!(s.all("hooks").next().is_none());
        assert!(s.permissions.allow.is_empty());
        assert_eq!((s.permissions.deny.len(), s.permissions.ask.len()), (1, 1));
        assert_eq!(s.permissions.default_mode, None);
        assert_eq!(s.mcp_servers.keys().collect::<Vec<_>>(), ["ok"], "enabled by the user's settings only");
        assert_eq!(s.mcp_enabled.all, None, "a project cannot enable its own servers");
        assert_eq!(s.max_turns, Some(4));
        let items: Vec<String> = s.skipped.iter().map(|k| k.item.to_string()).collect();
        assert_eq!(
            items,
            [
                "2 hooks",
                "disableAllHooks",
                "1 allow rule",
                "defaultMode bypassPermissions",
                "MCP server evil",
                "skills.roots",
                "web.search_url",
                "web.allow_private_networks"
            ]
        );
        assert!(s.all("disableAllHooks").next().is_none());
        assert_eq!((s.skill_roots.as_ref(), s.web_search_url.as_ref()), (None, None));
        assert_eq!(s.web_allow_private_networks, None, "a project cannot open private networks");
        assert_eq!(s.withheld.len(), 1);
        let trusted = Settings::discover(&home, &project, &[], ProjectTrust::Flag).expect("ok");
        assert_eq!(trusted.all("hooks").count(), 1);
        assert_eq!(trusted.permissions.default_mode, Some(PermissionMode::BypassPermissions));
        assert!(trusted.skipped.is_empty());
    }

    #[test]
    fn cli_settings_accept_inline_json_or_a_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("s.json");
        std::fs::write(&file, r#"{"model": "scripted:x.json"}"#).expect("write");
        let s = Settings::discover(
            dir.path(),
            dir.path(),
            &[file.display().to_string(), r#"{"maxTurns": 3}"#.to_owned()],
            ProjectTrust::Untrusted,
        )
        .expect("ok");
        assert_eq!(s.model.as_deref(), Some("scripted:x.json"));
        assert_eq!(s.max_turns, Some(3));
        assert!(matches!(s.layers[0].origin, Origin::Cli { index: 1, path: Some(_) }));
    }
}
