//! The header of a trace: session, model, prompt, start, totals and cost, taken from the
//! entries themselves. The `run_start`, `run_usage` and `run_end` records give them directly;
//! a trace written before those records existed (or cut short) still gets what its `model`
//! and `tool_decision` entries say — a missing figure stays absent, never 0.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;
use spine_protocol::run::{RunSubtype, Usage};
use spine_protocol::trace::{TraceEntry, TraceRecord};

use super::dur;

/// What a trace says about its run as a whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// The session id (`run_start`).
    pub session_id: Option<String>,
    /// The models requests went to (`run_start`, then each `model` entry), in first-use order.
    pub models: Vec<String>,
    /// The prompt (`run_start`).
    pub prompt: Option<String>,
    /// The wall-clock start, RFC 3339 (`run_start`).
    pub started_at: Option<String>,
    /// The time of the last entry, in µs since the start.
    pub duration_us: u64,
    /// How the run ended (`run_end`); absent while it runs or when the trace was cut.
    pub ended: Option<RunSubtype>,
    /// Model requests (`model` entries).
    pub requests: usize,
    /// Tool calls (decision records).
    pub tool_calls: usize,
    /// Warnings.
    pub warnings: usize,
    /// Reported tokens over every request; absent when no request reported usage.
    pub usage: Option<Usage>,
    /// Cost in US dollars; absent when no cost is known.
    pub cost_usd: Option<f64>,
    /// Entries in the trace.
    pub entries: usize,
}

impl Summary {
    /// Reads the header out of `entries`.
    pub fn of(entries: &[TraceEntry]) -> Summary {
        let mut s = Summary { entries: entries.len(), ..Summary::default() };
        let mut models: Vec<String> = Vec::new();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut add_model = |models: &mut Vec<String>, m: &str| {
            if seen.insert(m.to_owned()) {
                models.push(m.to_owned());
            }
        };
        let mut run_cost: Option<f64> = None;
        let mut request_cost: Option<f64> = None;
        for e in entries {
            s.duration_us = s.duration_us.max(e.t_us);
            match &e.record {
                // The first run's start is the trace's (a nested run's start does not replace it).
                TraceRecord::RunStart(r) => {
                    if s.session_id.is_none() {
                        s.session_id = Some(r.session_id.clone());
                        s.prompt = r.prompt.clone();
                        s.started_at = Some(r.started_at.clone());
                    }
                    add_model(&mut models, &r.model);
                }
                TraceRecord::Model(m) => {
                    s.requests += 1;
                    add_model(&mut models, &m.model);
                    if let Some(u) = m.usage {
                        s.usage.get_or_insert_with(Usage::default).add(u);
                    }
                    if let Some(c) = m.cost_usd {
                        *request_cost.get_or_insert(0.0) += c;
                    }
                }
                TraceRecord::RunUsage(u) => run_cost = u.total_cost_usd.or(run_cost),
                TraceRecord::ToolDecision(_) => s.tool_calls += 1,
                TraceRecord::Warning(_) => s.warnings += 1,
                TraceRecord::RunEnd(r) => s.ended = Some(r.subtype),
                TraceRecord::Stage(_) | TraceRecord::Hook(_) | TraceRecord::ModelAttempt(_) => {}
            }
        }
        s.models = models;
        s.cost_usd = run_cost.or(request_cost);
        s
    }

    /// The header as text lines (each ends with a newline).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let unknown = || "unknown".to_owned();
        let _ = writeln!(
            out,
            "session  {}   model {}",
            self.session_id.clone().unwrap_or_else(unknown),
            if self.models.is_empty() { unknown() } else { self.models.join(", ") }
        );
        if let Some(prompt) = &self.prompt {
            let _ = writeln!(out, "prompt   {}", one_line(prompt, 200));
        }
        let _ = writeln!(
            out,
            "started  {}   duration {}   {}",
            self.started_at.clone().unwrap_or_else(unknown),
            dur(self.duration_us),
            match self.ended {
                Some(subtype) => format!("ended {}", subtype_name(subtype)),
                None => "no end record".to_owned(),
            }
        );
        let _ = writeln!(
            out,
            "totals   {} request(s), {} tool call(s), {} warning(s); {}; cost {}",
            self.requests,
            self.tool_calls,
            self.warnings,
            usage_text(self.usage.as_ref()),
            self.cost_usd.map_or_else(unknown, |c| format!("${c:.6}"))
        );
        out
    }
}

