//! SessionStart: once, before the first prompt. May add context for the model, and name the
//! files FileChanged hooks watch (`watchPaths`, absolute paths).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Action, ContextAction, HookEvent, HookEventName};

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

/// A SessionStart answer: context for the model, and the paths FileChanged hooks watch from
/// now on (Claude Code's `watchPaths`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionStartAction {
    /// Text for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
    /// Absolute paths FileChanged hooks watch (the answers of a firing are joined, in
    /// configuration order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_paths: Option<Vec<PathBuf>>,
}

impl SessionStartAction {
    /// Context for the model.
    pub fn context(text: impl Into<String>) -> Self {
        SessionStartAction { additional_context: Some(text.into()), watch_paths: None }
    }
}

impl From<ContextAction> for SessionStartAction {
    fn from(action: ContextAction) -> Self {
        SessionStartAction { additional_context: action.additional_context, watch_paths: None }
    }
}

impl Action for SessionStartAction {
    fn decision(&self) -> &'static str {
        match (&self.additional_context, &self.watch_paths) {
            (_, Some(_)) => "watch",
            (Some(_), None) => "context",
            (None, None) => "proceed",
        }
    }
    fn additional_context(&self) -> Option<&str> {
        self.additional_context.as_deref()
    }
}

impl HookEvent for SessionStart {
    const NAME: HookEventName = HookEventName::SessionStart;
    type Input = SessionStartInput;
    type Action = SessionStartAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(input.source.as_str())
    }
}
