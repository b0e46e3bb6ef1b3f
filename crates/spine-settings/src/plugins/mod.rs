//! Plugins as Claude Code 2.1 lays them out: which are enabled, what each brings, and the
//! settings layers of their hooks and MCP servers ([`load`]).
//!
//! Contract:
//! - A plugin is enabled by `enabledPlugins` (`{"name@marketplace": true}`) at any settings
//!   tier — the highest-precedence tier that names it decides — or, when no tier names it, by
//!   being installed for this project (a user install, or a project or local install whose
//!   project is this one) unless its manifest says `defaultEnabled: false`. `--plugin-dir DIR`
//!   loads the plugin in DIR as `name@inline` for the session, in place of an installed plugin
//!   of the same name.
//! - Trust: a plugin enabled (or installed) by the project's own files is code someone else
//!   wrote; in an untrusted project it is not loaded, and [`Loaded::withheld`] names it.
//! - An enabled plugin is found in spine's store (`$SPINE_HOME/plugins`), then in Claude Code's
//!   (`~/.claude/plugins`), read only: what a user installed with Claude Code loads unchanged.
//!   An installed plugin without a manifest is named by its id (its directory is a version's).
//!   One that is not installed, or does not load (a bad manifest, a path leaving the plugin,
//!   an unreadable file), is a warning naming the plugin, the file and the field; spine goes on.
//! - What a plugin brings ([`Plugin`]): `commands/`, `agents/`, `output-styles/` (each
//!   replaced by the manifest's field when it sets one), `skills/` plus the manifest's `skills`
//!   (or a root `SKILL.md` alone as a single skill), `hooks/hooks.json` plus the manifest's
//!   `hooks`, `.mcp.json` plus the manifest's `mcpServers`. Every path stays inside the
//!   plugin's directory once links are resolved; one that leaves it is refused.
//! - Hooks and MCP servers become settings layers of [`Origin::Plugin`] (after the settings'
//!   own, so their hooks run after the settings' hooks of the same event). MCP servers are named
//!   `plugin:<plugin>:<server>` (tools `mcp__plugin_<plugin>_<server>__<tool>`, as in Claude
//!   Code); `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}` are
//!   replaced in their `command`, `args`, `env`, `url` and `headers`, and stdio servers get the
//!   three variables. Hook commands get the plugin's two as environment variables and, as in
//!   Claude Code, have them replaced in their text: an exec-form hook (`args`) always, a
//!   shell-form `command` when the value is made of characters a shell reads literally (a
//!   directory that is not stays `${…}`, for the shell to expand from the environment).
//! - The data directory (`CLAUDE_PLUGIN_DATA`) is `<store>/data/<id>/`, made when a plugin with
//!   hooks or MCP servers (the code it runs) loads.

pub mod copy;
pub mod fetch;
pub mod git;
pub mod install;
pub mod known;
pub mod manifest;
pub mod marketplace;
pub mod settings_file;
pub mod store;
pub mod strict;
pub mod validate;

mod components;
mod files;
mod paths;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use spine_protocol::parse_memo::ParseMemo;
use thiserror::Error;

use crate::source::{Origin, SettingsLayer};
use crate::trust::{ProjectTrust, Scope};

pub use components::{Plugin, SkillSource};
pub use manifest::Manifest;
pub use store::{Install, Installed, KnownMarketplace, Store};

/// The marketplace part of a `--plugin-dir` plugin's id.
pub const INLINE: &str = "inline";

/// A plugin file that could not be used: the file, the field, why.
#[derive(Debug, Clone, PartialEq, Eq, Error, serde::Serialize, serde::Deserialize)]
#[error("{}: {field}: {reason}", file.display())]
pub struct PluginError {
    /// The file.
    pub file: PathBuf,
    /// The JSON field (`author.name`, `commands[1]`) or `(file)`.
    pub field: String,
    /// Why.
    pub reason: String,
}

