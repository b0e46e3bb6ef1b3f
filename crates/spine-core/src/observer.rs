//! Live events of a run, for whoever displays it (the CLI's `-v` lines and stream-json, the
//! worker's reports). Observers must be cheap: they run on the loop's path.
//!
//! A subagent's run reports to its parent's observer through a [`SubagentObserver`]: every
//! event of the child arrives as [`RunEvent::Subagent`], which names the `Agent` call that
//! started it ([`SubagentOrigin`]) and carries the child's event as it was. A grandchild's
//! events are wrapped twice; the innermost origin is the run the event happened in. Observers
//! that only follow the main agent ignore `Subagent` events.

use std::sync::Arc;

use spine_protocol::hook::HookEventName;

use crate::hooks::raw::{HookRaw, HookRunOutcome};
use crate::model::{AttemptReport, StreamDelta};
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
    /// A model request got its reply (before the reply is appended as a [`RunEvent::Message`]).
    ModelReplied {
        /// 1-based request number.
        turn: u32,
        /// The reply's usage, when the provider reported it.
        usage: Option<Usage>,
        /// Why the reply ended, in Claude Code's word (`end_turn`, `tool_use`, or the
        /// provider's own).
        stop_reason: &'a str,
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
    /// A streamed piece of the model's reply other than its text (thinking, a tool call's
    /// start and input), from providers that stream them (see [`crate::model::StreamSink`]).
    StreamDelta {
        /// The piece.
        delta: StreamDelta<'a>,
    },
    /// An event of a subagent's run (see the module documentation).
    Subagent {
        /// The `Agent` call that started the subagent, and who it is.
        origin: &'a SubagentOrigin,
        /// The event, as the subagent's run reported it.
        event: &'a RunEvent<'a>,
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

/// Which subagent a [`RunEvent::Subagent`] event comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentOrigin {
    /// The id of the `Agent` (or `Task`) call that started it (stream-json's
    /// `parent_tool_use_id`).
    pub parent_tool_use_id: String,
    /// Its `agent_id` (as its hook inputs carry it).
    pub agent_id: String,
    /// Its `subagent_type`.
    pub agent_type: String,
    /// The call's `description`.
    pub description: String,
}

/// The observer of a subagent's run: passes every event to the parent's observer as
/// [`RunEvent::Subagent`] with the subagent's origin.
pub struct SubagentObserver {
    parent: Arc<dyn RunObserver>,
    origin: SubagentOrigin,
}

impl SubagentObserver {
    /// Reports the events of the subagent `origin` to `parent`.
    pub fn new(parent: Arc<dyn RunObserver>, origin: SubagentOrigin) -> Self {
        SubagentObserver { parent, origin }
    }
}

impl RunObserver for SubagentObserver {
    fn on_event(&self, event: &RunEvent<'_>) {
        self.parent.on_event(&RunEvent::Subagent { origin: &self.origin, event });
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Seen(std::sync::Mutex<Vec<String>>);

    impl RunObserver for Seen {
        fn on_event(&self, event: &RunEvent<'_>) {
            let mut ids = Vec::new();
            let mut event = event;
            while let RunEvent::Subagent { origin, event: inner } = event {
                ids.push(origin.parent_tool_use_id.clone());
                event = inner;
            }
            if let RunEvent::Note { text } = event
                && let Ok(mut seen) = self.0.lock()
            {
                seen.push(format!("{}{text}", ids.iter().map(|id| format!("{id}/")).collect::<String>()));
            }
        }
    }

    fn origin(call: &str) -> SubagentOrigin {
        SubagentOrigin {
            parent_tool_use_id: call.into(),
            agent_id: format!("agent-{call}"),
            agent_type: "general-purpose".into(),
            description: "d".into(),
        }
    }

    #[test]
    fn a_subagents_events_reach_the_parent_wrapped_in_its_origin_and_a_grandchilds_twice() {
        let seen = Arc::new(Seen::default());
        let child = Arc::new(SubagentObserver::new(seen.clone(), origin("call_1")));
        let grandchild = SubagentObserver::new(child.clone(), origin("call_2"));
        child.on_event(&RunEvent::Note { text: "child" });
        grandchild.on_event(&RunEvent::Note { text: "grandchild" });
        let seen = seen.0.lock().map(|s| s.clone()).unwrap_or_default();
        assert_eq!(seen, ["call_1/child", "call_1/call_2/grandchild"]);
    }
}
