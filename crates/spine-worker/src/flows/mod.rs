//! What the worker does with one claimed item, by kind (docs/pipeline.md, "The worker"). Every path ends with
//! exactly one terminal report.
//!
//! | item | flow |
//! | --- | --- |
//! | `execution_assignment` | [`assignment`]: `prepare_request` → `compact_context` → the mode's flow; `agent_run` in [`agent_run`] |
//! | `agent_program_request` | [`program`]: `prepare_round` or `execute_program_tool` |
//! | `resource_close_request` | [`close`] |
//! | undecodable | [`reject`]: `validation_error` or `unsupported_request_kind` |
//! | past its last delivery | [`exhausted`]: a failure report, then the dead-letter place |
//!
//! The stages are spine-core's; this module only feeds them payload data and turns their
//! results into reports.
//!
//! Dependencies: [`crate::env`] and [`crate::agents`] (what items share), [`crate::decode`]
//! (the item and its identity), [`crate::mailbox`] (the execution records, for close
//! requests), [`crate::running`] (cancellation) and [`crate::sink`] (where reports go). Never
//! the worker loop: [`crate::worker`] calls the flows, not the other way round.

pub mod agent_run;
pub mod assignment;
pub mod close;
pub mod program;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spine_core::reports::{ReportCollector, WorkIdentity};
use spine_core::skills::SkillCatalog;
use spine_core::stages::compact_context::compact_context;
use spine_core::stages::handle_error::ExecutionError;
use spine_core::stages::prepare_request::{Compaction, RequestInputs, ThresholdSources, prepare_request};
use spine_core::stages::prepare_turn::{AgentProfile, ModelContext, TurnSettings, normalize_transcript};
use spine_core::stages::review_tool_call::Visibility;
use spine_core::tokens::{TokenEstimator, estimator_for};
use spine_core::trace::Trace;
use spine_protocol::assignment::{ItemRequest, MailboxItem, RequestPayload};
use spine_protocol::message::Message;
use spine_protocol::report::{FailureKind, FailurePayload, ReportBody};
use spine_protocol::trace::StageName;

use crate::decode::{Identity, Rejection};
use crate::env::Environment;
use crate::mailbox::Executions;
use crate::running::{Cancellation, RunningItems};
use crate::sink::MailboxSink;

/// Everything a flow needs about its delivery.
pub struct ItemContext {
    /// Shared by every item.
    pub env: Arc<Environment>,
    /// The mailbox's execution records (close requests mark and watch their target there).
    pub executions: Arc<dyn Executions>,
    /// The items running here (close requests cancel them directly when they can).
    pub running: Arc<RunningItems>,
    /// Where reports go.
    pub sink: Arc<MailboxSink>,
    /// Who the reports are about.
    pub identity: WorkIdentity,
    /// Cancels this item.
    pub cancellation: Cancellation,
    /// The item's stage trace.
    pub trace: Trace,
    /// How long a close request waits for its target to end.
    pub close_wait: Duration,
}

impl ItemContext {
    /// A report collector for this delivery.
    pub fn collector(&self) -> Arc<ReportCollector> {
        Arc::new(ReportCollector::new(self.identity.clone(), Arc::clone(&self.sink) as _))
    }

    /// Whether the item was canceled.
    pub fn canceled(&self) -> bool {
        self.cancellation.is_cancelled()
    }
}

/// Runs a decoded item.
pub async fn run(ctx: &ItemContext, item: MailboxItem) {
    match item.request {
        ItemRequest::Execution { payload, task } => assignment::run(ctx, &payload, task).await,
        ItemRequest::PrepareRound { payload } => program::prepare_round(ctx, &payload).await,
        ItemRequest::ExecuteProgramTool { payload, call } => program::execute_program_tool(ctx, &payload, call).await,
        ItemRequest::Close(close) => close::run(ctx, &item.item_id, &close).await,
    }
}

/// Reports why an item is not run: `execution_fail` (or `agent_program_failed` for program
/// requests) with `validation_error` or `unsupported_request_kind`.
pub fn reject(ctx: &ItemContext, identity: &Identity, rejection: &Rejection) {
    let (kind, code) = match rejection {
        Rejection::Invalid(_) => (FailureKind::ValidationError, "validation_error"),
        Rejection::Unsupported(_) => (FailureKind::UnsupportedRequestKind, "unsupported_request_kind"),
    };
    let summary = rejection.to_string();
    ctx.trace.stage(StageName::HandleError, None, Instant::now(), spine_core::fields! { "error" => summary });
    match &identity.program_request {
        Some(request_kind) => ctx.sink.emit(ReportBody::AgentProgramFailed {
            request_kind: request_kind.clone(),
            error_payload: error_payload("semantic", code, &summary, false),
        }),
        None => ctx.collector().fail(FailurePayload {
            failure_kind: kind,
            retryable: false,
            logical_work_id: ctx.identity.logical_work_id.clone(),
            attempt_no: ctx.identity.attempt_no,
            last_error_summary: summary,
        }),
    }
}

