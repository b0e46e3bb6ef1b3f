//! PostToolUse: the tool returned successfully. A hook may replace the output, attach a block
//! reason (the result stays; the reason reaches the model beside it), add context, or — with
//! `continue: false` ([`super::Halt`]) — prevent continuation: the rest of the batch is skipped
//! and the run's output is this call's result.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{HookEvent, HookEventName};

/// Marker for the PostToolUse event.
#[derive(Debug, Clone, Copy)]
pub struct PostToolUse;

/// PostToolUse input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostToolUseInput {
    /// The tool called (what matchers see; MCP tools are `mcp__<server>__<tool>`).
    pub tool_name: String,
    /// The tool's own name when hooks see it under another (`exec_command` is `Bash` to
    /// hooks); a matcher naming it matches too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_tool_name: Option<String>,
    /// The arguments the tool ran with.
    pub tool_input: Value,
    /// The model's id of the call (`tool_use_id`).
    pub tool_use_id: String,
    /// The tool's structured output (Bash: `{stdout, stderr, interrupted, exit_code}`).
    pub tool_response: Value,
    /// How long the tool ran.
    pub duration_ms: u64,
}

/// A replacement for the tool's output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UpdatedOutput {
    /// Replaces the text the model reads.
    Text(String),
    /// Replaces the structured result (in the tool's own output shape); the text the model
    /// reads is projected from it again.
    Structured(Value),
}

/// A PostToolUse answer. The fields combine freely.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PostToolUseAction {
    /// Replacement output; the next hook sees it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_output: Option<UpdatedOutput>,
    /// A reason placed beside the (unchanged) result for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_reason: Option<String>,
    /// Text for the model, placed after the round's tool results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
}

impl PostToolUseAction {
    /// Replace the text the model reads.
    pub fn replace_text(text: impl Into<String>) -> Self {
        PostToolUseAction { updated_output: Some(UpdatedOutput::Text(text.into())), ..Default::default() }
    }

    /// Context for the model.
    pub fn context(text: impl Into<String>) -> Self {
        PostToolUseAction { additional_context: Some(text.into()), ..Default::default() }
    }
}

impl super::Action for PostToolUseAction {
    fn decision(&self) -> &'static str {
        match (&self.block_reason, &self.updated_output) {
            (Some(_), _) => "block",
            (None, Some(_)) => "rewrite",
            (None, None) if self.additional_context.is_some() => "context",
            (None, None) => "proceed",
        }
    }
    fn additional_context(&self) -> Option<&str> {
        self.additional_context.as_deref()
    }
}

impl HookEvent for PostToolUse {
    const NAME: HookEventName = HookEventName::PostToolUse;
    type Input = PostToolUseInput;
    type Action = PostToolUseAction;
    const HAS_TOOL_CALL: bool = true;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.tool_name)
    }
    fn matcher_alias(input: &Self::Input) -> Option<&str> {
        input.spine_tool_name.as_deref()
    }
    fn tool_call(input: &Self::Input) -> Option<(&str, &Value)> {
        Some((&input.tool_name, &input.tool_input))
    }
}
