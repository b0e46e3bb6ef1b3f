//! Permission modes, hook suggestions and the policy's decisions.
//!
//! Hooks *suggest* ([`PermissionSuggestion`]); the policy *decides* ([`PermissionDecision`]).
//! Suggestions merge strongest-first: deny > defer > ask > allow > passthrough.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The run's permission mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Read tools allowed; write, execute and network tools ask.
    #[default]
    Default,
    /// As default, but file edits inside the workspace are allowed without asking.
    AcceptEdits,
    /// Read-only: tools that are not read-only are denied.
    Plan,
    /// Everything allowed, except hook and rule denies, `ask` rules and the workspace boundary.
    BypassPermissions,
    /// As default, but whatever would ask is refused instead (Claude Code's `dontAsk`).
    DontAsk,
}

impl PermissionMode {
    /// The mode as written on the command line and in hook inputs.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }
}

impl FromStr for PermissionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(PermissionMode::Default),
            "acceptEdits" => Ok(PermissionMode::AcceptEdits),
            "plan" => Ok(PermissionMode::Plan),
            "bypassPermissions" => Ok(PermissionMode::BypassPermissions),
            "dontAsk" => Ok(PermissionMode::DontAsk),
            other => Err(format!(
                "unknown permission mode `{other}` (expected default, acceptEdits, plan, dontAsk or bypassPermissions)"
            )),
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a PreToolUse hook suggests to the permission policy.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "snake_case")]
pub enum PermissionSuggestion {
    /// No opinion: the policy alone decides.
    #[default]
    Passthrough,
    /// Skip the approval prompt (never lifts a policy deny; an `ask` rule still asks).
    Allow {
        /// Shown to the user.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Force an approval prompt.
    Ask {
        /// Shown to the user.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// End a non-interactive run with the call pending (status `deferred`).
    Defer,
    /// Refuse the call; the reason reaches the model.
    Deny {
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl PermissionSuggestion {
    /// Rank for the strongest-wins merge: deny > defer > ask > allow > passthrough.
    pub fn strength(&self) -> u8 {
        match self {
            PermissionSuggestion::Passthrough => 0,
            PermissionSuggestion::Allow { .. } => 1,
            PermissionSuggestion::Ask { .. } => 2,
            PermissionSuggestion::Defer => 3,
            PermissionSuggestion::Deny { .. } => 4,
        }
    }

    /// The suggestion's name.
    pub fn as_str(&self) -> &'static str {
        match self {
            PermissionSuggestion::Passthrough => "passthrough",
            PermissionSuggestion::Allow { .. } => "allow",
            PermissionSuggestion::Ask { .. } => "ask",
            PermissionSuggestion::Defer => "defer",
            PermissionSuggestion::Deny { .. } => "deny",
        }
    }
}

/// The behaviour of a permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PermissionBehavior {
    /// Run the tool.
    Allow,
    /// Do not run it.
    Deny,
    /// Ask the approver.
    Ask,
    /// Leave the call pending and end the run.
    Defer,
}

impl PermissionBehavior {
    /// The behaviour's name.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionBehavior::Allow => "allow",
            PermissionBehavior::Deny => "deny",
            PermissionBehavior::Ask => "ask",
            PermissionBehavior::Defer => "defer",
        }
    }
}

/// Who made a permission decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DecisionSource {
    /// The mode's default for the tool's effect class.
    Default,
    /// The permission mode itself (`plan`, `bypassPermissions`, `acceptEdits`).
    Mode,
    /// A configured rule.
    Rule {
        /// The rule as written, e.g. `Bash(git *)`.
        rule: String,
    },
    /// A PreToolUse hook suggestion.
    Hook {
        /// The hook's id.
        hook_id: String,
    },
    /// The workspace boundary.
    Workspace,
    /// A PermissionRequest hook answering for the approver.
    PermissionRequestHook {
        /// The hook's id.
        hook_id: String,
    },
    /// The approver (a person at a terminal, or the non-interactive deny).
    Approver,
    /// An active skill's `allowed-tools` or `disallowed-tools` (they only ever refuse).
    Skill {
        /// The skill's name.
        skill: String,
    },
}

impl DecisionSource {
    /// A short label for log lines: `default`, `rule Bash(git *)`, `hook <id>`…
    pub fn label(&self) -> String {
        match self {
            DecisionSource::Default => "default".to_owned(),
            DecisionSource::Mode => "mode".to_owned(),
            DecisionSource::Rule { rule } => format!("rule {rule}"),
            DecisionSource::Hook { hook_id } => format!("hook {hook_id}"),
            DecisionSource::Workspace => "workspace".to_owned(),
            DecisionSource::PermissionRequestHook { hook_id } => {
                format!("PermissionRequest hook {hook_id}")
            }
            DecisionSource::Approver => "approver".to_owned(),
            DecisionSource::Skill { skill } => format!("skill {skill}"),
        }
    }
}

/// A decision of the permission stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PermissionDecision {
    /// What happens.
    pub behavior: PermissionBehavior,
    /// Who decided.
    pub source: DecisionSource,
    /// Why (a deny's reason reaches the model as `Error [permission_denied]: <reason>`).
    pub reason: String,
    /// What became of the `updatedPermissions` of the PermissionRequest hook that allowed the
    /// call (absent when it had none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permission_updates: Vec<crate::permission_update::AppliedUpdate>,
}

impl PermissionDecision {
    /// A decision of `behavior` by `source`, with the reason a reader (or the model) sees.
    pub fn new(behavior: PermissionBehavior, source: DecisionSource, reason: impl Into<String>) -> Self {
        PermissionDecision { behavior, source, reason: reason.into(), permission_updates: Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestion_strength_orders_deny_defer_ask_allow_passthrough() {
        let order = [
            PermissionSuggestion::Passthrough,
            PermissionSuggestion::Allow { reason: None },
            PermissionSuggestion::Ask { reason: None },
            PermissionSuggestion::Defer,
            PermissionSuggestion::Deny { reason: None },
        ];
        for pair in order.windows(2) {
            assert!(pair[0].strength() < pair[1].strength(), "{:?} < {:?}", pair[0], pair[1]);
        }
    }

    #[test]
    fn permission_modes_parse_their_cli_spelling() {
        for m in [
            PermissionMode::Default,
            PermissionMode::AcceptEdits,
            PermissionMode::Plan,
            PermissionMode::BypassPermissions,
            PermissionMode::DontAsk,
        ] {
            assert_eq!(m.as_str().parse::<PermissionMode>(), Ok(m));
            assert_eq!(serde_json::to_value(m).expect("ser"), serde_json::json!(m.as_str()));
        }
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
