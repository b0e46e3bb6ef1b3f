//! The span of each kind of record, started under a given parent and ended at given times:
//! `execute_tool {name}` for a tool call's decision record, `chat {model}` for a model
//! request (its attempts as events), the stage's own name for a stage, `hook {event}` for a
//! hook.
//!
//! The contract: each function builds exactly one span, ends it, and returns (for a tool call)
//! the context its steps go under; it neither knows nor changes which steps are pending — that
//! is the emitter's. Error statuses: a failed tool decision, a failed hook, a model request
//! with an error. Content goes into a span only with [`ContentCapture::Record`], taken out of
//! the run's [`Content`] as the span is built.

use std::time::SystemTime;

use opentelemetry::trace::{Span as _, SpanContext, SpanKind, Status, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use spine_protocol::trace::{
    DecisionOutcome, HookTrace, ModelAttemptTrace, ModelTrace, StageTrace, ToolDecisionRecord,
};

use super::Content;
use super::attributes::{
    FieldKeys, decision_attributes, hook_attributes, saturating_i64, stage_attributes, string_array, usage_attributes,
    wire,
};
use crate::config::ContentCapture;

/// What every GenAI span of a run repeats.
pub(super) struct Common<'a> {
    pub(super) provider: &'a str,
    pub(super) session_id: Option<&'a str>,
    pub(super) content: ContentCapture,
}

impl Common<'_> {
    pub(super) fn push_provider(&self, attributes: &mut Vec<KeyValue>) {
        attributes.push(KeyValue::new("gen_ai.provider.name", self.provider.to_owned()));
        // The name before semantic conventions 1.37, still read by many backends.
        attributes.push(KeyValue::new("gen_ai.system", self.provider.to_owned()));
        if let Some(id) = self.session_id {
            attributes.push(KeyValue::new("gen_ai.conversation.id", id.to_owned()));
        }
    }
}

/// The `execute_tool {name}` span of one call, ended; returns its context for its children.
pub(super) fn tool_span(
    tracer: &SdkTracer,
    parent: &Context,
    common: &Common<'_>,
    content: &mut Content,
    record: &ToolDecisionRecord,
    start: SystemTime,
    end: SystemTime,
) -> SpanContext {
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "execute_tool"),
        KeyValue::new("gen_ai.tool.name", record.tool_name.clone()),
        KeyValue::new("gen_ai.tool.call.id", record.tool_use_id.clone()),
        KeyValue::new("gen_ai.tool.type", "function"),
    ];
    attributes.extend(decision_attributes(record, common.content));
    if common.content == ContentCapture::Record {
        if let Some(arguments) = content.tool_arguments.remove(&record.tool_use_id) {
            attributes.push(KeyValue::new("gen_ai.tool.call.arguments", arguments));
        }
        if let Some(result) = content.tool_results.remove(&record.tool_use_id) {
            attributes.push(KeyValue::new("gen_ai.tool.call.result", result));
        }
    }
    let mut span: Span = tracer
        .span_builder(format!("execute_tool {}", record.tool_name))
        .with_kind(SpanKind::Internal)
        .with_start_time(start)
        .with_attributes(attributes)
        .start_with_context(tracer, parent);
    match record.outcome {
        DecisionOutcome::Failed
        | DecisionOutcome::HookFailed
        | DecisionOutcome::PostHookFailed
        | DecisionOutcome::Invalid => {
            span.set_status(Status::error(record.error_code.clone().unwrap_or_else(|| record.outcome.to_string())));
        }
        DecisionOutcome::Executed
        | DecisionOutcome::NotAllowed
        | DecisionOutcome::Blocked
        | DecisionOutcome::Halted
        | DecisionOutcome::Denied
        | DecisionOutcome::Deferred
        | DecisionOutcome::Canceled => {}
    }
    let context = span.span_context().clone();
    span.end_with_timestamp(end);
    context
}

