//! A custom command as the prompt of `spine -p`, as Claude Code's print mode takes one:
//! `spine -p "/review src/app.py"` runs the project's, the user's or an enabled plugin's
//! `review` command (`/plugin:command` too) exactly as a chat would — its body expanded with
//! the arguments and `@file` references, its `allowed-tools` allowed for this prompt, and
//! UserPromptExpansion fired with the command line.
//!
//! Contract: only a prompt that is one line starting with `/NAME` (no space or `/` after the
//! slash) is looked up; a name that is no custom command leaves the prompt as it was (a
//! built-in's name included: print mode has no built-in commands). A command whose expansion
//! fails (unbalanced quotes, an `@file` that is refused) is an error naming the command.

use std::path::Path;

use spine_core::permission::PermissionRule;
use spine_core::runner::Agent;
use spine_protocol::hook::UserPromptExpansionInput;
use spine_settings::Settings;

use crate::chat::custom;
use crate::chat::plugin_commands;
use crate::chat::slash::{self, Line};

/// A prompt that was a custom command.
pub(crate) struct Expanded {
    /// The expanded prompt.
    pub prompt: String,
    /// The command's `allowed-tools`, for this prompt.
    pub allow: Vec<PermissionRule>,
    /// What UserPromptExpansion hooks receive.
    pub expansion: UserPromptExpansionInput,
}

/// `prompt` expanded when it names a custom command (see the module documentation); the
/// warnings about command files that were skipped go to stderr.
pub(crate) fn expand(
    prompt: &str,
    agent: &Agent,
    settings: &Settings,
    project: &Path,
    spine_home: &Path,
) -> Result<Option<Expanded>, String> {
    if !prompt.trim_start().starts_with('/') || prompt.trim().contains('\n') {
        return Ok(None);
    }
    let Line::Other { name, arguments } = slash::parse(prompt) else { return Ok(None) };
    let user_home = spine_protocol::home::user_home();
    let dirs = custom::command_dirs(project, spine_home, user_home.as_deref());
    let (mut commands, mut warnings) = custom::load(&dirs, settings.trust.is_trusted());
    warnings.extend(plugin_commands::add(&mut commands, &settings.plugins, project));
    let Some(command) = custom::find(&commands, &name) else { return Ok(None) };
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    let config = &agent.config;
    let prompt = custom::expand(command, &arguments, &config.workspace, &config.cwd, &agent.policy)
        .map_err(|e| format!("/{name}: {e}"))?;
    Ok(Some(Expanded {
        prompt,
        allow: custom::allow_rules(command),
        expansion: custom::expansion(command, &arguments),
    }))
}
