//! `spine hooks test`: fire one event against the configured hooks, without a model.
//!
//! Contract of [`fire`]:
//! - The hooks are built as for a run, except that `async` hooks run in the foreground (so
//!   their answers can be shown), and each call's raw answer is recorded ([`crate::record`]).
//! - The event's input is built from defaults overlaid with the caller's fields (`--input`,
//!   e.g. `{"tool_input": {...}}`); a field the event does not have is an error.
//! - Tool events go through the real tool registry: the call is prepared (tool known, schema
//!   valid, paths normalised) exactly as in a run, so PreToolUse rewrites are re-validated.
//! - The event is fired through spine-core's engine, so the merged decision follows the real
//!   merge rules; it is reported as JSON ([`FireReport::merged`]), with the text the model
//!   would read where there is one.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::events::{
    ContextResult, PermissionVerdict, PostToolUseResult, PreCompactResult, PreToolVerdict, PromptVerdict, StopVerdict,
};
use spine_core::hooks::{HookContext, HookRegistryBuilder, HookRuntime, SessionInfo};
use spine_core::observer::NullObserver;
use spine_core::registry::{PreparedCall, ToolRegistry};
use spine_core::trace::Trace;
use spine_protocol::hook::{
    HookCommonInput, HookEventName, Notification, NotificationInput, PermissionRequestInput, PostCompact,
    PostCompactInput, PostToolUseFailureInput, PostToolUseInput, PreCompactInput, PreToolUseInput, SessionEnd,
    SessionEndInput, SessionStartInput, StopInput, UserPromptSubmitInput, WireInput,
};
use spine_protocol::tool::{ToolArguments, ToolCall};
use spine_protocol::trace::TraceRecord;
use thiserror::Error;

use crate::build::{BuildError, BuildOptions, register};
use crate::config::HookConfig;
use crate::record::{AnswerRecord, AnswerSink};

/// What to fire.
pub struct FireRequest {
    /// The event.
    pub event: HookEventName,
    /// The tool, for tool events (default `Bash`).
    pub tool: Option<String>,
    /// The event's own fields, overriding the defaults.
    pub input: Option<Value>,
    /// The session the hooks see.
    pub session: SessionInfo,
    /// The tools calls are prepared with.
    pub tools: Arc<ToolRegistry>,
}

/// What happened.
#[derive(Debug)]
pub struct FireReport {
    /// The event.
    pub event: HookEventName,
    /// The event JSON the hooks received.
    pub input: Value,
    /// Each hook's raw answer, in configuration order.
    pub answers: Vec<AnswerRecord>,
    /// The merged decision.
    pub merged: Value,
    /// Warnings the engine recorded (hooks failing open, discarded rewrites…).
    pub warnings: Vec<String>,
}

/// A test that cannot be fired.
#[derive(Debug, Error)]
pub enum FireError {
    /// The input does not fit the event, or the tool call is invalid.
    #[error("{0}")]
    Input(String),
    /// The hooks could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

#[derive(Default)]
struct Collect(Mutex<Vec<AnswerRecord>>);

impl AnswerSink for Collect {
    fn record(&self, record: AnswerRecord) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(record);
    }
}

/// Fires one event against the configured hooks.
pub async fn fire(config: &HookConfig, request: FireRequest) -> Result<FireReport, FireError> {
    let sink = Arc::new(Collect::default());
    let mut builder = HookRegistryBuilder::new();
    let options = BuildOptions { sink: Some(Arc::clone(&sink) as Arc<dyn AnswerSink>), force_blocking: true };
    register(config, &mut builder, &options)?;
    let trace = Trace::default();
    let project_dir = request.session.project_dir.clone();
    let runtime = HookRuntime::new(Arc::new(builder.build()), trace.clone(), Arc::new(NullObserver), project_dir);
    let before_prompt = matches!(request.event, HookEventName::SessionStart | HookEventName::UserPromptSubmit);
    let ctx = HookContext {
        session: Arc::new(request.session.clone()),
        event: request.event,
        prompt_id: (!before_prompt).then(|| Arc::from("hooks-test-prompt")),
        cancel: CancellationToken::new(),
    };
    let fields = match &request.input {
        None => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(other) => return Err(FireError::Input(format!("--input must be a JSON object, found {other}"))),
    };
    let (input, merged) = fire_event(&runtime, &ctx, &request, fields).await?;
    runtime.shutdown();
    let mut answers = std::mem::take(&mut *sink.0.lock().unwrap_or_else(PoisonError::into_inner));
    let order: Vec<&str> = config.active_groups().iter().flat_map(|g| &g.handlers).map(|h| h.path.as_str()).collect();
    answers.sort_by_key(|a| order.iter().position(|p| *p == a.path).unwrap_or(usize::MAX));
    let warnings = trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::Warning(w) => Some(w.message),
            _ => None,
        })
        .collect();
    Ok(FireReport { event: request.event, input, answers, merged, warnings })
}

