//! Permission updates in Claude Code's wire shape: what a PermissionRequest hook reads as
//! `permission_suggestions` and may answer as `updatedPermissions`.
//!
//! Contract (Claude Code 2.1's `PermissionUpdate`, recorded in
//! `crates/spine-cli/tests/fixtures/claude-code-2.1.328/`):
//! - `{"type": "addRules" | "replaceRules" | "removeRules", "rules": [{"toolName", "ruleContent"?}],
//!   "behavior": "allow" | "deny" | "ask", "destination"}`;
//! - `{"type": "setMode", "mode", "destination"}`;
//! - `{"type": "addDirectories" | "removeDirectories", "directories": [..], "destination"}`;
//! - `destination` is `userSettings`, `projectSettings`, `localSettings`, `session` or `cliArg`.
//!
//! A rule value `{"toolName": "Bash", "ruleContent": "npm test:*"}` is the rule
//! `Bash(npm test:*)`; without `ruleContent` it is the bare tool name. What an update does to a
//! session is spine-core's (`permission::session`); this module is data only.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::permission::PermissionMode;

/// Where an update goes (Claude Code's `PermissionUpdateDestination`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum UpdateDestination {
    /// The user's settings file.
    UserSettings,
    /// The project's shared settings file.
    ProjectSettings,
    /// The project's local settings file (not committed).
    LocalSettings,
    /// This session only.
    Session,
    /// The command line's rules (`--allowedTools`, `--disallowedTools`).
    CliArg,
}

impl UpdateDestination {
    /// Every destination, as Claude Code lists them.
    pub const ALL: [UpdateDestination; 5] = [
        UpdateDestination::UserSettings,
        UpdateDestination::ProjectSettings,
        UpdateDestination::LocalSettings,
        UpdateDestination::Session,
        UpdateDestination::CliArg,
    ];

    /// The wire name (`localSettings`…).
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateDestination::UserSettings => "userSettings",
            UpdateDestination::ProjectSettings => "projectSettings",
            UpdateDestination::LocalSettings => "localSettings",
            UpdateDestination::Session => "session",
            UpdateDestination::CliArg => "cliArg",
        }
    }

    /// The destination a wire name means.
    pub fn parse(name: &str) -> Option<UpdateDestination> {
        UpdateDestination::ALL.into_iter().find(|d| d.as_str() == name)
    }

    /// Whether the destination names a settings file (`userSettings`, `projectSettings`,
    /// `localSettings`): an update there is also saved.
    pub fn is_settings_file(self) -> bool {
        matches!(
            self,
            UpdateDestination::UserSettings | UpdateDestination::ProjectSettings | UpdateDestination::LocalSettings
        )
    }
}

impl fmt::Display for UpdateDestination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The list a rule update is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RuleBehavior {
    /// `permissions.allow`.
    Allow,
    /// `permissions.deny`.
    Deny,
    /// `permissions.ask`.
    Ask,
}

impl RuleBehavior {
    /// The wire name, also the settings key (`allow`, `deny`, `ask`).
    pub fn as_str(self) -> &'static str {
        match self {
            RuleBehavior::Allow => "allow",
            RuleBehavior::Deny => "deny",
            RuleBehavior::Ask => "ask",
        }
    }

    /// The behavior a wire name means.
    pub fn parse(name: &str) -> Option<RuleBehavior> {
        [RuleBehavior::Allow, RuleBehavior::Deny, RuleBehavior::Ask].into_iter().find(|b| b.as_str() == name)
    }
}

/// One rule as Claude Code writes it in an update: `{"toolName": "Bash", "ruleContent": "npm test:*"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleValue {
    /// The tool (`Bash`, `Edit`, `mcp__fs__*`).
    #[serde(rename = "toolName")]
    pub tool_name: String,
    /// What is inside the parentheses, when anything is.
    #[serde(rename = "ruleContent", default, skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
}

impl RuleValue {
    /// The value of a rule as written in settings: `Bash(npm test:*)` → tool `Bash`, content
    /// `npm test:*`; `Write` → tool `Write`, no content.
    pub fn from_rule(text: &str) -> RuleValue {
        let text = text.trim();
        match (text.find('('), text.strip_suffix(')')) {
            (Some(open), Some(inner)) if open < inner.len() => RuleValue {
                tool_name: text[..open].trim().to_owned(),
                rule_content: Some(inner[open + 1..].to_owned()),
            },
            _ => RuleValue { tool_name: text.to_owned(), rule_content: None },
        }
    }

    /// The rule as written in settings: `Bash(npm test:*)`, or the bare tool name.
    pub fn rule(&self) -> String {
        match &self.rule_content {
            Some(content) => format!("{}({content})", self.tool_name),
            None => self.tool_name.clone(),
        }
    }
}

