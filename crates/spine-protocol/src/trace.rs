//! Structured trace entries: one per stage, one per hook, one combined decision record per
//! tool call, plus model requests, warnings, and the run's start and end. A run can write them
//! as JSONL; they are the first thing a user reads when a hook "did nothing".
//!
//! The format is a contract: `schemas/trace.schema.json` is generated from these types
//! ([`schema`]) and a test fails when the two drift. Changes stay backward compatible: new
//! kinds and new optional fields only, so every trace written before still reads.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hook::HookEventName;
use crate::permission::PermissionDecision;

/// One trace entry: a sequence number, the time since the run started, and the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraceEntry {
    /// Position in the run's trace, from 0.
    pub seq: u64,
    /// Microseconds since the run started.
    pub t_us: u64,
    /// What the entry records; its fields sit beside `seq` and `t_us`, tagged by `kind`.
    #[serde(flatten)]
    pub record: TraceRecord,
    /// Set on the entries of a subagent's run, as the parent's trace holds them: which `Task`
    /// call of which agent started it. Absent on the main agent's own entries (so traces of
    /// runs without subagents read as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<SubagentTag>,
}

/// The subagent a trace entry belongs to: `spine trace show` nests the entry under the
/// `Task` call `parent_tool_use_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentTag {
    /// The subagent's id (`agentId` of its transcript lines, `agent_id` of its hook inputs).
    pub agent_id: String,
    /// Its type (`subagent_type` of the `Task` call).
    pub agent_type: String,
    /// The `Task` call that started it, in its parent's run.
    pub parent_tool_use_id: String,
    /// The parent's agent id; absent when the parent is the main agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_agent_id: Option<String>,
    /// 1 for a child of the main agent, 2 for a grandchild…
    pub depth: u32,
    /// The subagent's own sequence number of the entry (the parent renumbers `seq`).
    pub seq: u64,
}

/// What a trace entry records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceRecord {
    /// The run started: its session, model, prompt and wall-clock start (the first entry of a
    /// run; traces written before it existed have none).
    RunStart(RunStartTrace),
    /// A pipeline stage ([`StageName`]).
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
    /// The run's token usage and cost per model, written once when the run ends.
    RunUsage(RunUsageTrace),
    /// Something the user should know about (a fail-open hook, a discarded rewrite…).
    Warning(WarningTrace),
    /// The run ended (the last entry of a run; `spine trace show --follow` stops on it).
    RunEnd(RunEndTrace),
}

impl TraceRecord {
    /// The wire name of the record's kind (`stage`, `hook`, `tool_decision`…).
    pub fn kind(&self) -> &'static str {
        match self {
            TraceRecord::RunStart(_) => "run_start",
            TraceRecord::Stage(_) => "stage",
            TraceRecord::Hook(_) => "hook",
            TraceRecord::ToolDecision(_) => "tool_decision",
            TraceRecord::Model(_) => "model",
            TraceRecord::ModelAttempt(_) => "model_attempt",
            TraceRecord::RunUsage(_) => "run_usage",
            TraceRecord::Warning(_) => "warning",
            TraceRecord::RunEnd(_) => "run_end",
        }
    }

    /// The tool call the record is about, if any.
    pub fn tool_use_id(&self) -> Option<&str> {
        match self {
            TraceRecord::Stage(s) => s.tool_use_id.as_deref(),
            TraceRecord::Hook(h) => h.tool_use_id.as_deref(),
            TraceRecord::ToolDecision(d) => Some(&d.tool_use_id),
            TraceRecord::Warning(w) => w.tool_use_id.as_deref(),
            TraceRecord::RunStart(_)
            | TraceRecord::Model(_)
            | TraceRecord::ModelAttempt(_)
            | TraceRecord::RunUsage(_)
            | TraceRecord::RunEnd(_) => None,
        }
    }
}