async fn fire_event(
    runtime: &HookRuntime,
    ctx: &HookContext,
    request: &FireRequest,
    fields: Map<String, Value>,
) -> Result<(Value, Value), FireError> {
    let common = ctx.common_input();
    let wire = |input: &dyn ErasedInput| input.wire(&common);
    match request.event {
        HookEventName::SessionStart => {
            let input: SessionStartInput = typed(json!({"source": "startup"}), fields)?;
            let shown = wire(&input);
            let r = runtime.session_start(ctx, input).await;
            Ok((shown, context_json(&r)))
        }
        HookEventName::UserPromptSubmit => {
            let input: UserPromptSubmitInput = typed(json!({"prompt": "hello"}), fields)?;
            let shown = wire(&input);
            let r = runtime.user_prompt_submit(ctx, &input.prompt).await;
            let verdict = match r.verdict {
                PromptVerdict::Proceed => json!({"decision": "proceed"}),
                PromptVerdict::Blocked { reason, hook_id } => {
                    json!({"decision": "block", "reason": reason, "hook_id": hook_id})
                }
                PromptVerdict::Failed(f) => {
                    json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()})
                }
            };
            Ok((shown, with(verdict, &r.contexts, r.halt.as_ref().map(|h| (&h.hook_id, &h.stop_reason)))))
        }
        HookEventName::PreToolUse => {
            let call = prepare(request, &fields)?;
            let input = PreToolUseInput {
                tool_name: call.name.clone(),
                tool_input: Value::Object((*call.args).clone()),
                tool_use_id: call.id.clone(),
            };
            let shown = wire(&input);
            let r = runtime.pre_tool_use(ctx, &request.tools, &call, &request.session.cwd).await;
            let verdict = match r.verdict {
                PreToolVerdict::Proceed { args, permission, suggested_by } => json!({
                    "decision": "proceed",
                    "permission": permission,
                    "suggested_by": suggested_by,
                    "tool_input": Value::Object((*args).clone()),
                }),
                PreToolVerdict::Blocked { reason, hook_id } => json!({
                    "decision": "block",
                    "reason": reason,
                    "hook_id": hook_id,
                    "model_sees": format!("Error [hook_blocked]: {reason}"),
                }),
                PreToolVerdict::Failed { error, hook_id, detail } => json!({
                    "decision": "failed",
                    "hook_id": hook_id,
                    "detail": detail,
                    "model_sees": error.render(),
                }),
            };
            Ok((shown, with(verdict, &r.contexts, r.halt.as_ref().map(|h| (&h.hook_id, &h.stop_reason)))))
        }
        HookEventName::PermissionRequest => {
            let reason = fields.get("reason").and_then(Value::as_str).unwrap_or("hooks test").to_owned();
            let mut call_fields = fields;
            call_fields.remove("reason");
            let call = prepare(request, &call_fields)?;
            let input = PermissionRequestInput {
                tool_name: call.name.clone(),
                tool_input: Value::Object((*call.args).clone()),
                tool_use_id: call.id.clone(),
                reason: reason.clone(),
            };
            let shown = wire(&input);
            let r = runtime.permission_request(ctx, &request.tools, &call, &call.args, &reason).await;
            let verdict = match r.verdict {
                PermissionVerdict::NoDecision => json!({"decision": "no_decision"}),
                PermissionVerdict::Allow { hook_id, args } => json!({
                    "decision": "allow",
                    "hook_id": hook_id,
                    "tool_input": args.map(|a| Value::Object((*a).clone())),
                }),
                PermissionVerdict::Deny { hook_id, message } => {
                    json!({"decision": "deny", "hook_id": hook_id, "message": message})
                }
            };
            Ok((shown, with(verdict, &[], r.halt.as_ref().map(|h| (&h.hook_id, &h.stop_reason)))))
        }
        HookEventName::PostToolUse => {
            let response = fields.get("tool_response").cloned();
            let duration_ms = fields.get("duration_ms").and_then(Value::as_u64).unwrap_or(0);
            let mut call_fields = fields;
            call_fields.remove("tool_response");
            call_fields.remove("duration_ms");
            let call = prepare(request, &call_fields)?;
            let input = PostToolUseInput {
                tool_name: call.name.clone(),
                tool_input: Value::Object((*call.args).clone()),
                tool_use_id: call.id.clone(),
                tool_response: response.unwrap_or_else(|| default_response(&call.name)),
                duration_ms,
            };
            let shown = wire(&input);
            let r = runtime.post_tool_use(ctx, input).await;
            Ok((shown, post_json(&r, &request.tools, &call)))
        }
        HookEventName::PostToolUseFailure => {
            let mut call_fields = fields.clone();
            for k in ["error", "is_interrupt", "duration_ms"] {
                call_fields.remove(k);
            }
            let call = prepare(request, &call_fields)?;
            let mut defaults = json!({"error": "Exit code 1", "is_interrupt": false, "duration_ms": 0});
            if let Some(obj) = defaults.as_object_mut() {
                obj.insert("tool_name".into(), Value::String(call.name.clone()));
                obj.insert("tool_input".into(), Value::Object((*call.args).clone()));
                obj.insert("tool_use_id".into(), Value::String(call.id.clone()));
            }
            let mut rest = fields;
            for k in ["tool_name", "tool_input", "tool_use_id"] {
                rest.remove(k);
            }
            let input: PostToolUseFailureInput = typed(defaults, rest)?;
            let shown = wire(&input);
            let r = runtime.post_tool_use_failure(ctx, input).await;
            Ok((shown, context_json(&r)))
        }
        HookEventName::PreCompact => {
            let input: PreCompactInput = typed(json!({"trigger": "manual"}), fields)?;
            let shown = wire(&input);
            let verdict = match runtime.pre_compact(ctx, input).await {
                PreCompactResult::Proceed => json!({"decision": "proceed"}),
                PreCompactResult::Blocked { reason, hook_id } => {
                    json!({"decision": "block", "reason": reason, "hook_id": hook_id})
                }
            };
            Ok((shown, verdict))
        }
        HookEventName::PostCompact => {
            let input: PostCompactInput = typed(json!({"trigger": "manual"}), fields)?;
            let shown = wire(&input);
            runtime.observe::<PostCompact>(ctx, input).await;
            Ok((shown, json!({"decision": "observe"})))
        }
        HookEventName::Stop => {
            let input: StopInput =
                typed(json!({"stop_hook_active": false, "last_assistant_message": "Done."}), fields)?;
            let shown = wire(&input);
            let r = runtime.stop(ctx, input.stop_hook_active, &input.last_assistant_message).await;
            let verdict = match r.verdict {
                StopVerdict::Allow => json!({"decision": "allow"}),
                StopVerdict::ForceContinue { reason, hook_id } => {
                    json!({"decision": "force_continue", "reason": reason, "hook_id": hook_id})
                }
                StopVerdict::Failed(f) => json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()}),
            };
            Ok((shown, with(verdict, &r.contexts, r.halt.as_ref().map(|h| (&h.hook_id, &h.stop_reason)))))
        }
        HookEventName::SessionEnd => {
            let input: SessionEndInput = typed(json!({"reason": "completed"}), fields)?;
            let shown = wire(&input);
            runtime.observe::<SessionEnd>(ctx, input).await;
            Ok((shown, json!({"decision": "observe"})))
        }
        HookEventName::Notification => {
            let input: NotificationInput =
                typed(json!({"message": "hooks test", "notification_type": "test"}), fields)?;
            let shown = wire(&input);
            runtime.observe::<Notification>(ctx, input).await;
            Ok((shown, json!({"decision": "observe"})))
        }
    }
}

