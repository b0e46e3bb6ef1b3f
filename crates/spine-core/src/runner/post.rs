//! After the tool ran: a success is projected (`project_tool_result`) and shown to PostToolUse
//! hooks, which may rewrite the result, add feedback or context, fail closed, or prevent
//! continuation; a failure is shown to PostToolUseFailure hooks (context and stop only — the
//! error stands). Either way the conditional rule files the call brings in follow the hooks'
//! contexts (`path_rules`), and the call's decision record is written here.

use serde_json::Value;
use spine_protocol::hook::{HookEventName, PostToolUseFailureInput, PostToolUseInput};
use spine_protocol::message::{Message, ToolResultMessage};
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};
use spine_protocol::trace::DecisionOutcome;

use super::Run;
use super::call::{CallOutcome, Ledger, RoundEnd, said};
use crate::hooks::events::{ContextOutcome, PostToolUseOutcome};
use crate::hooks::tool_view;
use crate::stages::project_tool_result::project_tool_result;
use crate::tool::{Args, Projection, Tool, response_images};

impl Run<'_> {
    /// A tool error: PostToolUseFailure hooks see it, then the call is answered with it.
    pub(super) async fn tool_failed(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        tool_input: &Args,
        error: ToolError,
        duration_ms: u64,
        ledger: &mut Ledger,
    ) -> CallOutcome {
        let view = tool_view::view(&call.name, tool.command_argument(), tool_input);
        let input = PostToolUseFailureInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
            error: error.message.clone(),
            is_interrupt: error.code == ErrorCode::Timeout,
            duration_ms,
        };
        let failure = self.hooks.post_tool_use_failure(&self.hook_ctx, input).await;
        ledger.add_contexts(HookEventName::PostToolUseFailure, failure.contexts);
        for rule in self.path_rules(&call.name, tool_input, false).await {
            ledger.add_context(rule);
        }
        if let ContextOutcome::Failed(f) = failure.outcome {
            self.trace.warn(format!("PostToolUseFailure {f}"), Some(&call.id));
        }
        let mut outcome = self.settle_with_error(ledger, call, error, DecisionOutcome::Failed);
        outcome.end = failure.halt.map(|h| RoundEnd::Halted { stop_reason: h.stop_reason });
        outcome
    }

    /// A tool response: projected, then PostToolUse hooks; the model reads the projection, a
    /// hook's rewrite of it, or the error of a hook that failed closed.
    pub(super) async fn tool_succeeded(
        &self,
        tool: &dyn Tool,
        call: &ToolCall,
        tool_input: &Args,
        response: Value,
        duration_ms: u64,
        ledger: &mut Ledger,
    ) -> CallOutcome {
        let projection = project_tool_result(tool, &response, &call.id, &self.trace);
        let projection_metadata = projection.metadata.clone();
        let view = tool_view::view(&call.name, tool.command_argument(), tool_input);
        let input = PostToolUseInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
            tool_response: response.clone(),
            duration_ms,
        };
        let post = self.hooks.post_tool_use(&self.hook_ctx, input).await;
        ledger.record.post = said(&post.said);
        ledger.add_contexts(HookEventName::PostToolUse, post.contexts);
        for reason in post.block_reasons {
            ledger.add_context(Message::context(
                HookEventName::PostToolUse,
                format!("PostToolUse hook feedback on {} call {}: {reason}", call.name, call.id),
            ));
        }
        for rule in self.path_rules(&call.name, tool_input, true).await {
            ledger.add_context(rule);
        }
        // The images of the response (a Read of an image) go with the text the model reads;
        // a hook's rewrite of the response carries its own, a text rewrite none.
        let (content, error_code, images) = match &post.outcome {
            PostToolUseOutcome::Failed(failure) => {
                self.trace.warn(format!("PostToolUse {failure}"), Some(&call.id));
                let error = failure.tool_error();
                (error.render(), Some(error.code), Vec::new())
            }
            PostToolUseOutcome::TextRewritten { text, .. } => (text.clone(), None, Vec::new()),
            PostToolUseOutcome::Rewritten(replaced) => {
                (tool.project(replaced).content, None, response_images(replaced))
            }
            PostToolUseOutcome::Unchanged => (projection.content, None, response_images(&response)),
        };
        ledger.emit(
            &self.trace,
            if error_code.is_some() { DecisionOutcome::PostHookFailed } else { DecisionOutcome::Executed },
            error_code,
        );
        if let Some(reports) = &self.reports {
            let done = Projection { content: content.clone(), metadata: projection_metadata.clone() };
            reports.tool_completed(&call.id, &call.name, &done);
        }
        let end = post.halt.map(|h| RoundEnd::Prevented { output: content.clone(), stop_reason: h.stop_reason });
        let error = error_code.map(|code| ToolError::new(code, content.clone()));
        let executed = post.outcome.response(response).map(|r| (r, projection_metadata));
        let result =
            ToolResultMessage { tool_call_id: call.id.clone(), name: call.name.clone(), content, error_code, images };
        CallOutcome { result: Some(result), contexts: ledger.take_contexts(), end, error, executed }
    }
}
