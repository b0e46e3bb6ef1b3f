//! `spine trace show FILE`: a run's JSONL trace as a readable tree under a header (session,
//! model, prompt, start, totals, cost) — stages, model requests with their token usage, each
//! tool call with its hooks, permission decision and outcome, and durations.
//!
//! Filters (`--tool`, `--event`, `--only-decisions`) keep the entries that pass all of them;
//! the header always describes the whole run. `prepare_turn` is one compact line; `-v` adds
//! its fields (and a hook's answer) below it. `--follow` reads a trace while it is written and
//! prints each entry as it arrives, grouping a call's consecutive entries, until the run's
//! `run_end` record.
//!
//! Modules, by what each does: this file holds the filter and draws the tree; `line` writes
//! one entry as its line and its `-v` details; `follow` is `--follow` and its incremental
//! [`Stream`](follow::Stream).

mod follow;
mod line;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::Value;
use spine_protocol::trace::{TraceEntry, TraceRecord};

use super::read_entries;
use super::summary::Summary;
use crate::cli::TraceShowArgs;
use crate::error::exit;
use crate::out;

use follow::follow;
use line::{details, line};

/// How much of each entry to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// One line per entry.
    Compact,
    /// One line per entry, then every field (`-v`).
    Verbose,
}

/// Which entries to print; an empty filter keeps every entry.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Tool names (`--tool`); an entry passes when it belongs to a call of one of them.
    pub tools: Vec<String>,
    /// Event names (`--event`): a hook event, a stage or an entry kind, any case.
    pub events: Vec<String>,
    /// Only decision records (`--only-decisions`).
    pub only_decisions: bool,
}

impl Filter {
    /// Whether `entry`, part of a call of `tool_name` (if any), passes.
    pub fn keeps(&self, entry: &TraceEntry, tool_name: Option<&str>) -> bool {
        if self.only_decisions && !matches!(entry.record, TraceRecord::ToolDecision(_)) {
            return false;
        }
        if !self.tools.is_empty() && !tool_name.is_some_and(|n| self.tools.iter().any(|t| t == n)) {
            return false;
        }
        if !self.events.is_empty() {
            let names = event_names(entry);
            if !self.events.iter().any(|ev| names.iter().any(|n| n.eq_ignore_ascii_case(ev))) {
                return false;
            }
        }
        true
    }
}

/// The names `--event` matches for an entry: its kind, and its stage or hook event.
fn event_names(entry: &TraceEntry) -> Vec<&str> {
    let mut names = vec![entry.record.kind()];
    match &entry.record {
        TraceRecord::Stage(s) => names.push(s.hook.as_str()),
        TraceRecord::Hook(h) => names.push(h.event.as_str()),
        TraceRecord::RunStart(_)
        | TraceRecord::ToolDecision(_)
        | TraceRecord::Model(_)
        | TraceRecord::ModelAttempt(_)
        | TraceRecord::RunUsage(_)
        | TraceRecord::Warning(_)
        | TraceRecord::RunEnd(_) => {}
    }
    names
}

/// The tool name an entry states, if it states one.
fn stated_tool_name(entry: &TraceEntry) -> Option<&str> {
    match &entry.record {
        TraceRecord::ToolDecision(d) => Some(d.tool_name.as_str()),
        TraceRecord::Stage(s) => s.fields.get("tool_name").and_then(Value::as_str),
        _ => None,
    }
}

/// Runs `spine trace show`.
pub fn show(args: TraceShowArgs) -> anyhow::Result<u8> {
    let filter = Filter { tools: args.tools, events: args.events, only_decisions: args.only_decisions };
    let detail = if args.verbose { Detail::Verbose } else { Detail::Compact };
    if args.follow {
        return follow(&args.file, &filter, detail);
    }
    let entries = read_entries(&args.file)?;
    let _ = out::text(format!("{}\n{}", Summary::of(&entries).render(), render(&entries, &filter, detail)));
    Ok(exit::OK)
}

/// Renders entries as a tree: run-level lines, with each tool call's entries nested under it,
/// and under an `Agent` call the entries of the subagent it started ([`render_subagents`]).
pub fn render(entries: &[TraceEntry], filter: &Filter, detail: Detail) -> String {
    let mut out = String::new();
    let main: Vec<&TraceEntry> = entries.iter().filter(|e| e.subagent.is_none()).collect();
    render_level(&main, entries, "", filter, detail, &mut out);
    out
}

/// One agent's entries (`level`), each line after `indent`.
fn render_level(
    level: &[&TraceEntry],
    all: &[TraceEntry],
    indent: &str,
    filter: &Filter,
    detail: Detail,
    out: &mut String,
) {
    let mut calls: BTreeMap<&str, Vec<&TraceEntry>> = BTreeMap::new();
    for e in level {
        if let Some(id) = e.record.tool_use_id() {
            calls.entry(id).or_default().push(e);
        }
    }
    let names: HashMap<&str, &str> = calls
        .iter()
        .filter_map(|(id, group)| group.iter().find_map(|e| stated_tool_name(e)).map(|n| (*id, n)))
        .collect();
    let mut printed: HashSet<&str> = HashSet::new();
    for e in level {
        if let Some(id) = e.record.tool_use_id() {
            if !printed.insert(id) {
                continue;
            }
            let name = names.get(id).copied();
            let kept: Vec<&&TraceEntry> = calls[id].iter().filter(|e| filter.keeps(e, name)).collect();
            if kept.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{indent}├─ tool call {id} {}", name.unwrap_or(""));
            for e in kept {
                push_entry(out, &format!("{indent}│   ├─ "), &format!("{indent}│   │     "), e, detail);
            }
            render_subagents(all, level, id, &format!("{indent}│   "), filter, detail, out);
            continue;
        }
        if filter.keeps(e, None) {
            push_entry(out, &format!("{indent}├─ "), &format!("{indent}│     "), e, detail);
        }
    }
}

/// The subagents the `Agent` call `call_id` of `parent` (one agent's entries) started, each
/// drawn as a tree of its own under the call (their entries carry a `subagent` tag).
fn render_subagents(
    all: &[TraceEntry],
    parent: &[&TraceEntry],
    call_id: &str,
    indent: &str,
    filter: &Filter,
    detail: Detail,
    out: &mut String,
) {
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
        render_level(&level, all, &format!("{indent}    "), filter, detail, out);
    }
}

/// Appends an entry's line, and under [`Detail::Verbose`] its details, one per line.
fn push_entry(out: &mut String, prefix: &str, detail_prefix: &str, e: &TraceEntry, detail: Detail) {
    let _ = writeln!(out, "{prefix}{}", line(e));
    if detail == Detail::Verbose {
        for d in details(e) {
            let _ = writeln!(out, "{detail_prefix}{d}");
        }
    }
}

#[cfg(test)]
mod tests;
