//! What a plugin's own files say ([`Files`]: its manifest, where its components are, its hook
//! and MCP configurations), read by [`read_files`] — apart from who enabled the plugin and for
//! which project, so that the parse memo can keep it across runs, with the stamps of every
//! file and directory it came from ([`Watch`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use spine_protocol::parse_memo::Stamp;

use super::PluginError;
use super::components::SkillSource;
use super::manifest::{self, Config, MANIFEST, Manifest, Paths};
use super::paths::{Watch, inside, plain_entry};

/// A plugin's files, as read (see the module documentation). [`read_files`] gives its paths
/// whole; the parse memo keeps them relative to the plugin's root ([`Files::relative`],
/// [`Files::under`]), which it does not store twice.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Files {
    /// The manifest (its name is the directory's when it has none) and what reading it said.
    pub(super) manifest: manifest::Read,
    pub(super) commands: Vec<PathBuf>,
    pub(super) agents: Vec<PathBuf>,
    pub(super) output_styles: Vec<PathBuf>,
    pub(super) skills: Vec<SkillSource>,
    /// The hook configurations: each file (the manifest for an inline one) and its object.
    pub(super) hooks: Vec<(PathBuf, Value)>,
    /// The MCP configurations, likewise.
    pub(super) mcp_servers: Vec<(PathBuf, Value)>,
    /// The files and directories read below the root, with their stamps.
    pub(super) deps: Vec<(PathBuf, Stamp)>,
}

impl Files {
    /// The paths relative to `root` (each lies below it: plain names below it, or resolved
    /// and checked to stay inside it).
    pub(super) fn relative(self, root: &Path) -> Files {
        self.map_paths(|path| path.strip_prefix(root).map(Path::to_path_buf).unwrap_or(path))
    }

    /// The paths of a [`Files::relative`] below `root` again.
    pub(super) fn under(self, root: &Path) -> Files {
        self.map_paths(|path| if path.as_os_str().is_empty() { root.to_path_buf() } else { root.join(path) })
    }

    fn map_paths(self, f: impl Fn(PathBuf) -> PathBuf) -> Files {
        let all = |paths: Vec<PathBuf>| paths.into_iter().map(&f).collect();
        let configs = |list: Vec<(PathBuf, Value)>| list.into_iter().map(|(p, v)| (f(p), v)).collect();
        Files {
            manifest: self.manifest,
            commands: all(self.commands),
            agents: all(self.agents),
            output_styles: all(self.output_styles),
            skills: self
                .skills
                .into_iter()
                .map(|skill| match skill {
                    SkillSource::Directory(dir) => SkillSource::Directory(f(dir)),
                    SkillSource::Single(dir) => SkillSource::Single(f(dir)),
                })
                .collect(),
            hooks: configs(self.hooks),
            mcp_servers: configs(self.mcp_servers),
            deps: self.deps.into_iter().map(|(p, stamp)| (f(p), stamp)).collect(),
        }
    }
}

/// Reads the files of the plugin whose canonical directory is `root`; `watch` records what
/// the reading depended on.
pub(super) fn read_files(root: &Path, watch: &mut Watch) -> Result<Files, PluginError> {
    let manifest_file = root.join(MANIFEST);
    if watch.file(&manifest_file).is_none() {
        // No manifest: a file written into an existing `.claude-plugin` shows in its stamp.
        watch.file(&root.join(".claude-plugin"));
    }
    let manifest_read = Manifest::read(root)?;
    let m = &manifest_read.manifest;

    let defaults = |name: &str, dir: &str, field: &Paths, watch: &mut Watch| -> Result<Vec<PathBuf>, PluginError> {
        match &field.0 {
            Some(list) => list.iter().map(|p| inside(root, &manifest_file, name, p, watch)).collect(),
            None => Ok(watch.entry_is(root, dir, true).into_iter().collect()),
        }
    };
    let commands = defaults("commands", "commands", &m.commands, watch)?;
    let agents = defaults("agents", "agents", &m.agents, watch)?;
    let output_styles = defaults("outputStyles", "output-styles", &m.output_styles, watch)?;
    let mut skills: Vec<SkillSource> =
        watch.entry_is(root, "skills", true).into_iter().map(SkillSource::Directory).collect();
    for p in m.skills.0.iter().flatten() {
        let dir = inside(root, &manifest_file, "skills", p, watch)?;
        skills.push(match watch.entry_is(&dir, "SKILL.md", false) {
            Some(_) => SkillSource::Single(dir),
            None => SkillSource::Directory(dir),
        });
    }
    if skills.is_empty() && m.skills.0.is_none() && watch.entry_is(root, "SKILL.md", false).is_some() {
        skills.push(SkillSource::Single(root.to_path_buf()));
    }
    let hooks = configs(root, &manifest_file, "hooks/hooks.json", m.hooks.as_ref(), "hooks", watch)?;
    let mcp_servers = configs(root, &manifest_file, ".mcp.json", m.mcp_servers.as_ref(), "mcpServers", watch)?;
    Ok(Files { manifest: manifest_read, commands, agents, output_styles, skills, hooks, mcp_servers, deps: Vec::new() })
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
    watch: &mut Watch,
) -> Result<Vec<(PathBuf, Value)>, PluginError> {
    let mut files = Vec::new();
    match plain_entry(root, default, None, Some(watch)) {
        Some(Some((file, meta))) if meta.is_file() => files.push(file),
        Some(_) => {}
        None if root.join(default).is_file() => {
            files.push(inside(root, manifest, key, &format!("./{default}"), watch)?)
        }
        None => watch.keep = false,
    }
    if let Some(Config::Files(list)) = field {
        for relative in list {
            let file = inside(root, manifest, key, relative, watch)?;
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
pub(super) fn read_text(file: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::with_capacity(1024);
    std::fs::File::open(file)?.take(u64::MAX).read_to_string(&mut text)?;
    Ok(text)
}
