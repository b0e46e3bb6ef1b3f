//! How `spine hooks test` fires each event: its default input, the engine method that fires it,
//! and its merged decision as JSON. One [`Fire`] implementation per event; `fire` reaches them
//! through [`with_hook_event!`](spine_protocol::with_hook_event), so the compiler checks that
//! every event has one. The events whose input is plain data and whose firing is one engine
//! call (context-only, observe-only, PreCompact) are generated from one list by `fire_with!`
//! (defined in [`super`], shared with [`super::session_events`]); the rest are written out.

use serde_json::{Map, Value, json};
use spine_core::hooks::events::{
    Asked, ContextOutcome, Merged, PermissionRequestOutcome, PostToolUseOutcome, PreCompactOutcome, PreToolUseOutcome,
    StopOutcome,
};
use std::sync::Arc;

use spine_core::hooks::{HookContext, HookRuntime, tool_view};
use spine_core::permission::permission_suggestions;
use spine_core::registry::PreparedCall;
use spine_core::subagents::AgentIdentity;
use spine_core::workspace::Workspace;
use spine_protocol::hook::{
    HookEvent, InstructionsLoaded, InstructionsLoadedInput, Notification, NotificationInput, PermissionDenied,
    PermissionDeniedInput, PermissionRequest, PermissionRequestInput, PostCompact, PostCompactInput, PostToolBatch,
    PostToolBatchInput, PostToolUse, PostToolUseFailure, PostToolUseFailureInput, PostToolUseInput, PreCompact,
    PreCompactInput, PreToolUse, PreToolUseInput, SessionEnd, SessionEndInput, SessionStart, SessionStartInput, Stop,
    StopFailure, StopFailureInput, StopInput, SubagentStart, SubagentStartInput, SubagentStop, SubagentStopInput,
    UserPromptSubmit, UserPromptSubmitInput,
};
use spine_protocol::permission_update::PermissionUpdate;

use super::{FireError, FireRequest, default_response, prepare, shown, typed, with};

/// One event as `spine hooks test` fires it.
pub(super) trait Fire: HookEvent {
    /// Builds the input from the defaults overlaid with `fields`, fires the event, and returns
    /// the input as the hooks saw it and the merged decision.
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError>;
}

fire_with! {
    SessionStart: SessionStartInput = json!({"source": "startup"}) => session_start, context_json;
    PreCompact: PreCompactInput = json!({"trigger": "manual"}) => pre_compact, pre_compact_json;
    PostToolBatch: PostToolBatchInput = json!({"tool_calls": [{"tool_name": "Bash",
        "tool_input": {"command": "echo hi"}, "tool_use_id": "toolu_test", "tool_response": "hi"}]})
        => post_tool_batch, context_json;
    PostCompact: PostCompactInput = json!({"trigger": "manual"}) => observe::<PostCompact>, observed;
    SessionEnd: SessionEndInput = json!({"reason": "completed"}) => observe::<SessionEnd>, observed;
    Notification: NotificationInput = json!({"message": "hooks test", "notification_type": "test"})
        => observe::<Notification>, observed;
    StopFailure: StopFailureInput = json!({"error": "server_error", "error_details": "hooks test"})
        => observe::<StopFailure>, observed;
    InstructionsLoaded: InstructionsLoadedInput = json!({"file_path": "CLAUDE.md", "memory_type": "Project",
        "load_reason": "session_start"}) => observe::<InstructionsLoaded>, observed;
}

/// The decision of an observe-only event: its hooks only watch.
fn observed(_: &()) -> Value {
    json!({"decision": "observe"})
}

/// The decision of PreCompact (reported without contexts or halt, as before).
fn pre_compact_json(merged: &Merged<PreCompactOutcome>) -> Value {
    match &merged.outcome {
        PreCompactOutcome::Proceed => json!({"decision": "proceed"}),
        PreCompactOutcome::Blocked { reason, hook_id } => {
            json!({"decision": "block", "reason": reason, "hook_id": hook_id})
        }
        // A failing hook blocks the compaction.
        PreCompactOutcome::Failed(f) => json!({"decision": "block", "reason": f.reason(), "hook_id": f.hook_id}),
    }
}

impl Fire for UserPromptSubmit {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        _request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
        let input: UserPromptSubmitInput = typed(json!({"prompt": "hello"}), fields)?;
        let input_shown = shown(ctx, &input);
        let merged = runtime.user_prompt_submit(ctx, &input.prompt).await;
        Ok((input_shown, super::session_events::prompt_json(&merged)))
    }
}

