//! One plugin as this run loads it ([`Reader::read`], see the `plugins` module contract): its
//! files' reading ([`super::files`]) taken from the parse memo while none of them changed,
//! then what depends on who enabled it and for which project — its id, data directory, and
//! its hook and MCP layers with the plugin variables replaced.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use spine_protocol::parse_memo::{ParseMemo, Stamp};

use super::files::{Files, read_files};
use super::paths::{CanonicalBases, Watch};
use super::{INLINE, PluginError, Store};
use crate::source::{Origin, PluginOrigin, SettingsLayer, type_name};
use crate::trust::Scope;

/// Where a plugin's skills are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SkillSource {
    /// A directory of `<name>/SKILL.md` skills.
    Directory(PathBuf),
    /// A directory that is one skill (its `SKILL.md` directly inside).
    Single(PathBuf),
}

/// An enabled plugin and what it brings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// `name@marketplace` (`name@inline` for `--plugin-dir`).
    pub id: String,
    /// Its name (the namespace of its commands and agents: `name:command`).
    pub name: String,
    /// Its marketplace (`None` for `--plugin-dir`).
    pub marketplace: Option<String>,
    /// Its directory (`CLAUDE_PLUGIN_ROOT`).
    pub root: PathBuf,
    /// Its data directory (`CLAUDE_PLUGIN_DATA`).
    pub data: PathBuf,
    /// `version`.
    pub version: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `defaultEnabled`.
    pub default_enabled: Option<bool>,
    /// Who enabled it: a settings file, `installed (user scope)` or `--plugin-dir`.
    pub enabled_by: String,
    /// The scope of who enabled it.
    pub scope: Scope,
    /// Command files and directories of `*.md` commands.
    pub commands: Vec<PathBuf>,
    /// Agent files and directories of `*.md` agents.
    pub agents: Vec<PathBuf>,
    /// Skills.
    pub skills: Vec<SkillSource>,
    /// Output style files and directories.
    pub output_styles: Vec<PathBuf>,
    /// The files its hooks came from.
    pub hook_files: Vec<PathBuf>,
    /// Its MCP servers, as named in the session (`plugin:<plugin>:<server>`).
    pub mcp_servers: Vec<String>,
}

/// A plugin read, with its layers and what reading it said.
pub(super) struct Read {
    pub(super) plugin: Plugin,
    pub(super) layers: Vec<SettingsLayer>,
    pub(super) warnings: Vec<String>,
    pub(super) notes: Vec<String>,
}

/// What reading plugins needs besides each plugin's directory: spine's store (data
/// directories), the canonical bases of the stores' caches, the parse memo and the project.
pub(super) struct Reader<'a> {
    pub(super) store: &'a Store,
    pub(super) bases: CanonicalBases,
    pub(super) memo: &'a ParseMemo,
    pub(super) project_dir: &'a Path,
}

/// The parse memo's kind for a plugin's [`Files`].
const FILES_KIND: &str = "plugin.files.v1";

impl Reader<'_> {
    /// Reads the plugin at `root`; `installed_as` is the name of an installed plugin's id, its
    /// name when it has no manifest (its directory is then a version's, not the plugin's name).
    /// Its files come from the parse memo while none of them changed.
    pub(super) fn read(
        &self,
        root: &Path,
        marketplace: Option<&str>,
        installed_as: Option<&str>,
        scope: Scope,
        enabled_by: &str,
    ) -> Result<Read, PluginError> {
        let (root, meta) = self
            .bases
            .canonical(root)
            .map_err(|e| PluginError::new(root, "(directory)", format!("cannot open the plugin's directory: {e}")))?;
        if !meta.is_dir() {
            return Err(PluginError::new(&root, "(directory)", "is not a directory"));
        }
        let still_valid =
            |files: &Result<Files, PluginError>| files.as_ref().is_ok_and(|f| Watch::holds(&root, &f.deps));
        let stamp = Stamp::from_metadata(&meta);
        let files = self.memo.get_or_parse_checked(FILES_KIND, &root, stamp, "-", still_valid, || {
            let mut watch = Watch::new();
            let read = read_files(&root, &mut watch).map(|files| Files { deps: watch.deps.clone(), ..files });
            let keep = read.is_ok() && watch.keep && watch.settled();
            (read.map(|files| files.relative(&root)), keep)
        })?;
        self.assemble(files.under(&root), marketplace, installed_as, scope, enabled_by, root)
    }

    /// The plugin its files describe, as `enabled_by` enabled it for this project: its id, data
    /// directory (made for a plugin with hooks or MCP servers), and its hook and MCP layers
    /// with the plugin variables replaced.
    fn assemble(
        &self,
        files: Files,
        marketplace: Option<&str>,
        installed_as: Option<&str>,
        scope: Scope,
        enabled_by: &str,
        root: PathBuf,
    ) -> Result<Read, PluginError> {
        let mut m = files.manifest.manifest;
        if let Some(name) = installed_as.filter(|_| !m.present) {
            name.clone_into(&mut m.name);
        }
        let id = format!("{}@{}", m.name, marketplace.unwrap_or(INLINE));
        let data = self.store.data_dir(&id);
        let origin = |file: &Path| {
            Origin::Plugin(std::sync::Arc::new(PluginOrigin {
                id: id.clone(),
                file: file.to_path_buf(),
                root: root.clone(),
                data: data.clone(),
                enabled_by: scope,
            }))
        };
        let vars = [
            Var::new(["CLAUDE_PLUGIN_ROOT", "${CLAUDE_PLUGIN_ROOT}", "$CLAUDE_PLUGIN_ROOT"], &root),
            Var::new(["CLAUDE_PLUGIN_DATA", "${CLAUDE_PLUGIN_DATA}", "$CLAUDE_PLUGIN_DATA"], &data),
            Var::new(["CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"], self.project_dir),
        ];
        let mut layers = Vec::new();
        let mut hook_files = Vec::new();
        for (file, hooks) in files.hooks {
            let mut layer = Map::new();
            layer.insert("hooks".to_owned(), hooks_replaced(hooks, &vars));
            layers.push(SettingsLayer { origin: origin(&file), value: layer });
            hook_files.push(file);
        }
        let mut mcp_servers = Vec::new();
        for (file, servers) in files.mcp_servers {
            let Value::Object(servers) = servers else {
                return Err(PluginError::new(
                    &file,
                    "mcpServers",
                    format!("expected an object, found {}", type_name(&servers)),
                ));
            };
            let mut named = Map::new();
            for (server, config) in servers {
                let name = format!("plugin:{}:{server}", m.name);
                named.insert(name.clone(), server_config(config, &vars));
                mcp_servers.push(name);
            }
            let mut layer = Map::new();
            layer.insert("mcpServers".to_owned(), Value::Object(named));
            layers.push(SettingsLayer { origin: origin(&file), value: layer });
        }
        // The data directory is for code the plugin runs (hooks, MCP servers): made for those.
        if !layers.is_empty() && !data.is_dir() {
            std::fs::create_dir_all(&data).map_err(|e| {
                PluginError::new(&data, "(directory)", format!("cannot create the plugin's data directory: {e}"))
            })?;
        }
        let plugin = Plugin {
            id,
            name: m.name,
            marketplace: marketplace.map(str::to_owned),
            root,
            data,
            version: m.version,
            description: m.description,
            default_enabled: m.default_enabled,
            enabled_by: enabled_by.to_owned(),
            scope,
            commands: files.commands,
            agents: files.agents,
            skills: files.skills,
            output_styles: files.output_styles,
            hook_files,
            mcp_servers,
        };
        Ok(Read { plugin, layers, warnings: files.manifest.warnings, notes: files.manifest.notes })
    }
}

