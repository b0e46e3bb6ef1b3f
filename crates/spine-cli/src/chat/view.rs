//! What an interactive session shows while a prompt runs, on the terminal:
//!
//! - the model's text as it streams (a reply that did not stream is printed when it arrives);
//! - one line per tool call when it ends — `⏺ Bash(npm test) ✓ 1.2 s`, or `✗ permission_denied`
//!   with the error — and its output folded to [`FOLDED_LINES`] lines (`… +12 lines`);
//! - one line per hook answer that changed something: blocked, rewrote, added context, denied,
//!   allowed, asked, forced the agent to continue (`  ↳ PreToolUse hook guard.sh: blocked`);
//! - hooks' messages for the user, warnings, failed model attempts.
//!
//! While nothing is printed, the live status line ([`crate::render::status`]) shows the turn,
//! the running tool, the clock and the tokens; it is cleared around every line printed here
//! and while text streams.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use spine_core::model::AttemptOutcome;
use spine_core::observer::{RunEvent, RunObserver};
use spine_protocol::hook::HookEventName;
use spine_protocol::message::{Message, ToolResultMessage};
use spine_protocol::tool::ToolCall;

use crate::render::status::{StatusLine, main_argument};

/// Lines of a tool's output shown under its line.
pub const FOLDED_LINES: usize = 3;

/// The longest main argument shown on a tool line.
const MAX_ARG: usize = 60;

/// The longest output line shown.
const MAX_LINE: usize = 120;

/// Renders a session's events (see the module documentation).
pub struct ChatView {
    status: Arc<StatusLine>,
    state: Mutex<ViewState>,
}

#[derive(Default)]
struct ViewState {
    /// Text of the current reply is on the screen, its line not ended.
    streaming: bool,
    /// Text of the current reply streamed (so the reply's content is not printed again).
    streamed: bool,
    /// Calls waiting for their result: id → (`Tool(argument)`, start).
    calls: HashMap<String, (String, Instant)>,
}

