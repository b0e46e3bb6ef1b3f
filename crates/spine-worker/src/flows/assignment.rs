//! `execution_assignment` (docs/pipeline.md, "The worker"): `execution_started`, `prepare_turn` →
//! `compact_context`, then by `task_payload.mode`:
//!
//! - `deterministic_tool_call`: the call takes the whole tool-call pipeline of a run
//!   ([`spine_core::runner::Agent::run_tool_call`]): `review_tool_call` → PreToolUse → the
//!   permission policy of the worker's settings (nobody answers `ask`, so it is a refusal) →
//!   `tool_reviewed` progress → the tool runs with the collector as its progress sink
//!   (`tool_output` chunks) → `project_tool_result` → PostToolUse → `finalize_output` →
//!   `execution_complete {output, tool_invocations}`. Trace: `prepare_turn, compact_context,
//!   review_tool_call, execute, project_tool_result, finalize_output`, plus hook entries and
//!   the call's decision record.
//! - `skills_catalog_list`, `skills_load`, `skills_read_file`: a `skills` trace entry and
//!   `execution_complete {output}` (the catalog and the loaded skill as JSON text, the file's
//!   text). Trace: `prepare_turn, compact_context, skills`.
//! - `agent_run`: a whole agent loop ([`super::agent_run`]), which reports on its own.
//!
//! Failures go through `handle_error` into `execution_fail`; a canceled item ends with
//! `execution_canceled`. Cancellation is checked between stages; a running tool gets the token
//! (and the runner's grace period to stop before it is abandoned).
//!
//! Dependencies: [`super`] and its [`agent_run`](super::agent_run), [`crate::env`] (through
//! the item context).

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use spine_core::observer::NullObserver;
use spine_core::reports::ReportCollector;
use spine_core::runner::{SingleCall, SingleCallOutcome};
use spine_core::skills::{SkillCatalog, SkillError};
use spine_core::stages::finalize_output::finalize_output;
use spine_core::stages::handle_error::{ExecutionError, handle_error};
use spine_core::tool::ProgressSink;
use spine_protocol::assignment::{ProgramToolCall, RequestPayload, TaskPayload};
use spine_protocol::tool::{ErrorCode, ToolArguments, ToolCall};
use spine_protocol::trace::StageName;

use super::{ItemContext, prepare_round, visibility_of};

/// Runs an assignment to its terminal report.
pub async fn run(ctx: &ItemContext, payload: &RequestPayload, task: TaskPayload) {
    if let TaskPayload::AgentRun { prompt, model, max_turns } = &task {
        super::agent_run::run(ctx, payload, prompt, model.as_deref(), *max_turns).await;
        return;
    }
    let collector = ctx.collector();
    collector.started();
    if ctx.canceled() {
        return end(ctx, &collector, ExecutionError::Canceled(ctx.cancellation.summary()));
    }
    // The deterministic and skill flows use the prepared round only for its trace entries.
    if let Err(e) = prepare_round(ctx, payload).await {
        return end(ctx, &collector, e);
    }
    if ctx.canceled() {
        return end(ctx, &collector, ExecutionError::Canceled(ctx.cancellation.summary()));
    }
    let result = match task {
        TaskPayload::DeterministicToolCall { tool_call } => tool_flow(ctx, &collector, payload, tool_call).await,
        TaskPayload::SkillsCatalogList | TaskPayload::SkillsLoad { .. } | TaskPayload::SkillsReadFile { .. } => {
            skill_flow(ctx, &task).map(|output| collector.complete(&output))
        }
        TaskPayload::AgentRun { .. } => Err(ExecutionError::Runtime("internal: agent_run dispatched twice".into())),
    };
    if let Err(e) = result {
        end(ctx, &collector, e);
    }
}

/// Ends an assignment that did not complete: canceled, or failed through `handle_error`.
fn end(ctx: &ItemContext, collector: &ReportCollector, error: ExecutionError) {
    if ctx.canceled() || matches!(error, ExecutionError::Canceled(_)) {
        collector.canceled(&ctx.cancellation.summary());
        return;
    }
    let id = &ctx.identity;
    collector.fail(handle_error(&error, &id.logical_work_id, id.attempt_no, &ctx.trace));
}