/// A plugin variable: its name, its two spellings in text (`${NAME}`, `$NAME`) and its value.
struct Var {
    name: &'static str,
    braced: &'static str,
    bare: &'static str,
    value: String,
}

impl Var {
    /// `[NAME, ${NAME}, $NAME]` set to `path`.
    fn new([name, braced, bare]: [&'static str; 3], path: &Path) -> Var {
        debug_assert!(braced == format!("${{{name}}}") && bare == format!("${name}"));
        Var { name, braced, bare, value: path.to_string_lossy().into_owned() }
    }
}

/// Replaces the plugin variables (`${NAME}` and `$NAME`, in the order of `vars`) in `text`.
fn replace_vars<'a>(text: &mut String, vars: impl IntoIterator<Item = &'a Var>) {
    if !text.contains('$') {
        return;
    }
    for var in vars {
        if text.contains(var.braced) {
            *text = text.replace(var.braced, &var.value);
        }
        if text.contains(var.bare) {
            *text = text.replace(var.bare, &var.value);
        }
    }
}

/// The hooks object with the variables replaced as Claude Code does: in exec-form handlers
/// (`args`: program and arguments reach no shell) always; in a shell-form `command` only the
/// variables whose value is made of characters a shell reads literally (so a path can never
/// become shell syntax) — any other is left to the shell, which gets it in its environment.
fn hooks_replaced(mut hooks: Value, vars: &[Var]) -> Value {
    let literal: Vec<&Var> = vars.iter().filter(|var| shell_literal(&var.value)).collect();
    let handlers = hooks.as_object_mut().into_iter().flat_map(|events| events.values_mut());
    let groups = handlers.filter_map(Value::as_array_mut).flatten();
    for group in groups {
        let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else { continue };
        for handler in list.iter_mut().filter_map(Value::as_object_mut) {
            if !handler.contains_key("args") {
                if let Some(Value::String(line)) = handler.get_mut("command") {
                    replace_vars(line, literal.iter().copied());
                }
                continue;
            }
            if let Some(Value::String(program)) = handler.get_mut("command") {
                replace_vars(program, vars);
            }
            for arg in handler.get_mut("args").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Value::String(text) = arg {
                    replace_vars(text, vars);
                }
            }
        }
    }
    hooks
}

/// Whether a shell reads `value` as itself wherever it stands, quoted or not: letters, digits
/// and `/ . _ - + , : @ %`, no other character.
fn shell_literal(value: &str) -> bool {
    !value.is_empty()
        && value.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+' | b',' | b':' | b'@' | b'%')
        })
}

/// An MCP server's configuration with the variables replaced in `command`, `args`, `env`,
/// `url` and `headers`, and given to a stdio server's environment.
fn server_config(config: Value, vars: &[Var]) -> Value {
    let Value::Object(mut fields) = config else { return config };
    for key in ["command", "url"] {
        if let Some(Value::String(text)) = fields.get_mut(key) {
            replace_vars(text, vars);
        }
    }
    for arg in fields.get_mut("args").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Value::String(text) = arg {
            replace_vars(text, vars);
        }
    }
    for key in ["env", "headers"] {
        for value in fields.get_mut(key).and_then(Value::as_object_mut).into_iter().flat_map(|m| m.values_mut()) {
            if let Value::String(text) = value {
                replace_vars(text, vars);
            }
        }
    }
    if fields.contains_key("command") {
        let env = fields.entry("env").or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(env) = env {
            for var in vars {
                env.entry(var.name.to_owned()).or_insert_with(|| Value::String(var.value.clone()));
            }
        }
    }
    Value::Object(fields)
}
