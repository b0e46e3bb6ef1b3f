//! Execution reports and failure payloads (docs/pipeline.md, "handle_error" and "Reports").
//!
//! A run or an assignment reports, in order: `execution_started` → `execution_progress`
//! (`tool_reviewed`, `tool_output`) → one terminal report: `execution_complete`,
//! `execution_fail` or `execution_canceled`. Every report carries the identifying fields
//! `method_id`, `protocol_message_id`, `mailbox_item_id`, `logical_work_id`, `attempt_no`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::{Classification, ErrorCode, ToolError};

/// One report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// This report's own id.
    pub protocol_message_id: String,
    /// The mailbox item the work came from.
    pub mailbox_item_id: String,
    /// The logical unit of work (stable across attempts).
    pub logical_work_id: String,
    /// The delivery attempt, from 1.
    pub attempt_no: u32,
    /// What is reported (`method_id` and its fields).
    #[serde(flatten)]
    pub body: ReportBody,
}

/// The kinds of report, tagged by `method_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "method_id", rename_all = "snake_case")]
pub enum ReportBody {
    /// The work started.
    ExecutionStarted {
        /// A hint for watchdogs.
        expected_duration_seconds: u64,
    },
    /// Progress: a tool was reviewed, or produced output.
    ExecutionProgress {
        /// The progress.
        progress_payload: ProgressPayload,
    },
    /// The work completed.
    ExecutionComplete {
        /// The output and the tool invocations.
        terminal_payload: CompletePayload,
    },
    /// The work failed.
    ExecutionFail {
        /// The failure.
        terminal_payload: FailPayload,
    },
    /// The work was canceled (a close request, Ctrl-C, shutdown).
    ExecutionCanceled {
        /// Why.
        terminal_payload: CanceledPayload,
    },
    /// A close request was received.
    ResourceCloseAcknowledged {
        /// The close request's item id.
        close_request_id: String,
        /// What is being closed.
        resource_id: String,
    },
    /// A close request was carried out.
    ResourceClosed {
        /// The close request's item id.
        close_request_id: String,
        /// What was closed.
        resource_id: String,
        /// `graceful` (it was running and stopped, or was already canceled), `not_found`
        /// (nothing was running: it had finished), `canceled_before_start` (it had not started;
        /// it ends canceled when delivered) or `timeout` (signalled, but it had not ended
        /// within the close wait).
        close_outcome_kind: String,
    },
    /// The answer to an `agent_program_request`.
    AgentProgramCompleted {
        /// `prepare_round` or `execute_program_tool`.
        request_kind: String,
        /// The response.
        response_payload: Value,
    },
    /// An `agent_program_request` failed.
    AgentProgramFailed {
        /// The request kind.
        request_kind: String,
        /// The error.
        error_payload: Value,
    },
}

impl ReportBody {
    /// The `method_id`.
    pub fn method_id(&self) -> &'static str {
        match self {
            ReportBody::ExecutionStarted { .. } => "execution_started",
            ReportBody::ExecutionProgress { .. } => "execution_progress",
            ReportBody::ExecutionComplete { .. } => "execution_complete",
            ReportBody::ExecutionFail { .. } => "execution_fail",
            ReportBody::ExecutionCanceled { .. } => "execution_canceled",
            ReportBody::ResourceCloseAcknowledged { .. } => "resource_close_acknowledged",
            ReportBody::ResourceClosed { .. } => "resource_closed",
            ReportBody::AgentProgramCompleted { .. } => "agent_program_completed",
            ReportBody::AgentProgramFailed { .. } => "agent_program_failed",
        }
    }

    /// Whether this report ends the work.
    pub fn is_terminal(&self) -> bool {
        match self {
            ReportBody::ExecutionComplete { .. }
            | ReportBody::ExecutionFail { .. }
            | ReportBody::ExecutionCanceled { .. }
            | ReportBody::ResourceClosed { .. }
            | ReportBody::AgentProgramCompleted { .. }
            | ReportBody::AgentProgramFailed { .. } => true,
            ReportBody::ExecutionStarted { .. }
            | ReportBody::ExecutionProgress { .. }
            | ReportBody::ResourceCloseAcknowledged { .. } => false,
        }
    }
}

/// Progress, tagged by `stage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "stage", rename_all = "snake_case")]
pub enum ProgressPayload {
    /// A tool call passed review and is about to run.
    ToolReviewed {
        /// The invocation.
        tool_invocation: ToolInvocation,
    },
    /// A tool produced output.
    ToolOutput {
        /// The output.
        tool_invocation_output: ToolInvocationOutput,
    },
    /// A subagent started by a `Task` call started or ended (one pair per child).
    Subagent {
        /// The subagent and what happened to it.
        subagent: SubagentProgress,
    },
}