/// The wire name of a run's end (`success`, `error_max_turns`…).
pub fn subtype_name(subtype: RunSubtype) -> &'static str {
    match subtype {
        RunSubtype::Success => "success",
        RunSubtype::ErrorMaxTurns => "error_max_turns",
        RunSubtype::ErrorMaxBudgetUsd => "error_max_budget_usd",
        RunSubtype::ErrorDuringExecution => "error_during_execution",
        RunSubtype::Blocked => "blocked",
        RunSubtype::Deferred => "deferred",
        RunSubtype::Canceled => "canceled",
    }
}

/// `in N (cache write W, read R), out M`, or `no usage reported`.
pub fn usage_text(usage: Option<&Usage>) -> String {
    match usage {
        None => "no usage reported".to_owned(),
        Some(u) => format!(
            "in {} (cache write {}, read {}), out {}",
            u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens, u.output_tokens
        ),
    }
}

/// `text` on one line (newlines shown as `\n`), cut to `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let s = text.replace('\n', "\\n");
    if s.chars().count() > max { format!("{}…", s.chars().take(max).collect::<String>()) } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(lines: &[&str]) -> Vec<TraceEntry> {
        lines.iter().map(|l| serde_json::from_str(l).expect(l)).collect()
    }

    #[test]
    fn the_header_comes_from_the_run_records_and_sums_the_requests() {
        let s = Summary::of(&entries(&[
            r#"{"seq":0,"t_us":0,"kind":"run_start","session_id":"s1","model":"m1","prompt":"add\nthem","started_at":"2026-12-01T10:00:00.000Z"}"#,
            r#"{"seq":1,"t_us":10,"kind":"model","turn":1,"model":"m1","message_count":2,"tool_calls":1,"duration_us":5,"usage":{"input_tokens":10,"output_tokens":2},"cost_usd":0.5}"#,
            r#"{"seq":2,"t_us":20,"kind":"tool_decision","tool_use_id":"c1","tool_name":"Bash","pre_tool_use":[],"post_tool_use":[],"outcome":"executed"}"#,
            r#"{"seq":3,"t_us":30,"kind":"model","turn":2,"model":"m2","message_count":4,"tool_calls":0,"duration_us":5,"usage":{"input_tokens":20,"output_tokens":3}}"#,
            r#"{"seq":4,"t_us":40,"kind":"run_usage","models":{},"total_cost_usd":0.75}"#,
            r#"{"seq":5,"t_us":41,"kind":"run_end","subtype":"success","num_turns":2}"#,
        ]));
        assert_eq!(s.session_id.as_deref(), Some("s1"));
        assert_eq!(s.models, vec!["m1", "m2"]);
        assert_eq!((s.requests, s.tool_calls, s.duration_us), (2, 1, 41));
        assert_eq!(s.usage.map(|u| (u.input_tokens, u.output_tokens)), Some((30, 5)));
        assert_eq!(s.cost_usd, Some(0.75), "the run's total wins over the per-request sum");
        let text = s.render();
        assert!(text.contains("prompt   add\\nthem"), "{text}");
        assert!(text.contains("ended success"), "{text}");
        assert!(text.contains("cost $0.750000"), "{text}");
    }

    #[test]
    fn a_trace_without_run_records_leaves_unknowns_absent_not_zero() {
        let s = Summary::of(&entries(&[
            r#"{"seq":0,"t_us":7,"kind":"model","turn":1,"model":"m1","message_count":2,"tool_calls":0,"duration_us":5}"#,
        ]));
        assert_eq!((s.session_id.clone(), s.usage, s.cost_usd, s.ended), (None, None, None, None));
        let text = s.render();
        assert!(text.contains("session  unknown   model m1"), "{text}");
        assert!(text.contains("no usage reported; cost unknown"), "{text}");
        assert!(text.contains("no end record"), "{text}");
    }
}
