//! The slash commands of the enabled plugins (spine-settings' `plugins`), as Claude Code names
//! them, added to the custom commands ([`super::custom`]).
//!
//! Contract:
//! - A plugin's `commands` paths (its `commands/`, or the manifest's `commands`) are files, or
//!   folders whose `*.md` files are commands (two subfolder levels deep, as custom commands).
//! - A command is named `/<plugin>:<command>` (the plugin's name, then the file's name without
//!   `.md`); one in a subfolder `/<plugin>:<folder>:<command>`. It is also reachable as
//!   `/<command>` ([`CustomCommand::alias`]) when no other command — built-in, custom, or
//!   another plugin's — has that name.
//! - `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}` in the file are
//!   replaced by the plugin's directories and the project's before it is read; the rest is read
//!   as a custom command (front matter, `$ARGUMENTS`, `@file`). Its `allowed-tools` apply: a
//!   plugin loads only when the user enabled it, or the project that enabled it is trusted.
//! - A custom command of the same full name wins; a file that cannot be used is skipped with a
//!   warning naming it and its plugin.

use std::path::{Path, PathBuf};

use spine_settings::plugins::Plugin;

use super::custom::{self, CustomCommand, Scope};
use super::slash::{self, Line};

/// Adds the commands of `plugins` to `commands` (sorted by name again) and gives each plugin
/// command its alias when it is free; the warnings name the files skipped.
pub fn add(commands: &mut Vec<CustomCommand>, plugins: &[Plugin], project: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut added: Vec<CustomCommand> = Vec::new();
    for plugin in plugins {
        for (root, file) in command_files(plugin) {
            match read(plugin, &root, &file, project) {
                Ok(command) if commands.iter().chain(&added).any(|c| c.name == command.name) => {
                    warnings.push(format!(
                        "command {} (plugin {}) skipped: another command is named /{}",
                        file.display(),
                        plugin.id,
                        command.name
                    ));
                }
                Ok(command) => added.push(command),
                Err(e) => warnings.push(format!("command {} (plugin {}) skipped: {e}", file.display(), plugin.id)),
            }
        }
    }
    commands.extend(added);
    assign_aliases(commands);
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    warnings
}

/// Each command file of `plugin` with the folder its namespace is relative to.
fn command_files(plugin: &Plugin) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for path in &plugin.commands {
        if path.is_file() {
            let root = path.parent().map(Path::to_path_buf).unwrap_or_default();
            out.push((root, path.clone()));
            continue;
        }
        let mut files = Vec::new();
        custom::collect(path, 0, &mut files);
        files.sort();
        out.extend(files.into_iter().map(|file| (path.clone(), file)));
    }
    out
}

/// One plugin command: its text with the variables replaced, read as a custom command, named
/// after its plugin.
fn read(plugin: &Plugin, root: &Path, file: &Path, project: &Path) -> Result<CustomCommand, String> {
    let text = custom::read_text(file)?;
    let text = spine_agent::agent_plugins::replace_plugin_variables(&text, plugin, project);
    let mut command = custom::command_from_text(&text, root, file, Scope::Plugin, true)?;
    command.name = match &command.namespace {
        Some(folder) => format!("{}:{folder}:{}", plugin.name, command.name),
        None => format!("{}:{}", plugin.name, command.name),
    };
    command.plugin = Some(plugin.id.clone());
    Ok(command)
}

/// Gives each plugin command the alias of its own name (the part after the last `:`) when no
/// built-in command, no other command and no other plugin command's own name is the same.
fn assign_aliases(commands: &mut [CustomCommand]) {
    let own = |c: &CustomCommand| c.plugin.as_ref().and_then(|_| c.name.rsplit(':').next()).map(str::to_owned);
    let owns: Vec<Option<String>> = commands.iter().map(own).collect();
    for i in 0..commands.len() {
        let Some(name) = &owns[i] else { continue };
        let builtin = matches!(slash::parse(&format!("/{name}")), Line::Builtin(_));
        let named = commands.iter().any(|c| &c.name == name);
        let shared = owns.iter().enumerate().any(|(j, other)| j != i && other.as_ref() == Some(name));
        commands[i].alias = (!builtin && !named && !shared).then(|| name.clone());
    }
}

