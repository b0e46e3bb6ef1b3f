//! SubagentStart: a `Task` call is starting a subagent, before the subagent's first model
//! request. Hooks may add context for the subagent (not for the parent). The matcher filters on
//! `agent_type`.

use serde::{Deserialize, Serialize};

use super::{ContextAction, HookEvent, HookEventName};

/// Marker for the SubagentStart event.
#[derive(Debug, Clone, Copy)]
pub struct SubagentStart;

/// SubagentStart input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentStartInput {
    /// The subagent's id (also in `agentId` of its transcript lines).
    pub agent_id: String,
    /// The subagent's type: the `subagent_type` of the `Task` call (`general-purpose`, or a
    /// definition's `name`).
    pub agent_type: String,
}

impl HookEvent for SubagentStart {
    const NAME: HookEventName = HookEventName::SubagentStart;
    type Input = SubagentStartInput;
    type Action = ContextAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.agent_type)
    }
}