/// Reports an item whose deliveries ran out (its workers died or gave it up every time).
pub fn exhausted(ctx: &ItemContext, identity: &Identity, deliveries: u32) {
    let summary = format!(
        "gave up after {deliveries} deliveries without a result (workers crashed or timed out); \
         the item was moved to the dead-letter place"
    );
    match &identity.program_request {
        Some(request_kind) => ctx.sink.emit(ReportBody::AgentProgramFailed {
            request_kind: request_kind.clone(),
            error_payload: error_payload("runtime", "runtime_error", &summary, false),
        }),
        None => ctx.collector().fail(FailurePayload {
            failure_kind: FailureKind::RuntimeError,
            retryable: false,
            logical_work_id: ctx.identity.logical_work_id.clone(),
            attempt_no: ctx.identity.attempt_no,
            last_error_summary: summary,
        }),
    }
}

/// An agent-program error payload: `{classification, code, message, retryable}`.
pub fn error_payload(classification: &str, code: &str, message: &str, retryable: bool) -> Value {
    json!({"classification": classification, "code": code, "message": message, "retryable": retryable})
}

/// `prepare_turn` inputs from a payload.
pub fn turn_settings(payload: &RequestPayload) -> TurnSettings {
    TurnSettings {
        agent_prompt: None,
        profile: AgentProfile::from(payload.agent_context.profile.clone()),
        is_subagent: payload.agent_context.is_subagent,
        model_context: ModelContext {
            likely_model: payload.model_context.likely_model.clone(),
            model_ref: payload.model_context.model_ref.clone(),
            api_model: payload.model_context.api_model.clone(),
            provider_model_ref: payload.provider_execution.model_ref.clone(),
        },
        allowed_tool_names: payload.allowed_tools().map(<[String]>::to_vec).unwrap_or_default(),
        conversation_id: Some(payload.task.conversation_id.clone()),
        context_imports: payload.context_imports.clone(),
        ..TurnSettings::default()
    }
}

/// The tools a payload may use.
pub fn visibility_of(payload: &RequestPayload) -> Visibility {
    match payload.allowed_tools() {
        Some(names) => Visibility::Only(names.to_vec()),
        None => Visibility::All,
    }
}

/// The messages of the next model request: `prepare_turn`, then `compact_context`.
pub struct Round {
    /// System message, then the (compacted) transcript.
    pub messages: Vec<Message>,
    /// The resolved likely model.
    pub likely_model: Option<String>,
}

