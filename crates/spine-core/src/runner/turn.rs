//! One model turn: `prepare_request` (the system prompt's layers, the operator snapshot, the
//! token estimate) → `compact_context` when due, wrapped in PreCompact / PostCompact and
//! SessionStart(`compact`) hooks → the pairing check → one model request, streamed to the
//! observer, traced per attempt (the request's trace entry records the reply's reasoning
//! text; the reasoning stays out of the answer).

use std::sync::Arc;
use std::time::Instant;

use spine_protocol::hook::{
    CompactTrigger, HookEventName, PostCompact, PostCompactInput, PreCompactInput, SessionSource, SessionStartInput,
};
use spine_protocol::message::{AssistantMessage, Message, ReasoningItem};
use spine_protocol::pairing::{unique_call_ids, validate_pairing};
use spine_protocol::trace::{AttemptResult, ModelAttemptTrace, ModelTrace, TraceRecord};

use super::Run;
use super::finish::End;
use crate::hooks::events::{ContextOutcome, PreCompactOutcome};
use crate::model::{AttemptOutcome, AttemptReport, ModelError, ModelErrorKind, ModelRequest, StreamDelta, StreamSink};
use crate::observer::{RunEvent, RunObserver};
use crate::session::{ReplyMeta, TranscriptRecord};
use crate::stages::compact_context::{CompactStrategy, Summarizer, compact_context, record_not_compacted};
use crate::stages::handle_error::ExecutionError;
use crate::stages::prepare_request::{Compaction, PreparedRequest, RequestInputs, ThresholdSources, prepare_request};
use crate::trace::{Trace, micros};

/// Why a compaction happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactCause {
    /// The context passed its threshold.
    Auto,
    /// The user asked (`/compact [instructions]`).
    Manual {
        /// What the summary should keep or focus on.
        instructions: Option<String>,
    },
}

