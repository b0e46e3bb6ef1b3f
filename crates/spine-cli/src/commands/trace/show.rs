//! `spine trace show FILE`: a run's JSONL trace as a readable tree under a header (session,
//! model, prompt, start, totals, cost) — stages, model requests with their token usage, each
//! tool call with its hooks, permission decision and outcome, and durations.
//!
//! Filters (`--tool`, `--event`, `--only-decisions`) keep the entries that pass all of them;
//! the header always describes the whole run. `prepare_turn` is one compact line; `-v` adds
//! its fields (and a hook's answer) below it. `--follow` reads a trace while it is written and
//! prints each entry as it arrives, grouping a call's consecutive entries, until the run's
//! `run_end` record.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use spine_protocol::trace::{StageName, StageTrace, TraceEntry, TraceRecord};

use super::summary::{Summary, one_line, subtype_name, usage_text};
use super::{dur, parse_line, read_entries};
use crate::cli::TraceShowArgs;
use crate::error::exit;
use crate::out::{self, Stdout};

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
fn details(e: &TraceEntry) -> Vec<String> {
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

/// How often `--follow` looks for new lines.
const POLL: Duration = Duration::from_millis(100);

/// `--follow`: prints entries as they are appended to `file` (which may not exist yet), until
/// a `run_end` entry; then the header. Ctrl-C ends it too (the default signal action).
fn follow(file: &Path, filter: &Filter, detail: Detail) -> anyhow::Result<u8> {
    let mut handle = loop {
        match std::fs::File::open(file) {
            Ok(f) => break f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::thread::sleep(POLL),
            Err(e) => return Err(crate::error::config(format!("{}: {e}", file.display()))),
        }
    };
    let mut stream = Stream::new(filter.clone(), detail);
    let mut pending: Vec<u8> = Vec::new();
    let mut consumed: u64 = 0;
    let mut line_no = 0usize;
    loop {
        // A run that truncated the file (`--trace` of a new run) starts over.
        if handle.metadata().map(|m| m.len() < consumed).unwrap_or(false) {
            handle.seek(SeekFrom::Start(0))?;
            consumed = 0;
            pending.clear();
            line_no = 0;
            stream = Stream::new(filter.clone(), detail);
        }
        let mut chunk = Vec::new();
        let n = handle.read_to_end(&mut chunk)?;
        if n == 0 {
            std::thread::sleep(POLL);
            continue;
        }
        consumed += n as u64;
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = pending.drain(..=end).collect();
            line_no += 1;
            let text = String::from_utf8_lossy(&raw);
            if text.trim().is_empty() {
                continue;
            }
            let entry = parse_line(file, line_no, text.trim_end())?;
            let finished = stream.ends_run(&entry);
            let printed = stream.push(entry);
            if !printed.is_empty() && out::text(printed) == Stdout::Closed {
                return Ok(exit::OK);
            }
            if finished {
                let _ = out::text(format!("\n{}", Summary::of(&stream.entries).render()));
                return Ok(exit::OK);
            }
        }
    }
}

/// The incremental form of [`render`]: each entry printed as it arrives; a call's entries sit
/// under its `tool call` line while they come one after another.
pub struct Stream {
    filter: Filter,
    detail: Detail,
    entries: Vec<TraceEntry>,
    names: HashMap<String, String>,
    open_call: Option<String>,
    /// Runs started and not ended yet (a run nested in another writes its own pair).
    open_runs: usize,
}

impl Stream {
    /// A stream that has seen nothing yet.
    pub fn new(filter: Filter, detail: Detail) -> Self {
        Stream { filter, detail, entries: Vec::new(), names: HashMap::new(), open_call: None, open_runs: 0 }
    }

    /// Whether `entry` ends the trace's outermost run: a `run_end` that closes the last open
    /// `run_start` (or any `run_end` when no start was seen).
    pub fn ends_run(&mut self, entry: &TraceEntry) -> bool {
        match entry.record {
            TraceRecord::RunStart(_) => {
                self.open_runs += 1;
                false
            }
            TraceRecord::RunEnd(_) => {
                self.open_runs = self.open_runs.saturating_sub(1);
                self.open_runs == 0
            }
            _ => false,
        }
    }

