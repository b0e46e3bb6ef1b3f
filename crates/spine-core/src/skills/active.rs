//! What an active skill restricts, and the model it asks for.
//!
//! A skill is active from the moment the model loads it with `Skill` (a call that succeeded)
//! or the user runs it as `/name`, to the end of the run — one prompt of `spine run` or of a
//! chat, Claude Code's "until you send your next message". Subagents started meanwhile start
//! with the same restrictions.
//!
//! Contract of [`ActiveSkills::refusal`]:
//! - A skill's `allowed-tools` narrow: a call runs only when every active skill with such a
//!   list covers it, as an allow rule covers a call (`Read`, `Bash(git status *)`, a shell
//!   command only when each of its simple commands is covered, an opaque one never).
//! - A skill's `disallowed-tools` refuse the calls they match, as a deny rule matches.
//! - The refusal names the skill and its list. It is one more refusal in the permission step:
//!   it never allows a call the rules, a hook or the mode would refuse, and never skips an
//!   `ask` (Claude Code's `allowed-tools` grant permission instead; spine never widens).
//! - `${CLAUDE_SKILL_DIR}`, `${CLAUDE_PROJECT_DIR}` (and a plugin's `${CLAUDE_PLUGIN_ROOT}`,
//!   `${CLAUDE_PLUGIN_DATA}`) are replaced in the rules first. A rule that does not parse is
//!   left out of its list, which only narrows it (the caller reports it).

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{SkillEntry, SkillRootKind, SkillVars, render};
use crate::model::ModelClient;
use crate::permission::shell::{self, ShellAnalysis};
use crate::permission::{CallFacts, PermissionRule, RuleUse};

/// Builds the model a skill's `model:` names (spine-agent's, with the settings' clients).
pub trait SkillModels: Send + Sync {
    /// The model of `spec` for a skill found in a root of `kind`, or why it cannot be used (a
    /// spec that does not parse, a missing key, a project skill of an untrusted project).
    fn model(&self, spec: &str, kind: SkillRootKind) -> Result<Arc<dyn ModelClient>, String>;
}

/// One active skill's restrictions.
#[derive(Debug, Clone)]
pub struct ActiveSkill {
    /// The skill.
    pub name: String,
    allowed: Option<Vec<PermissionRule>>,
    allowed_text: Vec<String>,
    disallowed: Vec<PermissionRule>,
}

impl ActiveSkill {
    /// What `entry` restricts, with its rules' variables replaced; and a line for each rule
    /// that does not parse.
    pub fn of(entry: &SkillEntry, vars: &SkillVars) -> (ActiveSkill, Vec<String>) {
        let mut problems = Vec::new();
        let mut parse = |written: &String, field: &str| {
            let rule = render::variables(entry, written, vars);
            PermissionRule::parse(&rule)
                .map_err(|e| problems.push(format!("skill `{}`: {field} `{rule}` left out: {e}", entry.name)))
                .ok()
        };
        let allowed = entry
            .meta
            .allowed_tools
            .as_ref()
            .map(|list| list.iter().filter_map(|r| parse(r, "allowed-tools")).collect::<Vec<_>>());
        let disallowed = entry.meta.disallowed_tools.iter().filter_map(|r| parse(r, "disallowed-tools")).collect();
        let allowed_text = allowed.iter().flatten().map(|r| r.as_str().to_owned()).collect();
        (ActiveSkill { name: entry.name.clone(), allowed, allowed_text, disallowed }, problems)
    }

    /// Whether the skill restricts anything.
    pub fn restricts(&self) -> bool {
        self.allowed.is_some() || !self.disallowed.is_empty()
    }
}

/// The skills active in a run (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct ActiveSkills {
    skills: Vec<ActiveSkill>,
}

impl ActiveSkills {
    /// Makes `skill` active (again: its earlier activation is replaced).
    pub fn activate(&mut self, skill: ActiveSkill) {
        self.skills.retain(|s| s.name != skill.name);
        self.skills.push(skill);
    }

    /// The active skills' names, in activation order.
    pub fn names(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.name.as_str()).collect()
    }

    /// Whether no active skill restricts anything.
    pub fn unrestricted(&self) -> bool {
        !self.skills.iter().any(ActiveSkill::restricts)
    }

    /// Which active skill refuses the call and why (see the module documentation), or `None`.
    pub fn refusal(&self, call: &CallFacts<'_>, project_dir: &Path) -> Option<(String, String)> {
        if self.unrestricted() {
            return None;
        }
        let owned;
        let analysis = match (call.shell, shell_command(call)) {
            (Some(a), Some(_)) => Some(a),
            (None, Some(command)) => {
                owned = shell::analyze(command);
                Some(&owned)
            }
            (_, None) => None,
        };
        let tool = call.tool_name;
        for skill in &self.skills {
            if let Some(rule) = skill.disallowed.iter().find(|r| restricts(r, call, analysis, project_dir)) {
                let why = format!(
                    "{tool} is not allowed while the skill `{}` is active: its disallowed-tools has {}",
                    skill.name,
                    rule.as_str()
                );
                return Some((skill.name.clone(), why));
            }
            if let Some(allowed) = &skill.allowed
                && !covers(allowed, call, analysis, project_dir)
            {
                let list =
                    if skill.allowed_text.is_empty() { "none".to_owned() } else { skill.allowed_text.join(", ") };
                let why = format!(
                    "{tool} is not allowed while the skill `{}` is active: its allowed-tools are {list}",
                    skill.name
                );
                return Some((skill.name.clone(), why));
            }
        }
        None
    }
}

