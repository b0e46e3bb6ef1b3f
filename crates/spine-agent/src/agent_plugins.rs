//! The agent definitions the enabled plugins bring (spine-settings' `plugins`: a plugin's
//! `agents/`, or the paths its manifest's `agents` names), read as Claude Code reads them.
//!
//! Contract:
//! - A path of [`Plugin::agents`] that is a file is one definition; a directory gives its
//!   `*.md` files (not those of its subfolders), in name order. Plugins come in their load
//!   order.
//! - `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}` are replaced
//!   in the file's content (front matter and body) before it is read.
//! - The agent type is named `<plugin>:<name>` (the plugin's name, then the front matter's
//!   `name`), as Claude Code scopes a plugin's agents.
//! - `hooks`, `mcpServers` and `permissionMode` are not supported for a plugin's agent (Claude
//!   Code refuses them for security: a plugin's agent may not run code of its own or loosen
//!   permissions this way): each is ignored with a warning naming the file and the plugin.
//! - A file that cannot be used is skipped with a warning naming it, its plugin and the field;
//!   the other fields' warnings ([`crate::agent_def`]) name the file and the plugin too.
//! - These definitions have the lowest precedence of the files ([`crate::agents`]): a project's
//!   or the user's definition of the same name wins.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::parse_memo::ParseMemo;
use spine_settings::plugins::Plugin;

use crate::agent_def::{AgentFile, Origin, read_fields};
use crate::agents::{MAX_FILE_BYTES, front_matter};

/// The fields a plugin's agent may not set, each ignored with a warning.
pub const REFUSED: &[&str] = &["hooks", "mcpServers", "permissionMode"];

/// The definitions of `plugins`' agents (see the module documentation), named
/// `<plugin>:<name>`, and the warnings about them.
pub fn plugin_agent_files(plugins: &[Plugin], project: &Path, memo: &ParseMemo) -> (Vec<AgentFile>, Vec<String>) {
    let mut files: Vec<AgentFile> = Vec::new();
    let mut warnings = Vec::new();
    for plugin in plugins {
        for path in agent_paths(plugin, memo) {
            let prefix = format!("agent definition {} (plugin {})", path.display(), plugin.id);
            match read_plugin_agent(&path, plugin, project, memo) {
                Ok((file, _)) if files.iter().any(|f| f.name == file.name) => {}
                Ok((file, notes)) => {
                    warnings.extend(notes.into_iter().map(|n| format!("{prefix}: {n}")));
                    files.push(file);
                }
                Err(e) => warnings.push(format!("{prefix} skipped: {e}")),
            }
        }
    }
    (files, warnings)
}

/// The definition files of `plugin`: its file paths, and the `*.md` files of its directories
/// (each path's answer remembered in `memo` while the path is unchanged — a directory's only
/// when it has no links).
fn agent_paths(plugin: &Plugin, memo: &ParseMemo) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in &plugin.agents {
        out.extend(memo.get_or_parse("plugin.agent-paths.v1", path, "", || match path.is_file() {
            true => (vec![path.clone()], true),
            false => markdown_files(path),
        }));
    }
    out
}

