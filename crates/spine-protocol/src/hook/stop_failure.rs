//! StopFailure: the turn ended because the model request failed (after its retries). Observe
//! only: hooks log or alert; the run fails as it would without them. The matcher filters on
//! `error`.

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName, Observe};

/// Marker for the StopFailure event.
#[derive(Debug, Clone, Copy)]
pub struct StopFailure;

/// StopFailure input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopFailureInput {
    /// The kind of failure in Claude Code's words: `authentication_failed`, `rate_limit`,
    /// `overloaded`, `invalid_request`, `model_not_found`, `server_error`, `max_output_tokens`
    /// or `unknown`.
    pub error: String,
    /// The error as spine reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_details: Option<String>,
    /// The text of the last assistant message of the run, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
}

impl HookEvent for StopFailure {
    const NAME: HookEventName = HookEventName::StopFailure;
    type Input = StopFailureInput;
    type Action = Observe;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.error)
    }
}
