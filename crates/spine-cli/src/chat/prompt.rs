//! Running a prompt in an interactive session: a typed line, a custom command's expansion, or
//! the turn a wake starts.
//!
//! Contract: each prompt runs to its end like `spine -p` runs one (the same hooks, rules,
//! approvals, transcript and trace) with the conversation so far, the session's background
//! hooks and watch; Ctrl-C (SIGINT) cancels it and the session keeps what was done. Afterwards
//! the conversation is the run's messages without the system message, the usage is added to
//! the totals, and an outcome other than a success or a deferral is shown on one line. A
//! custom command's `allowed-tools` widen the permission rules for its prompt only.

use std::sync::Arc;

use spine_core::CancellationToken;
use spine_core::observer::RunObserver;
use spine_core::runner::{RunOutcome, RunRequest, SessionTurn};
use spine_core::session::Transcript;
use spine_protocol::message::Message;
use spine_protocol::run::RunSubtype;

use super::{Chat, custom};

impl Chat {
    /// Runs one prompt (with `extra_allow` rules for it, a custom command's `allowed-tools`; none
    /// for the turn a wake starts); Ctrl-C (SIGINT) cancels it.
    pub(super) async fn prompt(
        &mut self,
        prompt: Option<String>,
        extra_allow: Vec<spine_core::permission::PermissionRule>,
        interrupt: &mut tokio::signal::unix::Signal,
    ) -> Option<RunOutcome> {
        let transcript = match self.transcript() {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return None;
            }
        };
        let cancel = CancellationToken::new();
        self.approver.set_cancel(cancel.clone());
        let saved_policy = (!extra_allow.is_empty()).then(|| {
            let widened = self.agent.policy.with_allowed(extra_allow);
            std::mem::replace(&mut self.agent.policy, widened)
        });
        let turn = if self.session.started { SessionTurn::Later } else { SessionTurn::First };
        let request = RunRequest::new(self.session.id.clone(), transcript)
            .prompt(prompt)
            .setup(self.setup.take())
            .expansion(self.expansion.take())
            .invoked_skill(self.invoked_skill.clone())
            .contexts(std::mem::take(&mut self.carried))
            .history(self.session.history.clone())
            .deferred(self.session.deferred.take())
            .source(self.session.source)
            .session_turn(turn)
            .cancel(cancel.clone())
            .observer(match &self.telemetry {
                Some(telemetry) => Arc::new(crate::render::Fanout(vec![
                    Arc::clone(&self.view) as Arc<dyn RunObserver>,
                    telemetry.begin(),
                ])),
                None => Arc::clone(&self.view) as Arc<dyn RunObserver>,
            })
            .trace(self.trace.clone())
            .background(Some(self.background.clone()))
            .watch(Some(Arc::clone(&self.watch)))
            .env_file(Some(self.session.transcript.with_extension("env")));
        self.status.reset();
        self.status.resume();
        self.totals.started.get_or_insert_with(std::time::Instant::now);
        let outcome = {
            let run = self.agent.run(request);
            tokio::pin!(run);
            loop {
                tokio::select! {
                    outcome = &mut run => break outcome,
                    _ = interrupt.recv() => cancel.cancel(),
                }
            }
        };
        self.status.suspend();
        self.last_request_end = Some(std::time::Instant::now());
        if let Some(telemetry) = &self.telemetry {
            telemetry.end();
        }
        if let Some(policy) = saved_policy {
            self.agent.policy = policy;
        }
        self.session.started = true;
        self.session.history = conversation(&outcome.messages);
        self.totals.prompts += 1;
        self.totals.add(&outcome.model_usage, outcome.num_turns);
        match outcome.subtype {
            RunSubtype::Success | RunSubtype::Deferred => {}
            RunSubtype::Canceled => println!("⏹ canceled (the conversation keeps what was done)"),
            RunSubtype::Blocked => println!("⏹ blocked: {}", outcome.result),
            RunSubtype::ErrorMaxTurns | RunSubtype::ErrorMaxBudgetUsd | RunSubtype::ErrorDuringExecution => {
                println!("✗ error: {}", outcome.result)
            }
        }
        if let Some(reason) = &outcome.stop_reason {
            println!("stopped: {reason}");
        }
        Some(outcome)
    }

    pub(super) fn transcript(&self) -> Result<Transcript, String> {
        if !self.persist {
            return Ok(Transcript::discard(&self.session.transcript));
        }
        Transcript::open(&self.session.transcript)
            .map_err(|e| format!("cannot write the session transcript {}: {e}", self.session.transcript.display()))
    }

    pub(super) async fn custom(&mut self, name: &str, arguments: &str, interrupt: &mut tokio::signal::unix::Signal) {
        let Some(command) = custom::find(&self.commands, name).cloned() else {
            println!("unknown command /{name} (/help lists the commands)");
            return;
        };
        let config = &self.agent.config;
        match custom::expand(&command, arguments, &config.workspace, &config.cwd, &self.agent.policy) {
            Ok(prompt) => {
                let rules = custom::allow_rules(&command);
                self.expansion = Some(custom::expansion(&command, arguments));
                self.prompt(Some(prompt), rules, interrupt).await;
            }
            Err(e) => println!("/{name}: {e}"),
        }
    }
}

/// A run's messages without the system message: the conversation the next prompt continues.
fn conversation(messages: &[Message]) -> Vec<Message> {
    messages.iter().filter(|m| !matches!(m, Message::System { .. })).cloned().collect()
}
