//! Setup: `spine --init`, `--init-only` or `--maintenance` runs the project's one-time setup
//! hooks (install dependencies, migrate a database) before the session. Hooks may add context
//! for the session; a failing hook that fails closed stops the run. The matcher filters on
//! `trigger`.

use serde::{Deserialize, Serialize};

use super::{ContextAction, HookEvent, HookEventName};

/// Marker for the Setup event.
#[derive(Debug, Clone, Copy)]
pub struct Setup;

/// Setup input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupInput {
    /// `init` (`--init`, `--init-only`) or `maintenance` (`--maintenance`).
    pub trigger: String,
}

impl HookEvent for Setup {
    const NAME: HookEventName = HookEventName::Setup;
    type Input = SetupInput;
    type Action = ContextAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.trigger)
    }
}