/// A subagent's progress, as an assignment that delegates reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentProgress {
    /// `started`, `completed`, `failed` or `canceled`.
    pub event: String,
    /// The `Task` call that started it.
    pub call_id: String,
    /// The subagent's id.
    pub agent_id: String,
    /// Its type (`subagent_type`).
    pub agent_type: String,
    /// The call's `description`, on `started`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its final answer (`completed`) or why it ended without one (`failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// A tool invocation as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolInvocation {
    /// `started`, `completed` or `failed`.
    pub event: String,
    /// The invocation's id.
    pub tool_invocation_id: String,
    /// The model's (or payload's) call id.
    pub call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The request (`{tool_name, arguments}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_payload: Option<Value>,
    /// The projected response (`{content, …metadata}`; never raw stdout/stderr, only sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_payload: Option<Value>,
    /// The error payload of a failed invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_payload: Option<ToolErrorPayload>,
}

/// Output chunks of one invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolInvocationOutput {
    /// The invocation.
    pub tool_invocation_id: String,
    /// The call.
    pub call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The chunks.
    pub output_chunks: Vec<OutputChunk>,
}

/// One chunk of output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputChunk {
    /// `stdout` or `stderr`.
    pub stream: String,
    /// The text.
    pub text: String,
}

/// The payload of `execution_complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompletePayload {
    /// The final output.
    pub output: String,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The turn it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// The tool invocations of the work.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_invocations: Vec<ToolInvocation>,
    /// Token usage and cost per model id, for work that made model requests (absent
    /// otherwise).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub model_usage: std::collections::BTreeMap<String, crate::run::ModelUsage>,
    /// The sum of the known costs of `model_usage`, in US dollars; absent when none is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<f64>,
}

/// The payload of `execution_fail`: the failure, and the invocation that failed if any.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FailPayload {
    /// The failure.
    #[serde(flatten)]
    pub failure: FailurePayload,
    /// The tool invocations of the work (the failed one last).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_invocations: Vec<ToolInvocation>,
}

/// The payload of `execution_canceled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CanceledPayload {
    /// Always `canceled`.
    pub failure_kind: FailureKind,
    /// What canceled it.
    pub last_error_summary: String,
}

/// The failure payload built by `handle_error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FailurePayload {
    /// What kind of failure.
    pub failure_kind: FailureKind,
    /// Whether the same work may succeed if tried again.
    pub retryable: bool,
    /// The unit of work.
    pub logical_work_id: String,
    /// The attempt.
    pub attempt_no: u32,
    /// One line about the error.
    pub last_error_summary: String,
}

/// Kinds of failure; `retryable` is decided per kind by [`FailureKind::retryable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The input is wrong (bad payload, bad arguments).
    ValidationError,
    /// The tool is not supported.
    UnsupportedTool,
    /// Not allowed (not visible, permission denied, blocked by a hook).
    AuthorizationError,
    /// The request kind is not supported.
    UnsupportedRequestKind,
    /// A time limit passed.
    Timeout,
    /// A network failure (connection, 429, 5xx).
    TransportError,
    /// The model failed in a way a retry will not fix (bad reply, refusal, cut off).
    ModelError,
    /// A hook failed to decide and fails closed.
    HookError,
    /// Something failed while running.
    RuntimeError,
    /// The work was canceled.
    Canceled,
}

impl FailureKind {
    /// Whether retrying may succeed: time-outs and transport errors are retryable; validation
    /// and authorization are not.
    pub fn retryable(self) -> bool {
        match self {
            FailureKind::Timeout | FailureKind::TransportError | FailureKind::HookError => true,
            FailureKind::ValidationError
            | FailureKind::UnsupportedTool
            | FailureKind::AuthorizationError
            | FailureKind::UnsupportedRequestKind
            | FailureKind::ModelError
            | FailureKind::RuntimeError
            | FailureKind::Canceled => false,
        }
    }
}

/// A tool error as reported: `{classification, code, message, retryable}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolErrorPayload {
    /// `authorization`, `semantic` or `runtime`.
    pub classification: Classification,
    /// The error code.
    pub code: ErrorCode,
    /// The message.
    pub message: String,
    /// Whether retrying may succeed.
    pub retryable: bool,
}

impl From<&ToolError> for ToolErrorPayload {
    fn from(e: &ToolError) -> Self {
        ToolErrorPayload {
            classification: e.code.classification(),
            code: e.code,
            message: e.message.clone(),
            retryable: e.code.retryable(),
        }
    }
}
