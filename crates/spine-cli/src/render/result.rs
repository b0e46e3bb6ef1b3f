//! The result object of `--output-format json` (and the last line of stream-json), in Claude
//! Code's shape so that scripts written for `claude -p` read it unchanged:
//!
//! `type`, `subtype`, `is_error`, `duration_ms`, `duration_api_ms`, `num_turns`, `result`,
//! `stop_reason` (why the model's last reply ended: `end_turn`, `tool_use`, or the provider's
//! word), `session_id`, `total_cost_usd` (priced by the model client from
//! `spine_models::pricing` and settings `model_options.prices`; 0 for models without a price),
//! `usage` (`input_tokens` counts uncached input, as Claude Code's does; the cache fields
//! beside it), `modelUsage` (per model), `permission_denials` (`tool_name`, `tool_use_id`,
//! `tool_input` of every call that was refused — by a permission rule or mode, the approver, a
//! PermissionRequest hook, or a PreToolUse hook that blocked or denied it — subagents' calls
//! included, in the order they were decided, as Claude Code 2.1.328 lists them:
//! `tests/fixtures/claude-code-2.1.328/stream-json-denials.jsonl`). With `--json-schema`,
//! `structured_output` is the input of the `StructuredOutput` call that answered (absent when
//! none did).
//!
//! spine adds `requests_without_usage` (how many model requests reported no usage — local
//! servers often send none; their tokens are unknown, not 0 — present only when some did),
//! `hook_stop_reason` (a hook's `stopReason`, when a hook ended the run),
//! `deferred_tool_use` (the call a deferral left pending) and, with `--include-messages`,
//! `messages` (the conversation as sent to the model).

use serde_json::{Map, Value, json};
use spine_core::model::FinishReason;
use spine_core::runner::RunOutcome;
use spine_protocol::message::Message;
use spine_protocol::permission::DecisionSource;
use spine_protocol::tool::ToolArguments;
use spine_protocol::trace::{DecisionOutcome, TraceRecord};

/// What the result object needs besides the outcome.
#[derive(Debug, Clone, Copy)]
pub struct ResultContext<'a> {
    /// Wall time of the whole command, in milliseconds.
    pub duration_ms: u64,
    /// The model's id (the key of `modelUsage`, and what prices the run).
    pub model: &'a str,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
    /// Whether to add the conversation as `messages`.
    pub include_messages: bool,
}

/// A refused call.
#[derive(Debug, Clone, PartialEq)]
pub struct Denial {
    /// The tool the call named.
    pub tool_name: String,
    /// The call's id.
    pub tool_use_id: String,
    /// The arguments the model sent (before any hook rewrote them).
    pub tool_input: Value,
    /// Whether the permission step refused it (a rule, the mode, a PermissionRequest hook or
    /// the approver) rather than a PreToolUse hook (a block, or a `permissionDecision: deny`).
    pub by_policy: bool,
}

/// Every refused call of the run, its subagents' included, in order: the permission step's
/// refusals and the PreToolUse hooks' blocks (a hook that failed closed included).
pub fn permission_denials(outcome: &RunOutcome) -> Vec<Denial> {
    // Traces written before decision records carried the arguments: the conversation has them
    // (the main agent's calls only).
    let input_of = |id: &str| {
        outcome.messages.iter().find_map(|m| match m {
            Message::Assistant(a) => a.tool_calls.iter().find(|c| c.id == id).map(|c| match &c.arguments {
                ToolArguments::Json(v) => v.clone(),
                ToolArguments::Raw(raw) => Value::String(raw.clone()),
            }),
            _ => None,
        })
    };
    outcome
        .trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::ToolDecision(d)
                if matches!(
                    d.outcome,
                    DecisionOutcome::Denied | DecisionOutcome::Blocked | DecisionOutcome::HookFailed
                ) =>
            {
                Some(Denial {
                    tool_input: d.arguments.or_else(|| input_of(&d.tool_use_id)).unwrap_or(Value::Null),
                    by_policy: d.outcome == DecisionOutcome::Denied
                        && !matches!(d.permission.as_ref().map(|p| &p.source), Some(DecisionSource::Hook { .. })),
                    tool_name: d.tool_name,
                    tool_use_id: d.tool_use_id,
                })
            }
            _ => None,
        })
        .collect()
}

/// Time spent in model requests, in milliseconds (every attempt of every request).
fn api_duration_ms(outcome: &RunOutcome) -> u64 {
    let micros: u64 = outcome
        .trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::Model(m) => Some(m.duration_us),
            _ => None,
        })
        .sum();
    micros / 1000
}

