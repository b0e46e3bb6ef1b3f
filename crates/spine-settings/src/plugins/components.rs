//! One plugin's components, found and checked: [`read`] (see the `plugins` module contract).

use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use super::manifest::{Config, MANIFEST, Manifest, Paths};
use super::{INLINE, PluginError, Store};
use crate::source::{Origin, PluginOrigin, SettingsLayer, type_name};
use crate::trust::Scope;

/// Where a plugin's skills are.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Reads the plugin at `root`; `installed_as` is the name of an installed plugin's id, its name
/// when it has no manifest (its directory is then a version's, not the plugin's name).
pub(super) fn read(
    root: &Path,
    marketplace: Option<&str>,
    installed_as: Option<&str>,
    (store, bases): (&Store, &CanonicalBases),
    scope: Scope,
    enabled_by: &str,
    project_dir: &Path,
) -> Result<Read, PluginError> {
    let (root, is_dir) = bases
        .canonical_dir(root)
        .map_err(|e| PluginError::new(root, "(directory)", format!("cannot open the plugin's directory: {e}")))?;
    if !is_dir {
        return Err(PluginError::new(&root, "(directory)", "is not a directory"));
    }
    let manifest_read = Manifest::read(&root)?;
    let mut m = manifest_read.manifest;
    if let Some(name) = installed_as.filter(|_| !m.present) {
        name.clone_into(&mut m.name);
    }
    let manifest_file = root.join(MANIFEST);
    let id = format!("{}@{}", m.name, marketplace.unwrap_or(INLINE));
    let data = store.data_dir(&id);

    let inside = |field: &str, relative: &str| inside(&root, &manifest_file, field, relative);
    let defaults = |name: &str, dir: &str, field: &Paths| -> Result<Vec<PathBuf>, PluginError> {
        match &field.0 {
            Some(list) => list.iter().map(|p| inside(name, p)).collect(),
            None => Ok(existing(&root, dir).into_iter().collect()),
        }
    };
    let commands = defaults("commands", "commands", &m.commands)?;
    let agents = defaults("agents", "agents", &m.agents)?;
    let output_styles = defaults("outputStyles", "output-styles", &m.output_styles)?;
    let mut skills: Vec<SkillSource> = existing(&root, "skills").into_iter().map(SkillSource::Directory).collect();
    for p in m.skills.0.iter().flatten() {
        let dir = inside("skills", p)?;
        skills.push(match dir.join("SKILL.md").is_file() {
            true => SkillSource::Single(dir),
            false => SkillSource::Directory(dir),
        });
    }
    if skills.is_empty() && m.skills.0.is_none() && root.join("SKILL.md").is_file() {
        skills.push(SkillSource::Single(root.clone()));
    }

    let origin = |file: &Path| {
        Origin::Plugin(Box::new(PluginOrigin {
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
        Var::new(["CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"], project_dir),
    ];
    let mut layers = Vec::new();
    let mut hook_files = Vec::new();
    for (file, hooks) in configs(&root, &manifest_file, "hooks/hooks.json", m.hooks.as_ref(), "hooks")? {
        let mut layer = Map::new();
        layer.insert("hooks".to_owned(), hooks_replaced(hooks, &vars));
        layers.push(SettingsLayer { origin: origin(&file), value: layer });
        hook_files.push(file);
    }
    let mut mcp_servers = Vec::new();
    for (file, servers) in configs(&root, &manifest_file, ".mcp.json", m.mcp_servers.as_ref(), "mcpServers")? {
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
        commands,
        agents,
        skills,
        output_styles,
        hook_files,
        mcp_servers,
    };
    Ok(Read { plugin, layers, warnings: manifest_read.warnings, notes: manifest_read.notes })
}

/// `root/dir` when it is a directory.
fn existing(root: &Path, dir: &str) -> Option<PathBuf> {
    let path = root.join(dir);
    path.is_dir().then_some(path)
}

/// `relative` (a manifest path) resolved under `root`, refused when it leaves it (links
/// resolved) or does not exist.
fn inside(root: &Path, manifest: &Path, field: &str, relative: &str) -> Result<PathBuf, PluginError> {
    if let Some(plain) = plain_below(root, relative) {
        return Ok(plain);
    }
    let joined = root.join(relative);
    let resolved =
        joined.canonicalize().map_err(|e| PluginError::new(manifest, field, format!("{relative:?}: {e}")))?;
    match resolved.starts_with(root) {
        true => Ok(resolved),
        false => Err(PluginError::new(manifest, field, format!("{relative:?} leads outside the plugin's directory"))),
    }
}

/// Canonical paths of plugin directories, resolved cheaply below directories canonicalised
/// once per load (the stores' caches, where installed plugins live): one `lstat` per name
/// below such a directory instead of a `readlink` per name of the whole path. A path elsewhere,
/// or one with a link or `..` below the base, is canonicalised the full way. A directory found
/// plain on the way (a marketplace's, shared by its plugins) is checked once per load.
pub(super) struct CanonicalBases {
    bases: Vec<(PathBuf, std::cell::OnceCell<Option<PathBuf>>)>,
    plain_dirs: KnownDirs,
}

impl CanonicalBases {
    /// Directories to resolve below, each canonicalised at its first use.
    pub(super) fn new(dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        let bases = dirs.into_iter().map(|dir| (dir, std::cell::OnceCell::new())).collect();
        CanonicalBases { bases, plain_dirs: KnownDirs::default() }
    }

    /// `path` canonicalised, and whether it is a directory (links followed).
    pub(super) fn canonical_dir(&self, path: &Path) -> std::io::Result<(PathBuf, bool)> {
        for (given, canonical) in &self.bases {
            if let Ok(rest) = path.strip_prefix(given)
                && let Some(base) = canonical.get_or_init(|| given.canonicalize().ok())
                && let Some(Some((found, kind))) =
                    rest.to_str().and_then(|rest| plain_entry(base, rest, Some(&self.plain_dirs)))
            {
                // No name below the canonical base is a link: the type is the target's.
                return Ok((found, kind.is_dir()));
            }
        }
        let found = path.canonicalize()?;
        let is_dir = found.is_dir();
        Ok((found, is_dir))
    }
}

/// `root/relative` without a `realpath` (`root` is canonical): when `relative` is plain names
/// (and `.`), each of which exists and is no symbolic link, the joined path is canonical too.
/// `None` sends the caller to the full resolution.
fn plain_below(root: &Path, relative: &str) -> Option<PathBuf> {
    plain_entry(root, relative, None).flatten().map(|(path, _)| path)
}

/// What `root/relative` is when reached by plain names (and `.`) below the canonical `root`,
/// checked with one `lstat` per name: `Some(Some((path, type)))`; `Some(None)` when a name
/// does not exist; `None` when a name is a symbolic link or `..`, or cannot be checked (the
/// caller resolves the full way). A name's directory already in `known` (found plain by this
/// load) is not checked again; directories found on the way are added to it.
fn plain_entry(root: &Path, relative: &str, known: Option<&KnownDirs>) -> Option<Option<(PathBuf, std::fs::FileType)>> {
    let mut path = root.to_path_buf();
    let mut kind = None;
    let mut components = Path::new(relative).components().peekable();
    while let Some(component) = components.next() {
        let last = components.peek().is_none();
        match component {
            Component::CurDir => {}
            Component::Normal(name) => {
                path.push(name);
                if !last && known.is_some_and(|known| known.contains(&path)) {
                    continue;
                }
                match path.symlink_metadata() {
                    Ok(meta) if meta.file_type().is_symlink() => return None,
                    Ok(meta) => {
                        if let Some(known) = known.filter(|_| !last && meta.is_dir()) {
                            known.0.borrow_mut().push(path.clone());
                        }
                        kind = Some(meta.file_type());
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
                    Err(_) => return None,
                }
            }
            _ => return None,
        }
    }
    let kind = match kind {
        Some(kind) => kind,
        None => path.symlink_metadata().ok()?.file_type(),
    };
    Some(Some((path, kind)))
}

/// Directories below a canonical base found to be plain (existing, no link) during one load.
#[derive(Default)]
pub(super) struct KnownDirs(std::cell::RefCell<Vec<PathBuf>>);

impl KnownDirs {
    /// Whether `dir` was found (its bytes compared: a canonical path has one spelling).
    fn contains(&self, dir: &Path) -> bool {
        self.0.borrow().iter().any(|known| known.as_os_str() == dir.as_os_str())
    }
}

/// The hook or MCP configurations of a plugin: the default file when it exists, then the
/// manifest's files or inline object; each as (its file, the configuration object). A file's
/// object may wrap the configuration in its key (`{"hooks": {…}}`, `{"mcpServers": {…}}`).
fn configs(
    root: &Path,
    manifest: &Path,
    default: &str,
    field: Option<&Config>,
    key: &str,
) -> Result<Vec<(PathBuf, Value)>, PluginError> {
    let mut files = Vec::new();
    match plain_entry(root, default, None) {
        Some(Some((file, kind))) if kind.is_file() => files.push(file),
        Some(_) => {}
        None if root.join(default).is_file() => files.push(inside(root, manifest, key, &format!("./{default}"))?),
        None => {}
    }
    if let Some(Config::Files(list)) = field {
        for relative in list {
            let file = inside(root, manifest, key, relative)?;
            if !files.contains(&file) {
                files.push(file);
            }
        }
    }
    let mut out = Vec::new();
    for file in files {
        let text = read_text(&file).map_err(|e| PluginError::new(&file, "(file)", e.to_string()))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| PluginError::new(&file, "(file)", format!("not valid JSON: {e}")))?;
        out.push((file, unwrap_key(value, key)));
    }
    if let Some(Config::Inline(object)) = field {
        out.push((manifest.to_path_buf(), unwrap_key(Value::Object(object.clone()), key)));
    }
    Ok(out)
}

fn unwrap_key(value: Value, key: &str) -> Value {
    match value {
        Value::Object(mut map) if map.get(key).is_some_and(Value::is_object) => map.remove(key).unwrap_or_default(),
        other => other,
    }
}

/// A file's text (`std::fs::read_to_string` without the size query: the buffer grows).
fn read_text(file: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::with_capacity(1024);
    std::fs::File::open(file)?.take(u64::MAX).read_to_string(&mut text)?;
    Ok(text)
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
