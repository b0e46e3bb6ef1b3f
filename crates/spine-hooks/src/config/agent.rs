//! A subagent definition's own `hooks` (a `.claude/agents/*.md` front matter's, or an
//! `--agents` entry's), as Claude Code 2.1 reads them.
//!
//! Contract of [`HookConfig::from_agent`]:
//! - The value has the shape of the settings' `hooks` key and is validated by the same parser:
//!   every error names the origin given (the agent file) and the JSON path
//!   (`hooks.PreToolUse[0].hooks[1].timeout`); unknown names are warnings, near misses errors.
//! - For a subagent ([`AgentRole::Subagent`]), a `Stop` group fires as `SubagentStop` (a
//!   subagent ends with SubagentStop, never Stop; Claude Code converts it the same way; its path
//!   stays `hooks.Stop[i]`), and a `SubagentStart` group is dropped with a warning: the
//!   subagent has started before its own hooks are registered (as in Claude Code), so it would
//!   never fire. For the main session run as the agent (`--agent`, [`AgentRole::Main`]), the
//!   groups stay as written.
//! - `disableAllHooks` and the managed policy of the session's `settings` apply as to any
//!   non-managed source ([`crate::policy`]): under `allowManagedHooksOnly` none of them runs.
//!   Whether the definition's source is trusted is the caller's decision.

use serde_json::Value;
use spine_protocol::hook::HookEventName;
use spine_settings::{Origin, Settings};

use super::{Diagnostics, HookConfig, HookConfigError, parse_layer};
use crate::shell::Shells;

/// Who runs as the agent whose hooks these are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentRole {
    /// A subagent an `Agent` call started.
    Subagent,
    /// The main session (`--agent`).
    Main,
}

impl HookConfig {
    /// Parses a definition's `hooks` for `role` (see the module documentation), with the
    /// shells found on `PATH`. `origin` names the definition in errors, warnings and the hooks'
    /// sources.
    pub fn from_agent(
        value: &Value,
        origin: &Origin,
        settings: &Settings,
        role: AgentRole,
    ) -> Result<HookConfig, HookConfigError> {
        HookConfig::from_agent_with(value, origin, settings, role, &Shells::detect())
    }

    /// As [`HookConfig::from_agent`]; `command` lines run under `shells`.
    pub fn from_agent_with(
        value: &Value,
        origin: &Origin,
        settings: &Settings,
        role: AgentRole,
        shells: &Shells,
    ) -> Result<HookConfig, HookConfigError> {
        let mut diag = Diagnostics { origin, shells, errors: Vec::new(), warnings: Vec::new() };
        let mut groups = Vec::new();
        parse_layer(&mut diag, value, &mut groups);
        let mut config = HookConfig::default();
        for mut group in groups {
            let event = if role == AgentRole::Subagent { Some(group.event) } else { None };
            match event {
                Some(HookEventName::Stop) => group.event = HookEventName::SubagentStop,
                Some(HookEventName::SubagentStart) => {
                    diag.warn(
                        &group.path,
                        "never fires: a subagent has started before its own hooks are registered; \
                         its hooks do not run",
                    );
                    continue;
                }
                _ => {}
            }
            config.groups.push(group);
        }
        let mut errors = diag.errors;
        config.warnings = diag.warnings;
        crate::policy::apply(&mut config, settings, &mut errors);
        if errors.is_empty() { Ok(config) } else { Err(HookConfigError { errors }) }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;
    use spine_settings::SettingsLayer;

    use super::*;

    fn origin() -> Origin {
        Origin::Project(PathBuf::from("/p/.claude/agents/r.md"))
    }

    fn command(text: &str) -> Value {
        json!([{"hooks": [{"type": "command", "command": text}]}])
    }

    #[test]
    fn a_stop_hook_fires_as_subagent_stop_and_keeps_its_path() {
        let value = json!({"Stop": command("true"), "PreToolUse": command("true")});
        let config =
            HookConfig::from_agent(&value, &origin(), &Settings::default(), AgentRole::Subagent).expect("valid");
        let events: Vec<(HookEventName, &str)> = config.groups.iter().map(|g| (g.event, g.path.as_str())).collect();
        assert!(events.contains(&(HookEventName::SubagentStop, "hooks.Stop[0]")), "{events:?}");
        assert!(events.contains(&(HookEventName::PreToolUse, "hooks.PreToolUse[0]")), "{events:?}");
    }

    #[test]
    fn run_as_the_main_session_an_agents_hooks_stay_as_written() {
        let value = json!({"Stop": command("true"), "SubagentStart": command("true")});
        let config = HookConfig::from_agent(&value, &origin(), &Settings::default(), AgentRole::Main).expect("valid");
        let mut events: Vec<HookEventName> = config.groups.iter().map(|g| g.event).collect();
        events.sort_by_key(|e| e.as_str());
        assert_eq!(events, [HookEventName::Stop, HookEventName::SubagentStart]);
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    }

    #[test]
    fn an_invalid_hook_names_the_agent_file_and_the_json_path() {
        let value = json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "true", "timeout": "x"}]}]});
        let err =
            HookConfig::from_agent(&value, &origin(), &Settings::default(), AgentRole::Subagent).expect_err("invalid");
        let text = err.to_string();
        assert!(text.starts_with("/p/.claude/agents/r.md: hooks.PreToolUse[0].hooks[0].timeout: "), "{text}");
    }

    #[test]
    fn a_subagent_start_hook_is_dropped_with_a_warning() {
        let value = json!({"SubagentStart": command("true")});
        let config =
            HookConfig::from_agent(&value, &origin(), &Settings::default(), AgentRole::Subagent).expect("valid");
        assert!(config.groups.is_empty());
        assert_eq!(config.warnings.len(), 1);
        assert_eq!(config.warnings[0].path, "hooks.SubagentStart[0]");
    }

    #[test]
    fn allow_managed_hooks_only_keeps_an_agents_hooks_from_running() {
        let managed = Origin::Managed(PathBuf::from("/etc/spine/managed-settings.json"));
        let layer = SettingsLayer {
            origin: managed,
            value: json!({"allowManagedHooksOnly": true}).as_object().cloned().unwrap_or_default(),
        };
        let settings = Settings::from_layers(vec![layer]).expect("settings");
        let value = json!({"PreToolUse": command("true")});
        let config = HookConfig::from_agent(&value, &origin(), &settings, AgentRole::Subagent).expect("valid");
        assert!(config.active_groups().is_empty(), "only managed hooks run");
        assert!(config.warnings.iter().any(|w| w.message.contains("allowManagedHooksOnly")), "{:?}", config.warnings);
    }
}