#[cfg(test)]
mod tests {
    use spine_settings::trust::Scope as TrustScope;

    use super::*;

    fn plugin(name: &str, root: &Path) -> Plugin {
        Plugin {
            id: format!("{name}@market"),
            name: name.to_owned(),
            marketplace: Some("market".to_owned()),
            root: root.to_path_buf(),
            data: root.join("data"),
            version: None,
            description: None,
            default_enabled: None,
            enabled_by: "installed (user scope)".to_owned(),
            scope: TrustScope::User,
            commands: vec![root.join("commands")],
            agents: Vec::new(),
            skills: Vec::new(),
            output_styles: Vec::new(),
            hook_files: Vec::new(),
            mcp_servers: Vec::new(),
        }
    }

    fn write(path: PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn names(commands: &[CustomCommand]) -> Vec<(&str, Option<&str>)> {
        commands.iter().map(|c| (c.name.as_str(), c.alias.as_deref())).collect()
    }

    #[test]
    fn a_plugin_command_is_plugin_colon_command_and_its_own_name_when_no_other_command_has_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let (guard, lint) = (dir.path().join("guard"), dir.path().join("lint"));
        write(guard.join("commands/review.md"), "Review ${CLAUDE_PLUGIN_ROOT}/rules and ${CLAUDE_PLUGIN_DATA}");
        write(guard.join("commands/ship.md"), "Ship");
        write(guard.join("commands/help.md"), "Not the built-in");
        write(guard.join("commands/deploy.md"), "Deploy");
        write(guard.join("commands/frontend/component.md"), "Component");
        write(lint.join("commands/ship.md"), "Ship too");
        let (mut commands, _) = custom::load(&[], true);
        let user = dir.path().join("user");
        write(user.join("deploy.md"), "The user's deploy");
        let (user_commands, _) = custom::load(&[(user, custom::Scope::User)], true);
        commands.extend(user_commands);
        let warnings = add(&mut commands, &[plugin("guard", &guard), plugin("lint", &lint)], Path::new("/p"));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            names(&commands),
            [
                ("deploy", None),
                ("guard:deploy", None),
                ("guard:frontend:component", Some("component")),
                ("guard:help", None),
                ("guard:review", Some("review")),
                ("guard:ship", None),
                ("lint:ship", None),
            ],
            "a custom command, a built-in or another plugin's command keeps the plain name"
        );
        let review = custom::find(&commands, "review").expect("the alias finds it");
        assert_eq!(review.name, "guard:review");
        let (root, data) = (guard.display(), guard.join("data").display().to_string());
        assert_eq!(review.body, format!("Review {root}/rules and {data}"));
        assert_eq!(review.origin(), "(plugin guard@market)");
        assert!(review.tools_apply);
        assert_eq!(custom::find(&commands, "deploy").map(|c| c.plugin.is_none()), Some(true));
        assert_eq!(custom::expansion(review, "").command_source.as_deref(), Some("plugin"));
    }

    #[test]
    fn a_plugins_command_file_path_and_a_bad_file_are_read_as_named() {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path().join("guard");
        write(root.join("extra/special.md"), "---\ndescription: Special\n---\nDo it");
        write(root.join("commands/bad.md"), "---\nallowed-tools: Bash(\n---\nx");
        let mut guard = plugin("guard", &root);
        guard.commands.push(root.join("extra/special.md"));
        let mut commands = Vec::new();
        let warnings = add(&mut commands, &[guard], Path::new("/p"));
        assert_eq!(names(&commands), [("guard:special", Some("special"))]);
        assert_eq!(commands[0].description, "Special");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("bad.md (plugin guard@market) skipped: allowed-tools"), "{warnings:?}");
    }
}
