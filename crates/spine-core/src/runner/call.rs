//! The data path of one tool call, top to bottom:
//!
//! prepare (tool known, JSON valid, schema valid, paths normalised) → `review_tool_call` →
//! PreToolUse → permission policy (→ PermissionRequest hooks → approver) → execute →
//! `project_tool_result` → PostToolUse / PostToolUseFailure → one combined decision record.
//!
//! Every branch returns exactly one result for the call (or, for a deferral, leaves the call
//! pending and ends the run).
//!
//! Execution runs under the tool's [`Tool::time_limit`](crate::tool::Tool::time_limit), when it
//! has one: past it the call's cancel token fires and the call is answered with `timeout`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use spine_protocol::hook::{HookEventName, PostToolUseFailureInput, PostToolUseInput};
use spine_protocol::message::{Message, ToolResultMessage};
use spine_protocol::permission::{DecisionSource, PermissionBehavior, PermissionDecision, PermissionSuggestion};
use spine_protocol::tool::{Effect, ErrorCode, ToolCall, ToolError};
use spine_protocol::trace::{HookSaid, ToolDecisionRecord, TraceRecord};

use super::{RoundEnd, Run, error_result};
use crate::fields;
use crate::hooks::events::{ContextOutcome, PermissionRequestOutcome, PostToolUseOutcome, PreToolUseOutcome};
use crate::observer::RunEvent;
use crate::permission::policy::{resolve_write_paths, shell_analysis};
use crate::permission::{Approval, ApprovalRequest, CallFacts, PermissionPolicy, PolicyUrlGate};
use crate::registry::PreparedCall;
use crate::stages::project_tool_result::project_tool_result;
use crate::stages::review_tool_call::review_tool_call;
use crate::tool::{Args, ToolContext, UrlGate};
use crate::trace::micros;
use crate::workspace::Workspace;

/// How long a canceled tool gets to stop (and kill what it started) before it is dropped.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// What one call produced.
pub(super) struct CallOutcome {
    /// The call's result (absent only for a deferral).
    pub result: Option<ToolResultMessage>,
    /// Context messages for after the round's results.
    pub contexts: Vec<Message>,
    /// Set when this call ends the round.
    pub end: Option<RoundEnd>,
    /// The error the call was answered with, when it did not succeed.
    pub error: Option<ToolError>,
    /// The tool's response (after PostToolUse replacements) and its projection metadata,
    /// when the tool ran and succeeded.
    pub executed: Option<(Value, Map<String, Value>)>,
}

/// The error of a call stopped at its tool's time limit.
fn timed_out(tool_name: &str, limit: Option<Duration>) -> ToolError {
    let ms = limit.map_or(0, |l| u64::try_from(l.as_millis()).unwrap_or(u64::MAX));
    ToolError::new(
        ErrorCode::Timeout,
        format!("{tool_name} timed out after {ms} ms (the time limit of {tool_name} calls) and was stopped"),
    )
}

/// The redirect gate of a network tool: hops are decided by the run's policy, as calls of the
/// same tool with that URL and no hook suggestion.
fn url_gate(policy: &PermissionPolicy, tool_name: &str, effect: Effect) -> Option<Arc<dyn UrlGate>> {
    match effect {
        Effect::Network => Some(Arc::new(PolicyUrlGate::new(policy.clone(), tool_name, effect))),
        Effect::Read | Effect::Write | Effect::Execute => None,
    }
}

/// The permission stage's answer.
enum Authorized {
    Run(Args),
    Refused(ToolError),
    Defer,
    Halt(Option<String>),
}

