//! An agent's skills beyond spine's own roots: Claude Code's and Codex's skill directories,
//! the enabled plugins' skills, the models skills ask for, the listing's budget; and the
//! output style of its prompt ([`crate::output_styles`]).
//!
//! Contract:
//! - [`claude_and_codex_roots`]: the user's `~/.claude/skills`, `~/.agents/skills` and
//!   `~/.codex/skills` (kind `system`), then the project's `.claude/skills`, `.agents/skills`
//!   and `.codex/skills` (kind `live`). They follow spine's roots of the same kind, so in a
//!   name clash `$SPINE_HOME/skills` wins over `~/.claude/skills`, and every user root over
//!   every project root — Claude Code's rule: "personal overrides project".
//! - [`plugin_skills`]: each enabled plugin's skill directories, in load order.
//! - [`SkillModelBuilder`]: a skill's `model:` is built as `--model` would build it, with the
//!   settings' client options; a project's skill (a `live` root) may switch models only in a
//!   trusted project.
//! - [`configure`] puts these on an agent's config with the listing's budget
//!   (`SLASH_COMMAND_TOOL_CHAR_BUDGET` characters when set, else 1% of the model's context
//!   window) and the output style; it returns the warnings to show.

use std::path::Path;
use std::sync::Arc;

use spine_core::model::ModelClient;
use spine_core::runner::AgentConfig;
use spine_core::skills::{PluginSkills, SkillModels, SkillRoot, SkillRootKind, listing_budget};
use spine_settings::Settings;
use spine_settings::plugins::{Plugin, SkillSource};

/// The variable that fixes the listing's budget in characters (Claude Code's).
pub const LISTING_BUDGET_VAR: &str = "SLASH_COMMAND_TOOL_CHAR_BUDGET";

/// Claude Code's and Codex's skill directories (see the module documentation).
pub fn claude_and_codex_roots(user_home: Option<&Path>, project: &Path) -> Vec<SkillRoot> {
    const DIRS: [&str; 3] = [".claude", ".agents", ".codex"];
    let mut roots = Vec::new();
    if let Some(home) = user_home {
        for dir in DIRS {
            roots.push(SkillRoot { path: home.join(dir).join("skills"), kind: SkillRootKind::System });
        }
    }
    for dir in DIRS {
        roots.push(SkillRoot { path: project.join(dir).join("skills"), kind: SkillRootKind::Live });
    }
    roots
}

/// The skills of the enabled `plugins`, in their load order.
pub fn plugin_skills(plugins: &[Plugin]) -> Vec<PluginSkills> {
    plugins
        .iter()
        .flat_map(|plugin| {
            plugin.skills.iter().map(move |source| {
                let (dir, single) = match source {
                    SkillSource::Directory(dir) => (dir.clone(), false),
                    SkillSource::Single(dir) => (dir.clone(), true),
                };
                PluginSkills {
                    plugin: plugin.name.clone(),
                    root: plugin.root.clone(),
                    data: plugin.data.clone(),
                    dir,
                    single,
                }
            })
        })
        .collect()
}

/// Builds the models skills ask for (see the module documentation).
pub struct SkillModelBuilder {
    models: crate::model::SpecModels,
    trusted: bool,
}

impl SkillModelBuilder {
    /// Models built with `settings`' client options.
    pub fn new(settings: &Settings) -> Self {
        SkillModelBuilder { models: crate::model::SpecModels::new(settings), trusted: settings.trust.is_trusted() }
    }
}

impl SkillModels for SkillModelBuilder {
    fn model(&self, spec: &str, kind: SkillRootKind) -> Result<Arc<dyn ModelClient>, String> {
        if kind == SkillRootKind::Live && !self.trusted {
            return Err("a project's skill may switch models only in a trusted project (spine trust)".to_owned());
        }
        self.models.build(spec).map_err(|e| e.to_string())
    }
}

/// Puts the plugins' skills, the skill model builder, the listing's budget and the output style
/// on `config` (its skill roots are set already); the warnings to show.
pub fn configure(
    config: &mut AgentConfig,
    settings: &Settings,
    project: &Path,
    model: &dyn ModelClient,
) -> Vec<String> {
    config.plugin_skills = plugin_skills(&settings.plugins);
    config.parse_memo = Arc::clone(&settings.parse_memo.0);
    config.skill_models = Some(Arc::new(SkillModelBuilder::new(settings)));
    let fixed = std::env::var(LISTING_BUDGET_VAR).ok().and_then(|v| v.trim().parse::<usize>().ok());
    config.turn.skill_listing_chars = Some(listing_budget(model.context_window(), fixed));
    let home = spine_protocol::home::user_home();
    let (style, warnings) = crate::output_styles::chosen(settings, project, home.as_deref());
    config.turn.output_style = style;
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_roots_come_before_project_roots_in_claude_codex_order() {
        let roots = claude_and_codex_roots(Some(Path::new("/h")), Path::new("/p"));
        let paths: Vec<String> = roots.iter().map(|r| r.path.display().to_string()).collect();
        assert_eq!(
            paths,
            [
                "/h/.claude/skills",
                "/h/.agents/skills",
                "/h/.codex/skills",
                "/p/.claude/skills",
                "/p/.agents/skills",
                "/p/.codex/skills"
            ]
        );
        assert!(roots[..3].iter().all(|r| r.kind == SkillRootKind::System));
        assert!(roots[3..].iter().all(|r| r.kind == SkillRootKind::Live));
    }

    #[test]
    fn a_project_skill_switches_models_only_in_a_trusted_project() {
        let builder = SkillModelBuilder { models: crate::model::SpecModels::new(&Settings::default()), trusted: false };
        let refused = builder.model("scripted:/nonexistent.json", SkillRootKind::Live).err().unwrap_or_default();
        assert!(refused.contains("trusted"), "{refused}");
        let user = builder.model("not a spec", SkillRootKind::System).err().unwrap_or_default();
        assert!(user.contains("invalid model spec"), "{user}");
    }
}
