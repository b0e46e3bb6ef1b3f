//! `resource_close_request`: cancel the execution of another item.
//!
//! 1. `resource_close_acknowledged`.
//! 2. [`Executions::request_cancel`](crate::mailbox::Executions::request_cancel) marks the target
//!    canceled in the idempotency store; when it runs (on any worker) every worker is
//!    signalled and the one running it fires its cancellation token (here, directly). A target
//!    not started yet ends with `execution_canceled` as soon as it is delivered.
//! 3. `resource_closed` with `close_outcome_kind`:
//!    `graceful` (it was running and ended canceled, or had already been canceled),
//!    `canceled_before_start` (it had not started),
//!    `not_found` (it had already finished),
//!    `timeout` (it was signalled but did not end within the close wait; it will still end
//!    canceled when its worker notices, or on its next delivery).
//!
//! Dependencies: [`super`], [`crate::mailbox`] (the target's execution record) and
//! [`crate::running`] (canceling a target that runs here).

use std::time::Duration;

use spine_protocol::assignment::ClosePayload;
use spine_protocol::report::ReportBody;

use super::ItemContext;
use crate::mailbox::CancelState;
use crate::running::CancelReason;

/// How often the target's terminal report is looked for.
const POLL: Duration = Duration::from_millis(20);

/// Runs a close request.
pub async fn run(ctx: &ItemContext, close_request_id: &str, close: &ClosePayload) {
    let target = close.resource_id.clone();
    ctx.sink.emit(ReportBody::ResourceCloseAcknowledged {
        close_request_id: close_request_id.to_owned(),
        resource_id: target.clone(),
    });
    let outcome = match ctx.executions.request_cancel(&target, close_request_id).await {
        Ok(CancelState::NotStarted) => "canceled_before_start",
        Ok(CancelState::Finished(report)) => match report.body {
            ReportBody::ExecutionCanceled { .. } => "graceful",
            _ => "not_found",
        },
        Ok(CancelState::Running) => {
            ctx.running.cancel(&target, CancelReason::CloseRequest(close_request_id.to_owned()));
            wait_for_end(ctx, &target).await
        }
        Err(e) => {
            tracing::warn!("close request {close_request_id}: {e}");
            "timeout"
        }
    };
    ctx.sink.emit(ReportBody::ResourceClosed {
        close_request_id: close_request_id.to_owned(),
        resource_id: target,
        close_outcome_kind: outcome.to_owned(),
    });
}

async fn wait_for_end(ctx: &ItemContext, target: &str) -> &'static str {
    let deadline = tokio::time::Instant::now() + ctx.close_wait;
    loop {
        match ctx.executions.terminal(target).await {
            Ok(Some(_)) => return "graceful",
            Ok(None) => {}
            Err(e) => tracing::warn!("close of {target}: {e}"),
        }
        if tokio::time::Instant::now() >= deadline {
            return "timeout";
        }
        tokio::time::sleep(POLL).await;
    }
}
