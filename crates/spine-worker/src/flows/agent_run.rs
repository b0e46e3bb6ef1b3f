//! The `agent_run` mode of an `execution_assignment`: a whole [`Agent::run`] for one
//! assignment, with the agent the worker's [`AgentFactory`](crate::agents::AgentFactory) builds
//! (see [`crate::agents`]), reporting through the delivery's collector (`execution_started` …
//! `execution_complete|fail|canceled`, tool progress included), canceled through the delivery's
//! token.
//!
//! Dependencies: [`super`] (the item context and the payload's turn settings and visible
//! tools) and [`crate::agents`] (what the agent is built from).
//!
//! [`Agent::run`]: spine_core::runner::Agent::run

use std::path::{Path, PathBuf};

use serde_json::Value;
use spine_core::runner::RunRequest;
use spine_core::session::Transcript;
use spine_core::stages::handle_error::{ExecutionError, handle_error};
use spine_core::stages::prepare_turn::normalize_transcript;
use spine_protocol::assignment::RequestPayload;

use super::{ItemContext, turn_settings, visibility_of};
use crate::agents::AgentSpec;

/// Runs an `agent_run` assignment to its terminal report.
pub async fn run(
    ctx: &ItemContext,
    payload: &RequestPayload,
    prompt: &str,
    model: Option<&str>,
    max_turns: Option<u32>,
) {
    let collector = ctx.collector();
    let spec = AgentSpec {
        model: model.map(str::to_owned),
        max_turns,
        turn: turn_settings(payload),
        visibility: visibility_of(payload),
        budget_hints: payload.budget_hints.as_ref().and_then(|h| serde_json::to_value(h).ok()),
    };
    let values: Vec<Value> =
        payload.context_messages.iter().map(|m| serde_json::json!({"role": m.role, "content": m.content})).collect();
    let history = normalize_transcript(&values).map_err(ExecutionError::Validation);
    let built = ctx.env.agents.build(spec).map_err(|e| ExecutionError::Validation(e.to_string()));
    let (agent, history) = match built.and_then(|agent| history.map(|h| (agent, h))) {
        Ok(ready) => ready,
        Err(error) => {
            collector.started();
            let id = &ctx.identity;
            collector.fail(handle_error(&error, &id.logical_work_id, id.attempt_no, &ctx.trace));
            return;
        }
    };
    let session_id = session_id(&ctx.identity.mailbox_item_id, ctx.identity.attempt_no);
    let transcript = Transcript::discard(transcript_path(ctx.env.workspace.root(), &session_id));
    agent
        .run(
            RunRequest::new(session_id, transcript)
                .prompt(Some(prompt.to_owned()))
                .history(history)
                .cancel(ctx.cancellation.token.clone())
                .trace(ctx.trace.clone())
                .reports(Some(collector)),
        )
        .await;
}

fn session_id(item_id: &str, attempt: u32) -> String {
    let safe: String =
        item_id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("{safe}-a{attempt}")
}

fn transcript_path(root: &Path, session_id: &str) -> PathBuf {
    root.join(".spine").join("sessions").join(format!("{session_id}.jsonl"))
}
