//! Skills and output styles typed in a chat: `/<skill> [arguments]`, `/skills`,
//! `/output-style [name]`.
//!
//! Contract:
//! - `/<skill> [arguments]` runs a skill as Claude Code does: the prompt is the command block
//!   (`<command-message>NAME</command-message>`, `<command-name>/NAME</command-name>`,
//!   `<command-args>ARGS</command-args>`) and the skill's rendered body (`Base directory for
//!   this skill: …`, the arguments filled in; Claude Code 2.1.328's shape, recorded in
//!   `skill-slash.json`). UserPromptExpansion fires for it as for a custom command, and the
//!   skill is active for that prompt's run (its `allowed-tools` narrow it, its `model` serves
//!   it). A skill takes precedence over a custom command of the same name (Claude Code's
//!   rule); a plugin's skill typed by its own name alone (`/review` for `tools:review`) only
//!   when no command has that name. A skill with `user-invocable: false` is refused with a
//!   line saying so.
//! - `/skills` lists the session's skills (name, description, who may invoke it).
//! - `/output-style` lists the output styles, the current one marked; `/output-style NAME`
//!   sets it for the next prompts of the session (not saved to settings; Claude Code 2.1.91
//!   removed this command in favour of `/config`, which spine does not have).
//! - The skills are scanned when the command is typed, so a skill added during the session is
//!   found.

use std::sync::Arc;

use spine_core::skills::{Invoker, SkillCatalog, SkillEntry, SkillRootKind, SkillSession, SkillVars};
use spine_protocol::hook::UserPromptExpansionInput;

use super::Chat;

impl Chat {
    /// Runs `/name arguments` when it is a skill, `/skills` or `/output-style`; whether it was.
    pub(super) async fn skill_command(
        &mut self,
        name: &str,
        arguments: &str,
        interrupt: &mut tokio::signal::unix::Signal,
    ) -> bool {
        match name {
            "output-style" => {
                self.output_style(arguments.trim());
                return true;
            }
            "skills" => {
                print!("{}", skill_list(&self.catalog()));
                return true;
            }
            _ => {}
        }
        let catalog = self.catalog();
        let Some(entry) = catalog.find(name) else { return false };
        // A plugin's skill typed by its own name yields to a command of that name.
        let exact = entry.name == name || entry.meta.alias.as_deref() == Some(name);
        if !exact && super::custom::find(&self.commands, name).is_some() {
            return false;
        }
        let vars = SkillVars {
            session_id: self.session.id.clone(),
            project_dir: self.agent.config.workspace.root().to_path_buf(),
        };
        let session = SkillSession { catalog: Arc::new(catalog), vars };
        let invocation = match session.invoke(name, Some(arguments.trim()), Invoker::User) {
            Ok(invocation) => invocation,
            Err(e) => {
                println!("/{name}: {e}");
                return true;
            }
        };
        let entry = &invocation.entry;
        let args = arguments.trim();
        let prompt = format!(
            "<command-message>{n}</command-message>\n<command-name>/{n}</command-name>\n<command-args>{args}</command-args>\n\n{}",
            invocation.text,
            n = entry.name
        );
        self.expansion = Some(expansion(entry, args));
        self.invoked_skill = Some(entry.name.clone());
        self.prompt(Some(prompt), Vec::new(), interrupt).await;
        self.invoked_skill = None;
        true
    }

    /// The session's skills, scanned now.
    fn catalog(&self) -> SkillCatalog {
        let config = &self.agent.config;
        SkillCatalog::scan_all(&config.skill_roots, &config.plugin_skills, &config.parse_memo).0
    }

    /// `/output-style [name]`.
    fn output_style(&mut self, name: &str) {
        let home = spine_protocol::home::user_home();
        let project = self.agent.config.workspace.root().to_path_buf();
        let (styles, warnings) = spine_agent::output_styles::available(&self.settings, &project, home.as_deref());
        for warning in warnings {
            eprintln!("warning: {warning}");
        }
        let current = self.agent.config.turn.output_style.as_ref().map_or("Default", |s| s.name.as_str()).to_owned();
        if name.is_empty() {
            for entry in &styles {
                let mark = if entry.style.name == current { "*" } else { " " };
                let description = entry.description.as_deref().unwrap_or("");
                println!("{mark} {:<20} {description} ({})", entry.style.name, entry.source);
            }
            println!("/output-style NAME changes it for the next prompts of this session.");
            return;
        }
        match spine_agent::output_styles::find(&styles, name) {
            Some(entry) => {
                let style = entry.style.clone();
                println!("output style: {} (from the next prompt on; not saved)", style.name);
                self.agent.config.turn.output_style = (!style.prompt.trim().is_empty()).then_some(style);
            }
            None => println!("/output-style {name}: no such output style (/output-style lists them)"),
        }
    }
}

/// What UserPromptExpansion hooks receive for a skill run as `/NAME args`.
fn expansion(entry: &SkillEntry, args: &str) -> UserPromptExpansionInput {
    let source = match (&entry.plugin, entry.source_kind) {
        (Some(_), _) => "plugin",
        (None, SkillRootKind::Live) => "projectSettings",
        (None, SkillRootKind::System | SkillRootKind::Curated) => "userSettings",
    };
    UserPromptExpansionInput {
        expansion_type: "slash_command".to_owned(),
        command_name: entry.name.clone(),
        command_args: args.to_owned(),
        command_source: Some(source.to_owned()),
        prompt: if args.is_empty() { format!("/{}", entry.name) } else { format!("/{} {args}", entry.name) },
    }
}

/// `/skills`: one line per active skill.
fn skill_list(catalog: &SkillCatalog) -> String {
    let mut text = String::new();
    for entry in catalog.active() {
        let who = match (entry.meta.user_invocable, entry.meta.disable_model_invocation) {
            (true, false) => "",
            (true, true) => " (you only)",
            (false, false) => " (the model only)",
            (false, true) => " (nobody)",
        };
        let hint = entry.meta.argument_hint.as_deref().map(|h| format!(" {h}")).unwrap_or_default();
        text.push_str(&format!("  /{}{hint}  {}{who}\n", entry.name, entry.description));
    }
    if text.is_empty() {
        text.push_str(
            "no skills (.claude/skills, .agents/skills, .codex/skills, .spine/skills, their user forms, plugins)\n",
        );
    }
    text
}
