//! The mapping from one run's trace entries to spans, after the OpenTelemetry GenAI semantic
//! conventions:
//!
//! ```text
//! invoke_agent                         the run (gen_ai.operation.name = invoke_agent)
//! ├── prepare_turn, compact_context…   stages without a tool call
//! ├── hook SessionStart, hook Stop…    hooks without a tool call
//! ├── chat {model}                     one per model request (usage, finish reasons)
//! └── execute_tool {name}              one per tool call, with its combined decision record
//!     ├── hook PreToolUse              its hooks: source file and JSON path, decision, duration
//!     └── review_tool_call, execute…   its stages
//! ```
//!
//! Every span's times come from the entries (`t_us` is when a step ended, `duration_us` how
//! long it took). Attributes that hold message content (prompts, replies, reasoning, tool
//! arguments and results, hook answers, stage previews) are written only with
//! [`ContentCapture::Record`]. Nothing here reads the environment: no key can reach a span.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Array, Context, Key, KeyValue, StringValue, Value as OtelValue};
use opentelemetry_sdk::trace::{SdkTracer, Span};
use serde_json::{Map, Value};
use spine_protocol::run::Usage;
use spine_protocol::trace::{
    DecisionOutcome, HookTrace, ModelAttemptTrace, ModelTrace, StageTrace, ToolDecisionRecord, TraceEntry, TraceRecord,
};

use crate::config::ContentCapture;
use crate::run::RunInfo;

/// Stage fields that hold content (`project_tool_result`'s `content` preview and `metadata`,
/// `finalize_output`'s `output`): written only with [`ContentCapture::Record`].
const CONTENT_FIELDS: &[&str] = &["content", "metadata", "output"];

/// Message content the run's observer saw, keyed the way the spans need it (only kept with
/// [`ContentCapture::Record`]). A span takes its part out when it is built.
#[derive(Debug, Default)]
pub struct Content {
    /// The run's first user message.
    pub prompt: Option<String>,
    /// The messages sent before each request, by request number (as JSON).
    pub inputs: HashMap<u32, String>,
    /// Each request's reply, by request number (as JSON).
    pub outputs: HashMap<u32, String>,
    /// Each tool call's arguments, by call id (as JSON).
    pub tool_arguments: HashMap<String, String>,
    /// Each tool call's result text, by call id.
    pub tool_results: HashMap<String, String>,
}

impl Content {
    fn merge(&mut self, more: Content) {
        if self.prompt.is_none() {
            self.prompt = more.prompt;
        }
        self.inputs.extend(more.inputs);
        self.outputs.extend(more.outputs);
        self.tool_arguments.extend(more.tool_arguments);
        self.tool_results.extend(more.tool_results);
    }
}

/// What a run hands its [`Emitter`] at a step boundary: the entries recorded since the last
/// segment and what the observer learnt meanwhile.
#[derive(Debug, Default)]
pub struct Segment {
    /// The wall-clock time of the trace's `t_us = 0`, once known.
    pub base: Option<SystemTime>,
    /// The new entries, in order (shared with the run's trace).
    pub entries: Vec<Arc<TraceEntry>>,
    /// The session id (`gen_ai.conversation.id`), once known.
    pub session_id: Option<String>,
    /// The model, as its client names it, once known.
    pub model: Option<String>,
    /// New message content (empty without the opt-in).
    pub content: Content,
}

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
                    let mut span = self
                        .tracer
                        .span_builder(stage.hook.as_str())
                        .with_kind(SpanKind::Internal)
                        .with_start_time(self.at(t_us.saturating_sub(stage.duration_us)))
                        .with_attributes(stage_attributes(stage, &mut self.field_keys, self.capture))
                        .start_with_context(&self.tracer, parent_of(stage.tool_use_id.as_ref()));
                    span.end_with_timestamp(self.at(t_us));
                    ended();
                }
                TraceRecord::Hook(hook) => {
                    let mut span = self
                        .tracer
                        .span_builder(format!("hook {}", wire(&hook.event)))
                        .with_kind(SpanKind::Internal)
                        .with_start_time(self.at(t_us.saturating_sub(hook.duration_us)))
                        .with_attributes(hook_attributes(hook, self.capture))
                        .start_with_context(&self.tracer, parent_of(hook.tool_use_id.as_ref()));
                    if hook.decision == "failed" {
                        span.set_status(Status::error(format!("hook {} failed", hook.hook_id)));
                    }
                    span.end_with_timestamp(self.at(t_us));
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

/// What every GenAI span of a run repeats.
struct Common<'a> {
    provider: &'a str,
    session_id: Option<&'a str>,
    content: ContentCapture,
}

