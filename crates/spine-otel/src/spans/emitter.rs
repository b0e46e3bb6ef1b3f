//! The open-span bookkeeping of one run: the [`Emitter`].
//!
//! The contract: entries come in as they are recorded ([`Emitter::absorb`]); a step's span is
//! ended as soon as the step is complete and not before — a tool call's span when its decision
//! record arrives (its stages and hooks, recorded before it, wait in `pending` and then go
//! under it), a model request's span when its record arrives (its attempts wait for it). The
//! run's span is started with the first entry and ended by [`Emitter::finish`], which ends
//! whatever is still pending under the run's span. Times come from the entries, against the
//! base time of `t_us = 0`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{Span as _, SpanKind, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use spine_protocol::run::Usage;
use spine_protocol::trace::{ModelAttemptTrace, TraceEntry, TraceRecord};

use super::attributes::{FieldKeys, provider_of_model, usage_attributes};
use super::kinds::{Common, chat_span, hook_span, stage_span, tool_span};
use super::{Content, Segment};
use crate::config::ContentCapture;
use crate::run::RunInfo;

/// Builds one run's spans while the run goes on: each step's span is ended (and so queued for
/// export) as soon as the step is complete — a tool call when its decision record arrives,
/// with its hooks and stages under it; a model request with its record, its attempts as
/// events. The run's span is started with the first entry and ended by [`Emitter::finish`].
pub struct Emitter {
    tracer: SdkTracer,
    capture: ContentCapture,
    info: RunInfo,
    session_id: Option<String>,
    model: Option<String>,
    content: Content,
    base: Option<SystemTime>,
    run: Option<RunSpan>,
    /// Entries of steps not complete yet (tool steps before their decision, attempts before
    /// their request's record).
    pending: Vec<Arc<TraceEntry>>,
    totals: Option<(Usage, Option<f64>)>,
    end_us: u64,
    field_keys: FieldKeys,
}

/// The run's open span and what its children need.
struct RunSpan {
    span: Span,
    context: Context,
    provider: String,
    /// The decided tool calls' spans, for steps recorded after their decision.
    tools: HashMap<String, Context>,
}

impl Emitter {
    /// An emitter for one run; nothing is built before its first entry.
    pub fn new(tracer: SdkTracer, capture: ContentCapture, info: RunInfo) -> Emitter {
        Emitter {
            tracer,
            capture,
            info,
            session_id: None,
            model: None,
            content: Content::default(),
            base: None,
            run: None,
            pending: Vec::new(),
            totals: None,
            end_us: 0,
            field_keys: FieldKeys::new("spine.stage"),
        }
    }

    /// Takes `segment` in and ends the spans of every step it completes; `ended` is called
    /// after each span.
    pub fn absorb(&mut self, segment: Segment, ended: &mut dyn FnMut()) {
        self.base = self.base.or(segment.base);
        self.session_id = self.session_id.take().or(segment.session_id);
        self.model = self.model.take().or(segment.model);
        self.content.merge(segment.content);
        self.pending.extend(segment.entries);
        self.emit_complete(false, ended);
    }

    /// Ends the spans of whatever is left (tool steps whose call never got a decision go under
    /// the run), then the run's own span.
    pub fn finish(mut self, ended: &mut dyn FnMut()) {
        self.emit_complete(true, ended);
        let Some(mut run) = self.run.take() else { return };
        if let Some((usage, cost)) = self.totals {
            run.span.set_attributes(usage_attributes(&usage));
            if let Some(cost) = cost {
                run.span.set_attribute(KeyValue::new("spine.cost_usd", cost));
            }
        }
        if let Some(prompt) = self.content.prompt.take().filter(|_| self.capture == ContentCapture::Record) {
            let input = serde_json::json!([{"role": "user", "content": prompt}]).to_string();
            run.span.set_attribute(KeyValue::new("gen_ai.input.messages", input));
        }
        let end = self.at(self.end_us);
        run.span.end_with_timestamp(end);
    }

