//! Finding and reading the settings files of a run ([`Settings::discover`]), and withholding
//! what an untrusted project's own files may not set (see [`crate::trust`]). Managed files
//! ([`crate::managed`]) are read last, never filtered by `--setting-sources`, never withheld.
//!
//! A settings file must be a regular file of at most 4 MiB ([`CONFIG_FILE_CAP`]): a FIFO,
//! socket, device or directory in its place is an error naming the file (`(file)`: why), never
//! a hang.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::config_file::{CONFIG_FILE_CAP, read_config_file};
use spine_protocol::permission::PermissionMode;

use crate::managed::ManagedLocation;
use crate::project::SettingSources;
use crate::settings::{McpEnabled, Settings, SharedMemo};
use crate::source::{Origin, SettingsError, SettingsLayer, type_name};
use crate::trust::{ProjectTrust, Scope, Skipped, SkippedItem};

/// What [`Settings::discover_with`] reads.
#[derive(Debug, Clone)]
pub struct Discovery<'a> {
    /// `SPINE_HOME` (its `settings.json` is a user source).
    pub spine_home: &'a Path,
    /// The user's home directory (its `.claude/settings.json` is a user source); `None`
    /// skips that file.
    pub home: Option<&'a Path>,
    /// The project directory (see [`crate::project`]).
    pub project_dir: &'a Path,
    /// Each `--settings FILE|JSON`, in order.
    pub cli: &'a [String],
    /// The project's trust.
    pub trust: ProjectTrust,
    /// `--setting-sources` (default: all).
    pub sources: SettingSources,
    /// Where managed settings are read ([`ManagedLocation::None`]: nowhere).
    pub managed: ManagedLocation,
    /// `--plugin-dir`, in order.
    pub plugin_dirs: &'a [PathBuf],
}

/// A settings file discovery looked for, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsFile {
    /// The file and its kind.
    pub origin: Origin,
    /// Read, absent, not selected, or the same file as one read before.
    pub status: FileStatus,
}

/// What became of a [`SettingsFile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Found and read (as a layer of the settings).
    Read,
    /// Looked for and not found.
    NotFound,
    /// Not read: `--setting-sources` does not select its kind.
    NotSelected,
    /// The same file as one already read under another name (run from the home directory,
    /// `.claude/settings.json` is `~/.claude/settings.json`): read once.
    SameAs(PathBuf),
}

impl Settings {
    /// Finds and merges the settings of a run, applying the project's trust: an untrusted
    /// project's files lose what [`crate::trust`] lists. Reads the `$SPINE_HOME` and `.spine/`
    /// and `.claude/` files of the project, all sources selected, without `~/.claude`.
    pub fn discover(
        spine_home: &Path,
        project_dir: &Path,
        cli: &[String],
        trust: ProjectTrust,
    ) -> Result<Settings, SettingsError> {
        Self::discover_with(&Discovery {
            spine_home,
            home: None,
            project_dir,
            cli,
            trust,
            sources: SettingSources::default(),
            managed: ManagedLocation::None,
            plugin_dirs: &[],
        })
    }

