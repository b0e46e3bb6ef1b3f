//! `prepare_turn`: normalise the transcript, assemble the system prompt, resolve the likely
//! model, estimate tokens. Returns the messages of the next model request: the system message,
//! then the transcript.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use spine_protocol::message::Message;

use crate::fields;
use crate::trace::Trace;

/// The built-in agent prompt (layer 1), overridable.
pub const DEFAULT_AGENT_PROMPT: &str = "You are spine, an agent that works in the user's workspace through tools. \
Use the tools to inspect before you change anything, keep changes minimal, and answer with what you did and found.";

/// Plain inputs of `prepare_turn`, built from a CLI run or an assignment payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnSettings {
    /// Replaces the built-in agent prompt.
    pub agent_prompt: Option<String>,
    /// The agent profile (`main` gets the operator layers).
    pub profile: String,
    /// Whether this agent is a subagent.
    pub is_subagent: bool,
    /// The model the run will use.
    pub likely_model: Option<String>,
}

impl Default for TurnSettings {
    fn default() -> Self {
        TurnSettings {
            agent_prompt: None,
            profile: "main".to_owned(),
            is_subagent: false,
            likely_model: None,
        }
    }
}

/// The product of `prepare_turn`.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedTurn {
    /// System message, then the transcript.
    pub messages: Vec<Message>,
    /// The resolved model.
    pub likely_model: Option<String>,
    /// The estimated size of the request.
    pub estimated_token_count: u64,
}

/// Prepares the next model request.
pub fn prepare_turn(
    settings: &TurnSettings,
    transcript: &[Message],
    trace: &Trace,
) -> PreparedTurn {
    let started = Instant::now();
    let prompt = format!(
        "Agent Prompt:\n{}",
        settings
            .agent_prompt
            .as_deref()
            .unwrap_or(DEFAULT_AGENT_PROMPT)
            .trim()
    );
    let mut messages = Vec::with_capacity(transcript.len() + 1);
    messages.push(Message::system(prompt));
    messages.extend(transcript.iter().cloned());
    let estimated_token_count = messages
        .iter()
        .map(|m| m.text().map_or(0, |t| t.split_whitespace().count() as u64) + 4)
        .sum();
    trace.stage(
        "prepare_turn",
        None,
        started,
        fields! {
            "message_count" => messages.len(),
            "estimated_token_count" => estimated_token_count,
            "likely_model" => settings.likely_model,
            "profile" => settings.profile,
            "is_subagent" => settings.is_subagent,
        },
    );
    PreparedTurn {
        messages,
        likely_model: settings.likely_model.clone(),
        estimated_token_count,
    }
}
