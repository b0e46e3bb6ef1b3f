//! UserPromptExpansion: a custom slash command (or an MCP prompt) expanded into a prompt, before
//! the expansion reaches the model. Hooks may add context after it, or block it (nothing is sent
//! to the model; the reason is shown to the user), as UserPromptSubmit hooks may. The matcher
//! filters on `command_name`.

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName, PromptAction};

/// Marker for the UserPromptExpansion event.
#[derive(Debug, Clone, Copy)]
pub struct UserPromptExpansion;

/// UserPromptExpansion input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserPromptExpansionInput {
    /// `slash_command` (a custom command) or `mcp_prompt`.
    pub expansion_type: String,
    /// The command's name, without the slash (`deploy`, `frontend:review`).
    pub command_name: String,
    /// What followed the name on the prompt line (`$ARGUMENTS`).
    pub command_args: String,
    /// Where the command comes from (`projectSettings`, `userSettings`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_source: Option<String>,
    /// The command line as typed (`/deploy staging`), as Claude Code sends it.
    pub prompt: String,
}

impl HookEvent for UserPromptExpansion {
    const NAME: HookEventName = HookEventName::UserPromptExpansion;
    type Input = UserPromptExpansionInput;
    type Action = PromptAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.command_name)
    }
}
