//! SubagentStop: a subagent answered without tool calls (its candidate final answer). It takes
//! the place of Stop inside a subagent and answers the same way: a hook may force the subagent
//! on with a non-empty reason (bounded like Stop by `stop.max_forced_continuations`). The
//! matcher filters on `agent_type`.

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName, StopAction};

/// Marker for the SubagentStop event.
#[derive(Debug, Clone, Copy)]
pub struct SubagentStop;

/// SubagentStop input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentStopInput {
    /// True when this SubagentStop follows a forced continuation.
    pub stop_hook_active: bool,
    /// The subagent's id.
    pub agent_id: String,
    /// The subagent's type.
    pub agent_type: String,
    /// The subagent's own transcript (`<session>/subagents/agent-<id>.jsonl`).
    pub agent_transcript_path: std::path::PathBuf,
    /// The subagent's candidate final answer.
    pub last_assistant_message: String,
}

impl HookEvent for SubagentStop {
    const NAME: HookEventName = HookEventName::SubagentStop;
    type Input = SubagentStopInput;
    type Action = StopAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.agent_type)
    }
}
