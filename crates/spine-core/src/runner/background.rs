//! A background `Agent` call (`run_in_background: true`, or a definition's `background:
//! true`): the child prepared by `runner/delegate.rs` runs on, and the call answers at once.
//!
//! Contract:
//! - the call's response is Claude Code's `async_launched` one (its text names the agent id,
//!   [`crate::subagents::background::launched_text`]); it is the call's one result, so the
//!   conversation stays paired; PostToolUse sees that response;
//! - the child is the foreground child in every other way: the same hooks (SubagentStart and
//!   SubagentStop fire in it), permission rules, approver (asked one request at a time with its
//!   siblings), trace nested under the call, transcript, own servers, and a cancel token that is
//!   a child of the parent's;
//! - it runs as a waker of the run's background work ([`crate::hooks::BackgroundHooks::spawn_wake`]):
//!   when it ends, its `<task-notification>` (and its usage) reaches the parent before the
//!   parent's next model request; a parent about to end (Stop allowed) waits for it first and
//!   goes on with the notification; a canceled parent cancels it, a parent that ends otherwise
//!   aborts it (its processes are killed). An interactive session's prompts share that work:
//!   a child still running when its prompt ends wakes the idle session when it ends — unless
//!   it was stopped (its prompt canceled): that notification waits for the next request;
//! - a single tool call without a model (`Agent::run_tool_call`) has no later request to
//!   deliver to: there the call runs in the foreground.

use std::time::Instant;

use spine_protocol::run::RunSubtype;

use super::Run;
use super::delegate::{Child, millis_since, progress_event, tokens, tool_uses, without_answer};
use crate::hooks::Delivered;
use crate::stages::execute::Executed;
use crate::subagents::background::{Ending, Notice, launched_response, notification, summary};

impl Run<'_> {
    /// Launches `child` in the background (see the module documentation) and answers the call.
    pub(super) fn launch(&self, child: Child) -> Executed {
        let Child { start, about, .. } = child;
        about.report("started", Some(about.description.clone()), None);
        let response = launched_response(&about.identity, &about.description, &about.prompt, &about.path);
        let started = Instant::now();
        self.hooks.background().spawn_wake(Box::pin(async move {
            let outcome = start.run().await;
            about.report(progress_event(outcome.subtype), None, Some(outcome.result.clone()));
            let ending = match outcome.subtype {
                RunSubtype::Success => Ending::Completed(outcome.result.clone()),
                RunSubtype::Canceled => Ending::Killed,
                RunSubtype::ErrorMaxTurns
                | RunSubtype::ErrorMaxBudgetUsd
                | RunSubtype::ErrorDuringExecution
                | RunSubtype::Blocked
                | RunSubtype::Deferred => Ending::Failed(without_answer(&about.identity, &outcome)),
            };
            let notice = Notice {
                identity: &about.identity,
                tool_use_id: &about.call_id,
                description: &about.description,
                tokens: tokens(&outcome),
                tool_uses: tool_uses(&outcome),
                duration_ms: millis_since(started),
            };
            Delivered::Agent {
                agent: format!("{} {}", about.identity.agent_type, about.identity.agent_id),
                summary: summary(&about.description, &ending),
                text: notification(&notice, &ending),
                usage: outcome.model_usage,
                wakes: ending != Ending::Killed,
            }
        }));
        Executed::Completed(response)
    }
}
