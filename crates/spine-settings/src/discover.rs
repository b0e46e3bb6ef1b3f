//! Finding and reading the settings files of a run ([`Settings::discover`]), and withholding
//! what an untrusted project's own files may not set (see [`crate::trust`]).
//!
//! A settings file must be a regular file of at most 4 MiB ([`CONFIG_FILE_CAP`]): a FIFO,
//! socket, device or directory in its place is an error naming the file (`(file)`: why), never
//! a hang.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_core::config_file::{CONFIG_FILE_CAP, read_config_file};
use spine_protocol::permission::PermissionMode;

use crate::settings::{McpEnabled, Settings};
use crate::source::{Origin, SettingsError, SettingsLayer, type_name};
use crate::trust::{ProjectTrust, Scope, Skipped, SkippedItem};

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