/// The `chat {model}` span of one model request, with its attempts as events.
#[allow(clippy::too_many_arguments)]
pub(super) fn chat_span(
    tracer: &SdkTracer,
    parent: &Context,
    common: &Common<'_>,
    content: &mut Content,
    request: &ModelTrace,
    attempts: &[(&ModelAttemptTrace, u64)],
    at: &dyn Fn(u64) -> SystemTime,
    t_us: u64,
) {
    let mut attributes = vec![
        KeyValue::new("gen_ai.operation.name", "chat"),
        KeyValue::new("gen_ai.request.model", request.model.clone()),
        KeyValue::new("spine.turn", i64::from(request.turn)),
        KeyValue::new("spine.model.message_count", saturating_i64(request.message_count as u64)),
        KeyValue::new("spine.model.tool_calls", saturating_i64(request.tool_calls as u64)),
    ];
    common.push_provider(&mut attributes);
    // spine's trace does not keep the provider's stop reason: a reply with tool calls stopped
    // for them, any other reply stopped.
    let finish = match (&request.error, request.tool_calls) {
        (Some(_), _) => "error",
        (None, 0) => "stop",
        (None, _) => "tool_calls",
    };
    attributes.push(KeyValue::new("gen_ai.response.finish_reasons", string_array([finish.to_owned()])));
    if let Some(usage) = &request.usage {
        attributes.extend(usage_attributes(usage));
    }
    if let Some(cost) = request.cost_usd {
        attributes.push(KeyValue::new("spine.cost_usd", cost));
    }
    if common.content == ContentCapture::Record {
        if let Some(input) = content.inputs.remove(&request.turn) {
            attributes.push(KeyValue::new("gen_ai.input.messages", input));
        }
        if let Some(output) = content.outputs.remove(&request.turn) {
            attributes.push(KeyValue::new("gen_ai.output.messages", output));
        }
        if !request.reasoning.is_empty() {
            attributes.push(KeyValue::new("spine.model.reasoning", string_array(request.reasoning.iter().cloned())));
        }
    }
    let start = at(t_us.saturating_sub(request.duration_us));
    let mut span = tracer
        .span_builder(format!("chat {}", request.model))
        .with_kind(SpanKind::Client)
        .with_start_time(start)
        .with_attributes(attributes)
        .start_with_context(tracer, parent);
    for (attempt, end_us) in attempts {
        let mut attrs = vec![
            KeyValue::new("spine.attempt", i64::from(attempt.attempt)),
            KeyValue::new("spine.attempt.outcome", attempt.outcome.as_str()),
            KeyValue::new("spine.attempt.duration_us", saturating_i64(attempt.duration_us)),
        ];
        if let Some(kind) = &attempt.error_kind {
            attrs.push(KeyValue::new("error.type", kind.clone()));
        }
        if let Some(error) = &attempt.error {
            attrs.push(KeyValue::new("spine.attempt.error", error.clone()));
        }
        if let Some(wait) = attempt.wait_ms {
            attrs.push(KeyValue::new("spine.attempt.wait_ms", saturating_i64(wait)));
        }
        span.add_event_with_timestamp("spine.model.attempt", at(*end_us), attrs);
    }
    if let Some(error) = &request.error {
        span.set_attribute(KeyValue::new("error.type", "model_error"));
        span.set_status(Status::error(error.clone()));
    }
    span.end_with_timestamp(at(t_us));
}

/// The span of one stage (named after it), under `parent`.
pub(super) fn stage_span(
    tracer: &SdkTracer,
    parent: &Context,
    stage: &StageTrace,
    keys: &mut FieldKeys,
    content: ContentCapture,
    start: SystemTime,
    end: SystemTime,
) {
    let mut span = tracer
        .span_builder(stage.hook.as_str())
        .with_kind(SpanKind::Internal)
        .with_start_time(start)
        .with_attributes(stage_attributes(stage, keys, content))
        .start_with_context(tracer, parent);
    span.end_with_timestamp(end);
}

/// The `hook {event}` span of one hook, under `parent`; a failed hook's span is an error.
pub(super) fn hook_span(
    tracer: &SdkTracer,
    parent: &Context,
    hook: &HookTrace,
    content: ContentCapture,
    start: SystemTime,
    end: SystemTime,
) {
    let mut span = tracer
        .span_builder(format!("hook {}", wire(&hook.event)))
        .with_kind(SpanKind::Internal)
        .with_start_time(start)
        .with_attributes(hook_attributes(hook, content))
        .start_with_context(tracer, parent);
    if hook.decision == "failed" {
        span.set_status(Status::error(format!("hook {} failed", hook.hook_id)));
    }
    span.end_with_timestamp(end);
}
