//! Structured trace entries: one per stage, one per hook, one combined decision record per
//! tool call, plus model requests and warnings. A run can write them as JSONL; they are the
//! first thing a user reads when a hook "did nothing".

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hook::HookEventName;
use crate::permission::PermissionDecision;

/// One trace entry: a sequence number, the time since the run started, and the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEntry {
    /// Position in the run's trace, from 0.
    pub seq: u64,
    /// Microseconds since the run started.
    pub t_us: u64,
    /// The record.
    #[serde(flatten)]
    pub record: TraceRecord,
}

/// What a trace entry records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceRecord {
    /// A pipeline stage (`prepare_turn`, `compact_context`, `review_tool_call`, `execute`,
    /// `project_tool_result`, `finalize_output`, `handle_error`, …).
    Stage(StageTrace),
    /// One hook's run.
    Hook(HookTrace),
    /// The combined decision record of one tool call.
    ToolDecision(ToolDecisionRecord),
    /// One model request.
    Model(ModelTrace),
    /// One attempt of a model request (every attempt, retried or not; the request's own
    /// [`TraceRecord::Model`] entry follows its attempts).
    ModelAttempt(ModelAttemptTrace),
    /// Something the user should know about (a fail-open hook, a discarded rewrite…).
    Warning(WarningTrace),
}

/// A stage entry; `hook` holds the stage name (the seed's spelling).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTrace {
    /// The stage name.
    pub hook: String,
    /// The tool call this stage worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// How long the stage took.
    pub duration_us: u64,
    /// Stage-specific fields.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// A hook entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookTrace {
    /// The event.
    pub event: HookEventName,
    /// The hook's id (its name, or its command).
    pub hook_id: String,
    /// Where it came from (`rust`, a settings file…).
    pub source: String,
    /// The tool call, for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// What it decided, in one word (`proceed`, `block`, `allow`, `rewrite`, `failed`…).
    pub decision: String,
    /// Whether its answer was used, or discarded by an earlier short-circuit.
    pub applied: bool,
    /// How long it ran.
    pub duration_us: u64,
    /// Its full answer, or the failure detail.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub detail: Value,
}

/// What each hook said about one tool call, what the policy said, and what happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDecisionRecord {
    /// The call.
    pub tool_use_id: String,
    /// The tool.
    pub tool_name: String,
    /// PreToolUse answers, in order.
    pub pre_tool_use: Vec<HookSaid>,
    /// The permission decision, when the policy was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<PermissionDecision>,
    /// PostToolUse / PostToolUseFailure answers, in order.
    pub post_tool_use: Vec<HookSaid>,
    /// What happened: `executed`, `blocked`, `denied`, `failed`, `skipped`…
    pub outcome: String,
    /// The error code of the result the model read, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

/// One hook's answer inside a decision record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookSaid {
    /// The hook's id.
    pub hook_id: String,
    /// Its decision in one word.
    pub decision: String,
}

/// A model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelTrace {
    /// 1-based request number.
    pub turn: u32,
    /// The model.
    pub model: String,
    /// Messages sent.
    pub message_count: usize,
    /// Tool calls received.
    pub tool_calls: usize,
    /// How long the request took.
    pub duration_us: u64,
    /// The error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One attempt of a model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelAttemptTrace {
    /// 1-based request number (the `turn` of the request's [`ModelTrace`]).
    pub turn: u32,
    /// 1-based attempt number within the request.
    pub attempt: u32,
    /// How long the attempt took.
    pub duration_us: u64,
    /// `ok`, `retry` (failed; the request is sent again) or `failed` (the request fails).
    pub outcome: String,
    /// The error kind (`timeout`, `http 503`, `transport`, …) when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// The error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The wait before the next attempt, when it is retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
}

/// A warning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarningTrace {
    /// What happened.
    pub message: String,
    /// The tool call concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
}