/// Claude Code's word for why the model's last reply ended.
fn stop_reason(finish: Option<&FinishReason>) -> Value {
    finish.map_or(Value::Null, |f| json!(f.stop_reason()))
}

/// Builds the result object.
pub fn result_json(outcome: &RunOutcome, ctx: &ResultContext<'_>) -> Value {
    // Claude Code's fields are numbers; usage no server reported stays 0 there, and
    // `requests_without_usage` (below) says it was absent rather than zero.
    let usage = outcome.usage.unwrap_or_default();
    let cost = outcome.total_cost_usd.unwrap_or(0.0);
    let mut model_usage = Map::new();
    for (model, m) in &outcome.model_usage {
        let u = m.usage.unwrap_or_default();
        model_usage.insert(
            model.clone(),
            json!({
                "inputTokens": u.uncached_input_tokens(),
                "outputTokens": u.output_tokens,
                "cacheReadInputTokens": u.cache_read_input_tokens,
                "cacheCreationInputTokens": u.cache_creation_input_tokens,
                "webSearchRequests": 0,
                "costUSD": m.cost_usd.unwrap_or(0.0),
                "contextWindow": if model == ctx.model { ctx.context_window } else { None },
            }),
        );
    }
    let without_usage: u32 = outcome.model_usage.values().map(|m| m.requests_without_usage).sum();
    let denials: Vec<Value> = permission_denials(outcome)
        .into_iter()
        .map(|d| json!({"tool_name": d.tool_name, "tool_use_id": d.tool_use_id, "tool_input": d.tool_input}))
        .collect();
    let mut v = json!({
        "type": "result",
        "subtype": outcome.subtype,
        "is_error": outcome.subtype.is_error(),
        "duration_ms": ctx.duration_ms,
        "duration_api_ms": api_duration_ms(outcome),
        "num_turns": outcome.num_turns,
        "result": outcome.result,
        "stop_reason": stop_reason(outcome.finish_reason.as_ref()),
        "session_id": outcome.session_id,
        "total_cost_usd": cost,
        "usage": {
            "input_tokens": usage.uncached_input_tokens(),
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": usage.output_tokens,
        },
        "modelUsage": model_usage,
        "permission_denials": denials,
    });
    if let Some(map) = v.as_object_mut() {
        if without_usage > 0 {
            map.insert("requests_without_usage".into(), json!(without_usage));
        }
        if let Some(reason) = &outcome.stop_reason {
            map.insert("hook_stop_reason".into(), json!(reason));
        }
        if let Some(call) = &outcome.deferred {
            map.insert("deferred_tool_use".into(), json!(call));
        }
        if let Some(value) = &outcome.structured_output {
            map.insert("structured_output".into(), value.clone());
        }
        if ctx.include_messages {
            map.insert("messages".into(), json!(outcome.messages));
        }
    }
    v
}

/// The result object of a run that could not start (bad usage or configuration): `subtype`
/// `error_during_execution`, `is_error`, the message as `result`, no turns.
pub fn config_error_json(message: &str, duration_ms: u64) -> Value {
    json!({
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": true,
        "duration_ms": duration_ms,
        "duration_api_ms": 0,
        "num_turns": 0,
        "result": message,
        "stop_reason": Value::Null,
        "session_id": Value::Null,
        "total_cost_usd": 0.0,
        "usage": {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0},
        "modelUsage": {},
        "permission_denials": [],
        "error": "configuration",
    })
}

/// The line `spine run` prints on stderr (without `-v`) when the permission step refused calls:
/// how many, which tools, and what would allow them (a hook's blocks are not counted: no rule
/// allows them). `managed_only` is the managed source of `allowManagedPermissionRulesOnly`,
/// when set: then only its allow rules can allow a call.
pub fn denial_note(denials: &[Denial], managed_only: Option<&spine_settings::Origin>) -> Option<String> {
    let denials: Vec<&Denial> = denials.iter().filter(|d| d.by_policy).collect();
    if denials.is_empty() {
        return None;
    }
    let mut tools: Vec<&str> = denials.iter().map(|d| d.tool_name.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    let calls = if denials.len() == 1 { "call was" } else { "calls were" };
    let rule = match managed_only {
        Some(by) => format!("an allow rule in managed settings (`allowManagedPermissionRulesOnly` in {by})"),
        None => format!(
            "an allow rule (`permissions.allow` in settings, or --allowedTools \"{}\")",
            tools.first().copied().unwrap_or("Tool")
        ),
    };
    Some(format!(
        "note: {} tool {calls} refused by the permission policy ({}); allow them with {rule} or a permission mode \
         (--permission-mode acceptEdits|bypassPermissions); -v shows each decision",
        denials.len(),
        tools.join(", "),
    ))
}
