//! The `response_payload`s of agent-program requests (`prepare_round`, `execute_program_tool`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ProgramToolCall, RoundMessage};
use crate::report::{OutputChunk, ToolErrorPayload};

/// `status` of agent-program responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    /// The request succeeded.
    Ok,
    /// The request failed (the report is `agent_program_failed`).
    Failed,
}

/// The `response_payload` of a `prepare_round` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PrepareRoundResponse {
    /// Always `ok`.
    pub status: ResponseStatus,
    /// The messages of the next model request (system prompt, then the compacted transcript).
    pub messages: Vec<RoundMessage>,
    /// The tools the kernel's model may call (the allowed list; all registered when absent).
    pub visible_tool_names: Vec<String>,
    /// The resolved likely model.
    pub likely_model: Option<String>,
    /// Summaries produced (none yet).
    pub summary_artifacts: Vec<Value>,
    /// The stage trace: `prepare_turn`, `compact_context` (`{hook, duration_us, …fields}`).
    pub trace: Vec<Value>,
}

/// The `response_payload` of an `execute_program_tool` request (its `error` is also the
/// `error_payload` of the `agent_program_failed` report when it failed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExecuteProgramToolResponse {
    /// `ok` or `failed`.
    pub status: ResponseStatus,
    /// The call, with its call id.
    pub program_tool_call: ProgramToolCall,
    /// The result, when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ProgramToolResult>,
    /// The error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolErrorPayload>,
    /// The output the tool streamed.
    pub output_chunks: Vec<OutputChunk>,
    /// Summaries produced (none yet).
    pub summary_artifacts: Vec<Value>,
}

/// A tool's result: the projection and the raw structured response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProgramToolResult {
    /// What the model reads.
    pub content: String,
    /// Machine-readable fields of the projection.
    pub metadata: Map<String, Value>,
    /// The tool's structured response.
    pub response: Value,
}
