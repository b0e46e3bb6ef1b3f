//! The session's watch in an interactive session ([`spine_core::watch`]).
//!
//! Contract:
//! - One [`SessionWatch`] per session: every prompt's run shares it, so the shell's working
//!   directory carries over from one prompt to the next, and the files and settings files
//!   stay watched between prompts; `/clear`, `/resume` and the end of the session drop it
//!   (the next session's shell starts in the project directory again).
//! - While the user is at the prompt, a settled change interrupts the line editor (the text
//!   typed so far stays in it), FileChanged and ConfigChange fire — their `systemMessage`s and
//!   spine's one-line notes are shown — and the prompt comes back. Only a session with
//!   FileChanged or ConfigChange hooks watches while idle (the editor then polls).

use std::sync::Arc;

use spine_core::observer::RunObserver;
use spine_core::runner::{Agent, SessionRef};
use spine_core::watch::SessionWatch;
use spine_protocol::hook::{ConfigChange, FileChanged};

use super::Chat;
use super::editor::{Editor, Input, PromptText};

/// A new session's watch: the shell in the agent's directory, the settings files and skills
/// directories of `settings` for ConfigChange.
pub(crate) fn session_watch(agent: &Agent, settings: &spine_settings::Settings) -> Arc<SessionWatch> {
    let config = spine_agent::watch::config_files(settings, &agent.config.skill_roots);
    Arc::new(SessionWatch::new(agent.config.cwd.clone()).with_config(config))
}

/// Whether the session watches while idle: FileChanged or ConfigChange hooks exist.
pub(super) fn watches_idle(agent: &Agent) -> bool {
    agent.hooks.has::<FileChanged>() || agent.hooks.has::<ConfigChange>()
}

impl Chat {
    /// Reads one input; a wake, or a watched change that settled, ends the read with
    /// [`Input::Woken`].
    pub(super) async fn read_input(&self, editor: &Editor, prompt: PromptText) -> std::io::Result<Input> {
        let read = self.read_or_wake(editor, prompt);
        tokio::pin!(read);
        let mut interrupted = !watches_idle(&self.agent);
        loop {
            tokio::select! {
                input = &mut read => return input,
                () = self.watch.ready(), if !interrupted => {
                    editor.interrupt();
                    interrupted = true;
                }
            }
        }
    }

    /// Fires what the watch saw since the last run (nothing when nothing changed).
    pub(super) async fn fire_watched(&self) {
        if !self.watch.has_pending() {
            return;
        }
        let session = SessionRef {
            session_id: self.session.id.clone(),
            transcript_path: self.session.transcript.clone(),
            env_file: Some(self.session.transcript.with_extension("env")),
            trace: self.trace.clone(),
            observer: Arc::clone(&self.view) as Arc<dyn RunObserver>,
        };
        self.agent.fire_watched(&self.watch, session).await;
    }
}
