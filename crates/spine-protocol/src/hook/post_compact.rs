//! PostCompact: after a compaction. Observe only.

use serde::{Deserialize, Serialize};

use super::{CompactTrigger, HookEvent, HookEventName, Observe};

/// Marker for the PostCompact event.
#[derive(Debug, Clone, Copy)]
pub struct PostCompact;

/// PostCompact input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostCompactInput {
    /// What started it.
    pub trigger: CompactTrigger,
    /// The note that replaced the dropped messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_summary: Option<String>,
}

impl HookEvent for PostCompact {
    const NAME: HookEventName = HookEventName::PostCompact;
    type Input = PostCompactInput;
    type Action = Observe;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(input.trigger.as_str())
    }
}