impl Common<'_> {
    fn push_provider(&self, attributes: &mut Vec<KeyValue>) {
        attributes.push(KeyValue::new("gen_ai.provider.name", self.provider.to_owned()));
        // The name before semantic conventions 1.37, still read by many backends.
        attributes.push(KeyValue::new("gen_ai.system", self.provider.to_owned()));
        if let Some(id) = self.session_id {
            attributes.push(KeyValue::new("gen_ai.conversation.id", id.to_owned()));
        }
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

/// The `execute_tool {name}` span of one call, ended; returns its context for its children.
fn tool_span(
    tracer: &SdkTracer,
    parent: &Context,
    common: &Common<'_>,
    content: &mut Content,
    record: &ToolDecisionRecord,
    start: SystemTime,
    end: SystemTime,
) -> opentelemetry::trace::SpanContext {
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

/// The combined decision record as attributes: the outcome, each hook's word, the permission
/// decision, and the whole record as JSON — without the call's arguments unless content is
/// recorded (they are the model's content).
pub fn decision_attributes(record: &ToolDecisionRecord, content: ContentCapture) -> Vec<KeyValue> {
    let said = |list: &[spine_protocol::trace::HookSaid]| -> OtelValue {
        string_array(list.iter().map(|h| format!("{}: {}", h.hook_id, h.decision)))
    };
    let mut attributes = vec![
        KeyValue::new("spine.decision.outcome", record.outcome.as_str()),
        KeyValue::new("spine.decision.pre_tool_use", said(&record.pre_tool_use)),
        KeyValue::new("spine.decision.post_tool_use", said(&record.post_tool_use)),
    ];
    if let Some(code) = &record.error_code {
        attributes.push(KeyValue::new("spine.decision.error_code", code.clone()));
        attributes.push(KeyValue::new("error.type", code.clone()));
    }
    if let Some(permission) = &record.permission {
        attributes.push(KeyValue::new("spine.decision.permission.behavior", wire(&permission.behavior)));
        attributes.push(KeyValue::new(
            "spine.decision.permission.source",
            serde_json::to_string(&permission.source).unwrap_or_default(),
        ));
        attributes.push(KeyValue::new("spine.decision.permission.reason", permission.reason.clone()));
    }
    let shown = match content {
        ContentCapture::Record => serde_json::to_string(record),
        ContentCapture::Omit => serde_json::to_string(&ToolDecisionRecord { arguments: None, ..record.clone() }),
    };
    attributes.push(KeyValue::new("spine.decision.record", shown.unwrap_or_default()));
    attributes
}

/// The `chat {model}` span of one model request, with its attempts as events.
#[allow(clippy::too_many_arguments)]
fn chat_span(
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

/// The usage attributes of a request or a run.
fn usage_attributes(usage: &Usage) -> Vec<KeyValue> {
    vec![
        KeyValue::new("gen_ai.usage.input_tokens", saturating_i64(usage.input_tokens)),
        KeyValue::new("gen_ai.usage.output_tokens", saturating_i64(usage.output_tokens)),
        KeyValue::new("gen_ai.usage.cache_read.input_tokens", saturating_i64(usage.cache_read_input_tokens)),
        KeyValue::new("gen_ai.usage.cache_creation.input_tokens", saturating_i64(usage.cache_creation_input_tokens)),
    ]
}

/// A stage's attributes: its tool call and its fields as `spine.stage.*` (its name and
/// duration are the span's).
fn stage_attributes(stage: &StageTrace, keys: &mut FieldKeys, content: ContentCapture) -> Vec<KeyValue> {
    let mut attributes = Vec::with_capacity(stage.fields.len() + 1);
    if let Some(id) = &stage.tool_use_id {
        attributes.push(KeyValue::new("gen_ai.tool.call.id", id.clone()));
    }
    field_attributes(keys, &stage.fields, content, &mut attributes);
    attributes
}

/// A hook's attributes: its event, id, source (file and JSON path), decision, whether it was
/// applied, its duration, and (content only) its answer.
fn hook_attributes(hook: &HookTrace, content: ContentCapture) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new("spine.hook.event", wire(&hook.event)),
        KeyValue::new("spine.hook.id", hook.hook_id.clone()),
        KeyValue::new("spine.hook.source", hook.source.clone()),
        KeyValue::new("spine.hook.decision", hook.decision.clone()),
        KeyValue::new("spine.hook.applied", hook.applied),
        KeyValue::new("spine.hook.duration_us", saturating_i64(hook.duration_us)),
    ];
    if let Some((file, path)) = split_source(&hook.source) {
        attributes.push(KeyValue::new("spine.hook.source.file", file.to_owned()));
        attributes.push(KeyValue::new("spine.hook.source.path", path.to_owned()));
    }
    if let Some(id) = &hook.tool_use_id {
        attributes.push(KeyValue::new("gen_ai.tool.call.id", id.clone()));
    }
    if content == ContentCapture::Record && !hook.detail.is_null() {
        attributes.push(KeyValue::new("spine.hook.answer", hook.detail.to_string()));
    }
    attributes
}

/// A settings hook's source, `<file> <JSON path>` (`/p/.spine/settings.json
/// hooks.PreToolUse[0].hooks[0]`), split in two; `None` for hooks without a file (`rust`).
pub fn split_source(source: &str) -> Option<(&str, &str)> {
    let (file, path) = source.rsplit_once(' ')?;
    (path.starts_with("hooks") && !file.is_empty()).then_some((file, path))
}

/// The attribute keys of JSON fields under a prefix (`spine.stage.<field>`), each made once
/// and then shared: a run repeats the same few fields in every stage.
struct FieldKeys {
    prefix: &'static str,
    keys: HashMap<String, Key>,
}

impl FieldKeys {
    /// Keys under `prefix` (without the dot).
    fn new(prefix: &'static str) -> FieldKeys {
        FieldKeys { prefix, keys: HashMap::new() }
    }

    fn key(&mut self, field: &str) -> Key {
        if let Some(key) = self.keys.get(field) {
            return key.clone();
        }
        let key = Key::from(Arc::<str>::from(format!("{}.{field}", self.prefix)));
        self.keys.insert(field.to_owned(), key.clone());
        key
    }
}

/// JSON fields as attributes (pushed onto `out`) under the keys' prefix: scalars as themselves,
/// string lists as string arrays, anything else as JSON text; nulls are left out, content
/// fields unless recorded.
fn field_attributes(
    keys: &mut FieldKeys,
    fields: &Map<String, Value>,
    content: ContentCapture,
    out: &mut Vec<KeyValue>,
) {
    for (field, value) in fields {
        if content == ContentCapture::Omit && CONTENT_FIELDS.contains(&field.as_str()) {
            continue;
        }
        if let Some(value) = json_attribute(value) {
            out.push(KeyValue::new(keys.key(field), value));
        }
    }
}

/// A JSON value as an attribute value (`None` for null).
pub fn json_attribute(value: &Value) -> Option<OtelValue> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => OtelValue::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => OtelValue::I64(i),
            (None, Some(u), _) => OtelValue::I64(saturating_i64(u)),
            (None, None, Some(f)) => OtelValue::F64(f),
            (None, None, None) => OtelValue::String(n.to_string().into()),
        },
        Value::String(s) => OtelValue::String(s.clone().into()),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            string_array(items.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        Value::Array(_) | Value::Object(_) => OtelValue::String(value.to_string().into()),
    })
}