/// An event's input as the hooks see it, whatever its type.
trait ErasedInput {
    fn wire(&self, common: &HookCommonInput) -> Value;
}

impl<T: Serialize> ErasedInput for T {
    fn wire(&self, common: &HookCommonInput) -> Value {
        serde_json::to_value(WireInput { common, event: self }).unwrap_or(Value::Null)
    }
}

/// Defaults overlaid with the caller's fields, as the event's typed input. A field the input
/// type does not have is an error (a typo in `--input` must not pass silently).
fn typed<T: DeserializeOwned + Serialize>(defaults: Value, fields: Map<String, Value>) -> Result<T, FireError> {
    let mut value = defaults;
    if let Some(obj) = value.as_object_mut() {
        obj.extend(fields);
    }
    let parsed: T = serde_json::from_value(value.clone())
        .map_err(|e| FireError::Input(format!("--input does not fit the event: {e}")))?;
    let known = serde_json::to_value(&parsed).unwrap_or(Value::Null);
    if let (Some(given), Some(known)) = (value.as_object(), known.as_object())
        && let Some((unknown, _)) = given.iter().find(|(k, v)| !v.is_null() && !known.contains_key(*k))
    {
        return Err(FireError::Input(format!("--input: unknown field `{unknown}` for this event")));
    }
    Ok(parsed)
}

