//! Invoking a skill: the `Skill` tool's lookup (the model) and `/name` in a chat (the user).
//!
//! Contract of [`SkillSession::invoke`]:
//! - The name may start with `/`; it is looked up with [`SkillCatalog::find`] (name, alias,
//!   a plugin skill's own name when only one plugin has it).
//! - The model may not invoke a skill whose front matter sets `disable-model-invocation`, the
//!   user not one that sets `user-invocable: false`; an inactive (curated) skill is refused to
//!   both. The refusals carry Claude Code's wording where it has one
//!   ([`InvokeError::UserOnly`], [`InvokeError::Unknown`]).
//! - The invocation's text is [`render`](super::render)'s: the body without its front matter,
//!   under `Base directory for this skill: <dir>`, with the arguments filled in.

use std::sync::Arc;

use thiserror::Error;

use super::{SkillCatalog, SkillEntry, SkillError, SkillVars, render};

/// Who invokes a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invoker {
    /// The model, through the `Skill` tool.
    Model,
    /// The user, typing `/name`.
    User,
}

/// Why a skill cannot be invoked.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InvokeError {
    /// No skill of that name.
    #[error("Unknown skill: {0}")]
    Unknown(String),
    /// The model asked for a skill only the user may run.
    #[error(
        "Skill {0} cannot be used with the Skill tool due to disable-model-invocation. Ask the user to run /{0} \
         themselves: it cannot be invoked via the Skill tool. Do not replicate this skill's workflow by other means; \
         it is reserved for explicit user invocation."
    )]
    UserOnly(String),
    /// The user asked for a skill only the model may load.
    #[error("/{0} is not user-invocable (its front matter sets `user-invocable: false`)")]
    ModelOnly(String),
    /// The skill is listed but not active (a curated root).
    #[error("Skill {0} is not active")]
    Inactive(String),
    /// Its `SKILL.md` could not be read.
    #[error("{0}")]
    Read(String),
}

/// What an invocation gives: the skill and the text the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The skill invoked.
    pub entry: SkillEntry,
    /// `Base directory for this skill: …` and the rendered body.
    pub text: String,
}

/// A run's skills and the values an invocation fills in: what the `Skill` tool reads from its
/// [`ToolContext`](crate::tool::ToolContext).
#[derive(Debug, Clone, Default)]
pub struct SkillSession {
    /// The run's catalog.
    pub catalog: Arc<SkillCatalog>,
    /// The session's variables.
    pub vars: SkillVars,
}

impl SkillSession {
    /// Invokes the skill `name` for `by`, with `args` (`None`: none given; see the module
    /// documentation).
    pub fn invoke(&self, name: &str, args: Option<&str>, by: Invoker) -> Result<Invocation, InvokeError> {
        let asked = name.trim().trim_start_matches('/');
        let entry = self.catalog.find(asked).ok_or_else(|| InvokeError::Unknown(asked.to_owned()))?;
        if !entry.active {
            return Err(InvokeError::Inactive(entry.name.clone()));
        }
        match by {
            Invoker::Model if entry.meta.disable_model_invocation => {
                return Err(InvokeError::UserOnly(entry.name.clone()));
            }
            Invoker::User if !entry.meta.user_invocable => return Err(InvokeError::ModelOnly(entry.name.clone())),
            Invoker::Model | Invoker::User => {}
        }
        let body = self.catalog.body(&entry.name).map_err(|e| match e {
            SkillError::NotFound(n) => InvokeError::Unknown(n),
            SkillError::Inactive(n) => InvokeError::Inactive(n),
            other => InvokeError::Read(other.to_string()),
        })?;
        Ok(Invocation { entry: entry.clone(), text: render(entry, &body, args, &self.vars) })
    }
}