    /// The text to print for `entry` (empty when the filter drops it).
    pub fn push(&mut self, entry: TraceEntry) -> String {
        let mut out = String::new();
        let id = entry.record.tool_use_id().map(str::to_owned);
        if let (Some(id), Some(name)) = (&id, stated_tool_name(&entry)) {
            self.names.insert(id.clone(), name.to_owned());
        }
        let name = id.as_ref().and_then(|id| self.names.get(id)).map(String::as_str);
        if self.filter.keeps(&entry, name) {
            match &id {
                Some(id) => {
                    if self.open_call.as_deref() != Some(id.as_str()) {
                        let _ = writeln!(out, "├─ tool call {id} {}", name.unwrap_or(""));
                        self.open_call = Some(id.clone());
                    }
                    push_entry(&mut out, "│   ├─ ", "│   │     ", &entry, self.detail);
                }
                None => {
                    self.open_call = None;
                    push_entry(&mut out, "├─ ", "│     ", &entry, self.detail);
                }
            }
        }
        self.entries.push(entry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(lines: &[&str]) -> Vec<TraceEntry> {
        lines.iter().map(|l| serde_json::from_str(l).expect(l)).collect()
    }

    fn sample() -> Vec<TraceEntry> {
        entries(&[
            r#"{"seq":0,"t_us":1,"kind":"stage","hook":"prepare_turn","duration_us":30,"message_count":3,"estimated_token_count":900,"tool_tokens":200,"estimator":"bpe","allowed_tool_names":["Bash","Read"],"profile":"default"}"#,
            r#"{"seq":1,"t_us":2,"kind":"model","turn":1,"model":"m","message_count":3,"tool_calls":2,"duration_us":9,"usage":{"input_tokens":900,"output_tokens":12}}"#,
            r#"{"seq":2,"t_us":3,"kind":"stage","hook":"review_tool_call","tool_use_id":"c1","duration_us":1,"tool_name":"Bash"}"#,
            r#"{"seq":2,"t_us":3,"kind":"hook","event":"PreToolUse","hook_id":"guard","source":"settings","tool_use_id":"c1","decision":"proceed","applied":true,"duration_us":4,"detail":{"reason":"ok"}}"#,
            r#"{"seq":3,"t_us":4,"kind":"stage","hook":"execute","tool_use_id":"c1","duration_us":40,"tool_name":"Bash","ok":true}"#,
            r#"{"seq":4,"t_us":5,"kind":"tool_decision","tool_use_id":"c1","tool_name":"Bash","arguments":{"command":"ls"},"pre_tool_use":[{"hook_id":"guard","decision":"proceed"}],"post_tool_use":[],"outcome":"executed"}"#,
            r#"{"seq":5,"t_us":6,"kind":"stage","hook":"execute","tool_use_id":"c2","duration_us":40,"tool_name":"Read","ok":true}"#,
            r#"{"seq":6,"t_us":7,"kind":"tool_decision","tool_use_id":"c2","tool_name":"Read","pre_tool_use":[],"post_tool_use":[],"outcome":"executed"}"#,
        ])
    }

    #[test]
    fn prepare_turn_is_one_compact_line_and_its_fields_come_under_verbose() {
        let compact = render(&sample(), &Filter::default(), Detail::Compact);
        let first = compact.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            "├─ stage prepare_turn (30 µs) 3 messages, ~900 tokens (tools 200), 2 tools, profile default"
        );
        assert!(!compact.contains("estimator"), "{compact}");
        let verbose = render(&sample(), &Filter::default(), Detail::Verbose);
        assert!(verbose.contains("│     estimator: bpe"), "{verbose}");
        assert!(verbose.contains("│   │     answer: {\"reason\":\"ok\"}"), "{verbose}");
        assert!(verbose.contains("│   │     arguments: {\"command\":\"ls\"}"), "{verbose}");
    }

    #[test]
    fn model_lines_carry_the_usage_of_their_request() {
        let text = render(&sample(), &Filter::default(), Detail::Compact);
        assert!(
            text.contains("model request 1 (m) 3 messages -> 2 tool call(s), in 900 (cache write 0, read 0), out 12")
        );
    }

    #[test]
    fn the_tool_filter_keeps_only_that_tools_calls() {
        let filter = Filter { tools: vec!["Read".into()], ..Filter::default() };
        let text = render(&sample(), &filter, Detail::Compact);
        assert!(text.contains("tool call c2 Read"), "{text}");
        assert!(!text.contains("c1") && !text.contains("model request"), "{text}");
    }

    #[test]
    fn the_event_filter_matches_hook_events_stages_and_kinds_in_any_case() {
        let hooks =
            render(&sample(), &Filter { events: vec!["pretooluse".into()], ..Filter::default() }, Detail::Compact);
        assert_eq!(hooks.lines().count(), 2, "{hooks}");
        assert!(hooks.contains("hook PreToolUse `guard`"), "{hooks}");
        let models = render(&sample(), &Filter { events: vec!["model".into()], ..Filter::default() }, Detail::Compact);
        assert_eq!(models.lines().count(), 1, "{models}");
        let stages =
            render(&sample(), &Filter { events: vec!["execute".into()], ..Filter::default() }, Detail::Compact);
        assert_eq!(stages.matches("stage execute").count(), 2, "{stages}");
        assert!(!stages.contains("review_tool_call"), "{stages}");
    }

    #[test]
    fn only_decisions_keeps_the_decision_records_under_their_calls() {
        let text = render(&sample(), &Filter { only_decisions: true, ..Filter::default() }, Detail::Compact);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines.iter().skip(1).step_by(2).all(|l| l.contains("decision: executed")), "{text}");
    }

    #[test]
    fn follow_ends_on_the_outermost_runs_end_not_a_nested_ones() {
        let mut stream = Stream::new(Filter::default(), Detail::Compact);
        let start = r#"{"seq":0,"t_us":0,"kind":"run_start","session_id":"s","model":"m","started_at":"2026-12-01T10:00:00.000Z"}"#;
        let end = r#"{"seq":1,"t_us":1,"kind":"run_end","subtype":"success","num_turns":1}"#;
        let ends: Vec<bool> = entries(&[start, start, end, end]).iter().map(|e| stream.ends_run(e)).collect();
        assert_eq!(ends, [false, false, false, true]);
        let mut old = Stream::new(Filter::default(), Detail::Compact);
        assert!(old.ends_run(&entries(&[end])[0]), "a run_end with no start seen ends it too");
    }

    #[test]
    fn a_stream_prints_each_entry_once_with_a_call_line_when_the_call_changes() {
        let mut stream = Stream::new(Filter::default(), Detail::Compact);
        let text: String = sample().into_iter().map(|e| stream.push(e)).collect();
        assert_eq!(text.matches("tool call c1 Bash").count(), 1, "{text}");
        assert_eq!(text.matches("tool call c2 Read").count(), 1, "{text}");
        assert_eq!(text.lines().count(), 10, "{text}");
    }
}