impl Run<'_> {
    pub(super) async fn process_call(&mut self, call: &ToolCall, batch: usize) -> CallOutcome {
        let tools = std::sync::Arc::clone(&self.agent.tools);
        let cwd = self.agent.config.cwd.clone();
        let mut record = DecisionRecord::new(call);
        let mut contexts = Vec::new();

        // 1. prepare: unknown tools and invalid arguments never reach hooks.
        let prepared = match tools.prepare(call, &cwd) {
            Ok(p) => p,
            Err(error) => return self.refuse(record, call, error, "invalid", contexts),
        };

        // 2. review_tool_call: visible to this run?
        let visibility = &self.visibility;
        if let Err(e) = review_tool_call(&tools, visibility, &prepared.name, Some(&call.id), &self.trace) {
            return self.refuse(record, call, e.to_tool_error(), "not_allowed", contexts);
        }

        // 3. PreToolUse
        let pre = self.hooks.pre_tool_use(&self.hook_ctx, tools.as_ref(), &prepared, &cwd).await;
        record.pre = said(&pre.said);
        contexts.extend(pre.contexts.into_iter().map(|c| Message::context(HookEventName::PreToolUse, c)));
        if let Some(halt) = pre.halt {
            let error =
                ToolError::new(ErrorCode::HookStoppedContinuation, "Skipped after a PreToolUse hook stopped the run");
            let mut outcome = self.refuse(record, call, error, "halted", contexts);
            outcome.end = Some(RoundEnd::Halted { stop_reason: halt.stop_reason });
            return outcome;
        }
        let (args, suggestion, suggested_by) = match pre.outcome {
            PreToolUseOutcome::Proceed { args, permission, suggested_by } => (args, permission, suggested_by),
            PreToolUseOutcome::Blocked { reason, .. } => {
                return self.refuse(record, call, ToolError::new(ErrorCode::HookBlocked, reason), "blocked", contexts);
            }
            PreToolUseOutcome::Failed(f) => {
                self.trace.warn(format!("PreToolUse hook `{}` failed closed: {}", f.hook_id, f.detail), Some(&call.id));
                return self.refuse(record, call, f.tool_error(), "hook_failed", contexts);
            }
        };

        // 4. permission: policy, then PermissionRequest hooks and the approver for `ask`.
        let args = match self.authorize(&prepared, args, &suggestion, suggested_by.as_deref(), batch, &mut record).await
        {
            Authorized::Run(args) => args,
            Authorized::Refused(error) => {
                return self.refuse(record, call, error, "denied", contexts);
            }
            Authorized::Defer => {
                record.emit(&self.trace, "deferred", None);
                return CallOutcome {
                    result: None,
                    contexts,
                    end: Some(RoundEnd::Deferred(call.clone())),
                    error: None,
                    executed: None,
                };
            }
            Authorized::Halt(stop_reason) => {
                let error = ToolError::new(
                    ErrorCode::HookStoppedContinuation,
                    "Skipped after a PermissionRequest hook stopped the run",
                );
                let mut outcome = self.refuse(record, call, error, "halted", contexts);
                outcome.end = Some(RoundEnd::Halted { stop_reason });
                return outcome;
            }
        };
        if self.cancel.is_cancelled() {
            let error = ToolError::new(ErrorCode::Canceled, "the run was canceled before the tool ran");
            let mut outcome = self.refuse(record, call, error, "canceled", contexts);
            outcome.end = Some(RoundEnd::Canceled);
            return outcome;
        }

        // 5. execute
        if let Some(reports) = &self.reports {
            reports.tool_reviewed(&call.id, &call.name, &Value::Object((*args).clone()));
        }
        let tool = std::sync::Arc::clone(tools.tool(prepared.handle));
        // The call's own token: canceled with the run, or alone when the time limit passes.
        let call_cancel = self.cancel.child_token();
        let tool_ctx = ToolContext {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            workspace: std::sync::Arc::clone(&self.agent.config.workspace),
            cwd: cwd.clone(),
            cancel: call_cancel.clone(),
            env_file: self.hook_ctx.session.env_file.clone(),
            progress: self.progress.clone(),
            url_gate: url_gate(&self.agent.policy, &call.name, tool.effect()),
        };
        let started = Instant::now();
        let executed = {
            let exec = tool.execute(&args, &tool_ctx);
            tokio::pin!(exec);
            let limit = tool.time_limit();
            let expired = async {
                match limit {
                    Some(limit) => tokio::time::sleep(limit).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                r = &mut exec => r,
                () = self.cancel.cancelled() => match tokio::time::timeout(CANCEL_GRACE, &mut exec).await {
                    Ok(r) => r,
                    Err(_) => Err(ToolError::new(ErrorCode::Canceled, "the run was canceled while the tool ran")),
                },
                () = expired => {
                    // Ask the tool to stop (walks check the token), wait a little for it,
                    // and answer `timeout` whatever it returns after being stopped.
                    call_cancel.cancel();
                    let _stopped = tokio::time::timeout(CANCEL_GRACE, &mut exec).await;
                    Err(timed_out(&call.name, limit))
                }
            }
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.trace.stage(
            "execute",
            Some(&call.id),
            started,
            fields! { "tool_name" => call.name, "ok" => executed.is_ok() },
        );
        let tool_input = Value::Object((*args).clone());

        // 6. project, then PostToolUse / PostToolUseFailure.
        match executed {
            Err(error) if self.cancel.is_cancelled() || error.code == ErrorCode::Canceled => {
                let error = ToolError::new(ErrorCode::Canceled, "the run was canceled while the tool ran");
                let mut outcome = self.refuse(record, call, error, "canceled", contexts);
                outcome.end = Some(RoundEnd::Canceled);
                outcome
            }
            Err(error) => {
                let failure = self
                    .hooks
                    .post_tool_use_failure(
                        &self.hook_ctx,
                        PostToolUseFailureInput {
                            tool_name: call.name.clone(),
                            tool_input,
                            tool_use_id: call.id.clone(),
                            error: error.message.clone(),
                            is_interrupt: error.code == ErrorCode::Timeout,
                            duration_ms,
                        },
                    )
                    .await;
                contexts.extend(
                    failure.contexts.into_iter().map(|c| Message::context(HookEventName::PostToolUseFailure, c)),
                );
                if let ContextOutcome::Failed(f) = failure.outcome {
                    self.trace.warn(format!("PostToolUseFailure {f}"), Some(&call.id));
                }
                let mut outcome = self.refuse(record, call, error, "failed", contexts);
                outcome.end = failure.halt.map(|h| RoundEnd::Halted { stop_reason: h.stop_reason });
                outcome
            }
            Ok(response) => {
                let projection = project_tool_result(tool.as_ref(), &response, &call.id, &self.trace);
                let projection_metadata = projection.metadata.clone();
                let post = self
                    .hooks
                    .post_tool_use(
                        &self.hook_ctx,
                        PostToolUseInput {
                            tool_name: call.name.clone(),
                            tool_input,
                            tool_use_id: call.id.clone(),
                            tool_response: response.clone(),
                            duration_ms,
                        },
                    )
                    .await;
                record.post = said(&post.said);
                contexts.extend(post.contexts.into_iter().map(|c| Message::context(HookEventName::PostToolUse, c)));
                for reason in post.block_reasons {
                    contexts.push(Message::context(
                        HookEventName::PostToolUse,
                        format!("PostToolUse hook feedback on {} call {}: {reason}", call.name, call.id),
                    ));
                }
                let (content, error_code) = match &post.outcome {
                    PostToolUseOutcome::Failed(failure) => {
                        self.trace.warn(format!("PostToolUse {failure}"), Some(&call.id));
                        let error = failure.tool_error();
                        (error.render(), Some(error.code))
                    }
                    PostToolUseOutcome::TextRewritten { text, .. } => (text.clone(), None),
                    PostToolUseOutcome::Rewritten(replaced) => (tool.project(replaced).content, None),
                    PostToolUseOutcome::Unchanged => (projection.content, None),
                };
                record.emit(
                    &self.trace,
                    if error_code.is_some() { "post_hook_failed" } else { "executed" },
                    error_code,
                );
                if let Some(reports) = &self.reports {
                    let done =
                        crate::tool::Projection { content: content.clone(), metadata: projection_metadata.clone() };
                    reports.tool_completed(&call.id, &call.name, &done);
                }
                let end =
                    post.halt.map(|h| RoundEnd::Prevented { output: content.clone(), stop_reason: h.stop_reason });
                let error = error_code.map(|code| ToolError::new(code, content.clone()));
                let executed = post.outcome.response(response).map(|r| (r, projection_metadata));
                let result =
                    ToolResultMessage { tool_call_id: call.id.clone(), name: call.name.clone(), content, error_code };
                CallOutcome { result: Some(result), contexts, end, error, executed }
            }
        }
    }

    /// Answers a call with an error and records its decision.
    fn refuse(
        &self,
        record: DecisionRecord,
        call: &ToolCall,
        error: ToolError,
        outcome: &str,
        contexts: Vec<Message>,
    ) -> CallOutcome {
        record.emit(&self.trace, outcome, Some(error.code));
        if let Some(reports) = &self.reports {
            reports.tool_failed(&call.id, &call.name, &arguments_value(call), &error);
        }
        CallOutcome {
            result: Some(error_result(call, &error)),
            contexts,
            end: None,
            error: Some(error),
            executed: None,
        }
    }

    async fn authorize(
        &mut self,
        call: &PreparedCall,
        mut args: Args,
        suggestion: &PermissionSuggestion,
        suggested_by: Option<&str>,
        batch: usize,
        record: &mut DecisionRecord,
    ) -> Authorized {
        let tools = std::sync::Arc::clone(&self.agent.tools);
        let mut decision = self.policy_decision(call, &args, suggestion, suggested_by);
        if decision.behavior == PermissionBehavior::Defer && !(self.allow_defer && batch == 1) {
            decision = PermissionDecision::new(
                PermissionBehavior::Ask,
                decision.source,
                "defer needs a single call in a non-interactive run; asking instead",
            );
        }
        if decision.behavior == PermissionBehavior::Ask {
            // A protected-path ask (policy row 5) goes to the approver only: no hook answers it.
            let verdict = if decision.source == DecisionSource::Workspace {
                PermissionRequestOutcome::NoDecision
            } else {
                let asked =
                    self.hooks.permission_request(&self.hook_ctx, tools.as_ref(), call, &args, &decision.reason).await;
                if let Some(halt) = asked.halt {
                    return Authorized::Halt(halt.stop_reason);
                }
                asked.outcome
            };
            decision = match verdict {
                PermissionRequestOutcome::Allow { hook_id, args: updated } => {
                    let source = DecisionSource::PermissionRequestHook { hook_id };
                    match updated {
                        Some(new_args) => {
                            // Replacement arguments are checked against the rules again.
                            let recheck = self.policy_decision(
                                call,
                                &new_args,
                                &PermissionSuggestion::Allow { reason: None },
                                None,
                            );
                            args = new_args;
                            match recheck.behavior {
                                PermissionBehavior::Deny => recheck,
                                // A protected path needs an allow rule naming it, not a hook.
                                PermissionBehavior::Ask if recheck.source == DecisionSource::Workspace => recheck,
                                PermissionBehavior::Allow | PermissionBehavior::Ask | PermissionBehavior::Defer => {
                                    PermissionDecision::new(
                                        PermissionBehavior::Allow,
                                        source,
                                        "approved by PermissionRequest hook",
                                    )
                                }
                            }
                        }
                        None => PermissionDecision::new(
                            PermissionBehavior::Allow,
                            source,
                            "approved by PermissionRequest hook",
                        ),
                    }
                }
                PermissionRequestOutcome::Deny { hook_id, message } => PermissionDecision::new(
                    PermissionBehavior::Deny,
                    DecisionSource::PermissionRequestHook { hook_id },
                    message,
                ),
                // A failing hook denies.
                PermissionRequestOutcome::Failed(f) => {
                    let message = f.reason();
                    PermissionDecision::new(
                        PermissionBehavior::Deny,
                        DecisionSource::PermissionRequestHook { hook_id: f.hook_id },
                        message,
                    )
                }
                PermissionRequestOutcome::NoDecision => {
                    let request = ApprovalRequest {
                        tool_name: &call.name,
                        tool_use_id: &call.id,
                        args: &args,
                        reason: &decision.reason,
                    };
                    match self.agent.approver.approve(&request).await {
                        Approval::Allow => {
                            PermissionDecision::new(PermissionBehavior::Allow, DecisionSource::Approver, "approved")
                        }
                        Approval::Deny { reason } => {
                            PermissionDecision::new(PermissionBehavior::Deny, DecisionSource::Approver, reason)
                        }
                    }
                }
            };
        }
        self.observer.on_event(&RunEvent::Permission { tool_name: &call.name, decision: &decision });
        let behavior = decision.behavior;
        let reason = decision.reason.clone();
        record.permission = Some(decision);
        match behavior {
            PermissionBehavior::Allow => Authorized::Run(args),
            PermissionBehavior::Defer => Authorized::Defer,
            PermissionBehavior::Deny => Authorized::Refused(ToolError::new(ErrorCode::PermissionDenied, reason)),
            PermissionBehavior::Ask => Authorized::Refused(ToolError::new(ErrorCode::PermissionDenied, reason)),
        }
    }

    fn policy_decision(
        &self,
        call: &PreparedCall,
        args: &Args,
        suggestion: &PermissionSuggestion,
        suggested_by: Option<&str>,
    ) -> PermissionDecision {
        let tools = &self.agent.tools;
        let cwd = &self.agent.config.cwd;
        let effect = tools.effect(call.handle);
        let workspace_paths = tools.tool(call.handle).workspace_paths(args);
        // The shell command is parsed once per decision; its redirection and `tee` targets are
        // writes, checked against the boundary like a file tool's path.
        let shell = shell_analysis(&call.name, args);
        let mut targets: Vec<PathBuf> = shell.as_ref().map(|a| a.write_paths(cwd)).unwrap_or_default();
        if effect == Effect::Write {
            targets.extend(workspace_paths.iter().map(|p| Workspace::normalize(p, cwd)));
        }
        let workspace = &self.agent.config.workspace;
        let (write_paths, write_violation) = resolve_write_paths(workspace, cwd, targets);
        let boundary = workspace_paths.iter().find_map(|p| workspace.resolve(p, cwd).err()).or(write_violation);
        let facts = CallFacts {
            tool_name: &call.name,
            effect,
            args,
            boundary: boundary.as_ref(),
            write_paths: &write_paths,
            shell: shell.as_ref(),
        };
        self.agent.policy.decide(facts, suggestion, suggested_by)
    }
}

fn arguments_value(call: &ToolCall) -> Value {
    match &call.arguments {
        spine_protocol::tool::ToolArguments::Json(v) => v.clone(),
        spine_protocol::tool::ToolArguments::Raw(raw) => Value::String(raw.clone()),
    }
}

fn said(list: &[(String, &'static str)]) -> Vec<HookSaid> {
    list.iter().map(|(id, d)| HookSaid { hook_id: id.clone(), decision: (*d).to_owned() }).collect()
}

/// The combined decision record of one call, filled as the call goes.
struct DecisionRecord {
    started: Instant,
    tool_use_id: String,
    tool_name: String,
    pre: Vec<HookSaid>,
    permission: Option<PermissionDecision>,
    post: Vec<HookSaid>,
}

impl DecisionRecord {
    fn new(call: &ToolCall) -> Self {
        DecisionRecord {
            started: Instant::now(),
            tool_use_id: call.id.clone(),
            tool_name: call.name.clone(),
            pre: Vec::new(),
            permission: None,
            post: Vec::new(),
        }
    }

    fn emit(self, trace: &crate::trace::Trace, outcome: &str, error_code: Option<ErrorCode>) {
        let _ = micros(self.started.elapsed());
        trace.record(TraceRecord::ToolDecision(ToolDecisionRecord {
            tool_use_id: self.tool_use_id,
            tool_name: self.tool_name,
            pre_tool_use: self.pre,
            permission: self.permission,
            post_tool_use: self.post,
            outcome: outcome.to_owned(),
            error_code: error_code.map(|c| c.as_str().to_owned()),
        }));
    }
}