impl Fire for PreToolUse {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
        let call = prepare(request, &fields)?;
        let view = tool_view::view(&call.name, request.tools.tool(call.handle).command_argument(), &call.args);
        let input = PreToolUseInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
        };
        let input_shown = shown(ctx, &input);
        let merged = runtime.pre_tool_use(ctx, request.tools.as_ref(), &call, &request.session.cwd).await;
        let decision = match &merged.outcome {
            PreToolUseOutcome::Proceed { args, permission, suggested_by } => json!({
                "decision": "proceed",
                "permission": permission,
                "suggested_by": suggested_by,
                "tool_input": Value::Object((**args).clone()),
            }),
            PreToolUseOutcome::Blocked { reason, hook_id } => json!({
                "decision": "block",
                "reason": reason,
                "hook_id": hook_id,
                "model_sees": format!("Error [hook_blocked]: {reason}"),
            }),
            PreToolUseOutcome::Failed(f) => json!({
                "decision": "failed",
                "hook_id": f.hook_id,
                "detail": f.detail,
                "model_sees": f.tool_error().render(),
            }),
        };
        Ok((input_shown, with(decision, &merged.contexts, merged.halt.as_ref())))
    }
}

impl Fire for PermissionRequest {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
        let mut fields = fields;
        let given = fields.remove("permission_suggestions");
        let (call, view, reason) = call_with_reason(request, fields)?;
        // The suggestions a run would offer, unless --input gives them.
        let suggestions: Vec<PermissionUpdate> = match given {
            Some(value) => serde_json::from_value(value)
                .map_err(|e| FireError::Input(format!("--input: `permission_suggestions`: {e}")))?,
            None => match Workspace::new(&request.session.project_dir) {
                Ok(workspace) => {
                    let paths = request.tools.tool(call.handle).workspace_paths(&call.args);
                    permission_suggestions(&call.name, &call.args, &workspace, &request.session.cwd, &paths)
                }
                Err(_) => Vec::new(),
            },
        };
        let input = PermissionRequestInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
            reason: reason.clone(),
            permission_suggestions: suggestions.clone(),
        };
        let input_shown = shown(ctx, &input);
        let asked = Asked { reason: &reason, suggestions };
        let merged = runtime.permission_request(ctx, request.tools.as_ref(), &call, &call.args, asked).await;
        let decision = match &merged.outcome {
            PermissionRequestOutcome::NoDecision => json!({"decision": "no_decision"}),
            PermissionRequestOutcome::Allow { hook_id, args, updates } => {
                let mut allow = json!({
                    "decision": "allow",
                    "hook_id": hook_id,
                    "tool_input": args.as_ref().map(|a| Value::Object((**a).clone())),
                });
                if let (Some(map), false) = (allow.as_object_mut(), updates.is_empty()) {
                    map.insert("updated_permissions".into(), json!(updates));
                }
                allow
            }
            PermissionRequestOutcome::Deny { hook_id, message } => {
                json!({"decision": "deny", "hook_id": hook_id, "message": message})
            }
            // A failing hook denies the call.
            PermissionRequestOutcome::Failed(f) => {
                json!({"decision": "deny", "hook_id": f.hook_id, "message": f.reason()})
            }
        };
        Ok((input_shown, with(decision, &[], merged.halt.as_ref())))
    }
}

impl Fire for PostToolUse {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
        let response = fields.get("tool_response").cloned();
        let duration_ms = fields.get("duration_ms").and_then(Value::as_u64).unwrap_or(0);
        let mut call_fields = fields;
        call_fields.remove("tool_response");
        call_fields.remove("duration_ms");
        let call = prepare(request, &call_fields)?;
        let view = tool_view::view(&call.name, request.tools.tool(call.handle).command_argument(), &call.args);
        let input = PostToolUseInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
            tool_response: response.unwrap_or_else(|| default_response(&call.name)),
            duration_ms,
        };
        let input_shown = shown(ctx, &input);
        let original = input.tool_response.clone();
        let merged = runtime.post_tool_use(ctx, input).await;
        let tool = request.tools.tool(call.handle);
        let (model_sees, text_override, replaced) = match &merged.outcome {
            PostToolUseOutcome::Unchanged => (tool.project(&original).content, None, None),
            PostToolUseOutcome::Rewritten(value) => (tool.project(value).content, None, Some(value)),
            PostToolUseOutcome::TextRewritten { text, response } => (text.clone(), Some(text), response.as_ref()),
            PostToolUseOutcome::Failed(f) => (f.tool_error().render(), None, None),
        };
        let failed = match &merged.outcome {
            PostToolUseOutcome::Failed(f) => Some(f),
            PostToolUseOutcome::Unchanged
            | PostToolUseOutcome::Rewritten(_)
            | PostToolUseOutcome::TextRewritten { .. } => None,
        };
        let decision = match (failed, merged.block_reasons.is_empty()) {
            (Some(_), _) => "failed",
            (None, true) => "proceed",
            (None, false) => "block",
        };
        let mut v = json!({
            "decision": decision,
            "tool_response": replaced.unwrap_or(&original),
            "response_replaced": replaced.is_some(),
            "text_override": text_override,
            "block_reasons": merged.block_reasons,
            "model_sees": model_sees,
        });
        if let (Some(obj), Some(f)) = (v.as_object_mut(), failed) {
            obj.insert("hook_id".into(), json!(f.hook_id));
            obj.insert("detail".into(), json!(f.to_string()));
        }
        Ok((input_shown, with(v, &merged.contexts, merged.halt.as_ref())))
    }
}