impl PluginError {
    /// An error about `field` of `file`.
    pub fn new(file: &Path, field: &str, reason: impl Into<String>) -> Self {
        PluginError { file: file.to_path_buf(), field: field.to_owned(), reason: reason.into() }
    }
}

/// What [`load`] reads.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The settings layers, lowest precedence first (after trust withholding).
    pub layers: &'a [SettingsLayer],
    /// The layers withheld from an untrusted project (for [`Loaded::withheld`]).
    pub withheld_layers: &'a [SettingsLayer],
    /// The project's trust.
    pub trust: ProjectTrust,
    /// `SPINE_HOME`.
    pub spine_home: &'a Path,
    /// The user's home (Claude Code's store); `None` reads only spine's.
    pub home: Option<&'a Path>,
    /// The project directory.
    pub project_dir: &'a Path,
    /// `--plugin-dir`, in order.
    pub plugin_dirs: &'a [PathBuf],
    /// Where what a plugin's files say is remembered across runs.
    pub memo: &'a ParseMemo,
}

/// The enabled plugins and what loading them said.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The plugins, in load order (`--plugin-dir` first, then by id).
    pub plugins: Vec<Plugin>,
    /// Their hooks and MCP servers as settings layers.
    pub layers: Vec<SettingsLayer>,
    /// Plugins the untrusted project enables, not loaded: (the file, the plugin id).
    pub withheld: Vec<(PathBuf, String)>,
    /// Plugins that did not load, and unknown manifest fields.
    pub warnings: Vec<String>,
    /// Manifest fields Claude Code has that spine does not apply.
    pub notes: Vec<String>,
}

/// Who asked for a plugin.
#[derive(Debug, Clone)]
struct Enabler {
    scope: Scope,
    label: String,
}

/// Loads the enabled plugins (see the module contract).
pub fn load(request: &Request<'_>) -> Loaded {
    let mut loaded = Loaded::default();
    let spine_store = Store::spine(request.spine_home);
    let stores: Vec<Store> = std::iter::once(spine_store.clone()).chain(request.home.map(Store::claude)).collect();
    let installs = installs(&stores, request.project_dir, &mut loaded.warnings);
    let reader = components::Reader {
        store: &spine_store,
        bases: paths::CanonicalBases::new(stores.iter().map(|store| store.dir.join("cache"))),
        memo: request.memo,
        project_dir: request.project_dir,
    };
    let (choices, withheld) = enabled(request, &mut loaded.warnings);
    loaded.withheld = withheld;

    let mut taken: Vec<String> = Vec::new();
    for dir in request.plugin_dirs {
        let enabler = Enabler { scope: Scope::CommandLine, label: "--plugin-dir".to_owned() };
        match reader.read(dir, None, None, enabler.scope, &enabler.label) {
            Ok(read) => {
                taken.push(read.plugin.name.clone());
                accept(&mut loaded, read);
            }
            Err(error) => loaded.warnings.push(format!("plugin {} not loaded: {error}", dir.display())),
        }
    }
    // Enabled by a settings file, or installed and on by default.
    let mut ids: Vec<&String> = choices.keys().chain(installs.keys()).collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        let (name, marketplace) = split_id(id);
        if taken.iter().any(|t| t == name) {
            continue;
        }
        let install = installs.get(id);
        let enabler = match (choices.get(id), install) {
            (Some((false, _)), _) => continue,
            (Some((true, enabler)), _) => enabler.clone(),
            (None, Some((install, scope))) => {
                Enabler { scope: *scope, label: format!("installed ({} scope)", install.scope) }
            }
            (None, None) => continue,
        };
        let Some((install, _)) = install else {
            loaded.warnings.push(format!(
                "plugin {id} is enabled ({}) but not installed: `spine plugin install {id}`",
                enabler.label
            ));
            continue;
        };
        if enabler.scope == Scope::Project && !request.trust.is_trusted() {
            if !loaded.withheld.iter().any(|(_, withheld)| withheld == id) {
                loaded.withheld.push((PathBuf::from(&enabler.label), id.clone()));
            }
            continue;
        }
        match reader.read(&install.install_path, marketplace, Some(name), enabler.scope, &enabler.label) {
            Ok(read) if !choices.contains_key(id) && read.plugin.default_enabled == Some(false) => {}
            Ok(read) => accept(&mut loaded, read),
            Err(error) => loaded.warnings.push(format!("plugin {id} not loaded: {error}")),
        }
    }
    // A plugin the project enables that loads anyway (the user installed it) is not withheld.
    let plugins = &loaded.plugins;
    loaded.withheld.retain(|(_, id)| !plugins.iter().any(|p| &p.id == id));
    loaded
}