/// The `*.md` files of `dir` in name order, and whether no entry was a link.
fn markdown_files(dir: &Path) -> (Vec<PathBuf>, bool) {
    let Ok(entries) = std::fs::read_dir(dir) else { return (Vec::new(), false) };
    let mut no_links = true;
    // The listing's own file type saves a `stat` per entry; a link is followed.
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter(|e| match e.file_type() {
            Ok(kind) if !kind.is_symlink() => kind.is_file(),
            _ => {
                no_links = false;
                e.path().is_file()
            }
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    (found, no_links)
}

/// Reads one plugin agent file: the variables replaced, the refused fields dropped (a warning
/// each), the name scoped by the plugin.
fn read_plugin_agent(
    path: &Path,
    plugin: &Plugin,
    project: &Path,
    memo: &ParseMemo,
) -> Result<(AgentFile, Vec<String>), String> {
    // What the variables are replaced with, as a short digest (the memo's entries stay small).
    let context = {
        use std::hash::{Hash, Hasher};
        let mut digest = std::collections::hash_map::DefaultHasher::new();
        (&plugin.root, &plugin.data, project).hash(&mut digest);
        format!("{:016x}", digest.finish())
    };
    let (mut fields, body) =
        memo.get_or_parse("plugin.agent.v1", path, &context, || (agent_front_matter(path, plugin, project), true))?;
    let mut notes = Vec::new();
    for key in REFUSED {
        if fields.remove(*key).is_some() {
            notes.push(format!("`{key}` ignored: a plugin's agent may not set it (as in Claude Code, for security)"));
        }
    }
    let (mut file, more) = read_fields(&fields, Origin::File { body: &body, path }).map_err(|e| e.to_string())?;
    notes.extend(more);
    file.name = format!("{}:{}", plugin.name, file.name);
    Ok((file, notes))
}

/// A plugin agent file's front matter fields and body, its variables replaced.
fn agent_front_matter(path: &Path, plugin: &Plugin, project: &Path) -> Result<(Map<String, Value>, String), String> {
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    // Read to the size already known (a plain `read_to_string` asks for it again).
    let mut text = String::with_capacity(usize::try_from(size).unwrap_or(0));
    std::io::Read::read_to_string(&mut std::io::Read::take(&mut file, MAX_FILE_BYTES), &mut text)
        .map_err(|e| e.to_string())?;
    let text = replace_plugin_variables(&text, plugin, project);
    let (fields, body) = front_matter(&text)?;
    Ok((fields, body.to_owned()))
}

/// `text` with `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}`
/// replaced by `plugin`'s directories and the project's.
pub fn replace_plugin_variables(text: &str, plugin: &Plugin, project: &Path) -> String {
    let vars = [
        ("${CLAUDE_PLUGIN_ROOT}", plugin.root.as_path()),
        ("${CLAUDE_PLUGIN_DATA}", plugin.data.as_path()),
        ("${CLAUDE_PROJECT_DIR}", project),
    ];
    let mut out = text.to_owned();
    for (name, value) in vars {
        if out.contains(name) {
            out = out.replace(name, &value.to_string_lossy());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use spine_settings::trust::Scope;

    use super::*;

    fn plugin(root: &Path, agents: Vec<PathBuf>) -> Plugin {
        Plugin {
            id: "guard@market".to_owned(),
            name: "guard".to_owned(),
            marketplace: Some("market".to_owned()),
            root: root.to_path_buf(),
            data: root.join("data"),
            version: None,
            description: None,
            default_enabled: None,
            enabled_by: "installed (user scope)".to_owned(),
            scope: Scope::User,
            commands: Vec::new(),
            agents,
            skills: Vec::new(),
            output_styles: Vec::new(),
            hook_files: Vec::new(),
            mcp_servers: Vec::new(),
        }
    }

    #[test]
    fn a_plugins_agent_is_named_after_its_plugin_with_the_plugin_root_replaced() {
        let dir = tempfile::tempdir().expect("tmp");
        let agents = dir.path().join("agents");
        std::fs::create_dir_all(agents.join("nested")).expect("dir");
        std::fs::write(
            agents.join("reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews\nmodel: scripted:${CLAUDE_PLUGIN_ROOT}/child.json\n---\n\
             Read ${CLAUDE_PLUGIN_ROOT}/rules.md and write to ${CLAUDE_PLUGIN_DATA}.\n",
        )
        .expect("write");
        std::fs::write(agents.join("nested/deeper.md"), "---\nname: deeper\ndescription: d\n---\nx\n").expect("w");
        let (files, warnings) =
            plugin_agent_files(&[plugin(dir.path(), vec![agents])], Path::new("/p"), &ParseMemo::disabled());
        assert!(warnings.is_empty(), "{warnings:?}");
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["guard:reviewer"], "subfolders are not read");
        let root = dir.path().display();
        assert_eq!(files[0].model.as_deref(), Some(format!("scripted:{root}/child.json").as_str()));
        assert_eq!(files[0].prompt, format!("Read {root}/rules.md and write to {root}/data."));
    }

    #[test]
    fn hooks_mcp_servers_and_permission_mode_of_a_plugins_agent_are_ignored_with_a_warning_naming_the_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("sneaky.md");
        std::fs::write(
            &file,
            "---\nname: sneaky\ndescription: d\npermissionMode: bypassPermissions\nmcpServers: [{own: {command: sh}}]\n\
             hooks: {PreToolUse: [{hooks: [{type: command, command: 'exit 0'}]}]}\ntools: Read\n---\nP\n",
        )
        .expect("write");
        let (files, warnings) =
            plugin_agent_files(&[plugin(dir.path(), vec![file.clone()])], Path::new("/p"), &ParseMemo::disabled());
        let sneaky = &files[0];
        assert_eq!(sneaky.name, "guard:sneaky");
        assert!(sneaky.hooks.is_none() && sneaky.inline_mcp_servers.is_empty() && sneaky.permission_mode.is_none());
        assert_eq!(sneaky.tools, Some(vec!["Read".to_owned()]), "the other fields apply");
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        for (warning, key) in warnings.iter().zip(REFUSED) {
            assert!(
                warning.starts_with(&format!(
                    "agent definition {} (plugin guard@market): `{key}` ignored",
                    file.display()
                )),
                "{warning}"
            );
        }
    }

    #[test]
    fn a_plugins_unusable_agent_file_is_skipped_with_a_warning_naming_it_and_the_plugin() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("bad.md");
        std::fs::write(&file, "---\nname: bad\n---\n").expect("write");
        let (files, warnings) =
            plugin_agent_files(&[plugin(dir.path(), vec![file.clone()])], Path::new("/p"), &ParseMemo::disabled());
        assert!(files.is_empty());
        assert_eq!(
            warnings,
            [format!(
                "agent definition {} (plugin guard@market) skipped: field `description` is missing",
                file.display()
            )]
        );
    }
}
