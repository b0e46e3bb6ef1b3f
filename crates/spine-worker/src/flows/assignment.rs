//! `execution_assignment` (seed A.7): `execution_started`, `prepare_turn` →
//! `compact_context`, then by `task_payload.mode`:
//!
//! - `deterministic_tool_call`: `review_tool_call` → `tool_reviewed` progress → the tool runs
//!   with the collector as its progress sink (`tool_output` chunks) → `project_tool_result` →
//!   `finalize_output` → `execution_complete {output, tool_invocations}`. Trace:
//!   `prepare_turn, compact_context, review_tool_call, project_tool_result, finalize_output`.
//! - `skills_catalog_list`, `skills_load`, `skills_read_file`: a `skills` trace entry and
//!   `execution_complete {output}` (the catalog and the loaded skill as JSON text, the file's
//!   text). Trace: `prepare_turn, compact_context, skills`.
//! - `agent_run`: a whole agent loop ([`crate::agent_run`]), which reports on its own.
//!
//! Failures go through `handle_error` into `execution_fail`; a canceled item ends with
//! `execution_canceled`. Cancellation is checked between stages; a running tool gets the token
//! (and [`TOOL_CANCEL_GRACE`] to stop before it is abandoned).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spine_core::reports::ReportCollector;
use spine_core::skills::{SkillCatalog, SkillError};
use spine_core::stages::finalize_output::finalize_output;
use spine_core::stages::handle_error::{ExecutionError, handle_error};
use spine_core::stages::project_tool_result::project_tool_result;
use spine_core::stages::review_tool_call::review_tool_call;
use spine_core::tool::{ProgressSink, ToolContext};
use spine_protocol::assignment::{ProgramToolCall, RequestPayload, TaskPayload};
use spine_protocol::tool::{ErrorCode, ToolArguments, ToolCall, ToolError};

use super::{ItemContext, prepare_round, visibility_of};

/// How long a canceled tool may take to stop on its own before it is abandoned.
pub const TOOL_CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Runs an assignment to its terminal report.
pub async fn run(ctx: &ItemContext, payload: &RequestPayload, task: TaskPayload) {
    if let TaskPayload::AgentRun { prompt, model, max_turns } = &task {
        crate::agent_run::run(ctx, payload, prompt, model.as_deref(), *max_turns).await;
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
    let env = &ctx.env;
    let call_id = call_id_of(&call);
    let name = call.tool_name.clone();
    let visibility = visibility_of(payload);
    if let Err(e) = review_tool_call(&env.tools, &visibility, &name, Some(&call_id), &ctx.trace) {
        collector.tool_failed(&call_id, &name, &call.arguments, &e.to_tool_error());
        return Err(ExecutionError::Review(e));
    }
    if ctx.canceled() {
        return Err(ExecutionError::Canceled(ctx.cancellation.summary()));
    }
    let model_call =
        ToolCall { id: call_id.clone(), name: name.clone(), arguments: ToolArguments::Json(call.arguments.clone()) };
    let prepared = match env.tools.prepare(&model_call, env.workspace.root()) {
        Ok(p) => p,
        Err(e) => {
            collector.tool_failed(&call_id, &name, &call.arguments, &e);
            return Err(ExecutionError::Tool(e));
        }
    };
    let arguments = Value::Object((*prepared.args).clone());
    collector.tool_reviewed(&call_id, &name, &arguments);
    let tool = Arc::clone(env.tools.tool(prepared.handle));
    let mut tool_ctx = ToolContext::new(Arc::clone(&env.workspace), &call_id, &name);
    tool_ctx.cancel = ctx.cancellation.token.clone();
    tool_ctx.progress = Some(Arc::clone(collector) as Arc<dyn ProgressSink>);
    let result = execute(ctx, tool.execute(&prepared.args, &tool_ctx)).await;
    match result {
        Ok(response) => {
            let projection = project_tool_result(tool.as_ref(), &response, &call_id, &ctx.trace);
            collector.tool_completed(&call_id, &name, &projection);
            let task = &payload.task;
            let output = finalize_output(&projection.content, &task.conversation_id, &task.turn_id, &ctx.trace);
            collector.complete(&output.output);
            Ok(())
        }
        Err(e) if ctx.canceled() => {
            Err(ExecutionError::Canceled(format!("{}: {}", ctx.cancellation.summary(), e.message)))
        }
        Err(e) => {
            collector.tool_failed(&call_id, &name, &arguments, &e);
            Err(ExecutionError::Tool(e))
        }
    }
}

/// Awaits a tool; once the item is canceled, gives it [`TOOL_CANCEL_GRACE`] to stop.
pub async fn execute(
    ctx: &ItemContext,
    run: impl std::future::Future<Output = Result<Value, ToolError>>,
) -> Result<Value, ToolError> {
    tokio::pin!(run);
    tokio::select! {
        r = &mut run => r,
        () = ctx.cancellation.token.cancelled() => match tokio::time::timeout(TOOL_CANCEL_GRACE, &mut run).await {
            Ok(r) => r,
            Err(_) => Err(ToolError::new(ErrorCode::Canceled, "the tool did not stop after cancellation; abandoned")),
        },
    }
}

fn skill_flow(ctx: &ItemContext, task: &TaskPayload) -> Result<String, ExecutionError> {
    let started = Instant::now();
    ctx.trace.stage("skills", None, started, spine_core::fields! { "mode" => task.mode() });
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