/// Runs `prepare_request` and, when due, `compact_context` for a payload.
pub async fn prepare_round(ctx: &ItemContext, payload: &RequestPayload) -> Result<Round, ExecutionError> {
    let env = &ctx.env;
    let settings = turn_settings(payload);
    let values: Vec<Value> =
        payload.context_messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect();
    let transcript = normalize_transcript(&values).map_err(ExecutionError::Validation)?;
    // The transcript owns its copy of the text; the request keeps one more, not three.
    drop(values);
    let (skills, issues) = SkillCatalog::scan(&env.skill_roots);
    for issue in issues {
        ctx.trace.warn(format!("skill `{}` skipped: {}", issue.name, issue.reason), None);
    }
    let estimator: Arc<dyn TokenEstimator> =
        env.run_defaults.estimator().unwrap_or_else(|| estimator_for(settings.model_context.likely_model()));
    let cached = env.token_counts.around(estimator.as_ref());
    let hints = payload.budget_hints.as_ref().and_then(|h| serde_json::to_value(h).ok());
    // The tools the program's model request will carry count in the estimate.
    let tools: Vec<spine_protocol::tool::ToolSpec> = match payload.allowed_tools() {
        Some(names) => env.tools.specs().filter(|t| names.contains(&t.name)).cloned().collect(),
        None => env.tools.specs().cloned().collect(),
    };
    let inputs = RequestInputs {
        settings: &settings,
        workspace: &env.workspace,
        skills: &skills,
        estimator: &cached,
        // The worker's command runs and processes belong in the snapshot (shared by its items).
        operator_state: Some(&env.families),
        memory: None,
        threshold: ThresholdSources {
            budget_hints: hints.as_ref(),
            configured: env.run_defaults.compaction_threshold,
            context_window: None,
        },
        default_model: None,
        tools: &tools,
    };
    let prepared = prepare_request(&inputs, &transcript, None, &ctx.trace);
    if ctx.canceled() {
        return Err(ExecutionError::Canceled(ctx.cancellation.summary()));
    }
    let likely = prepared.likely_model;
    let messages = match prepared.compaction {
        Compaction::Due => {
            let strategy = env.run_defaults.compaction_strategy;
            compact_context(
                &prepared.turn.messages,
                likely.as_deref(),
                strategy,
                None,
                &ctx.cancellation.token,
                &ctx.trace,
            )
            .await
            .messages
        }
        Compaction::NotNeeded => prepared.turn.messages,
    };
    Ok(Round { messages, likely_model: likely })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;
    use crate::mailbox::sqlite::SqliteMailbox;
    use crate::mailbox::{Claim, Mailbox};
    use crate::sink::Publisher;

    async fn trace_of(item: Value) -> (Trace, Vec<&'static str>) {
        let dir = tempfile::tempdir().expect("tmp");
        let mailbox: Arc<dyn Mailbox> =
            Arc::new(SqliteMailbox::open(&dir.path().join("m.db"), Default::default()).expect("mailbox"));
        let env = Arc::new(Environment::new(dir.path(), None, Default::default(), Vec::new()).expect("env"));
        let decoded = decode(item.to_string().as_bytes(), "sqlite-1");
        let mut claim = Claim {
            item_id: decoded.identity.item_id.clone(),
            attempt_no: 1,
            delivery_id: "sqlite-1".into(),
            worker_id: "w".into(),
            version: 0,
        };
        mailbox.begin(&mut claim).await.expect("claim");
        let identity = WorkIdentity {
            mailbox_item_id: claim.item_id.clone(),
            logical_work_id: "work".into(),
            attempt_no: 1,
            ..Default::default()
        };
        let cancellation = Cancellation::default();
        let publisher = Publisher::start(Arc::clone(&mailbox), claim, identity.clone(), cancellation.clone(), None);
        let ctx = ItemContext {
            env,
            executions: mailbox,
            running: Arc::new(RunningItems::default()),
            sink: Arc::clone(publisher.sink()),
            identity,
            cancellation,
            trace: Trace::default(),
            close_wait: Duration::from_secs(1),
        };
        run(&ctx, decoded.item.expect("decodes")).await;
        let trace = ctx.trace.clone();
        drop(ctx);
        let published = publisher.finish().await;
        assert!(published.errors.is_empty(), "{:?}", published.errors);
        let terminal = published.terminal.map(|r| r.body.method_id()).into_iter().collect();
        (trace, terminal)
    }

    fn item(task_payload: Value, allowed: &[&str]) -> Value {
        json!({
            "item_id": "i", "protocol_message_id": "m", "logical_work_id": "work",
            "payload": {
                "protocol_version": "spine-assignment/1",
                "task": {"conversation_id": "c", "turn_id": "t"},
                "task_payload": task_payload,
                "context_messages": [{"role": "user", "content": "hi"}],
                "allowed_tool_names": allowed,
                "budget_hints": {"advisory_hints": {"recommended_compaction_threshold": 900000}}
            }
        })
    }

    #[tokio::test]
    async fn the_deterministic_flow_traces_the_seed_stages_in_order() {
        let calc = json!({"mode": "deterministic_tool_call", "tool_call": {"tool_name": "calculator", "arguments": {"expression": "2 + 2"}}});
        let (trace, terminal) = trace_of(item(calc, &["calculator"])).await;
        assert_eq!(
            trace.stage_names(),
            [
                "prepare_turn",
                "compact_context",
                "review_tool_call",
                "execute",
                "project_tool_result",
                "finalize_output"
            ]
        );
        assert_eq!(terminal, ["execution_complete"]);
    }

    #[tokio::test]
    async fn a_masked_tool_stops_at_review_and_handle_error() {
        let calc = json!({"mode": "deterministic_tool_call", "tool_call": {"tool_name": "calculator", "arguments": {"expression": "2 + 2"}}});
        let (trace, terminal) = trace_of(item(calc, &["Read"])).await;
        assert_eq!(trace.stage_names(), ["prepare_turn", "compact_context", "review_tool_call", "handle_error"]);
        assert_eq!(terminal, ["execution_fail"]);
    }

    #[tokio::test]
    async fn skill_flows_trace_prepare_compact_and_skills() {
        let (trace, terminal) = trace_of(item(json!({"mode": "skills_catalog_list"}), &[])).await;
        assert_eq!(trace.stage_names(), ["prepare_turn", "compact_context", "skills"]);
        assert_eq!(terminal, ["execution_complete"]);
    }

    #[tokio::test]
    async fn a_context_over_the_threshold_is_compacted_before_the_tool_runs() {
        let mut v = item(json!({"mode": "skills_catalog_list"}), &[]);
        v["payload"]["budget_hints"] = json!({"advisory_compaction_threshold_tokens": 8});
        v["payload"]["context_messages"] =
            json!((0..12).map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("message {i} with some words")})).collect::<Vec<_>>());
        let (trace, _) = trace_of(v).await;
        assert_eq!(trace.stage_names(), ["prepare_turn", "compact_context", "skills"]);
        let compaction = trace
            .entries()
            .into_iter()
            .find_map(|e| match e.record {
                spine_protocol::trace::TraceRecord::Stage(s) if s.hook == "compact_context" => Some(s.fields),
                _ => None,
            })
            .expect("compact_context entry");
        assert_eq!(compaction["compacted"], json!(true));
        assert_eq!(compaction["before_message_count"], json!(13));
        assert_eq!(compaction["after_message_count"], json!(4));
    }
}
