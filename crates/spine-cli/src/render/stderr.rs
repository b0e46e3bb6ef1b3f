//! Human-readable stderr lines (docs/cli.md):
//! `[Hook] PreToolUse: Read`, `[Permission] Read: allow (default) - read-only tool`,
//! `[Hook] PostToolUse: Read -> ok`, `[Hook] Stop`, and one line per failed model attempt
//! (`[Model] request 2 attempt 1 failed after 0.2 s (http 503): …; retrying in 0.4 s`).
//! Lifecycle lines need `-v`; hooks' `systemMessage`s and warnings (a failing hook's names its
//! reason) always print unless `-q`. With `-v` on a terminal, the model's
//! text streams here as it arrives. With `-v`, the model's reasoning (thinking text, reasoning
//! summaries) prints as `[Thinking] …` lines once its turn is complete; it is never part of
//! the answer. Without `-v`, on a terminal, a live status line ([`super::status`]) shows the
//! run's progress; every line printed here clears it first and draws it again after.

use std::io::Write;
use std::sync::{Arc, Mutex};

use spine_core::model::{AttemptOutcome, AttemptReport};
use spine_core::observer::{RunEvent, RunObserver};
use spine_protocol::message::{Message, ReasoningItem};

use super::status::StatusLine;

/// Prints run events on stderr.
pub struct StderrObserver {
    verbose: bool,
    quiet: bool,
    stream_text: bool,
    streaming: Mutex<bool>,
    status: Option<Arc<StatusLine>>,
}

impl StderrObserver {
    /// An observer; `stream_text` echoes model text as it arrives; `status` is the live status
    /// line, when there is one.
    pub fn new(verbose: bool, quiet: bool, stream_text: bool, status: Option<Arc<StatusLine>>) -> Self {
        StderrObserver { verbose, quiet, stream_text, streaming: Mutex::new(false), status }
    }

    fn line(&self, text: &str) {
        if let Some(status) = &self.status {
            status.suspend();
        }
        {
            let mut err = std::io::stderr().lock();
            if let Ok(mut streaming) = self.streaming.lock()
                && *streaming
            {
                let _ = writeln!(err);
                *streaming = false;
            }
            let _ = writeln!(err, "{text}");
        }
        if let Some(status) = &self.status {
            status.resume();
        }
    }
}

impl RunObserver for StderrObserver {
    fn on_event(&self, event: &RunEvent<'_>) {
        if let Some(status) = &self.status {
            status.on_event(event);
        }
        match *event {
            RunEvent::SystemMessage { hook_id, text } if !self.quiet => self.line(&format!("[{hook_id}] {text}")),
            RunEvent::Warning { text } if !self.quiet => self.line(&format!("warning: {text}")),
            _ if !self.verbose => {}
            RunEvent::SessionStarted { session_id, model } => {
                self.line(&format!("[Session] {session_id} (model {model})"))
            }
            RunEvent::HookFired { event, tool_name, status } => {
                let line = match (tool_name, status) {
                    (Some(tool), Some(status)) => format!("[Hook] {event}: {tool} -> {status}"),
                    (Some(tool), None) => format!("[Hook] {event}: {tool}"),
                    (None, _) => format!("[Hook] {event}"),
                };
                self.line(&line);
            }
            RunEvent::HookAnswered { event, hook_id, decision } => {
                self.line(&format!("[Hook] {event}: {hook_id} answered {decision}"));
            }
            RunEvent::Permission { tool_name, decision } => self.line(&format!(
                "[Permission] {tool_name}: {} ({}) - {}",
                decision.behavior.as_str(),
                decision.source.label(),
                decision.reason
            )),
            RunEvent::ModelRequest { turn } => self.line(&format!("[Model] request {turn}")),
            RunEvent::Note { text } => self.line(&format!("note: {text}")),
            RunEvent::ModelAttempt { turn, report } => {
                if let Some(line) = attempt_line(turn, report) {
                    self.line(&line);
                }
            }
            RunEvent::TextDelta { text } if self.stream_text => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(text.as_bytes());
                let _ = err.flush();
                if let Ok(mut streaming) = self.streaming.lock() {
                    *streaming = true;
                }
            }
            RunEvent::Message { message: Message::Assistant(a) } => {
                for text in a.reasoning.iter().filter_map(ReasoningItem::readable_text) {
                    self.line(&format!("[Thinking] {}", text.trim()));
                }
            }
            RunEvent::ToolResult { result } => {
                if let Some(code) = result.error_code {
                    self.line(&format!("[Tool] {} {}: error {code}", result.name, result.tool_call_id));
                }
            }
            RunEvent::TextDelta { .. }
            | RunEvent::ModelReplied { .. }
            // A subagent's events are not printed (its warnings about starting are the parent's).
            | RunEvent::StreamDelta { .. }
            | RunEvent::Subagent { .. }
            | RunEvent::Message { .. }
            | RunEvent::HookStarted { .. }
            | RunEvent::HookEnded { .. }
            | RunEvent::SystemMessage { .. }
            | RunEvent::Warning { .. } => {}
        }
    }
}

/// The `-v` line of a failed attempt (`[Model] request 2 attempt 1 failed after 1.2 s: … ;
/// retrying in 0.4 s`); a successful attempt prints nothing.
fn attempt_line(turn: u32, report: &AttemptReport<'_>) -> Option<String> {
    let head = format!(
        "[Model] request {turn} attempt {} failed after {:.1} s",
        report.attempt,
        report.duration.as_secs_f64()
    );
    match report.outcome {
        AttemptOutcome::Succeeded => None,
        AttemptOutcome::Retrying { error, wait } => {
            Some(format!("{head} ({}): {}; retrying in {:.1} s", error.kind, error.message, wait.as_secs_f64()))
        }
        AttemptOutcome::Failed { error } => Some(format!("{head} ({}): {}; giving up", error.kind, error.message)),
    }
}
