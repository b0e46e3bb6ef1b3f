//! How a run ends: the [`End`] of the loop becomes finalize_output, a Notification for an
//! error or a deferral, SessionEnd, the terminal report, the transcript's result record, and
//! the [`RunOutcome`].

use spine_protocol::hook::{
    Notification, NotificationInput, SessionEnd, SessionEndInput, SessionEndReason, StopFailure, StopFailureInput,
};
use spine_protocol::message::Message;
use spine_protocol::run::{ModelUsage, RunSubtype};
use spine_protocol::tool::ToolCall;
use spine_protocol::trace::{RunEndTrace, RunUsageTrace, TraceRecord};

use super::Run;
use super::call::RoundEnd;
use super::request::{RunOutcome, SessionTurn};
use crate::model::ModelErrorKind;
use crate::session::TranscriptRecord;
use crate::stages::finalize_output::finalize_output;
use crate::stages::handle_error::{ExecutionError, handle_error};

/// The end of a run, before finalisation.
pub(super) struct End {
    pub(super) subtype: RunSubtype,
    pub(super) result: String,
    pub(super) reason: SessionEndReason,
    pub(super) stop_reason: Option<String>,
    pub(super) deferred: Option<ToolCall>,
    pub(super) error: Option<ExecutionError>,
}

impl End {
    pub(super) fn new(subtype: RunSubtype, result: impl Into<String>, reason: SessionEndReason) -> Self {
        End { subtype, result: result.into(), reason, stop_reason: None, deferred: None, error: None }
    }

    pub(super) fn success(result: impl Into<String>) -> Self {
        End::new(RunSubtype::Success, result, SessionEndReason::Completed)
    }

    pub(super) fn halted(stop_reason: Option<String>) -> Self {
        let text = stop_reason.clone().unwrap_or_else(|| "a hook stopped the run".to_owned());
        End {
            stop_reason,
            error: Some(ExecutionError::Blocked(text.clone())),
            ..End::new(RunSubtype::Blocked, text, SessionEndReason::Blocked)
        }
    }

    pub(super) fn failed(error: ExecutionError) -> Self {
        End {
            error: Some(error.clone()),
            ..End::new(RunSubtype::ErrorDuringExecution, error.to_string(), SessionEndReason::Error)
        }
    }

    pub(super) fn canceled() -> Self {
        End {
            error: Some(ExecutionError::Canceled("the run was canceled".into())),
            ..End::new(RunSubtype::Canceled, "canceled", SessionEndReason::Canceled)
        }
    }
}

/// Claude Code's StopFailure `error` for a model error.
fn stop_failure_kind(kind: &ModelErrorKind) -> &'static str {
    match kind {
        ModelErrorKind::Http { status: 401 | 403 } => "authentication_failed",
        ModelErrorKind::Http { status: 402 } => "billing_error",
        ModelErrorKind::Http { status: 404 } => "model_not_found",
        ModelErrorKind::Http { status: 429 } => "rate_limit",
        ModelErrorKind::Http { status: 529 } => "overloaded",
        ModelErrorKind::Http { status: 400..=499 } | ModelErrorKind::Config => "invalid_request",
        ModelErrorKind::Http { .. } => "server_error",
        ModelErrorKind::Incomplete => "max_output_tokens",
        ModelErrorKind::Transport
        | ModelErrorKind::Timeout
        | ModelErrorKind::InvalidReply
        | ModelErrorKind::Refusal
        | ModelErrorKind::Canceled
        | ModelErrorKind::Exhausted => "unknown",
    }
}