impl Run<'_> {
    /// `prepare_request` → `compact_context` when due → pairing check → one model request.
    pub(super) async fn model_turn(&mut self) -> Result<(AssistantMessage, ReplyMeta), End> {
        let mut request = self.prepare_request();
        if request.compaction == Compaction::Due {
            let likely_model = request.likely_model.clone().unwrap_or_default();
            if self.compact(&request.turn.messages, &likely_model, &CompactCause::Auto).await {
                request = self.prepare_request();
            }
        }
        let prepared = request.turn;
        if self.cancel.is_cancelled() {
            return Err(End::canceled());
        }
        if let Err(e) = validate_pairing(&prepared.messages) {
            self.trace.warn(format!("pairing violation: {e}"), None);
            return Err(End::failed(ExecutionError::Runtime(format!(
                "internal error: refusing to send an invalid history: {e}"
            ))));
        }
        self.num_turns += 1;
        let turn = self.num_turns;
        self.observer.on_event(&RunEvent::ModelRequest { turn });
        let started = Instant::now();
        let sink = ObserverStream { observer: Arc::clone(&self.observer), trace: self.trace.clone(), turn };
        let request = ModelRequest {
            messages: &prepared.messages,
            tools: &self.specs,
            stable_prefix: Some(prepared.stable_prefix),
        };
        // An active skill's model, else the agent's (`skill_use`).
        let client = self.model();
        let result = tokio::select! {
            r = client.complete(request, &sink, &self.cancel) => r,
            () = self.cancel.cancelled() => Err(ModelError::new(ModelErrorKind::Canceled, "canceled")),
        };
        self.last_request = prepared.messages;
        let (tool_calls, reasoning, error, usage) = match &result {
            Ok(reply) => (
                reply.message.tool_calls.len(),
                reply.message.reasoning.iter().filter_map(ReasoningItem::readable_text).collect(),
                None,
                reply.usage,
            ),
            Err(e) => (0, Vec::new(), Some(e.message.clone()), e.usage),
        };
        let model = client.model().to_owned();
        let cost_usd = usage.and_then(|u| client.cost_usd(&u));
        self.model_usage.entry(model.clone()).or_default().record(usage, cost_usd);
        self.trace.record(TraceRecord::Model(ModelTrace {
            turn,
            model,
            message_count: self.last_request.len(),
            tool_calls,
            duration_us: micros(started.elapsed()),
            reasoning,
            error,
            usage,
            cost_usd,
        }));
        match result {
            Ok(reply) => {
                self.observer.on_event(&RunEvent::ModelReplied {
                    turn,
                    usage: reply.usage,
                    stop_reason: reply.finish_reason.stop_reason(),
                });
                self.last_finish = Some(reply.finish_reason.clone());
                if let Some(u) = reply.usage {
                    // The request covered the conversation so far; the reply is the next message.
                    self.token_cache.anchor(u.input_tokens + u.output_tokens, self.conversation.len() + 1);
                }
                let meta = ReplyMeta {
                    model: client.model().to_owned(),
                    usage: reply.usage,
                    finish: Some(reply.finish_reason.clone()),
                };
                let mut message = reply.message;
                // Ids are made unique before any call is looked at (see `unique_call_ids`).
                for (old, new) in unique_call_ids(&mut message.tool_calls, &self.call_ids, turn) {
                    let old = if old.trim().is_empty() { "an empty id".to_owned() } else { format!("`{old}`") };
                    self.trace.warn(format!("tool call with {old} renamed `{new}`: ids must be unique"), Some(&new));
                }
                self.call_ids.extend(message.tool_calls.iter().map(|c| c.id.clone()));
                if message.tool_calls.is_empty() && message.content.as_deref().is_none_or(|t| t.trim().is_empty()) {
                    let e = ModelError::new(
                        ModelErrorKind::InvalidReply,
                        "the model returned an empty reply (no text and no tool calls)",
                    );
                    return Err(End::failed(ExecutionError::Model(e)));
                }
                Ok((message, meta))
            }
            Err(e) if e.kind == ModelErrorKind::Canceled => Err(End::canceled()),
            Err(e) => Err(End::failed(ExecutionError::Model(e))),
        }
    }

    /// `prepare_request` over the conversation so far.
    pub(super) fn prepare_request(&mut self) -> PreparedRequest {
        let config = &self.agent.config;
        // The roots permission updates added are named to the model too.
        let workspace = self.workspace();
        let inputs = RequestInputs {
            settings: &config.turn,
            workspace: &workspace,
            skills: &self.skills,
            estimator: self.estimator.as_ref(),
            operator_state: config.operator_state.as_deref(),
            memory: Some(&self.memory),
            threshold: ThresholdSources {
                budget_hints: config.budget_hints.as_ref(),
                configured: config.compaction_threshold,
                context_window: self.agent.model.context_window(),
            },
            default_model: Some(self.agent.model.model()),
            tools: &self.specs,
        };
        prepare_request(&inputs, &self.conversation, Some(&mut self.token_cache), &self.trace)
    }

    /// PreCompact → compact_context → PostCompact → SessionStart(compact). Returns whether the
    /// transcript changed. A manual compaction always summarises (with the user's
    /// instructions); an automatic one uses the configured strategy.
    pub(super) async fn compact(&mut self, request: &[Message], likely_model: &str, cause: &CompactCause) -> bool {
        let (trigger, instructions) = match cause {
            CompactCause::Auto => (CompactTrigger::Auto, None),
            CompactCause::Manual { instructions } => (CompactTrigger::Manual, instructions.clone()),
        };
        let pre = self
            .hooks
            .pre_compact(&self.hook_ctx, PreCompactInput { trigger, custom_instructions: instructions.clone() })
            .await;
        let blocked = match pre.outcome {
            PreCompactOutcome::Proceed => None,
            PreCompactOutcome::Blocked { reason, hook_id } => Some((reason, hook_id)),
            PreCompactOutcome::Failed(f) => Some((f.reason(), f.hook_id)),
        };
        if let Some((reason, hook_id)) = blocked {
            self.trace.warn(format!("compaction blocked by PreCompact hook `{hook_id}`: {reason}"), None);
            record_not_compacted(request.len(), Some(likely_model), &self.trace);
            return false;
        }
        let model = Arc::clone(&self.agent.model);
        let summarizer =
            Summarizer { model: model.as_ref(), tools: &self.specs, instructions: instructions.as_deref() };
        let strategy = match cause {
            CompactCause::Auto => self.agent.config.compaction_strategy,
            CompactCause::Manual { .. } => CompactStrategy::Summarize,
        };
        let compaction =
            compact_context(request, Some(likely_model), strategy, Some(summarizer), &self.cancel, &self.trace).await;
        if let Some(sent) = compaction.summary_request {
            let cost_usd = sent.usage.and_then(|u| self.agent.model.cost_usd(&u));
            self.model_usage.entry(self.agent.model.model().to_owned()).or_default().record(sent.usage, cost_usd);
        }
        if !compaction.compacted {
            return false;
        }
        // The request's first message is this turn's system prompt; the transcript keeps the rest.
        self.conversation = compaction.messages.into_iter().skip(1).collect();
        self.token_cache.reset();
        self.record(&TranscriptRecord::Compacted { messages: self.conversation.clone() });
        self.hooks
            .observe::<PostCompact>(&self.hook_ctx, PostCompactInput { trigger, compact_summary: compaction.note })
            .await;
        let start = self
            .hooks
            .session_start(
                &self.hook_ctx,
                SessionStartInput { source: SessionSource::Compact, model: Some(likely_model.to_owned()) },
            )
            .await;
        if let ContextOutcome::Failed(failure) = start.outcome {
            self.trace.warn(format!("SessionStart (compact) {failure}"), None);
        }
        if let Some(paths) = start.watch_paths {
            self.replace_watched(paths);
        }
        self.push_contexts(HookEventName::SessionStart, start.contexts);
        true
    }
}