impl ChatView {
    /// A view drawing around `status`.
    pub fn new(status: Arc<StatusLine>) -> Self {
        ChatView { status, state: Mutex::new(ViewState::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ViewState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Prints whole lines on stdout (ending a streamed line first), around the status line.
    fn lines(&self, state: &mut ViewState, text: &str) {
        self.status.suspend();
        let mut out = std::io::stdout().lock();
        if state.streaming {
            let _ = writeln!(out);
            state.streaming = false;
        }
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
        drop(out);
        self.status.resume();
    }
}

impl RunObserver for ChatView {
    fn on_event(&self, event: &RunEvent<'_>) {
        self.status.on_event(event);
        let mut state = self.lock();
        match *event {
            RunEvent::TextDelta { text } => {
                if !state.streaming {
                    self.status.suspend();
                }
                state.streaming = true;
                state.streamed = true;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
            }
            RunEvent::Message { message: Message::Assistant(reply) } => {
                let streamed = std::mem::take(&mut state.streamed);
                if state.streaming {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out);
                    let _ = out.flush();
                    state.streaming = false;
                    self.status.resume();
                } else if !streamed && let Some(text) = reply.content.as_deref().filter(|t| !t.trim().is_empty()) {
                    self.lines(&mut state, text.trim_end());
                }
                for call in &reply.tool_calls {
                    state.calls.insert(call.id.clone(), (shown_call(call), Instant::now()));
                }
            }
            RunEvent::ToolResult { result } => {
                let (shown, started) =
                    state.calls.remove(&result.tool_call_id).unwrap_or_else(|| (result.name.clone(), Instant::now()));
                let text = tool_lines(&shown, Some(started.elapsed()), result);
                self.lines(&mut state, &text);
            }
            RunEvent::HookAnswered { event, hook_id, decision } => {
                if let Some(what) = hook_effect(event, decision) {
                    self.lines(&mut state, &format!("  ↳ {event} hook {hook_id}: {what}"));
                }
            }
            RunEvent::SystemMessage { hook_id, text } => self.lines(&mut state, &format!("[{hook_id}] {text}")),
            RunEvent::Warning { text } => self.lines(&mut state, &format!("warning: {text}")),
            RunEvent::ModelAttempt { turn, report } => match report.outcome {
                AttemptOutcome::Retrying { error, wait } => self.lines(
                    &mut state,
                    &format!(
                        "model request {turn} failed ({}): {}; retrying in {:.1} s",
                        error.kind,
                        error.message,
                        wait.as_secs_f64()
                    ),
                ),
                AttemptOutcome::Succeeded | AttemptOutcome::Failed { .. } => {}
            },
            RunEvent::SessionStarted { .. }
            | RunEvent::HookFired { .. }
            | RunEvent::HookStarted { .. }
            | RunEvent::HookEnded { .. }
            | RunEvent::Permission { .. }
            | RunEvent::ModelRequest { .. }
            | RunEvent::ModelReplied { .. }
            | RunEvent::StreamDelta { .. }
            | RunEvent::Subagent { .. }
            | RunEvent::Note { .. }
            | RunEvent::Message { .. } => {}
        }
    }
}

/// What a hook's answer changed, in words; `None` when it changed nothing.
pub fn hook_effect(event: HookEventName, decision: &str) -> Option<&'static str> {
    Some(match decision {
        "block" => "blocked",
        "rewrite" if event == HookEventName::PostToolUse => "rewrote the output",
        "rewrite" => "rewrote the input",
        "context" => "added context",
        "force_continue" => "forced the agent to continue",
        "deny" => "denied",
        "allow" => "allowed",
        "ask" => "asked for approval",
        "defer" => "deferred",
        "contract_error" | "invalid_answer" => "answered outside the contract (ignored)",
        _ => return None,
    })
}

/// How a call is named on its line: `Bash(npm test)`, its main argument shortened.
pub fn shown_call(call: &ToolCall) -> String {
    match main_argument(&call.arguments, MAX_ARG) {
        Some(arg) => format!("{}({arg})", call.name),
        None => call.name.clone(),
    }
}

/// A finished call's line and its folded output; `took` is absent when a resumed session's
/// conversation is redrawn ([`super::replay`]: the transcript keeps no durations).
pub fn tool_lines(shown: &str, took: Option<Duration>, result: &ToolResultMessage) -> String {
    let took = match took {
        None => String::new(),
        Some(took) if took < Duration::from_secs(1) => format!(" {} ms", took.as_millis()),
        Some(took) => format!(" {:.1} s", took.as_secs_f64()),
    };
    let mut text = match (result.error_code, took.is_empty()) {
        (None, _) => format!("⏺ {shown} ✓{took}"),
        (Some(code), true) => format!("⏺ {shown} ✗ {code}"),
        (Some(code), false) => format!("⏺ {shown} ✗ {code} ·{took}"),
    };
    let body: Vec<&str> = result.content.lines().filter(|l| !l.trim().is_empty()).collect();
    for (i, line) in body.iter().take(FOLDED_LINES).enumerate() {
        let mut line: String = line.chars().take(MAX_LINE).collect();
        if line.len() < body[i].len() {
            line.push('…');
        }
        text.push_str(&format!("\n  ⎿ {line}"));
    }
    if body.len() > FOLDED_LINES {
        text.push_str(&format!("\n  … +{} lines", body.len() - FOLDED_LINES));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use spine_protocol::tool::ErrorCode;

    fn result(content: &str, error_code: Option<ErrorCode>) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: "c1".into(),
            name: "Bash".into(),
            content: content.into(),
            error_code,
            images: Vec::new(),
        }
    }

    #[test]
    fn a_tool_call_is_one_line_with_its_outcome_and_duration_and_output_folds_to_three_lines() {
        let out = "1\n2\n\n3\n4\n5\n";
        let text = tool_lines("Bash(seq 5)", Some(Duration::from_millis(120)), &result(out, None));
        assert_eq!(text, "⏺ Bash(seq 5) ✓ 120 ms\n  ⎿ 1\n  ⎿ 2\n  ⎿ 3\n  … +2 lines");
        let denied = tool_lines(
            "Bash(rm -rf /)",
            Some(Duration::from_millis(1500)),
            &result("Error [permission_denied]: no", Some(ErrorCode::PermissionDenied)),
        );
        assert_eq!(denied, "⏺ Bash(rm -rf /) ✗ permission_denied · 1.5 s\n  ⎿ Error [permission_denied]: no");
        let redrawn = tool_lines("Bash(seq 5)", None, &result("1", None));
        assert_eq!(redrawn, "⏺ Bash(seq 5) ✓\n  ⎿ 1", "a redrawn call has no duration");
    }

    #[test]
    fn only_hook_answers_that_change_something_are_shown() {
        assert_eq!(hook_effect(HookEventName::PreToolUse, "block"), Some("blocked"));
        assert_eq!(hook_effect(HookEventName::PreToolUse, "rewrite"), Some("rewrote the input"));
        assert_eq!(hook_effect(HookEventName::PostToolUse, "rewrite"), Some("rewrote the output"));
        assert_eq!(hook_effect(HookEventName::Stop, "force_continue"), Some("forced the agent to continue"));
        assert_eq!(hook_effect(HookEventName::UserPromptSubmit, "context"), Some("added context"));
        for nothing in ["proceed", "observe", "no_decision", "passthrough"] {
            assert_eq!(hook_effect(HookEventName::PreToolUse, nothing), None, "{nothing}");
        }
    }
}
