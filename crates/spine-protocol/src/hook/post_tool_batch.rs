//! PostToolBatch: every call of one model reply has its result, before the next model
//! request. Hooks see the whole batch and may add context (placed after the batch's results)
//! or stop the run (`continue: false`). No matcher.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContextAction, HookEvent, HookEventName};

/// Marker for the PostToolBatch event.
#[derive(Debug, Clone, Copy)]
pub struct PostToolBatch;

/// One call of the batch, as Claude Code sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchCall {
    /// The tool (`Bash` for every tool that runs a command line, as for PreToolUse).
    pub tool_name: String,
    /// The arguments the call ran with (as the model sent them when it was refused before).
    pub tool_input: Value,
    /// The model's id of the call.
    pub tool_use_id: String,
    /// The text the model receives as the call's result.
    pub tool_response: String,
}

/// PostToolBatch input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostToolBatchInput {
    /// The calls of the reply, in order.
    pub tool_calls: Vec<BatchCall>,
}

impl HookEvent for PostToolBatch {
    const NAME: HookEventName = HookEventName::PostToolBatch;
    type Input = PostToolBatchInput;
    type Action = ContextAction;
    fn matcher_subject(_input: &Self::Input) -> Option<&str> {
        None
    }
}