/// The sink of one model request: text and the other streamed pieces to the observer; each
/// attempt to the observer and the trace.
struct ObserverStream {
    observer: Arc<dyn RunObserver>,
    trace: Trace,
    turn: u32,
}

impl StreamSink for ObserverStream {
    fn text_delta(&self, text: &str) {
        self.observer.on_event(&RunEvent::TextDelta { text });
    }

    fn delta(&self, delta: StreamDelta<'_>) {
        self.observer.on_event(&RunEvent::StreamDelta { delta });
    }

    /// `--fallback-model` took over: a warning in the trace and to the observer (stderr).
    fn fallback(&self, from: &str, to: &str, error: &ModelError) {
        let text = format!(
            "the model {from} is unavailable ({}: {}); {to} serves the rest of the run (--fallback-model)",
            error.kind, error.message
        );
        self.trace.warn(text.clone(), None);
        self.observer.on_event(&RunEvent::Warning { text: &text });
    }

    fn attempt(&self, report: &AttemptReport<'_>) {
        let (outcome, error, wait_ms) = match report.outcome {
            AttemptOutcome::Succeeded => (AttemptResult::Ok, None, None),
            AttemptOutcome::Retrying { error, wait } => (AttemptResult::Retry, Some(error), Some(millis(wait))),
            AttemptOutcome::Failed { error } => (AttemptResult::Failed, Some(error), None),
        };
        self.trace.record(TraceRecord::ModelAttempt(ModelAttemptTrace {
            turn: self.turn,
            attempt: report.attempt,
            duration_us: micros(report.duration),
            outcome,
            error_kind: error.map(|e| e.kind.to_string()),
            error: error.map(|e| e.message.clone()),
            wait_ms,
        }));
        self.observer.on_event(&RunEvent::ModelAttempt { turn: self.turn, report });
    }
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
