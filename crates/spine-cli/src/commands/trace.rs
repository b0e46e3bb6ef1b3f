//! `spine trace show FILE`: a run's JSONL trace as a readable tree — stages, model requests,
//! each tool call with its hooks, permission decision and outcome, and durations.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use spine_protocol::trace::{TraceEntry, TraceRecord};

use crate::cli::TraceCommand;
use crate::error::{config, exit};
use crate::out;

/// Runs `spine trace`.
pub fn trace(cmd: TraceCommand) -> anyhow::Result<u8> {
    match cmd {
        TraceCommand::Show { file } => {
            let text = std::fs::read_to_string(&file).map_err(|e| config(format!("{}: {e}", file.display())))?;
            let mut entries = Vec::new();
            for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let entry: TraceEntry = serde_json::from_str(line)
                    .map_err(|e| config(format!("{}:{}: not a trace entry: {e}", file.display(), n + 1)))?;
                entries.push(entry);
            }
            let _ = out::text(render(&entries));
            Ok(exit::OK)
        }
    }
}

fn dur(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.2} s", us as f64 / 1e6)
    } else if us >= 1_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{us} µs")
    }
}

/// Renders entries as a tree: run-level lines, with each tool call's entries nested under it,
/// and under a `Task` call the entries of the subagent it started ([`render_subagents`]).
pub fn render(entries: &[TraceEntry]) -> String {
    let mut out = String::new();
    let main: Vec<&TraceEntry> = entries.iter().filter(|e| e.subagent.is_none()).collect();
    render_level(&main, entries, "", &mut out);
    out
}

/// One agent's entries (`level`), each line after `indent`.
fn render_level(level: &[&TraceEntry], all: &[TraceEntry], indent: &str, out: &mut String) {
    let mut calls: BTreeMap<&str, Vec<&TraceEntry>> = BTreeMap::new();
    for e in level {
        if let Some(id) = tool_use_id(e) {
            calls.entry(id).or_default().push(e);
        }
    }
    let mut printed: Vec<&str> = Vec::new();
    for e in level {
        if let Some(id) = tool_use_id(e) {
            if printed.contains(&id) {
                continue;
            }
            printed.push(id);
            let group = &calls[id];
            let name = group.iter().find_map(|e| match &e.record {
                TraceRecord::ToolDecision(d) => Some(d.tool_name.as_str()),
                TraceRecord::Stage(s) => s.fields.get("tool_name").and_then(|v| v.as_str()),
                _ => None,
            });
            let _ = writeln!(out, "{indent}├─ tool call {id} {}", name.unwrap_or(""));
            for e in group {
                let _ = writeln!(out, "{indent}│   ├─ {}", line(e));
            }
            render_subagents(all, level, id, &format!("{indent}│   "), out);
            continue;
        }
        let _ = writeln!(out, "{indent}├─ {}", line(e));
    }
}

/// The subagents the `Task` call `call_id` of `parent` (one agent's entries) started, each
/// drawn as a tree of its own under the call (their entries carry a `subagent` tag).
fn render_subagents(all: &[TraceEntry], parent: &[&TraceEntry], call_id: &str, indent: &str, out: &mut String) {
    let parent_agent = parent.first().and_then(|e| e.subagent.as_ref()).map(|t| t.agent_id.as_str());
    let mut agents: Vec<(&str, &str)> = Vec::new();
    for tag in all.iter().filter_map(|e| e.subagent.as_ref()) {
        let child_of_call = tag.parent_tool_use_id == call_id && tag.parent_agent_id.as_deref() == parent_agent;
        if child_of_call && !agents.iter().any(|(id, _)| *id == tag.agent_id) {
            agents.push((&tag.agent_id, &tag.agent_type));
        }
    }
    for (agent_id, agent_type) in agents {
        let _ = writeln!(out, "{indent}└─ subagent {agent_type} {agent_id}");
        let level: Vec<&TraceEntry> =
            all.iter().filter(|e| e.subagent.as_ref().is_some_and(|t| t.agent_id == agent_id)).collect();
        render_level(&level, all, &format!("{indent}    "), out);
    }
}

fn tool_use_id(e: &TraceEntry) -> Option<&str> {
    match &e.record {
        TraceRecord::Stage(s) => s.tool_use_id.as_deref(),
        TraceRecord::Hook(h) => h.tool_use_id.as_deref(),
        TraceRecord::ToolDecision(d) => Some(&d.tool_use_id),
        TraceRecord::Warning(w) => w.tool_use_id.as_deref(),
        TraceRecord::Model(_) | TraceRecord::ModelAttempt(_) | TraceRecord::RunUsage(_) => None,
    }
}

fn line(e: &TraceEntry) -> String {
    match &e.record {
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

/// `in N (cache write W, read R), out M`, or `no usage reported`.
fn usage_text(usage: Option<&spine_protocol::run::Usage>) -> String {
    match usage {
        None => "no usage reported".to_owned(),
        Some(u) => format!(
            "in {} (cache write {}, read {}), out {}",
            u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens, u.output_tokens
        ),
    }
}

fn short(v: &serde_json::Value) -> String {
    let s = match v {
        serde_json::Value::String(s) => s.replace('\n', "\\n"),
        other => other.to_string(),
    };
    if s.chars().count() > 60 { format!("{}…", s.chars().take(60).collect::<String>()) } else { s }
}
