//! Elicitation and ElicitationResult: an MCP server asks the user for input during a tool call
//! (`elicitation/create`). Elicitation hooks may answer in the user's place (accept with
//! `content`, decline, cancel) before anyone is asked; ElicitationResult hooks see the answer
//! before it is sent back to the server and may replace it. The matcher filters on the server's
//! name.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Action, HookEvent, HookEventName};

/// Marker for the Elicitation event.
#[derive(Debug, Clone, Copy)]
pub struct Elicitation;

/// Marker for the ElicitationResult event.
#[derive(Debug, Clone, Copy)]
pub struct ElicitationResult;

/// Elicitation input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationInput {
    /// The server's name in the MCP configuration.
    pub mcp_server_name: String,
    /// What the server asks.
    pub message: String,
    /// `form` (fields per `requested_schema`) or `url` (open a page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The page to open (`url` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The server's id of the elicitation (`url` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// The JSON schema of the fields asked for (`form` mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
}

/// ElicitationResult input (Claude Code's fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationResultInput {
    /// The server's name in the MCP configuration.
    pub mcp_server_name: String,
    /// The server's id of the elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// `form` or `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The answer: `accept`, `decline` or `cancel`.
    pub action: String,
    /// The fields given with `accept`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

/// An Elicitation or ElicitationResult answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ElicitationAction {
    /// No answer: the user is asked (Elicitation) or the answer stands (ElicitationResult).
    #[default]
    Proceed,
    /// This answer is sent to the server.
    Respond {
        /// `accept`, `decline` or `cancel`.
        action: String,
        /// The fields, with `accept`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Value>,
    },
}

impl Action for ElicitationAction {
    fn decision(&self) -> &'static str {
        match self {
            ElicitationAction::Proceed => "proceed",
            ElicitationAction::Respond { action, .. } => match action.as_str() {
                "accept" => "accept",
                "decline" => "decline",
                _ => "cancel",
            },
        }
    }
    fn additional_context(&self) -> Option<&str> {
        None
    }
    fn traced(&self) -> Option<Value> {
        match self {
            ElicitationAction::Proceed => None,
            ElicitationAction::Respond { action, content } => {
                let fields: Option<Vec<&String>> =
                    content.as_ref().map(|c| c.as_object().map(|m| m.keys().collect()).unwrap_or_default());
                Some(serde_json::json!({"decision": "respond", "action": action, "content_fields": fields}))
            }
        }
    }
}

impl HookEvent for Elicitation {
    const NAME: HookEventName = HookEventName::Elicitation;
    type Input = ElicitationInput;
    type Action = ElicitationAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.mcp_server_name)
    }
}

impl HookEvent for ElicitationResult {
    const NAME: HookEventName = HookEventName::ElicitationResult;
    type Input = ElicitationResultInput;
    type Action = ElicitationAction;
    fn matcher_subject(input: &Self::Input) -> Option<&str> {
        Some(&input.mcp_server_name)
    }
}