/// The call id of a payload's call (`tool-call-<uuid>` when it has none).
pub fn call_id_of(call: &ProgramToolCall) -> String {
    call.call_id.clone().unwrap_or_else(|| format!("tool-call-{}", uuid::Uuid::new_v4()))
}

async fn tool_flow(
    ctx: &ItemContext,
    collector: &Arc<ReportCollector>,
    payload: &RequestPayload,
    call: ProgramToolCall,
) -> Result<(), ExecutionError> {
    let call_id = call_id_of(&call);
    let outcome = run_call(ctx, payload, &call, &call_id, Some(Arc::clone(collector)), None).await;
    match outcome.error {
        None => {
            let task = &payload.task;
            let output = finalize_output(&outcome.result.content, &task.conversation_id, &task.turn_id, &ctx.trace);
            collector.complete(&output.output);
            Ok(())
        }
        Some(e) if ctx.canceled() || e.code == ErrorCode::Canceled => {
            Err(ExecutionError::Canceled(format!("{}: {}", ctx.cancellation.summary(), e.message)))
        }
        Some(e) => Err(ExecutionError::Tool(e)),
    }
}

/// Runs a payload's tool call through the pipeline: review, PreToolUse, the permission policy
/// (nobody answers `ask`: it is a refusal), the tool, PostToolUse. `allowed_tool_names` only
/// narrows what the worker's settings allow.
pub async fn run_call(
    ctx: &ItemContext,
    payload: &RequestPayload,
    call: &ProgramToolCall,
    call_id: &str,
    reports: Option<Arc<ReportCollector>>,
    progress: Option<Arc<dyn ProgressSink>>,
) -> SingleCallOutcome {
    let session_id = format!("{}-a{}", ctx.identity.logical_work_id, ctx.identity.attempt_no);
    let transcript_path = ctx.env.workspace.root().join(".spine").join("sessions").join("worker-calls.jsonl");
    ctx.env
        .calls
        .run_tool_call(SingleCall {
            call: ToolCall {
                id: call_id.to_owned(),
                name: call.tool_name.clone(),
                arguments: ToolArguments::Json(call.arguments.clone()),
            },
            session_id,
            transcript_path,
            visibility: Some(visibility_of(payload)),
            cancel: ctx.cancellation.token.clone(),
            observer: Arc::new(NullObserver),
            trace: ctx.trace.clone(),
            progress,
            reports,
        })
        .await
}

fn skill_flow(ctx: &ItemContext, task: &TaskPayload) -> Result<String, ExecutionError> {
    let started = Instant::now();
    ctx.trace.stage(StageName::Skills, None, started, spine_core::fields! { "mode" => task.mode() });
    let (catalog, _) = SkillCatalog::scan(&ctx.env.skill_roots);
    let skill_error = |e: SkillError| match e {
        SkillError::NotFound(_) | SkillError::Inactive(_) | SkillError::InvalidFileReference { .. } => {
            ExecutionError::Validation(e.to_string())
        }
        SkillError::Read { .. } => ExecutionError::Runtime(e.to_string()),
    };
    match task {
        TaskPayload::SkillsCatalogList => {
            let skills: Vec<Value> = catalog
                .entries()
                .iter()
                .map(|e| {
                    json!({"name": e.name, "description": e.description, "source_kind": e.source_kind, "active": e.active})
                })
                .collect();
            Ok(json!({ "skills": skills }).to_string())
        }
        TaskPayload::SkillsLoad { skill_name } => {
            let skill = catalog.load(skill_name).map_err(skill_error)?;
            Ok(json!({
                "name": skill.entry.name,
                "description": skill.entry.description,
                "source_kind": skill.entry.source_kind,
                "skill_md": skill.skill_md,
                "files": skill.files,
            })
            .to_string())
        }
        TaskPayload::SkillsReadFile { skill_name, relative_path } => {
            catalog.read_file(skill_name, relative_path).map_err(skill_error)
        }
        TaskPayload::DeterministicToolCall { .. } | TaskPayload::AgentRun { .. } => {
            Err(ExecutionError::Runtime(format!("internal: {} is not a skill mode", task.mode())))
        }
    }
}
