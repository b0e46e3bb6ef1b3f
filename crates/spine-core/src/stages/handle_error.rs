//! `handle_error`: build the failure payload `{failure_kind, retryable, logical_work_id,
//! attempt_no, last_error_summary}` from an execution error. The kind of failure — and through
//! it `retryable` — is decided by one exhaustive match per error source.

use std::time::Instant;

use spine_protocol::report::{FailureKind, FailurePayload};
use spine_protocol::tool::{ErrorCode, ToolError};
use spine_protocol::trace::StageName;
use thiserror::Error;

use super::review_tool_call::ReviewError;
use crate::fields;
use crate::hooks::HookErrorKind;
use crate::hooks::events::HookFailure;
use crate::model::{ModelError, ModelErrorKind};
use crate::trace::Trace;

/// Anything that can fail a run or an assignment.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ExecutionError {
    /// The tool did not pass review.
    #[error("{0}")]
    Review(#[from] ReviewError),
    /// The tool failed.
    #[error("{0}")]
    Tool(ToolError),
    /// The model failed.
    #[error("model request failed: {0}")]
    Model(ModelError),
    /// A hook failed closed.
    #[error("{0}")]
    Hook(HookFailure),
    /// The input was invalid.
    #[error("{0}")]
    Validation(String),
    /// The work was canceled.
    #[error("canceled: {0}")]
    Canceled(String),
    /// A hook or the policy stopped the work.
    #[error("blocked: {0}")]
    Blocked(String),
    /// The work ran out of turns.
    #[error("{0}")]
    MaxTurns(String),
    /// Anything else.
    #[error("{0}")]
    Runtime(String),
}

impl ExecutionError {
    /// The `failure_kind` an `execution_fail` report carries for this error.
    pub fn failure_kind(&self) -> FailureKind {
        match self {
            ExecutionError::Review(ReviewError::Unsupported(_)) => FailureKind::UnsupportedTool,
            ExecutionError::Review(ReviewError::NotVisible(_)) => FailureKind::AuthorizationError,
            ExecutionError::Tool(e) => match e.code {
                ErrorCode::Timeout => FailureKind::Timeout,
                ErrorCode::Canceled => FailureKind::Canceled,
                ErrorCode::UnknownTool | ErrorCode::UnsupportedTool => FailureKind::UnsupportedTool,
                ErrorCode::InvalidArguments | ErrorCode::ValidationError | ErrorCode::NotFound => {
                    FailureKind::ValidationError
                }
                ErrorCode::ToolNotAllowed | ErrorCode::PermissionDenied | ErrorCode::HookBlocked => {
                    FailureKind::AuthorizationError
                }
                ErrorCode::HookContractError
                | ErrorCode::HookExecutionError
                | ErrorCode::HookLaunchError
                | ErrorCode::HookStoppedContinuation => FailureKind::HookError,
                ErrorCode::CommandFailed | ErrorCode::RuntimeError => FailureKind::RuntimeError,
            },
            ExecutionError::Model(e) => match e.kind {
                ModelErrorKind::Timeout => FailureKind::Timeout,
                ModelErrorKind::Transport => FailureKind::TransportError,
                ModelErrorKind::Http { .. } if e.kind.retryable() => FailureKind::TransportError,
                ModelErrorKind::Canceled => FailureKind::Canceled,
                ModelErrorKind::Config => FailureKind::ValidationError,
                ModelErrorKind::Http { .. }
                | ModelErrorKind::InvalidReply
                | ModelErrorKind::Incomplete
                | ModelErrorKind::Refusal
                | ModelErrorKind::Exhausted => FailureKind::ModelError,
            },
            ExecutionError::Hook(f) => match f.kind {
                HookErrorKind::Timeout => FailureKind::Timeout,
                HookErrorKind::Launch | HookErrorKind::Failed | HookErrorKind::Contract => FailureKind::HookError,
            },
            ExecutionError::Validation(_) => FailureKind::ValidationError,
            ExecutionError::Canceled(_) => FailureKind::Canceled,
            ExecutionError::Blocked(_) => FailureKind::AuthorizationError,
            ExecutionError::MaxTurns(_) | ExecutionError::Runtime(_) => FailureKind::RuntimeError,
        }
    }

    /// Whether retrying may succeed: by kind, except that a hook failure is retryable only
    /// when it was not a contract violation (a hook that answered wrongly will answer wrongly
    /// again).
    pub fn retryable(&self) -> bool {
        match self {
            ExecutionError::Hook(f) => match f.kind {
                HookErrorKind::Contract => false,
                HookErrorKind::Launch | HookErrorKind::Failed | HookErrorKind::Timeout => true,
            },
            other => other.failure_kind().retryable(),
        }
    }
}

/// Builds the failure payload and records the stage.
pub fn handle_error(error: &ExecutionError, logical_work_id: &str, attempt_no: u32, trace: &Trace) -> FailurePayload {
    let started = Instant::now();
    let payload = FailurePayload {
        failure_kind: error.failure_kind(),
        retryable: error.retryable(),
        logical_work_id: logical_work_id.to_owned(),
        attempt_no,
        last_error_summary: error.to_string(),
    };
    trace.stage(StageName::HandleError, None, started, fields! { "error" => payload });
    payload
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_carries_kind_retryable_and_identity() {
        let trace = Trace::default();
        let p = handle_error(&ExecutionError::Runtime("boom".into()), "work-1", 2, &trace);
        assert_eq!(p.failure_kind, FailureKind::RuntimeError);
        assert_eq!(p.last_error_summary, "boom");
        assert!(!p.retryable);
        assert_eq!((p.logical_work_id.as_str(), p.attempt_no), ("work-1", 2));
        assert_eq!(trace.stage_names(), vec!["handle_error"]);
    }

    #[test]
    fn timeouts_and_transport_errors_are_retryable_validation_and_authorization_are_not() {
        let cases = [
            (ExecutionError::Tool(ToolError::new(ErrorCode::Timeout, "t")), true),
            (ExecutionError::Model(ModelError::new(ModelErrorKind::Http { status: 503 }, "x")), true),
            (ExecutionError::Model(ModelError::new(ModelErrorKind::Transport, "x")), true),
            (ExecutionError::Model(ModelError::new(ModelErrorKind::Http { status: 401 }, "x")), false),
            (ExecutionError::Validation("bad".into()), false),
            (ExecutionError::Review(ReviewError::NotVisible("calculator".into())), false),
            (ExecutionError::Tool(ToolError::new(ErrorCode::InvalidArguments, "x")), false),
        ];
        for (error, retryable) in cases {
            assert_eq!(error.retryable(), retryable, "{error:?}");
        }
    }
}