fn string_array(items: impl IntoIterator<Item = String>) -> OtelValue {
    OtelValue::Array(Array::String(items.into_iter().map(StringValue::from).collect()))
}

fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An enum's wire name (its JSON string).
fn wire<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// The model of the first model request, when the run did not say.
fn model_of(entries: &[Arc<TraceEntry>]) -> Option<String> {
    entries.iter().find_map(|e| match &e.record {
        TraceRecord::Model(m) => Some(m.model.clone()),
        _ => None,
    })
}

/// `gen_ai.provider.name` guessed from a model name: `anthropic` for Claude models, `openai`
/// for GPT and o-series models, else `spine` (the scripted model, unknown local servers).
pub fn provider_of_model(model: &str) -> &'static str {
    let model = model.to_ascii_lowercase();
    if model.starts_with("claude") {
        "anthropic"
    } else if model.starts_with("gpt")
        || model.starts_with("chatgpt")
        || model.starts_with("o1")
        || model.starts_with("o3")
        || model.starts_with("o4")
    {
        "openai"
    } else {
        "spine"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_hook_source_splits_into_file_and_json_path() {
        assert_eq!(
            split_source("/p/.spine/settings.json hooks.PreToolUse[0].hooks[1]"),
            Some(("/p/.spine/settings.json", "hooks.PreToolUse[0].hooks[1]"))
        );
        assert_eq!(split_source("rust"), None);
    }

    #[test]
    fn json_fields_become_typed_attributes_and_content_fields_need_the_opt_in() {
        let fields: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "ok": true, "count": 3, "ratio": 0.5, "names": ["a", "b"], "nested": {"x": 1}, "none": null,
            "content": "secret output", "metadata": {"result": 42}
        }))
        .expect("object");
        let mut keys = FieldKeys::new("p");
        let mut omitted = Vec::new();
        field_attributes(&mut keys, &fields, ContentCapture::Omit, &mut omitted);
        let names: Vec<String> = omitted.iter().map(|kv| kv.key.to_string()).collect();
        assert_eq!(names, ["p.ok", "p.count", "p.ratio", "p.names", "p.nested"]);
        assert_eq!(omitted[0].value, OtelValue::Bool(true));
        assert_eq!(omitted[1].value, OtelValue::I64(3));
        assert_eq!(omitted[4].value, OtelValue::String("{\"x\":1}".into()));
        let mut recorded = Vec::new();
        field_attributes(&mut keys, &fields, ContentCapture::Record, &mut recorded);
        assert!(recorded.iter().any(|kv| kv.key.as_str() == "p.content"));
        assert!(recorded.iter().any(|kv| kv.key.as_str() == "p.metadata"));
        // A key made once is shared by every later stage that has the field.
        let again: Vec<String> = recorded.iter().map(|kv| kv.key.to_string()).take(2).collect();
        assert_eq!(again, ["p.ok", "p.count"]);
        assert_eq!(keys.keys.len(), 7, "one key per field, not per use");
    }

    #[test]
    fn the_provider_is_guessed_from_the_model_name() {
        assert_eq!(provider_of_model("claude-sonnet-4-5"), "anthropic");
        assert_eq!(provider_of_model("gpt-5-mini"), "openai");
        assert_eq!(provider_of_model("scripted"), "spine");
    }
}
