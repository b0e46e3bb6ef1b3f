//! `asyncRewake`: a command hook that runs in the background and wakes the model when it exits 2.
//!
//! Contract of [`RewakeHook`] (Claude Code's `asyncRewake`, `rewakeMessage`, `rewakeSummary`):
//! - Every firing goes to the background at once ([`Started::Background`] with `wakes`): the
//!   firing proceeds as if the hook had no opinion, whatever it later answers.
//! - The process runs as a [`CommandHook`]'s, to its end, bounded by the hook's `timeout` and
//!   killed with the run (an async first line is only removed from its answer).
//! - Exit 2 wakes the model ([`Wake`]): the message is `rewakeMessage` (else
//!   `<Event> hook blocking error from command "<command>":`) followed by the hook's stderr (its
//!   stdout when stderr is empty); the summary shown to the user is `rewakeSummary` (else
//!   `<Event> hook feedback`), on one line. Any other exit does not wake; its answer is
//!   delivered as an `async` hook's (context for the next turn, decisions ignored).
//! - A run about to end waits for its rewake hooks still running (spine-core's
//!   [`BackgroundHooks::settle_wakes`](spine_core::hooks::BackgroundHooks::settle_wakes)).

use std::sync::Arc;

use async_trait::async_trait;
use spine_core::hooks::{Hook, HookContext, HookError, Late, Started, Wake};
use spine_protocol::hook::{HookEventName, HookOutput};

use crate::command::{CommandHook, Exited};
use crate::wire::WireEvent;

/// A command hook run with `asyncRewake: true`.
pub struct RewakeHook {
    inner: Arc<CommandHook>,
    command: String,
    message: Option<String>,
    summary: Option<String>,
}

impl RewakeHook {
    /// Wraps the command hook of `command` (its display text) with the configured
    /// `rewakeMessage` and `rewakeSummary`.
    pub fn new(inner: CommandHook, command: String, message: Option<String>, summary: Option<String>) -> Self {
        RewakeHook { inner: Arc::new(inner), command, message, summary }
    }
}

#[async_trait]
impl<E: WireEvent> Hook<E> for RewakeHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        self.inner.run_to_end::<E>(ctx, input).await.result
    }

    async fn start(&self, ctx: &HookContext, input: &E::Input) -> Started<E::Action> {
        let inner = Arc::clone(&self.inner);
        let ctx = ctx.clone();
        let input = input.clone();
        let (command, message, summary) = (self.command.clone(), self.message.clone(), self.summary.clone());
        let answer = Box::pin(async move {
            let exited = inner.run_to_end::<E>(&ctx, &input).await;
            let wake = (exited.code == Some(2)).then(|| wake(E::NAME, &command, message, summary, &exited));
            Late { result: exited.result, wake }
        });
        Started::Background { answer, wakes: true }
    }
}

/// The wake of a hook that exited 2.
fn wake<A>(
    event: HookEventName,
    command: &str,
    message: Option<String>,
    summary: Option<String>,
    exited: &Exited<A>,
) -> Wake {
    let prefix = message
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| format!("{event} hook blocking error from command \"{command}\":"));
    let body = if exited.stderr.trim().is_empty() { exited.stdout.trim() } else { exited.stderr.trim() };
    let message = if body.is_empty() { prefix } else { format!("{} {body}", prefix.trim_end()) };
    let summary = summary.filter(|s| !s.trim().is_empty()).unwrap_or_else(|| format!("{event} hook feedback"));
    Wake { message, summary: summary.split_whitespace().collect::<Vec<_>>().join(" ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(stdout: &str, stderr: &str) -> Exited<()> {
        Exited {
            result: Err(HookError::failed("exit 2")),
            code: Some(2),
            stdout: stdout.into(),
            stderr: stderr.into(),
            announced: false,
        }
    }

    #[test]
    fn a_wake_reads_the_rewake_message_then_stderr_else_stdout() {
        let event = HookEventName::PostToolUse;
        let w = wake(event, "./t.sh", None, None, &exited("", "2 tests failed\n"));
        assert_eq!(w.message, "PostToolUse hook blocking error from command \"./t.sh\": 2 tests failed");
        assert_eq!(w.summary, "PostToolUse hook feedback");
        let w = wake(event, "./t.sh", Some("Fix the tests:".into()), Some("tests\nfailed".into()), &exited("out", ""));
        assert_eq!((w.message.as_str(), w.summary.as_str()), ("Fix the tests: out", "tests failed"));
    }
}
