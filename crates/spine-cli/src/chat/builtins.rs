//! What the built-in commands of an interactive session do (`/help`, `/exit`, `/clear`,
//! `/compact`, `/model`, `/cost`, `/permissions`, `/hooks`, `/resume`; [`super::slash`] parses
//! them).
//!
//! Contract: a built-in command never ends the session except `/exit`; its problems are shown
//! on one line and the session goes on. `/clear` and `/resume` end the current session
//! (SessionEnd `clear` or `other`, if a prompt started it) and reset the totals; the next
//! prompt fires SessionStart with source `clear` or `resume`. `/compact` can be canceled with
//! Ctrl-C and keeps the conversation when nothing was compacted. `/resume`'s list never offers
//! the session it is in, and the session resumed shows its last turns ([`super::replay`]).
//! `/permissions` is [`super::permissions`].

use std::sync::Arc;

use spine_core::CancellationToken;
use spine_core::observer::RunObserver;
use spine_core::runner::RunRequest;
use spine_core::session::{Transcript, new_session_id};
use spine_protocol::hook::{SessionEndReason, SessionSource};

use super::slash::{self, Builtin};
use super::totals::Totals;
use super::{Chat, Next, SessionState};

impl Chat {
    pub(super) async fn builtin(&mut self, command: Builtin, interrupt: &mut tokio::signal::unix::Signal) -> Next {
        match command {
            Builtin::Help => self.help(),
            Builtin::Exit => return Next::Exit,
            Builtin::Clear => {
                self.end_session(SessionEndReason::Clear).await;
                let id = new_session_id();
                self.session = SessionState {
                    transcript: crate::sessions::transcript_path(&self.home, &self.launch_dir, &id),
                    id,
                    history: Vec::new(),
                    deferred: None,
                    source: SessionSource::Clear,
                    started: false,
                };
                self.totals = Totals::default();
                println!("New session {}.", self.session.id);
            }
            Builtin::Compact(instructions) => self.compact(instructions, interrupt).await,
            Builtin::Model(None) => println!("model: {}", self.agent.model.model()),
            Builtin::Model(Some(spec)) => self.switch_model(spec).await,
            Builtin::Cost => println!("{}", self.totals.text()),
            Builtin::Permissions(change) => self.permissions(change.as_deref()),
            Builtin::Hooks => match crate::commands::hooks::hooks_text(&self.settings, &self.agent, &self.home) {
                Ok(text) => print!("{text}"),
                Err(e) => println!("/hooks: {e}"),
            },
            Builtin::Resume(id) => self.resume(id).await,
        }
        Next::Continue
    }

    fn help(&self) {
        let mut text = String::from("Commands:\n");
        for (name, what) in slash::HELP {
            text.push_str(&format!("  {name:<26} {what}\n"));
        }
        if !self.commands.is_empty() {
            text.push_str("Custom commands:\n");
            for c in &self.commands {
                let name = match &c.argument_hint {
                    Some(hint) => format!("/{} {hint}", c.name),
                    None => format!("/{}", c.name),
                };
                let tools = if !c.allowed_tools.is_empty() && !c.tools_apply {
                    " [allowed-tools ignored: the project is untrusted]"
                } else {
                    ""
                };
                let alias = c.alias.as_ref().map(|a| format!(" [also /{a}]")).unwrap_or_default();
                text.push_str(&format!("  {name:<26} {} {}{alias}{tools}\n", c.description, c.origin()));
            }
        }
        text.push_str("Multi-line input: Alt-Enter, or end a line with \\. Ctrl-R searches the history.");
        println!("{text}");
    }

    async fn compact(&mut self, instructions: Option<String>, interrupt: &mut tokio::signal::unix::Signal) {
        let transcript = match self.transcript() {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return;
            }
        };
        let cancel = CancellationToken::new();
        let request = RunRequest::new(self.session.id.clone(), transcript)
            .history(self.session.history.clone())
            .cancel(cancel.clone())
            .observer(Arc::clone(&self.view) as Arc<dyn RunObserver>)
            .trace(self.trace.clone())
            .background(Some(self.background.clone()))
            .watch(Some(Arc::clone(&self.watch)))
            .env_file(Some(self.session.transcript.with_extension("env")));
        println!("Compacting…");
        let outcome = {
            let compaction = self.agent.compact(request, instructions);
            tokio::pin!(compaction);
            loop {
                tokio::select! {
                    outcome = &mut compaction => break outcome,
                    _ = interrupt.recv() => cancel.cancel(),
                }
            }
        };
        self.totals.add(&outcome.model_usage, u32::from(outcome.usage.is_some()));
        if outcome.compacted {
            println!("Compacted: {} messages → {}.", outcome.before, outcome.messages.len());
            self.session.history = outcome.messages;
        } else {
            println!("Nothing compacted ({} messages; a hook may have blocked it: see the trace).", outcome.before);
        }
    }

    async fn resume(&mut self, id: Option<String>) {
        let id = match id {
            Some(id) => id,
            None => match crate::commands::sessions::pick_other(&self.home, &self.launch_dir, Some(&self.session.id)) {
                Ok(Some(id)) => id,
                Ok(None) => {
                    println!("No session picked.");
                    return;
                }
                Err(e) => {
                    println!("/resume: {e}");
                    return;
                }
            },
        };
        let path = match crate::sessions::find(&self.home, &id) {
            Ok(Some(path)) => path,
            Ok(None) => {
                println!("/resume {id}: no such session");
                return;
            }
            Err(e) => {
                println!("/resume {id}: {e}");
                return;
            }
        };
        let loaded = match Transcript::load(&path) {
            Ok(loaded) => loaded,
            Err(e) => {
                println!("/resume {id}: {}: {e}", path.display());
                return;
            }
        };
        self.end_session(SessionEndReason::Other).await;
        println!("Resumed session {id} ({} messages).", loaded.messages.len());
        super::replay::show(&loaded.messages);
        self.session = SessionState {
            id,
            transcript: path,
            history: loaded.messages,
            deferred: loaded.deferred,
            source: SessionSource::Resume,
            started: false,
        };
        self.totals = Totals::default();
    }
}
