//! One trace entry in words: [`line`], its one-line form (`prepare_turn` condensed to counts),
//! and `details`, what `-v` prints under it. Pure functions of the entry; long values are cut
//! to one line.

use serde_json::Value;
use spine_protocol::trace::{StageName, StageTrace, TraceEntry, TraceRecord};

use crate::commands::trace::dur;
use crate::commands::trace::summary::{one_line, subtype_name, usage_text};

/// The one-line form of an entry.
pub fn line(e: &TraceEntry) -> String {
    match &e.record {
        TraceRecord::RunStart(r) => format!(
            "run start: session {} model {} at {}{}",
            r.session_id,
            r.model,
            r.started_at,
            r.prompt.as_deref().map(|p| format!(" prompt \"{}\"", one_line(p, 60))).unwrap_or_default()
        ),
        TraceRecord::RunEnd(r) => {
            format!("run end: {} after {} request(s) ({})", subtype_name(r.subtype), r.num_turns, dur(e.t_us))
        }
        TraceRecord::Stage(s) if s.hook == StageName::PrepareTurn => prepare_turn_line(s),
        TraceRecord::Stage(s) => {
            let fields: Vec<String> = s
                .fields
                .iter()
                .filter(|(k, _)| k.as_str() != "tool_name")
                .map(|(k, v)| format!("{k}={}", short(v)))
                .collect();
            format!("stage {} ({}) {}", s.hook, dur(s.duration_us), fields.join(" "))
        }
        TraceRecord::Hook(h) => format!(
            "hook {} `{}` [{}] -> {}{} ({})",
            h.event,
            h.hook_id,
            h.source,
            h.decision,
            if h.applied { "" } else { " (not applied)" },
            dur(h.duration_us)
        ),
        TraceRecord::ToolDecision(d) => {
            let pre: Vec<String> = d.pre_tool_use.iter().map(|s| format!("{}={}", s.hook_id, s.decision)).collect();
            let post: Vec<String> = d.post_tool_use.iter().map(|s| format!("{}={}", s.hook_id, s.decision)).collect();
            let perm = d
                .permission
                .as_ref()
                .map(|p| format!("{} ({}) - {}", p.behavior.as_str(), p.source.label(), p.reason))
                .unwrap_or_else(|| "not reached".to_owned());
            format!(
                "decision: {}{} | PreToolUse [{}] | permission {} | PostToolUse [{}]",
                d.outcome,
                d.error_code.as_deref().map(|c| format!(" [{c}]")).unwrap_or_default(),
                pre.join(", "),
                perm,
                post.join(", ")
            )
        }
        TraceRecord::Model(m) => format!(
            "model request {} ({}) {} messages -> {} tool call(s){}, {}{} ({})",
            m.turn,
            m.model,
            m.message_count,
            m.tool_calls,
            m.error.as_deref().map(|e| format!(" error: {e}")).unwrap_or_default(),
            usage_text(m.usage.as_ref()),
            m.cost_usd.map(|c| format!(", ${c:.6}")).unwrap_or_default(),
            dur(m.duration_us)
        ),
        TraceRecord::RunUsage(u) => {
            let models: Vec<String> = u
                .models
                .iter()
                .map(|(model, m)| {
                    format!(
                        "{model}: {} request(s), {}{}",
                        m.requests,
                        usage_text(m.usage.as_ref()),
                        m.cost_usd.map(|c| format!(", ${c:.6}")).unwrap_or_default()
                    )
                })
                .collect();
            let total = u.total_cost_usd.map_or_else(|| "unknown".to_owned(), |c| format!("${c:.6}"));
            format!("run usage: {}; total cost {total}", models.join("; "))
        }
        TraceRecord::ModelAttempt(a) => format!(
            "model request {} attempt {} -> {}{}{} ({})",
            a.turn,
            a.attempt,
            a.outcome.as_str(),
            a.error.as_deref().map(|e| format!(" error: {e}")).unwrap_or_default(),
            a.wait_ms.map(|w| format!(" (next in {w} ms)")).unwrap_or_default(),
            dur(a.duration_us)
        ),
        TraceRecord::Warning(w) => format!("warning: {}", w.message),
    }
}

/// `stage prepare_turn (1.2 ms) 4 messages, ~1830 tokens (tools 410), 12 tools, profile default`.
fn prepare_turn_line(s: &StageTrace) -> String {
    let num = |k: &str| s.fields.get(k).and_then(Value::as_u64);
    let mut parts: Vec<String> = Vec::new();
    if let Some(n) = num("message_count") {
        parts.push(format!("{n} messages"));
    }
    if let Some(n) = num("estimated_token_count") {
        let tools = num("tool_tokens").map(|t| format!(" (tools {t})")).unwrap_or_default();
        parts.push(format!("~{n} tokens{tools}"));
    }
    if let Some(tools) = s.fields.get("allowed_tool_names").and_then(Value::as_array).filter(|a| !a.is_empty()) {
        parts.push(format!("{} tools", tools.len()));
    }
    if let Some(skills) = s.fields.get("selected_skill_names").and_then(Value::as_array).filter(|a| !a.is_empty()) {
        parts.push(format!("{} skill(s)", skills.len()));
    }
    if let Some(profile) = s.fields.get("profile").and_then(Value::as_str) {
        parts.push(format!("profile {profile}"));
    }
    format!("stage prepare_turn ({}) {}", dur(s.duration_us), parts.join(", "))
}

/// The details `-v` prints under an entry's line: each field of a stage, a hook's answer.
pub(super) fn details(e: &TraceEntry) -> Vec<String> {
    match &e.record {
        TraceRecord::Stage(s) => s.fields.iter().map(|(k, v)| format!("{k}: {}", full(v))).collect(),
        TraceRecord::Hook(h) if !h.detail.is_null() => vec![format!("answer: {}", full(&h.detail))],
        TraceRecord::Model(m) => m.reasoning.iter().map(|r| format!("reasoning: {}", one_line(r, 400))).collect(),
        TraceRecord::RunStart(r) => {
            let mut d: Vec<String> = r.prompt.iter().map(|p| format!("prompt: {}", one_line(p, 2000))).collect();
            d.extend(r.cwd.iter().map(|c| format!("cwd: {c}")));
            d
        }
        TraceRecord::ToolDecision(d) => d.arguments.iter().map(|a| format!("arguments: {}", full(a))).collect(),
        TraceRecord::Hook(_)
        | TraceRecord::ModelAttempt(_)
        | TraceRecord::RunUsage(_)
        | TraceRecord::Warning(_)
        | TraceRecord::RunEnd(_) => Vec::new(),
    }
}

fn full(v: &Value) -> String {
    match v {
        Value::String(s) => s.replace('\n', "\\n"),
        other => other.to_string(),
    }
}

fn short(v: &Value) -> String {
    one_line(&full(v), 60)
}