    fn at(&self, t_us: u64) -> SystemTime {
        self.base.unwrap_or_else(SystemTime::now) + Duration::from_micros(t_us)
    }

    /// Starts the run's span (once there is an entry).
    fn start_run(&mut self) {
        if self.run.is_some() || self.pending.is_empty() {
            return;
        }
        let base = *self.base.get_or_insert_with(SystemTime::now);
        let model = self.model.clone().or_else(|| model_of(&self.pending)).unwrap_or_default();
        let provider = self.info.provider.clone().unwrap_or_else(|| provider_of_model(&model).to_owned());
        let parent = match &self.info.parent {
            Some(tp) => Context::new().with_remote_span_context(tp.span_context()),
            None => Context::new(),
        };
        let mut attributes =
            vec![KeyValue::new("gen_ai.operation.name", "invoke_agent"), KeyValue::new("gen_ai.agent.name", "spine")];
        self.common(&provider).push_provider(&mut attributes);
        if !model.is_empty() {
            attributes.push(KeyValue::new("gen_ai.request.model", model));
        }
        for (key, value) in &self.info.attributes {
            attributes.push(KeyValue::new(key.clone(), value.clone()));
        }
        let span = self
            .tracer
            .span_builder("invoke_agent")
            .with_kind(SpanKind::Internal)
            .with_start_time(base)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &parent);
        let context = Context::new().with_remote_span_context(span.span_context().clone());
        self.run = Some(RunSpan { span, context, provider, tools: HashMap::new() });
    }

    fn common<'a>(&'a self, provider: &'a str) -> Common<'a> {
        Common { provider, session_id: self.session_id.as_deref(), content: self.capture }
    }

    /// Ends the spans of the complete steps among the pending entries; with `last`, of all.
    fn emit_complete(&mut self, last: bool, ended: &mut dyn FnMut()) {
        self.start_run();
        let Some(mut run) = self.run.take() else { return };
        let pending = std::mem::take(&mut self.pending);

        // Each decided tool call's span, from its first step to its decision record.
        let mut first_start: HashMap<&str, u64> = HashMap::new();
        for entry in &pending {
            if let Some((id, duration_us)) = tool_step(&entry.record) {
                let start = entry.t_us.saturating_sub(duration_us);
                first_start.entry(id).and_modify(|s| *s = (*s).min(start)).or_insert(start);
            }
        }
        for entry in &pending {
            if let TraceRecord::ToolDecision(record) = &entry.record {
                let start = first_start.get(record.tool_use_id.as_str()).copied().unwrap_or(entry.t_us).min(entry.t_us);
                let (start, end) = (self.at(start), self.at(entry.t_us));
                let common =
                    Common { provider: &run.provider, session_id: self.session_id.as_deref(), content: self.capture };
                let span = tool_span(&self.tracer, &run.context, &common, &mut self.content, record, start, end);
                ended();
                run.tools.insert(record.tool_use_id.clone(), Context::new().with_remote_span_context(span));
            }
        }
        drop(first_start);

        // Model requests whose record is here take their attempts along.
        let requested: Vec<u32> = pending
            .iter()
            .filter_map(|e| match &e.record {
                TraceRecord::Model(m) => Some(m.turn),
                _ => None,
            })
            .collect();
        let mut attempts: HashMap<u32, Vec<(&ModelAttemptTrace, u64)>> = HashMap::new();
        let mut kept = Vec::new();
        for entry in &pending {
            self.end_us = self.end_us.max(entry.t_us);
            match &entry.record {
                TraceRecord::ModelAttempt(attempt) if requested.contains(&attempt.turn) => {
                    attempts.entry(attempt.turn).or_default().push((attempt, entry.t_us));
                }
                // An attempt whose request has no record yet waits for it.
                _ => kept.push(entry),
            }
        }
        for entry in kept {
            let step_of = |id: Option<&String>| id.is_some_and(|id| !run.tools.contains_key(id));
            let waits = match &entry.record {
                TraceRecord::Stage(stage) => step_of(stage.tool_use_id.as_ref()),
                TraceRecord::Hook(hook) => step_of(hook.tool_use_id.as_ref()),
                TraceRecord::ModelAttempt(_) => true,
                _ => false,
            };
            if waits && !last {
                self.pending.push(Arc::clone(entry));
                continue;
            }
            let t_us = entry.t_us;
            let parent_of = |id: Option<&String>| id.and_then(|id| run.tools.get(id)).unwrap_or(&run.context);
            match &entry.record {
                TraceRecord::Stage(stage) => {
                    let (start, end) = (self.at(t_us.saturating_sub(stage.duration_us)), self.at(t_us));
                    let parent = parent_of(stage.tool_use_id.as_ref());
                    stage_span(&self.tracer, parent, stage, &mut self.field_keys, self.capture, start, end);
                    ended();
                }
                TraceRecord::Hook(hook) => {
                    let (start, end) = (self.at(t_us.saturating_sub(hook.duration_us)), self.at(t_us));
                    let parent = parent_of(hook.tool_use_id.as_ref());
                    hook_span(&self.tracer, parent, hook, self.capture, start, end);
                    ended();
                }
                TraceRecord::Model(request) => {
                    let turn_attempts = attempts.remove(&request.turn).unwrap_or_default();
                    let base = self.base;
                    let at = |t: u64| base.unwrap_or_else(SystemTime::now) + Duration::from_micros(t);
                    let common = Common {
                        provider: &run.provider,
                        session_id: self.session_id.as_deref(),
                        content: self.capture,
                    };
                    chat_span(
                        &self.tracer,
                        &run.context,
                        &common,
                        &mut self.content,
                        request,
                        &turn_attempts,
                        &at,
                        t_us,
                    );
                    ended();
                }
                TraceRecord::RunUsage(usage) => {
                    let mut sum: Option<Usage> = None;
                    for model in usage.models.values() {
                        if let Some(u) = model.usage {
                            sum.get_or_insert_with(Usage::default).add(u);
                        }
                    }
                    self.totals = sum.map(|u| (u, usage.total_cost_usd));
                }
                TraceRecord::Warning(warning) => {
                    let mut attrs = vec![KeyValue::new("spine.warning", warning.message.clone())];
                    if let Some(id) = &warning.tool_use_id {
                        attrs.push(KeyValue::new("gen_ai.tool.call.id", id.clone()));
                    }
                    run.span.add_event_with_timestamp("spine.warning", self.at(t_us), attrs);
                }
                // Run records and decision records become the run span's and the tool spans' attributes.
                // An attempt that never got its request's record is dropped.
                TraceRecord::ModelAttempt(_)
                | TraceRecord::ToolDecision(_)
                | TraceRecord::RunStart(_)
                | TraceRecord::RunEnd(_) => {}
            }
        }
        self.run = Some(run);
    }
}

/// The tool call an entry belongs to, and how long its step took.
fn tool_step(record: &TraceRecord) -> Option<(&str, u64)> {
    match record {
        TraceRecord::Stage(s) => s.tool_use_id.as_deref().map(|id| (id, s.duration_us)),
        TraceRecord::Hook(h) => h.tool_use_id.as_deref().map(|id| (id, h.duration_us)),
        TraceRecord::ToolDecision(d) => Some((d.tool_use_id.as_str(), 0)),
        TraceRecord::Warning(_)
        | TraceRecord::Model(_)
        | TraceRecord::ModelAttempt(_)
        | TraceRecord::RunUsage(_)
        | TraceRecord::RunStart(_)
        | TraceRecord::RunEnd(_) => None,
    }
}

/// The model of the first model request, when the run did not say.
fn model_of(entries: &[Arc<TraceEntry>]) -> Option<String> {
    entries.iter().find_map(|e| match &e.record {
        TraceRecord::Model(m) => Some(m.model.clone()),
        _ => None,
    })
}
