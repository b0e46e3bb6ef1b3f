//! `prepare_turn`: normalise the transcript, select skills, assemble the system prompt from its
//! twelve layers, resolve the likely model, estimate tokens. The product is the message list of
//! the next model request: the system message, then the transcript.
//!
//! Layers, in order, each written `"<Heading>:\n<body>"`, blank ones dropped, joined by blank
//! lines. What stays the same across turns and across runs of a project comes first, so that
//! the prompt's prefix is byte-identical and prompt caches (explicit breakpoints or automatic
//! prefix caching) hit:
//!
//! - stable: Agent Prompt (built in; with an output style that does not keep the coding
//!   instructions, [`STYLE_AGENT_PROMPT`]) · Soul (`SOUL.md`, else built in) · Memory Files
//!   (`CLAUDE.md`, `AGENTS.md` and their imports, loaded once per run by
//!   [`crate::memory_files`]) · User (`USER.md`, else built in) · Operator Prompt (profile
//!   `main`, not a subagent) · Active Skills (the listing of the skills the model may load,
//!   within its budget, under Claude Code's heading when the `Skill` tool is offered) · Output
//!   Style: NAME (the chosen style's instructions; not a subagent's);
//! - volatile: Memory (`.spine/memory/root.md`, which the model may write) · Conversation
//!   Summary (`.spine/conversations/<id>/summary.md`) · Selected Skills (a subagent's preloaded
//!   skills, then those the messages reference, chosen per turn) ·
//!   Context Imports · Operator State (the live workspace snapshot; profile `main`, last).
//!
//! [`PreparedTurn::stable_prefix`] is the stable part's length. Workspace files are read
//! through the workspace boundary. The operator-state snapshot is taken by the caller *before*
//!
//! Modules, by what each does: `settings` (the plain inputs: profile, model hints),
//! `prompt` (the twelve layers and the stable prefix), `operator_state` (the live workspace
//! snapshot, taken by the caller), `transcript` (payload messages into a transcript); this
//! file runs the stage and writes its trace entry.

mod operator_state;
mod prompt;
mod settings;
mod transcript;

use std::time::Instant;

use serde_json::{Value, json};
use spine_protocol::message::Message;
use spine_protocol::trace::StageName;

use crate::fields;
use crate::memory_files::MemoryFiles;
use crate::skills::{SkillCatalog, select_with};
use crate::tokens::{RequestEstimate, TokenCache, TokenEstimator, estimate_request};
use crate::trace::Trace;
use crate::workspace::Workspace;

pub use operator_state::{OperatorStateSource, operator_snapshot};
pub use prompt::{
    DEFAULT_AGENT_PROMPT, DEFAULT_SOUL, DEFAULT_USER, OPERATOR_PROMPT, ROOT_MEMORY_FILE, STYLE_AGENT_PROMPT,
    summary_path,
};
pub use settings::{AgentProfile, ModelContext, OutputStyle, TurnSettings};
pub use transcript::normalize_transcript;

use prompt::{SystemPrompt, assemble_prompt};

/// What `prepare_turn` reads besides the transcript.
pub struct TurnInputs<'a> {
    /// The prompt override, profile, model hints and imports of the turn.
    pub settings: &'a TurnSettings,
    /// The workspace (for SOUL.md, USER.md, memory, summary).
    pub workspace: &'a Workspace,
    /// The skills of the run.
    pub skills: &'a SkillCatalog,
    /// The operator-state snapshot, taken before the prompt is assembled.
    pub operator_state: Option<&'a Value>,
    /// The memory files of the run (`CLAUDE.md`…), loaded once per run; `None`: no such layer.
    pub memory: Option<&'a MemoryFiles>,
    /// The token estimator.
    pub estimator: &'a dyn TokenEstimator,
    /// The tool definitions the request carries (counted in the estimate).
    pub tools: &'a [spine_protocol::tool::ToolSpec],
}

/// The product of `prepare_turn`.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedTurn {
    /// System message, then the transcript.
    pub messages: Vec<Message>,
    /// The byte length of the system message's stable prefix: the layers that stay the same
    /// across turns and across runs of the same project (see the module doc), which providers
    /// with explicit prompt caching mark as a cache breakpoint.
    pub stable_prefix: usize,
    /// The resolved model.
    pub likely_model: Option<String>,
    /// The estimated size of the request.
    pub estimated_token_count: u64,
    /// The skills loaded into the prompt.
    pub selected_skill_names: Vec<String>,
}

/// Prepares the next model request. With a cache, only messages new since the last call are
/// counted.
pub fn prepare_turn(
    inputs: &TurnInputs<'_>,
    transcript: &[Message],
    cache: Option<&mut TokenCache>,
    trace: &Trace,
) -> PreparedTurn {
    let started = Instant::now();
    let s = inputs.settings;
    let selection = select_with(inputs.skills, &s.preloaded_skills, transcript);
    let SystemPrompt { text: system, stable_len, listing } = assemble_prompt(inputs, &selection);
    let system_tokens = inputs.estimator.count_text(&system) + 4;
    let RequestEstimate { transcript_tokens, tool_tokens, anchored } =
        estimate_request(inputs.estimator, transcript, inputs.tools, cache);
    let mut messages = Vec::with_capacity(transcript.len() + 1);
    messages.push(Message::system(system));
    messages.extend(transcript.iter().cloned());
    let likely_model = s.model_context.likely_model().map(str::to_owned);
    let active: Vec<&str> = inputs.skills.active().map(|e| e.name.as_str()).collect();
    let selected: Vec<String> = selection.selected.iter().map(|l| l.entry.name.clone()).collect();
    // The provider's count of the last request, plus what is new, when there is one.
    let estimated_token_count = anchored.unwrap_or(system_tokens + transcript_tokens + tool_tokens);
    let mut f = fields! {
        "message_count" => messages.len(),
        "estimated_token_count" => estimated_token_count,
        "tool_tokens" => tool_tokens,
        "estimator" => inputs.estimator.name(),
        "anchored_on_usage" => anchored.is_some(),
        "likely_model" => likely_model,
        "profile" => s.profile.as_str(),
        "is_subagent" => s.is_subagent,
        "allowed_tool_names" => s.allowed_tool_names,
        "active_skill_names" => active,
        "selected_skill_names" => selected,
    };
    if !listing.shortened.is_empty() {
        f.insert(
            "skill_listing".into(),
            json!({"budget": listing.budget, "full_size": listing.full_size, "without_description": listing.shortened}),
        );
    }
    if !selection.skipped.is_empty() {
        f.insert("skipped_skills".into(), json!(selection.skipped));
    }
    if let Some(memory) = inputs.memory.filter(|m| !m.is_empty()) {
        f.insert("memory_files".into(), memory.trace_value());
    }
    trace.stage(StageName::PrepareTurn, None, started, f);
    PreparedTurn {
        messages,
        stable_prefix: stable_len,
        likely_model,
        estimated_token_count,
        selected_skill_names: selected,
    }
}

#[cfg(test)]
mod tests;
