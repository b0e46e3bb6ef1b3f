//! What may fire before a run's prompt reaches the model, besides SessionStart and
//! UserPromptSubmit: Setup (`--init`, `--init-only`, `--maintenance`: once, before SessionStart)
//! and UserPromptExpansion (the prompt is a custom command's expansion: before
//! UserPromptSubmit). Each returns the contexts its hooks added, or how the run ends: a hook
//! failing closed fails the run, `continue: false` halts it, an expansion's block ends it
//! `blocked` with Claude Code's message (the original command line after it).

use spine_protocol::hook::{SessionEndReason, SetupInput, UserPromptExpansionInput};
use spine_protocol::run::RunSubtype;

use super::Run;
use super::finish::End;
use crate::hooks::events::UserPromptSubmitOutcome;
use crate::stages::handle_error::ExecutionError;

impl Run<'_> {
    /// Fires Setup when the request asked for it.
    pub(super) async fn setup_hooks(&mut self, trigger: Option<String>) -> Result<Vec<String>, End> {
        let Some(trigger) = trigger else {
            return Ok(Vec::new());
        };
        let setup = self.hooks.setup(&self.hook_ctx, SetupInput { trigger }).await;
        match self.ended_at_start(&setup) {
            Some(end) => Err(end),
            None => Ok(setup.contexts),
        }
    }

    /// Fires UserPromptExpansion when the prompt is a custom command's expansion.
    pub(super) async fn expansion_hooks(
        &mut self,
        expansion: Option<UserPromptExpansionInput>,
    ) -> Result<Vec<String>, End> {
        let Some(expansion) = expansion else {
            return Ok(Vec::new());
        };
        let typed = expansion.prompt.clone();
        let merged = self.hooks.user_prompt_expansion(&self.hook_ctx, expansion).await;
        if self.cancel.is_cancelled() {
            return Err(End::canceled());
        }
        if let Some(halt) = merged.halt {
            return Err(End::halted(halt.stop_reason));
        }
        match merged.outcome {
            UserPromptSubmitOutcome::Proceed => Ok(merged.contexts),
            UserPromptSubmitOutcome::Blocked { reason, hook_id } => {
                let text =
                    format!("UserPromptExpansion operation blocked by hook:\n{reason}\n\nOriginal prompt: {typed}");
                let mut end = End::new(RunSubtype::Blocked, text, SessionEndReason::Blocked);
                end.stop_reason = Some(format!("command expansion blocked by hook {hook_id}: {reason}"));
                Err(end)
            }
            UserPromptSubmitOutcome::Failed(failure) => Err(End::failed(ExecutionError::Hook(failure))),
        }
    }
}
