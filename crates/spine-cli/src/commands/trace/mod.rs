//! `spine trace`: a run's JSONL trace (`spine run --trace FILE`) read back. `show` prints it
//! as a tree under a header, with filters and `--follow` ([`show`]); `html` writes it as one
//! self-contained page with a timeline ([`html`]). Both read every line as a
//! [`TraceEntry`]; a line that is not one is exit 2 (`FILE:LINE: not a trace entry`).

pub mod html;
pub mod show;
pub mod summary;

use std::path::Path;

use spine_protocol::trace::TraceEntry;

use crate::cli::TraceCommand;
use crate::error::config;

/// Runs `spine trace`.
pub fn trace(cmd: TraceCommand) -> anyhow::Result<u8> {
    match cmd {
        TraceCommand::Show(args) => show::show(args),
        TraceCommand::Html(args) => html::html(args),
    }
}

/// Every entry of a trace file, in order (blank lines skipped).
pub fn read_entries(file: &Path) -> anyhow::Result<Vec<TraceEntry>> {
    let text = std::fs::read_to_string(file).map_err(|e| config(format!("{}: {e}", file.display())))?;
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        entries.push(parse_line(file, n + 1, line)?);
    }
    Ok(entries)
}

/// One line of a trace file; `number` is 1-based, for the error.
pub fn parse_line(file: &Path, number: usize, line: &str) -> anyhow::Result<TraceEntry> {
    serde_json::from_str(line).map_err(|e| config(format!("{}:{number}: not a trace entry: {e}", file.display())))
}

/// A duration for people: `40 µs`, `1.5 ms`, `2.31 s`.
pub fn dur(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.2} s", us as f64 / 1e6)
    } else if us >= 1_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{us} µs")
    }
}