/// A shell tool's command, when the call is one.
fn shell_command<'a>(call: &CallFacts<'a>) -> Option<&'a str> {
    shell::is_shell_tool(call.tool_name).then(|| call.args.get("command").and_then(Value::as_str)).flatten()
}

/// Whether `rules` cover the call as allow rules do.
fn covers(rules: &[PermissionRule], call: &CallFacts<'_>, shell: Option<&ShellAnalysis>, project_dir: &Path) -> bool {
    let tool = call.tool_name;
    match shell {
        Some(analysis) => {
            if rules.iter().any(|r| r.is_bare() && r.tool_matches(tool)) {
                return true;
            }
            !analysis.is_opaque()
                && !analysis.commands.is_empty()
                && analysis.commands.iter().all(|c| rules.iter().any(|r| r.covers_shell_command(tool, c)))
        }
        None => rules.iter().any(|r| r.matches(tool, call.args, project_dir, RuleUse::Allow)),
    }
}

/// Whether `rule` matches the call as a deny rule does.
fn restricts(rule: &PermissionRule, call: &CallFacts<'_>, shell: Option<&ShellAnalysis>, project_dir: &Path) -> bool {
    match (shell, shell_command(call)) {
        (Some(analysis), Some(command)) => rule.restricts_shell(call.tool_name, analysis, command),
        _ => rule.matches(call.tool_name, call.args, project_dir, RuleUse::Restrict),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::SkillMeta;
    use serde_json::{Map, json};
    use spine_protocol::tool::Effect;

    fn entry(allowed: Option<&[&str]>, disallowed: &[&str]) -> SkillEntry {
        SkillEntry {
            name: "deploy".into(),
            description: String::new(),
            source_kind: SkillRootKind::Live,
            active: true,
            root_path: "/p/.claude/skills/deploy".into(),
            meta: SkillMeta {
                allowed_tools: allowed.map(|l| l.iter().map(|s| (*s).to_owned()).collect()),
                disallowed_tools: disallowed.iter().map(|s| (*s).to_owned()).collect(),
                ..SkillMeta::default()
            },
            plugin: None,
        }
    }

    fn refused(skills: &ActiveSkills, tool: &str, args: Value) -> Option<String> {
        let args: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
        skills.refusal(&CallFacts::new(tool, Effect::Read, &args), Path::new("/p")).map(|(_, why)| why)
    }

    #[test]
    fn allowed_tools_narrow_calls_to_what_they_cover_and_name_the_skill() {
        let mut skills = ActiveSkills::default();
        let (skill, problems) = ActiveSkill::of(
            &entry(Some(&["Read", "Bash(git status *)", "Bash(${CLAUDE_SKILL_DIR}/run.sh *)"]), &[]),
            &SkillVars::default(),
        );
        assert!(problems.is_empty(), "{problems:?}");
        skills.activate(skill);
        assert_eq!(refused(&skills, "Read", json!({"file_path": "/p/a"})), None);
        assert_eq!(refused(&skills, "Bash", json!({"command": "git status -s"})), None);
        assert_eq!(refused(&skills, "Bash", json!({"command": "/p/.claude/skills/deploy/run.sh x"})), None);
        let why = refused(&skills, "Bash", json!({"command": "git status && rm -rf x"})).expect("refused");
        assert!(why.contains("skill `deploy`") && why.contains("allowed-tools are Read"), "{why}");
        assert!(refused(&skills, "Write", json!({"file_path": "/p/a", "content": ""})).is_some());
        assert!(refused(&skills, "Bash", json!({"command": "eval \"$X\""})).is_some(), "opaque: never covered");
    }

    #[test]
    fn disallowed_tools_refuse_and_several_lists_must_all_allow() {
        let mut skills = ActiveSkills::default();
        skills.activate(ActiveSkill::of(&entry(None, &["WebFetch"]), &SkillVars::default()).0);
        assert!(
            refused(&skills, "WebFetch", json!({"url": "https://x.test"})).is_some_and(|w| w.contains("disallowed"))
        );
        assert_eq!(refused(&skills, "Read", json!({"file_path": "/p/a"})), None);
        let mut other = entry(Some(&["Grep"]), &[]);
        other.name = "search".into();
        skills.activate(ActiveSkill::of(&other, &SkillVars::default()).0);
        assert!(refused(&skills, "Read", json!({"file_path": "/p/a"})).is_some_and(|w| w.contains("`search`")));
        let (bad, problems) = ActiveSkill::of(&entry(Some(&["Bash("]), &[]), &SkillVars::default());
        assert!(bad.restricts() && problems.len() == 1, "a rule that does not parse only narrows");
    }
}