/// The start of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunStartTrace {
    /// The session id.
    pub session_id: String,
    /// The model the run's requests go to, as the client names it.
    pub model: String,
    /// The prompt; absent when the run continues a deferred call without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// When the run started (RFC 3339, UTC); `t_us` of every entry counts from here.
    pub started_at: String,
    /// The run's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// The end of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunEndTrace {
    /// How the run ended (`success`, `error_max_turns`, …).
    pub subtype: crate::run::RunSubtype,
    /// Model requests made.
    pub num_turns: u32,
}

/// The JSON Schema of one trace line (`schemas/trace.schema.json`).
pub fn schema() -> Value {
    schemars::generate::SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<TraceEntry>().to_value()
}

/// A stage entry; `hook` holds the stage name (the seed's spelling).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StageTrace {
    /// The stage (its wire name, under the key `hook`).
    pub hook: StageName,
    /// The tool call this stage worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// How long the stage took.
    pub duration_us: u64,
    /// Stage-specific fields.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// A pipeline stage, as named in trace entries (`{"kind": "stage", "hook": "execute", …}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StageName {
    /// Builds the messages of a model request (`stages/prepare_turn.rs`).
    PrepareTurn,
    /// Shrinks the context past its budget, or records that it fits (`stages/compact_context.rs`).
    CompactContext,
    /// Checks that a tool is registered and visible to the run (`stages/review_tool_call.rs`).
    ReviewToolCall,
    /// Runs a tool.
    Execute,
    /// Turns a tool's response into the model's text and metadata
    /// (`stages/project_tool_result.rs`).
    ProjectToolResult,
    /// Produces the run's final output (`stages/finalize_output.rs`).
    FinalizeOutput,
    /// Turns a failure into the terminal report (`stages/handle_error.rs`).
    HandleError,
    /// A worker's skill flow (`skills_catalog_list`, `skills_load`, `skills_read_file`).
    Skills,
    /// An MCP server's elicitation during a tool call: server, action, who answered, field names.
    Elicitation,
}

impl StageName {
    /// Every stage.
    pub const ALL: [StageName; 9] = [
        StageName::PrepareTurn,
        StageName::CompactContext,
        StageName::ReviewToolCall,
        StageName::Execute,
        StageName::ProjectToolResult,
        StageName::FinalizeOutput,
        StageName::HandleError,
        StageName::Skills,
        StageName::Elicitation,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            StageName::PrepareTurn => "prepare_turn",
            StageName::CompactContext => "compact_context",
            StageName::ReviewToolCall => "review_tool_call",
            StageName::Execute => "execute",
            StageName::ProjectToolResult => "project_tool_result",
            StageName::FinalizeOutput => "finalize_output",
            StageName::HandleError => "handle_error",
            StageName::Skills => "skills",
            StageName::Elicitation => "elicitation",
        }
    }
}

impl fmt::Display for StageName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with a wire name (`stage == "execute"`).
impl PartialEq<&str> for StageName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One hook's run on one event: what it decided, and whether its answer was used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HookTrace {
    /// The event the hook ran on.
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDecisionRecord {
    /// The id of the tool call the record is about.
    pub tool_use_id: String,
    /// The name of the tool the model called.
    pub tool_name: String,
    /// The arguments the model called it with (before any hook rewrote them; a string when
    /// they were not JSON). Absent in traces written before the field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// PreToolUse answers, in order.
    pub pre_tool_use: Vec<HookSaid>,
    /// The permission decision, when the policy was reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission: Option<PermissionDecision>,
    /// PostToolUse / PostToolUseFailure answers, in order.
    pub post_tool_use: Vec<HookSaid>,
    /// What happened to the call.
    pub outcome: DecisionOutcome,
    /// The error code of the result the model read, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

/// What happened to a tool call, in its decision record (`"outcome": "executed"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionOutcome {
    /// The tool ran and its result went to the model (PostToolUse hooks may have rewritten it).
    Executed,
    /// Unknown tool or invalid arguments: refused before any hook saw the call.
    Invalid,
    /// The tool is not registered or not visible to this run (`review_tool_call`).
    NotAllowed,
    /// A PreToolUse hook blocked the call.
    Blocked,
    /// A PreToolUse hook failed closed.
    HookFailed,
    /// A hook stopped the run before the tool ran.
    Halted,
    /// The permission policy, a PermissionRequest hook or the approver refused the call.
    Denied,
    /// The call was deferred: it stays pending and the run ends.
    Deferred,
    /// The run was canceled before or while the tool ran.
    Canceled,
    /// The tool ran and failed.
    Failed,
    /// The tool ran, then a PostToolUse hook failed closed.
    PostHookFailed,
}

