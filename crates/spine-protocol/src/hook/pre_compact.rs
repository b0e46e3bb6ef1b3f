//! PreCompact: before a compaction of the context. A hook may block it.

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName};

/// Marker for the PreCompact event.
#[derive(Debug, Clone, Copy)]
pub struct PreCompact;

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactTrigger {
    /// The user asked for it.
    Manual,
    /// The context passed its budget threshold.
    Auto,
}

impl CompactTrigger {
    /// The value matchers see.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactTrigger::Manual => "manual",
            CompactTrigger::Auto => "auto",
        }
    }
}

/// PreCompact input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreCompactInput {
    /// What started it.
    pub trigger: CompactTrigger,
    /// Instructions given with a manual compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
}

/// A PreCompact answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum PreCompactAction {
    /// Let the compaction happen.
    #[default]
    Proceed,
    /// Do not compact.
    Block {
        /// Why.
        reason: String,
    },
}

impl super::Action for PreCompactAction {
    fn decision(&self) -> &'static str {
        match self {
            PreCompactAction::Proceed => "proceed",
            PreCompactAction::Block { .. } => "block",
        }
    }
    fn additional_context(&self) -> Option<&str> {
        None
    }
}

impl HookEvent for PreCompact {
    const NAME: HookEventName = HookEventName::PreCompact;
    type Input = PreCompactInput;
    type Action = PreCompactAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(input.trigger.as_str())
    }
}
