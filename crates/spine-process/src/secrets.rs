//! Provider keys kept out of child processes.
//!
//! Contract:
//! - [`PROVIDER_KEYS`] lists the environment variables that hold model-provider credentials
//!   (spine's own `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `OPENAI_API_KEY`, and the
//!   `*_API_KEY` of other well-known providers).
//! - [`scrub`] removes each of them from a command's environment **when it would be
//!   inherited** from spine's own: every child spine starts (Bash, `exec_command`,
//!   `process_exec`, command and persistent hooks, MCP servers) goes through
//!   [`GroupChild::spawn`](crate::GroupChild::spawn), which calls it. A value set on the
//!   command explicitly (an MCP server's `env` in its configuration, a line of the run's env
//!   file) is the configuration's own choice and stays.
//! - A key named in the process-wide pass-through set ([`set_passthrough`], from the
//!   `env_passthrough` setting) is inherited as before.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::sync::{PoisonError, RwLock};

use tokio::process::Command;

/// The environment variables holding provider credentials, removed from children.
pub const PROVIDER_KEYS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "COHERE_API_KEY",
    "PERPLEXITY_API_KEY",
];

static PASSTHROUGH: RwLock<BTreeSet<String>> = RwLock::new(BTreeSet::new());

/// Whether `name` is one of the [`PROVIDER_KEYS`].
pub fn is_provider_key(name: &str) -> bool {
    PROVIDER_KEYS.contains(&name)
}

/// Replaces the set of provider keys children inherit after all (the `env_passthrough`
/// setting of the run). Names outside [`PROVIDER_KEYS`] have no effect.
pub fn set_passthrough<I, S>(names: I)
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let names: BTreeSet<String> = names.into_iter().map(Into::into).collect();
    *PASSTHROUGH.write().unwrap_or_else(PoisonError::into_inner) = names;
}

/// The provider keys children inherit after all.
pub fn passthrough() -> BTreeSet<String> {
    PASSTHROUGH.read().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Removes the inherited provider keys (not passed through, not set explicitly) from
/// `command`'s environment.
pub fn scrub(command: &mut Command) {
    let explicit: BTreeSet<String> = command
        .as_std()
        .get_envs()
        .filter(|(_, value)| value.is_some())
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    let passthrough = PASSTHROUGH.read().unwrap_or_else(PoisonError::into_inner);
    for key in PROVIDER_KEYS {
        if !passthrough.contains(*key) && !explicit.contains(*key) {
            command.env_remove(OsStr::new(key));
        }
    }
}