/// One permission update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PermissionUpdate {
    /// Adds rules to a list.
    AddRules {
        /// The rules.
        rules: Vec<RuleValue>,
        /// Which list.
        behavior: RuleBehavior,
        /// Where.
        destination: UpdateDestination,
    },
    /// Replaces every rule of a list that the destination holds.
    ReplaceRules {
        /// The new rules.
        rules: Vec<RuleValue>,
        /// Which list.
        behavior: RuleBehavior,
        /// Where.
        destination: UpdateDestination,
    },
    /// Removes rules from a list of the destination.
    RemoveRules {
        /// The rules.
        rules: Vec<RuleValue>,
        /// Which list.
        behavior: RuleBehavior,
        /// Where.
        destination: UpdateDestination,
    },
    /// Changes the permission mode.
    SetMode {
        /// The new mode.
        mode: PermissionMode,
        /// Where.
        destination: UpdateDestination,
    },
    /// Adds workspace roots.
    AddDirectories {
        /// The directories.
        directories: Vec<String>,
        /// Where.
        destination: UpdateDestination,
    },
    /// Removes added workspace roots.
    RemoveDirectories {
        /// The directories.
        directories: Vec<String>,
        /// Where.
        destination: UpdateDestination,
    },
}

impl PermissionUpdate {
    /// The wire `type` (`addRules`…).
    pub fn kind(&self) -> &'static str {
        match self {
            PermissionUpdate::AddRules { .. } => "addRules",
            PermissionUpdate::ReplaceRules { .. } => "replaceRules",
            PermissionUpdate::RemoveRules { .. } => "removeRules",
            PermissionUpdate::SetMode { .. } => "setMode",
            PermissionUpdate::AddDirectories { .. } => "addDirectories",
            PermissionUpdate::RemoveDirectories { .. } => "removeDirectories",
        }
    }

    /// Where the update goes.
    pub fn destination(&self) -> UpdateDestination {
        match self {
            PermissionUpdate::AddRules { destination, .. }
            | PermissionUpdate::ReplaceRules { destination, .. }
            | PermissionUpdate::RemoveRules { destination, .. }
            | PermissionUpdate::SetMode { destination, .. }
            | PermissionUpdate::AddDirectories { destination, .. }
            | PermissionUpdate::RemoveDirectories { destination, .. } => *destination,
        }
    }
}

/// What became of one update of a PermissionRequest hook's allow, as the trace records it (in
/// the call's permission decision).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AppliedUpdate {
    /// The update as the hook answered it.
    pub update: PermissionUpdate,
    /// Whether it now applies to the session (false: refused, `note` says why).
    pub applied: bool,
    /// What else happened: the settings file it was saved to, why it was not saved, or why it
    /// was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_update_has_claude_codes_wire_shape() {
        let update = PermissionUpdate::AddRules {
            rules: vec![RuleValue::from_rule("Bash(npm test:*)")],
            behavior: RuleBehavior::Allow,
            destination: UpdateDestination::LocalSettings,
        };
        let wire = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                          "behavior": "allow", "destination": "localSettings"});
        assert_eq!(serde_json::to_value(&update).expect("ser"), wire);
        assert_eq!(serde_json::from_value::<PermissionUpdate>(wire).expect("de"), update);
        let dirs = json!({"type": "addDirectories", "directories": ["/x"], "destination": "session"});
        let parsed: PermissionUpdate = serde_json::from_value(dirs.clone()).expect("de");
        assert_eq!((parsed.kind(), parsed.destination()), ("addDirectories", UpdateDestination::Session));
        assert_eq!(serde_json::to_value(&parsed).expect("ser"), dirs);
    }

    #[test]
    fn a_rule_value_round_trips_through_the_settings_spelling() {
        for text in ["Bash(npm test:*)", "Write", "Edit(./src/a (copy).rs)", "WebFetch(domain:example.com)"] {
            assert_eq!(RuleValue::from_rule(text).rule(), text);
        }
        assert_eq!(RuleValue::from_rule("Read").rule_content, None);
        assert_eq!(RuleValue::from_rule("Bash(ls)").tool_name, "Bash");
    }

    #[test]
    fn only_the_three_settings_files_are_file_destinations() {
        let files: Vec<&str> =
            UpdateDestination::ALL.into_iter().filter(|d| d.is_settings_file()).map(|d| d.as_str()).collect();
        assert_eq!(files, ["userSettings", "projectSettings", "localSettings"]);
        for d in UpdateDestination::ALL {
            assert_eq!(UpdateDestination::parse(d.as_str()), Some(d));
        }
    }
}
