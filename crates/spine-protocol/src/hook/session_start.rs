//! SessionStart: once, before the first prompt. May add context for the model.

use serde::{Deserialize, Serialize};

use super::{ContextAction, HookEvent, HookEventName};

/// Marker for the SessionStart event.
#[derive(Debug, Clone, Copy)]
pub struct SessionStart;

/// Why the session started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionSource {
    /// A new run.
    Startup,
    /// `--resume`.
    Resume,
    /// After a compaction of the context.
    Compact,
    /// After the conversation was cleared.
    Clear,
}

impl SessionSource {
    /// The value matchers see.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionSource::Startup => "startup",
            SessionSource::Resume => "resume",
            SessionSource::Compact => "compact",
            SessionSource::Clear => "clear",
        }
    }
}

/// SessionStart input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStartInput {
    /// Why the session started.
    pub source: SessionSource,
    /// The model of the run, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl HookEvent for SessionStart {
    const NAME: HookEventName = HookEventName::SessionStart;
    type Input = SessionStartInput;
    type Action = ContextAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(input.source.as_str())
    }
}