impl DecisionOutcome {
    /// Every outcome.
    pub const ALL: [DecisionOutcome; 11] = [
        DecisionOutcome::Executed,
        DecisionOutcome::Invalid,
        DecisionOutcome::NotAllowed,
        DecisionOutcome::Blocked,
        DecisionOutcome::HookFailed,
        DecisionOutcome::Halted,
        DecisionOutcome::Denied,
        DecisionOutcome::Deferred,
        DecisionOutcome::Canceled,
        DecisionOutcome::Failed,
        DecisionOutcome::PostHookFailed,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionOutcome::Executed => "executed",
            DecisionOutcome::Invalid => "invalid",
            DecisionOutcome::NotAllowed => "not_allowed",
            DecisionOutcome::Blocked => "blocked",
            DecisionOutcome::HookFailed => "hook_failed",
            DecisionOutcome::Halted => "halted",
            DecisionOutcome::Denied => "denied",
            DecisionOutcome::Deferred => "deferred",
            DecisionOutcome::Canceled => "canceled",
            DecisionOutcome::Failed => "failed",
            DecisionOutcome::PostHookFailed => "post_hook_failed",
        }
    }
}

impl fmt::Display for DecisionOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with a wire name (`outcome == "denied"`).
impl PartialEq<&str> for DecisionOutcome {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// One hook's answer inside a decision record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HookSaid {
    /// The hook's id, as in its [`HookTrace`].
    pub hook_id: String,
    /// Its decision in one word.
    pub decision: String,
}

/// One model request of a run: its size, what came back, how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelTrace {
    /// 1-based request number.
    pub turn: u32,
    /// The model the request went to, as the client names it.
    pub model: String,
    /// Messages sent.
    pub message_count: usize,
    /// Tool calls received.
    pub tool_calls: usize,
    /// How long the request took.
    pub duration_us: u64,
    /// The readable text of the reply's reasoning items, in order (thinking text, reasoning
    /// summaries; redacted and encrypted parts have none). Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<String>,
    /// The error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tokens the server reported for this request; absent when it reported none (never
    /// guessed as 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::run::Usage>,
    /// What the request cost in US dollars, when its usage and the model's price are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// The totals of a run: usage and cost per model, and the run's total cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunUsageTrace {
    /// Per model id.
    pub models: std::collections::BTreeMap<String, crate::run::ModelUsage>,
    /// The sum of the known costs, in US dollars; absent when no cost is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<f64>,
}

/// One attempt of a model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModelAttemptTrace {
    /// 1-based request number (the `turn` of the request's [`ModelTrace`]).
    pub turn: u32,
    /// 1-based attempt number within the request.
    pub attempt: u32,
    /// How long the attempt took.
    pub duration_us: u64,
    /// How the attempt ended.
    pub outcome: AttemptResult,
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

/// How one attempt of a model request ended, written `ok`, `retry` or `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum AttemptResult {
    /// The model answered.
    #[serde(rename = "ok")]
    Ok,
    /// It failed and the request is sent again.
    #[serde(rename = "retry")]
    Retry,
    /// It failed and the request fails with it.
    #[serde(rename = "failed")]
    Failed,
}

impl AttemptResult {
    /// The wire name: `ok`, `retry` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptResult::Ok => "ok",
            AttemptResult::Retry => "retry",
            AttemptResult::Failed => "failed",
        }
    }
}

/// Something the user should know about that did not stop the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WarningTrace {
    /// What happened, in one sentence.
    pub message: String,
    /// The tool call concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
}
