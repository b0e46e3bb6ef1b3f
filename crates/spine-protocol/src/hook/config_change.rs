//! ConfigChange: a settings file of the session changed on disk while the session runs. Hooks
//! may block the change (the session keeps the settings it has; a managed settings change
//! cannot be blocked). The matcher filters on `source`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Action, HookEvent, HookEventName};

/// Marker for the ConfigChange event.
#[derive(Debug, Clone, Copy)]
pub struct ConfigChange;

/// ConfigChange input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigChangeInput {
    /// Which settings: `user_settings`, `project_settings`, `local_settings`,
    /// `policy_settings` or `skills`.
    pub source: String,
    /// The file that changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<PathBuf>,
}

/// An answer that may refuse what is about to happen (ConfigChange).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum GateAction {
    /// Let it happen.
    #[default]
    Proceed,
    /// Refuse it.
    Block {
        /// Why (shown to the user).
        reason: String,
    },
}

impl Action for GateAction {
    fn decision(&self) -> &'static str {
        match self {
            GateAction::Proceed => "proceed",
            GateAction::Block { .. } => "block",
        }
    }
    fn additional_context(&self) -> Option<&str> {
        None
    }
}

impl HookEvent for ConfigChange {
    const NAME: HookEventName = HookEventName::ConfigChange;
    type Input = ConfigChangeInput;
    type Action = GateAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.source)
    }
}
