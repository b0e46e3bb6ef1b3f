//! Notification: the runtime emitted a notification for the user. Observe only.

use serde::{Deserialize, Serialize};

use super::{HookEvent, HookEventName, Observe};

/// Marker for the Notification event.
#[derive(Debug, Clone, Copy)]
pub struct Notification;

/// Notification input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotificationInput {
    /// The text for the user.
    pub message: String,
    /// A title, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The kind (e.g. `permission_prompt`).
    pub notification_type: String,
}

impl HookEvent for Notification {
    const NAME: HookEventName = HookEventName::Notification;
    type Input = NotificationInput;
    type Action = Observe;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.notification_type)
    }
}