/// Prepares the tool call of a tool event through the registry.
fn prepare(request: &FireRequest, fields: &Map<String, Value>) -> Result<PreparedCall, FireError> {
    let known = ["tool_name", "tool_input", "tool_use_id"];
    if let Some(unknown) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(FireError::Input(format!("--input: unknown field `{unknown}` for {}", request.event)));
    }
    let name = request
        .tool
        .clone()
        .or_else(|| fields.get("tool_name").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "Bash".to_owned());
    let args = fields.get("tool_input").cloned().unwrap_or_else(|| default_tool_input(&name));
    let id = fields.get("tool_use_id").and_then(Value::as_str).unwrap_or("toolu_hooks_test").to_owned();
    let call = ToolCall { id, name, arguments: ToolArguments::Json(args) };
    request
        .tools
        .prepare(&call, &request.session.cwd)
        .map_err(|e| FireError::Input(format!("the tool call is not valid: {}", e.render())))
}

fn default_tool_input(tool: &str) -> Value {
    match tool {
        "Bash" => json!({"command": "echo hello"}),
        "Read" => json!({"file_path": "README.md"}),
        "Write" => json!({"file_path": "hooks-test.txt", "content": "hello\n"}),
        "Edit" => json!({"file_path": "README.md", "old_string": "a", "new_string": "b"}),
        "Glob" | "Grep" => json!({"pattern": "*"}),
        _ => json!({}),
    }
}

fn default_response(tool: &str) -> Value {
    match tool {
        "Bash" => json!({"stdout": "hello\n", "stderr": "", "interrupted": false, "exit_code": 0}),
        _ => json!({}),
    }
}

fn with(mut verdict: Value, contexts: &[String], halt: Option<(&String, &Option<String>)>) -> Value {
    if let Some(obj) = verdict.as_object_mut() {
        obj.insert("additional_context".into(), json!(contexts));
        if let Some((hook_id, stop_reason)) = halt {
            obj.insert("continue".into(), json!(false));
            obj.insert("halted_by".into(), json!(hook_id));
            obj.insert("stop_reason".into(), json!(stop_reason));
        }
    }
    verdict
}

fn context_json(r: &ContextResult) -> Value {
    let mut v = match &r.failure {
        None => json!({"decision": "proceed"}),
        Some(f) => json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()}),
    };
    v = with(v, &r.contexts, r.halt.as_ref().map(|h| (&h.hook_id, &h.stop_reason)));
    v
}

fn post_json(r: &PostToolUseResult, tools: &ToolRegistry, call: &PreparedCall) -> Value {
    let model_sees = match (&r.failure, &r.text_override) {
        (Some((error, _)), _) => error.render(),
        (None, Some(text)) => text.clone(),
        (None, None) => tools.tool(call.handle).project(&r.response).content,
    };
    let mut v = json!({
        "decision": if r.failure.is_some() { "failed" } else if r.block_reasons.is_empty() { "proceed" } else { "block" },
        "tool_response": r.response,
        "response_replaced": r.response_replaced,
        "text_override": r.text_override,
        "block_reasons": r.block_reasons,
        "model_sees": model_sees,
    });
    if let (Some(obj), Some((_, f))) = (v.as_object_mut(), &r.failure) {
        obj.insert("hook_id".into(), json!(f.hook_id));
        obj.insert("detail".into(), json!(f.to_string()));
    }
    with(v, &r.contexts, r.halt.as_ref().map(|h| (&h.hook_id, &h.stop_reason)))
}