impl Run<'_> {
    /// The text of the last assistant message of the conversation, if any.
    fn last_assistant_text(&self) -> Option<String> {
        self.conversation.iter().rev().find_map(|m| match m {
            Message::Assistant(a) => a.content.clone().filter(|t| !t.trim().is_empty()),
            _ => None,
        })
    }

    pub(super) fn round_end(&mut self, end: RoundEnd) -> End {
        match end {
            RoundEnd::Continue => {
                End::failed(ExecutionError::Runtime("internal error: a continuing round ended the run".into()))
            }
            RoundEnd::Prevented { output, stop_reason } => {
                let mut end = End::new(RunSubtype::Success, output, SessionEndReason::Completed);
                end.stop_reason = stop_reason;
                end
            }
            RoundEnd::Halted { stop_reason } => End::halted(stop_reason),
            RoundEnd::Canceled => End::canceled(),
            RoundEnd::Deferred(call) => {
                self.record(&TranscriptRecord::Deferred { call: call.clone() });
                let mut end = End::new(
                    RunSubtype::Deferred,
                    format!("tool call {} ({}) deferred; resume the session to continue", call.id, call.name),
                    SessionEndReason::Deferred,
                );
                end.deferred = Some(call);
                end
            }
        }
    }

    pub(super) async fn finish(mut self, end: End) -> RunOutcome {
        let anchor = self.hook_ctx.prompt_id.as_deref().unwrap_or("turn").to_owned();
        finalize_output(&end.result, &self.hook_ctx.session.session_id, &anchor, &self.trace);
        // A subagent's end is its parent's tool result: no Notification, no SessionEnd.
        let main = self.subagent.is_none();
        if let Some(ExecutionError::Model(error)) = &end.error {
            let input = StopFailureInput {
                error: stop_failure_kind(&error.kind).to_owned(),
                error_details: Some(error.message.clone()),
                last_assistant_message: self.last_assistant_text(),
            };
            self.hooks.observe::<StopFailure>(&self.hook_ctx, input).await;
        }
        if main && (end.reason == SessionEndReason::Deferred || end.subtype.is_error()) {
            self.hooks
                .observe::<Notification>(
                    &self.hook_ctx,
                    NotificationInput {
                        message: end.result.clone(),
                        title: Some(format!("run ended: {}", end.reason.as_str())),
                        notification_type: "run_ended".to_owned(),
                    },
                )
                .await;
        }
        if main && self.session_turn == SessionTurn::Whole {
            self.hooks.observe::<SessionEnd>(&self.hook_ctx, SessionEndInput { reason: end.reason }).await;
        }
        let delegated = match self.delegated_usage.get_mut() {
            Ok(d) => std::mem::take(d),
            Err(poisoned) => std::mem::take(poisoned.into_inner()),
        };
        for (model, usage) in &delegated {
            self.model_usage.entry(model.clone()).or_default().merge(usage);
        }
        self.hooks.shutdown();
        if let Some(reports) = &self.reports {
            match (end.subtype, &end.error) {
                (RunSubtype::Success | RunSubtype::Deferred, _) => {
                    reports.complete_with_usage(&end.result, self.model_usage.clone());
                }
                (RunSubtype::Canceled, _) => reports.canceled(&end.result),
                (
                    RunSubtype::ErrorMaxTurns
                    | RunSubtype::ErrorMaxBudgetUsd
                    | RunSubtype::ErrorDuringExecution
                    | RunSubtype::Blocked,
                    error,
                ) => {
                    let error = error.clone().unwrap_or_else(|| ExecutionError::Runtime(end.result.clone()));
                    let identity = reports.identity();
                    reports.fail(handle_error(&error, &identity.logical_work_id, identity.attempt_no, &self.trace));
                }
            }
        }
        let (usage, total_cost_usd) = ModelUsage::totals(&self.model_usage);
        self.book_cost(total_cost_usd);
        if !self.model_usage.is_empty() {
            self.trace
                .record(TraceRecord::RunUsage(RunUsageTrace { models: self.model_usage.clone(), total_cost_usd }));
        }
        self.trace.record(TraceRecord::RunEnd(RunEndTrace { subtype: end.subtype, num_turns: self.num_turns }));
        self.record(&TranscriptRecord::Result { subtype: end.subtype });
        let mut messages = match self.last_request.first() {
            Some(system @ Message::System { .. }) => vec![system.clone()],
            _ => Vec::new(),
        };
        messages.append(&mut self.conversation);
        RunOutcome {
            subtype: end.subtype,
            result: end.result,
            session_id: self.hook_ctx.session.session_id.clone(),
            num_turns: self.num_turns,
            messages,
            usage,
            model_usage: self.model_usage,
            total_cost_usd,
            trace: self.trace,
            deferred: end.deferred,
            stop_reason: end.stop_reason,
            finish_reason: self.last_finish.take(),
            error: end.error,
            structured_output: self.structured_output.take(),
        }
    }
}