    /// Finds and merges the settings of a run. Files, lowest precedence first:
    /// `~/.claude/settings.json`, `$SPINE_HOME/settings.json`, `.claude/settings.json`,
    /// `.spine/settings.json`, `.claude/settings.local.json`, `.spine/settings.local.json`,
    /// then each `--settings`, then the managed files of `d.managed`. [`Settings::files`]
    /// records every file looked for.
    pub fn discover_with(d: &Discovery<'_>) -> Result<Settings, SettingsError> {
        let mut layers = Vec::new();
        let mut files = Vec::new();
        let project = |dir: &str, name: &str| d.project_dir.join(dir).join(name);
        let mut candidates = Vec::new();
        if let Some(home) = d.home {
            candidates.push(Origin::User(home.join(".claude").join("settings.json")));
        }
        candidates.extend([
            Origin::User(d.spine_home.join("settings.json")),
            Origin::Project(project(".claude", "settings.json")),
            Origin::Project(project(".spine", "settings.json")),
            Origin::Local(project(".claude", "settings.local.json")),
            Origin::Local(project(".spine", "settings.local.json")),
        ]);
        // Canonical paths already read, so one file reached by two names is read once.
        let mut seen: Vec<(PathBuf, PathBuf)> = Vec::new();
        for origin in candidates {
            let Some(path) = origin.path().map(Path::to_path_buf) else { continue };
            if !d.sources.includes(origin.source()) {
                files.push(SettingsFile { origin, status: FileStatus::NotSelected });
                continue;
            }
            let canonical = path.canonicalize().ok();
            if let Some(c) = &canonical
                && let Some((_, first)) = seen.iter().find(|(seen, _)| seen == c)
            {
                let first = first.clone();
                files.push(SettingsFile { origin, status: FileStatus::SameAs(first) });
                continue;
            }
            match read_settings_file(&origin, &path, Missing::Skip)? {
                Some(text) => {
                    layers.push(parse_layer(origin.clone(), &text)?);
                    if let Some(c) = canonical {
                        seen.push((c, path));
                    }
                    files.push(SettingsFile { origin, status: FileStatus::Read });
                }
                None => files.push(SettingsFile { origin, status: FileStatus::NotFound }),
            }
        }
        for (i, arg) in d.cli.iter().enumerate() {
            let layer = read_cli(i + 1, arg)?;
            if layer.origin.path().is_some() {
                files.push(SettingsFile { origin: layer.origin.clone(), status: FileStatus::Read });
            }
            layers.push(layer);
        }
        for path in d.managed.files()? {
            let origin = Origin::Managed(path.clone());
            let status = match read_settings_file(&origin, &path, Missing::Skip)? {
                Some(text) => {
                    layers.push(parse_layer(origin.clone(), &text)?);
                    FileStatus::Read
                }
                None => FileStatus::NotFound,
            };
            files.push(SettingsFile { origin, status });
        }
        let mut withheld = Vec::new();
        let mut skipped = Vec::new();
        if !d.trust.is_trusted() {
            let enabled = mcp_enabled(&layers)?;
            for layer in &mut layers {
                if layer.origin.scope() == Scope::Project
                    && let Some(w) = withhold(layer, &enabled, &mut skipped)
                {
                    withheld.push(w);
                }
            }
        }
        let parse_memo = SharedMemo::of_project(d.spine_home, d.project_dir);
        let plugins = crate::plugins::load(&crate::plugins::Request {
            layers: &layers,
            withheld_layers: &withheld,
            trust: d.trust,
            spine_home: d.spine_home,
            home: d.home,
            project_dir: d.project_dir,
            plugin_dirs: d.plugin_dirs,
            memo: &parse_memo,
        });
        layers.extend(plugins.layers);
        let mut settings = Self::from_layers(layers)?;
        settings.plugins = plugins.plugins;
        settings.parse_memo = parse_memo;
        settings.withheld_plugins = plugins.withheld;
        settings.warnings.extend(plugins.warnings);
        settings.notes.extend(plugins.notes);
        settings.trust = d.trust;
        settings.skipped = skipped;
        settings.withheld = withheld;
        settings.files = files;
        settings.sources = d.sources.clone();
        Ok(settings)
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

pub(crate) fn parse_layer(origin: Origin, text: &str) -> Result<SettingsLayer, SettingsError> {
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
    if let Some(env) = layer.value.remove("env") {
        let n = env.as_object().map_or(1, Map::len);
        if n > 0 {
            skip(SkippedItem::Env(n));
        }
        out.insert("env".to_owned(), env);
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
        // More roots would widen the workspace boundary: only a trusted project may add them.
        if let Some(dirs) = perms.remove("additionalDirectories") {
            let n = dirs.as_array().map_or(1, Vec::len);
            if n > 0 {
                skip(SkippedItem::AdditionalDirectories(n));
            }
            withheld_perms.insert("additionalDirectories".to_owned(), dirs);
        }
        let loosening =
            perms.get("defaultMode").and_then(Value::as_str).and_then(|m| m.parse::<PermissionMode>().ok()).filter(
                |m| match m {
                    PermissionMode::AcceptEdits | PermissionMode::BypassPermissions => true,
                    PermissionMode::Default | PermissionMode::Plan | PermissionMode::DontAsk => false,
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
    if let Some(Value::Object(subagents)) = layer.value.get_mut("subagents")
        && let Some(dirs) = subagents.remove("directories")
    {
        skip(SkippedItem::SubagentDirectories);
        out.insert("subagents".to_owned(), serde_json::json!({ "directories": dirs }));
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
    // The sandbox: a project may tighten it, never loosen it.
    if let Some(sandbox) = layer.value.get_mut("sandbox")
        && let Some((withheld, names)) = crate::sandbox::withhold(sandbox)
    {
        skip(SkippedItem::Sandbox(names));
        out.insert("sandbox".to_owned(), withheld);
    }
    // Where traces are sent: an untrusted project may not send them away.
    if let Some(telemetry) = layer.value.remove("telemetry") {
        skip(SkippedItem::Telemetry);
        out.insert("telemetry".to_owned(), telemetry);
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
