//! Wakes in an interactive session.
//!
//! The prompts of a session share their background hooks, so an `asyncRewake` hook started by
//! one prompt may end after it, while the session waits at its prompt. Contract:
//! - A wake that arrives while the user is at the prompt interrupts the line editor (the text
//!   typed so far stays in it) and starts a turn without a prompt: the model reads the hook's
//!   message as a user message, the user sees `a hook woke the session` on stderr and the
//!   hook's summary; then the prompt comes back.
//! - A wake that arrives during a prompt's run reaches the model at that run's next request;
//!   one that arrives after the run's last request starts a turn as soon as the run ends.
//! - A background subagent (an `Agent` call run in the background) that ends after its prompt's
//!   run wakes the session the same way: `a background agent woke the session`, its summary
//!   (`Agent "…" finished`), and a turn in which the model reads its `<task-notification>`.
//! - Only a session whose hooks may wake, or whose model may start background subagents (the
//!   `Agent` tool is offered), watches for wakes (the editor then polls).

use spine_core::runner::Agent;
use spine_core::subagents::AGENT_TOOL;

use super::Chat;
use super::editor::{Editor, Input, PromptText};

/// Whether something may wake the session while it waits at its prompt: an `asyncRewake` hook
/// of the settings, or a background subagent (the `Agent` tool is offered).
pub(super) fn may_wake(settings: &spine_settings::Settings, agent: &Agent) -> bool {
    let hooks = spine_hooks::HookConfig::from_settings(settings).is_ok_and(|h| h.can_wake());
    let agents = agent.config.subagents.is_some()
        && agent.tools.names().any(|n| n == AGENT_TOOL && agent.config.visibility.allows(n));
    hooks || agents
}

impl Chat {
    /// Reads one input; a wake arriving meanwhile ends the read with [`Input::Woken`].
    pub(super) async fn read_or_wake(&self, editor: &Editor, prompt: PromptText) -> std::io::Result<Input> {
        let read = editor.read(prompt);
        tokio::pin!(read);
        loop {
            tokio::select! {
                input = &mut read => return input,
                () = self.background.woken(), if self.watch_wakes => {
                    if self.background.has_wake() {
                        editor.interrupt();
                    }
                }
            }
        }
    }

    /// The turn a wake starts: no prompt, the model reads the hook's message (or the background
    /// subagent's notification).
    pub(super) async fn woken(&mut self, interrupt: &mut tokio::signal::unix::Signal) {
        let who = if self.background.has_agent_notice() { "a background agent" } else { "a hook" };
        eprintln!("{who} woke the session");
        let outcome = self.prompt(None, Vec::new(), interrupt).await;
        if outcome.is_none_or(|o| o.num_turns == 0) {
            // The run ended before its first request (it could not start): the wakes it did not
            // deliver are dropped, not retried forever.
            let dropped = self.background.take().into_iter().filter(|d| d.wakes()).count();
            eprintln!("warning: {dropped} wake(s) not delivered: the turn ended before asking the model");
        }
    }
}
