//! Live events of a run, for whoever displays it (the CLI's `-v` lines and stream-json, the
//! worker's reports). Observers must be cheap: they run on the loop's path.

use spine_protocol::hook::HookEventName;

use crate::hooks::raw::{HookRaw, HookRunOutcome};
use crate::model::AttemptReport;
use spine_protocol::message::{Message, ToolResultMessage};
use spine_protocol::permission::PermissionDecision;
use spine_protocol::run::Usage;

/// Something that happened during a run.
#[derive(Debug, Clone, Copy)]
pub enum RunEvent<'a> {
    /// The run started.
    SessionStarted {
        /// The id `--resume` takes.
        session_id: &'a str,
        /// The model's name as its client reports it.
        model: &'a str,
    },
    /// A hook event fired (whether or not hooks are registered for it).
    HookFired {
        /// Which of the lifecycle events fired.
        event: HookEventName,
        /// The tool, for tool events.
        tool_name: Option<&'a str>,
        /// For PostToolUse/PostToolUseFailure: `ok` or `error`.
        status: Option<&'a str>,
    },
    /// One hook of an event starts (stream-json's `hook_started`).
    HookStarted {
        /// The event.
        event: HookEventName,
        /// The hook (its name, command or URL).
        hook_id: &'a str,
        /// Claude Code's name for it: `Event:subject` or the event (`PreToolUse:Bash`, `Stop`).
        hook_name: &'a str,
        /// This firing of this hook (a UUID), the same in [`RunEvent::HookEnded`].
        execution: &'a str,
    },
    /// One hook of an event ended (stream-json's `hook_response`), before its answer is
    /// folded ([`RunEvent::HookAnswered`]).
    HookEnded {
        /// The event.
        event: HookEventName,
        /// The hook.
        hook_id: &'a str,
        /// Claude Code's name for it.
        hook_name: &'a str,
        /// The firing, as in [`RunEvent::HookStarted`].
        execution: &'a str,
        /// How it ended.
        outcome: HookRunOutcome,
        /// What it printed, when it is a hook with output.
        raw: Option<&'a HookRaw>,
    },
    /// One hook answered.
    HookAnswered {
        /// The event the hook ran for.
        event: HookEventName,
        /// The hook.
        hook_id: &'a str,
        /// Its decision in one word.
        decision: &'a str,
    },
    /// The permission stage decided a call.
    Permission {
        /// The tool.
        tool_name: &'a str,
        /// What was decided, by whom (rule, mode, hook, approver) and why.
        decision: &'a PermissionDecision,
    },
    /// A model request starts.
    ModelRequest {
        /// 1-based request number.
        turn: u32,
    },
    /// A model request got its reply.
    ModelReplied {
        /// 1-based request number.
        turn: u32,
        /// The reply's usage, when the provider reported it.
        usage: Option<Usage>,
    },
    /// One attempt of a model request ended.
    ModelAttempt {
        /// 1-based request number.
        turn: u32,
        /// The attempt.
        report: &'a AttemptReport<'a>,
    },
    /// Streamed text from the model.
    TextDelta {
        /// The new text.
        text: &'a str,
    },
    /// A message was appended to the conversation.
    Message {
        /// As it was appended (and written to the transcript).
        message: &'a Message,
    },
    /// A tool call got its result.
    ToolResult {
        /// The text the model reads, with the error code when the call failed.
        result: &'a ToolResultMessage,
    },
    /// A hook's `systemMessage` (for the user, never the model).
    SystemMessage {
        /// The hook that wrote it.
        hook_id: &'a str,
        /// The message for the user.
        text: &'a str,
    },
    /// A warning for the user (a hook failed open, a rewrite was discarded…).
    Warning {
        /// One line, for the terminal.
        text: &'a str,
    },
    /// A note for `-v` (a hook answered a field spine does not apply…).
    Note {
        /// One line, for the terminal.
        text: &'a str,
    },
}

/// Receives run events.
pub trait RunObserver: Send + Sync {
    /// One event.
    fn on_event(&self, event: &RunEvent<'_>);
}

/// Ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NullObserver;

impl RunObserver for NullObserver {
    fn on_event(&self, _event: &RunEvent<'_>) {}
}
