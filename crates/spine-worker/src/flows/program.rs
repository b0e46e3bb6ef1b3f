//! `agent_program_request` (docs/pipeline.md, "The worker"): answers for a model that runs on the kernel side.
//!
//! - `prepare_round`: `prepare_turn` → `compact_context`; `agent_program_completed` with
//!   [`PrepareRoundResponse`] `{status, messages, visible_tool_names, likely_model,
//!   summary_artifacts, trace}`.
//! - `execute_program_tool`: one tool call through the whole tool-call pipeline (review,
//!   PreToolUse, the permission policy, the tool, PostToolUse; its output chunks are
//!   collected, not reported as progress); `agent_program_completed` with
//!   [`ExecuteProgramToolResponse`] `{status: ok, program_tool_call, result, output_chunks}`,
//!   or `agent_program_failed` whose `error_payload` is the tool error payload
//!   `{classification, code, message, retryable}`.
//!
//! Dependencies: [`super`] and its [`assignment`](super::assignment) (the single tool call).

use std::sync::{Arc, Mutex};

use serde_json::Value;
use spine_core::tool::{OutputStream, ProgressSink};
use spine_protocol::assignment::{
    ExecuteProgramToolResponse, PrepareRoundResponse, ProgramToolCall, ProgramToolResult, RequestKind, RequestPayload,
    ResponseStatus, RoundMessage,
};
use spine_protocol::report::{FailureKind, OutputChunk, ReportBody, ToolErrorPayload};
use spine_protocol::tool::{ErrorCode, ToolError};
use spine_protocol::trace::TraceRecord;

use super::assignment::{call_id_of, run_call};
use super::{ItemContext, error_payload, prepare_round as prepare};

/// Answers `prepare_round`.
pub async fn prepare_round(ctx: &ItemContext, payload: &RequestPayload) {
    let kind = RequestKind::PrepareRound.as_str().to_owned();
    let round = match prepare(ctx, payload).await {
        Ok(round) => round,
        Err(e) => {
            let (classification, code) = match e.failure_kind() {
                FailureKind::Canceled => ("runtime", "canceled"),
                FailureKind::Timeout => ("runtime", "timeout"),
                FailureKind::ValidationError => ("semantic", "validation_error"),
                FailureKind::UnsupportedTool => ("semantic", "unsupported_tool"),
                FailureKind::UnsupportedRequestKind => ("semantic", "unsupported_request_kind"),
                FailureKind::AuthorizationError => ("authorization", "tool_not_allowed"),
                FailureKind::TransportError
                | FailureKind::ModelError
                | FailureKind::HookError
                | FailureKind::RuntimeError => ("runtime", "runtime_error"),
            };
            let error_payload = error_payload(classification, code, &e.to_string(), e.retryable());
            ctx.sink.emit(ReportBody::AgentProgramFailed { request_kind: kind, error_payload });
            return;
        }
    };
    let visible_tool_names = match payload.allowed_tools() {
        Some(names) => names.to_vec(),
        None => ctx.env.tools.names().map(str::to_owned).collect(),
    };
    let trace = ctx
        .trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::Stage(s) => serde_json::to_value(s).ok(),
            _ => None,
        })
        .collect();
    let response = PrepareRoundResponse {
        status: ResponseStatus::Ok,
        messages: round
            .messages
            .iter()
            .map(|m| RoundMessage { role: m.role().to_owned(), content: m.text().unwrap_or_default().to_owned() })
            .collect(),
        visible_tool_names,
        likely_model: round.likely_model,
        summary_artifacts: Vec::new(),
        trace,
    };
    emit_completed(ctx, kind, &response);
}

/// Collects a tool's output chunks for the response.
#[derive(Default)]
struct Chunks(Mutex<Vec<OutputChunk>>);

impl ProgressSink for Chunks {
    fn output(&self, _call_id: &str, _tool_name: &str, stream: OutputStream, text: &str) {
        if let Ok(mut chunks) = self.0.lock() {
            chunks.push(OutputChunk { stream: stream.as_str().to_owned(), text: text.to_owned() });
        }
    }
}

/// Answers `execute_program_tool`.
pub async fn execute_program_tool(ctx: &ItemContext, payload: &RequestPayload, mut call: ProgramToolCall) {
    let kind = RequestKind::ExecuteProgramTool.as_str().to_owned();
    let call_id = call_id_of(&call);
    call.call_id = Some(call_id.clone());
    let chunks = Arc::new(Chunks::default());
    let outcome = run_tool(ctx, payload, &call, &call_id, &chunks).await;
    let output_chunks = match chunks.0.lock() {
        Ok(mut c) => std::mem::take(&mut *c),
        Err(_) => Vec::new(),
    };
    match outcome {
        Ok(result) => {
            let response = ExecuteProgramToolResponse {
                status: ResponseStatus::Ok,
                program_tool_call: call,
                result: Some(result),
                error: None,
                output_chunks,
                summary_artifacts: Vec::new(),
            };
            emit_completed(ctx, kind, &response);
        }
        Err(error) => {
            let payload = ToolErrorPayload::from(&error);
            let error_payload = serde_json::to_value(&payload).unwrap_or(Value::Null);
            ctx.sink.emit(ReportBody::AgentProgramFailed { request_kind: kind, error_payload });
        }
    }
}

async fn run_tool(
    ctx: &ItemContext,
    payload: &RequestPayload,
    call: &ProgramToolCall,
    call_id: &str,
    chunks: &Arc<Chunks>,
) -> Result<ProgramToolResult, ToolError> {
    let progress = Some(Arc::clone(chunks) as Arc<dyn ProgressSink>);
    let outcome = run_call(ctx, payload, call, call_id, None, progress).await;
    match (outcome.error, outcome.executed) {
        (Some(e), _) if ctx.canceled() => {
            Err(ToolError::new(ErrorCode::Canceled, format!("{}: {}", ctx.cancellation.summary(), e.message)))
        }
        (Some(e), _) => Err(e),
        (None, Some((response, metadata))) => {
            Ok(ProgramToolResult { content: outcome.result.content, metadata, response })
        }
        (None, None) => Err(ToolError::new(ErrorCode::RuntimeError, "internal: the call succeeded without a response")),
    }
}

fn emit_completed(ctx: &ItemContext, request_kind: String, response: &impl serde::Serialize) {
    match serde_json::to_value(response) {
        Ok(response_payload) => ctx.sink.emit(ReportBody::AgentProgramCompleted { request_kind, response_payload }),
        Err(e) => ctx.sink.emit(ReportBody::AgentProgramFailed {
            request_kind,
            error_payload: error_payload(
                "runtime",
                "runtime_error",
                &format!("response does not serialize: {e}"),
                false,
            ),
        }),
    }
}
