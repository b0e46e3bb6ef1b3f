//! `spine trace show --follow`: a trace read while it is written. [`Stream`] prints each entry
//! as it arrives, a call's consecutive entries under one `tool call` line, and knows when the
//! outermost run has ended; `follow` polls the file, starts over when it is truncated, and
//! prints the header at the end.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use spine_protocol::trace::{TraceEntry, TraceRecord};

use super::{Detail, Filter, push_entry, stated_tool_name};
use crate::commands::trace::parse_line;
use crate::commands::trace::summary::Summary;
use crate::error::exit;
use crate::out::{self, Stdout};

/// How often `--follow` looks for new lines.
const POLL: Duration = Duration::from_millis(100);

/// `--follow`: prints entries as they are appended to `file` (which may not exist yet), until
/// a `run_end` entry; then the header. Ctrl-C ends it too (the default signal action).
pub(super) fn follow(file: &Path, filter: &Filter, detail: Detail) -> anyhow::Result<u8> {
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

/// The incremental form of [`render`](super::render): each entry printed as it arrives; a call's entries sit
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