impl Fire for PostToolUseFailure {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
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
        let input_shown = shown(ctx, &input);
        Ok((input_shown, context_json(&runtime.post_tool_use_failure(ctx, input).await)))
    }
}

impl Fire for Stop {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        _request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
        let input: StopInput =
            typed(json!({"stop_hook_active": false, "last_assistant_message": super::DEFAULT_ANSWER}), fields)?;
        let input_shown = shown(ctx, &input);
        let merged = runtime.stop(ctx, input.stop_hook_active, &input.last_assistant_message).await;
        Ok((input_shown, with(stop_json(&merged.outcome), &merged.contexts, merged.halt.as_ref())))
    }
}

impl Fire for SubagentStart {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        _request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
        let input: SubagentStartInput =
            typed(json!({"agent_id": TEST_AGENT_ID, "agent_type": "general-purpose"}), fields)?;
        let ctx = in_subagent(ctx, &input.agent_id, &input.agent_type);
        let input_shown = shown(&ctx, &input);
        Ok((input_shown, context_json(&runtime.subagent_start(&ctx, input).await)))
    }
}

impl Fire for SubagentStop {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        _request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
        let transcript = ctx.session.transcript_path.with_extension("").join("subagents");
        let defaults = json!({
            "stop_hook_active": false,
            "agent_id": TEST_AGENT_ID,
            "agent_type": "general-purpose",
            "agent_transcript_path": transcript.join(format!("agent-{TEST_AGENT_ID}.jsonl")),
            "last_assistant_message": super::DEFAULT_ANSWER,
        });
        let input: SubagentStopInput = typed(defaults, fields)?;
        let ctx = in_subagent(ctx, &input.agent_id, &input.agent_type);
        let input_shown = shown(&ctx, &input);
        let merged = runtime.subagent_stop(&ctx, input).await;
        Ok((input_shown, with(stop_json(&merged.outcome), &merged.contexts, merged.halt.as_ref())))
    }
}

/// The call of a permission event (its `reason` field taken out, default `hooks test`) and
/// how hooks see it.
fn call_with_reason(
    request: &FireRequest,
    mut fields: Map<String, Value>,
) -> Result<(PreparedCall, tool_view::ToolView, String), FireError> {
    let reason = fields.remove("reason").and_then(|v| v.as_str().map(str::to_owned));
    let call = prepare(request, &fields)?;
    let view = tool_view::view(&call.name, request.tools.tool(call.handle).command_argument(), &call.args);
    Ok((call, view, reason.unwrap_or_else(|| "hooks test".to_owned())))
}

/// The agent id `spine hooks test` gives a subagent event when `--input` gives none.
const TEST_AGENT_ID: &str = "0123456789abcdef";

/// The context of a hook fired inside a subagent (`agent_id`, `agent_type` in the input).
fn in_subagent(ctx: &HookContext, agent_id: &str, agent_type: &str) -> HookContext {
    let identity = AgentIdentity { agent_id: agent_id.to_owned(), agent_type: agent_type.to_owned() };
    HookContext { agent: Some(Arc::new(identity)), ..ctx.clone() }
}

/// The decision of Stop and SubagentStop.
fn stop_json(outcome: &StopOutcome) -> Value {
    match outcome {
        StopOutcome::Allow => json!({"decision": "allow"}),
        StopOutcome::ForceContinue { reason, hook_id } => {
            json!({"decision": "force_continue", "reason": reason, "hook_id": hook_id})
        }
        StopOutcome::Failed(f) => json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()}),
    }
}

impl Fire for PermissionDenied {
    async fn fire(
        runtime: &HookRuntime,
        ctx: &HookContext,
        request: &FireRequest,
        fields: Map<String, Value>,
    ) -> Result<(Value, Value), FireError> {
        let (call, view, reason) = call_with_reason(request, fields)?;
        let input = PermissionDeniedInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
            reason,
        };
        let input_shown = shown(ctx, &input);
        let merged = runtime.permission_denied(ctx, input).await;
        let decision = json!({"decision": if merged.outcome { "retry" } else { "denied" }});
        Ok((input_shown, with(decision, &[], merged.halt.as_ref())))
    }
}

/// The decision of a context-only event (SessionStart, PostToolUseFailure).
pub(super) fn context_json(merged: &Merged<ContextOutcome>) -> Value {
    let mut decision = match &merged.outcome {
        ContextOutcome::Proceed => json!({"decision": "proceed"}),
        ContextOutcome::Failed(f) => json!({"decision": "failed", "hook_id": f.hook_id, "detail": f.to_string()}),
    };
    // SessionStart's `watchPaths`, joined.
    if let (Some(paths), Some(object)) = (&merged.watch_paths, decision.as_object_mut()) {
        object.insert("watch_paths".to_owned(), json!(paths));
    }
    with(decision, &merged.contexts, merged.halt.as_ref())
}