fn accept(loaded: &mut Loaded, read: components::Read) {
    loaded.layers.extend(read.layers);
    loaded.warnings.extend(read.warnings);
    loaded.notes.extend(read.notes);
    loaded.plugins.push(read.plugin);
}

/// `name@marketplace` as its two parts (no `@`: the whole is the name).
pub fn split_id(id: &str) -> (&str, Option<&str>) {
    match id.rsplit_once('@') {
        Some((name, marketplace)) => (name, Some(marketplace)),
        None => (id, None),
    }
}

/// The installations that apply to this project, by id: spine's store first, then Claude
/// Code's; a project or local install only for its own project.
fn installs(stores: &[Store], project: &Path, warnings: &mut Vec<String>) -> BTreeMap<String, (Install, Scope)> {
    let mut out = BTreeMap::new();
    for store in stores {
        let installed = match store.installed() {
            Ok(installed) => installed,
            Err(error) => {
                warnings.push(format!("installed plugins not read: {error}"));
                continue;
            }
        };
        for (id, list) in installed.plugins {
            if out.contains_key(&id) {
                continue;
            }
            let here = list.iter().find(|i| i.scope != "user" && i.project_path.as_deref() == Some(project));
            let chosen = here
                .map(|i| (i.clone(), Scope::Project))
                .or_else(|| list.iter().find(|i| i.scope == "user").map(|i| (i.clone(), Scope::User)));
            if let Some(chosen) = chosen {
                out.insert(id, chosen);
            }
        }
    }
    out
}

/// Each id `enabledPlugins` decides, with its decision and the tier that made it; and the ids
/// the untrusted project's withheld files enable.
#[allow(clippy::type_complexity)]
fn enabled(
    request: &Request<'_>,
    warnings: &mut Vec<String>,
) -> (BTreeMap<String, (bool, Enabler)>, Vec<(PathBuf, String)>) {
    let mut choices = BTreeMap::new();
    let mut withheld = Vec::new();
    let mut read = |origin: &Origin, value: &Value, held: bool| {
        let Value::Object(map) = value else {
            warnings.push(format!("{origin}: enabledPlugins: expected an object of \"name@marketplace\": true|false"));
            return;
        };
        for (id, on) in map {
            let Some(on) = on.as_bool() else {
                warnings.push(format!("{origin}: enabledPlugins.{id}: expected true or false; ignored"));
                continue;
            };
            let file = origin.path().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(origin.to_string()));
            let untrusted = origin.scope() == Scope::Project && !request.trust.is_trusted();
            if held || untrusted {
                if on {
                    withheld.push((file, id.clone()));
                }
                continue;
            }
            choices.insert(id.clone(), (on, Enabler { scope: origin.scope(), label: origin.to_string() }));
        }
    };
    for layer in request.layers {
        if let Some(value) = layer.value.get("enabledPlugins") {
            read(&layer.origin, value, false);
        }
    }
    for layer in request.withheld_layers {
        if let Some(value) = layer.value.get("enabledPlugins") {
            read(&layer.origin, value, true);
        }
    }
    (choices, withheld)
}

#[cfg(test)]
mod tests;
