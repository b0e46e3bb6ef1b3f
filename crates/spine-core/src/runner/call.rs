//! The data path of one tool call, top to bottom — [`Run::process_call`] reads as this list:
//!
//! 1. admit: prepare (tool known, JSON valid, schema valid, paths normalised), then
//!    `review_tool_call` (visible to this run);
//! 2. PreToolUse hooks;
//! 3. permission: the policy (→ PermissionRequest hooks → the approver), in [`super::permit`];
//! 4. the `execute` stage ([`crate::stages::execute`]), or for an `Agent` call the child run
//!    that takes its place ([`super::delegate`]);
//! 5. `project_tool_result` → PostToolUse, or PostToolUseFailure, in [`super::post`];
//!
//! and one combined decision record. An Elicitation or ElicitationResult hook that answered
//! `continue: false` while the tool ran ([`RunElicitor::halt`]) ends the run after the call,
//! unless its PostToolUse hooks already ended it. A call of a tool's former name (`Task`) goes down this path
//! as a call of its current name (`Agent`, [`crate::tool_names`]): hooks, rules, the trace and
//! the result name the tool as it is offered. Each step either hands the call on or settles it: every
//! branch returns exactly one result for the call (or, for a deferral, leaves the call pending
//! and ends the run).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};
use spine_protocol::hook::HookEventName;
use spine_protocol::message::{Message, ToolResultMessage};
use spine_protocol::permission::{PermissionDecision, PermissionSuggestion};
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};
use spine_protocol::trace::{DecisionOutcome, HookSaid, ToolDecisionRecord, TraceRecord};

use super::{Run, error_result};
use crate::elicitation::RunElicitor;
use crate::hooks::engine::HaltBy;
use crate::hooks::events::PreToolUseOutcome;
use crate::registry::PreparedCall;
use crate::stages::execute::{Executed, Execution, execute};
use crate::stages::review_tool_call::review_tool_call;
use crate::tool::{Args, Tool, ToolContext};

/// How a tool round ended. It lives beside [`CallOutcome::end`] because a call's path (here and
/// its steps in `permit`, `post`, `batch`) makes the endings; `round` only starts at `Continue`
/// and adds `Canceled` between calls.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum RoundEnd {
    /// Ask the model again.
    Continue,
    /// PostToolUse prevented continuation; the run's output is this text.
    Prevented { output: String, stop_reason: Option<String> },
    /// A hook returned `continue: false`.
    Halted { stop_reason: Option<String> },
    /// The run was canceled.
    Canceled,
    /// A call was deferred.
    Deferred(ToolCall),
}

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

impl CallOutcome {
    /// This outcome, ending the round.
    pub(super) fn ending(mut self, end: RoundEnd) -> Self {
        self.end = Some(end);
        self
    }
}

/// A call settled before it got to run: its outcome is final (boxed: it is the rare path).
pub(super) struct Settled(Box<CallOutcome>);

impl From<CallOutcome> for Settled {
    fn from(outcome: CallOutcome) -> Self {
        Settled(Box::new(outcome))
    }
}

/// What PreToolUse proposes to the permission step.
pub(super) struct Proposal {
    /// The arguments after the hooks' rewrites.
    pub args: Args,
    /// The hooks' permission suggestion.
    pub suggestion: PermissionSuggestion,
    /// The hook that made the suggestion.
    pub suggested_by: Option<String>,
}

impl Run<'_> {
    /// Takes one call from the model's request to its result (see the module documentation).
    pub(super) async fn process_call(&self, call: &ToolCall, batch: usize) -> CallOutcome {
        let call = self.under_registered_name(call);
        let call = call.as_ref();
        let mut ledger = Ledger::new(call);
        match self.call_path(call, batch, &mut ledger).await {
            Ok(outcome) => outcome,
            Err(Settled(outcome)) => *outcome,
        }
    }

    async fn call_path(&self, call: &ToolCall, batch: usize, ledger: &mut Ledger) -> Result<CallOutcome, Settled> {
        let prepared = self.admit(call, ledger)?;
        let proposal = self.pre_tool_use(call, &prepared, ledger).await?;
        let args = self.permit(call, &prepared, proposal, batch, ledger).await?;
        self.not_canceled(call, ledger)?;
        let tool = Arc::clone(self.agent.tools.tool(prepared.handle));
        let (execution, halt) = match self.is_delegation(call) {
            true => {
                if let Some(reports) = &self.reports {
                    reports.tool_reviewed(&call.id, &call.name, &Value::Object((*args).clone()));
                }
                (self.delegate(call, &args).await, None)
            }
            false => self.execute_call(&tool, call, &args).await,
        };
        let duration_ms = execution.duration_ms();
        let mut outcome = match execution.executed {
            Executed::Completed(response) => {
                let outcome = self.tool_succeeded(tool.as_ref(), call, &args, response, duration_ms, ledger).await;
                if outcome.executed.is_some() {
                    self.skill_invoked(call, &args);
                }
                outcome
            }
            Executed::Failed(error) => self.tool_failed(tool.as_ref(), call, &args, error, duration_ms, ledger).await,
            Executed::Canceled => {
                let error = ToolError::new(ErrorCode::Canceled, "the run was canceled while the tool ran");
                self.settle_with_error(ledger, call, error, DecisionOutcome::Canceled).ending(RoundEnd::Canceled)
            }
        };
        if let (Some(halt), None) = (halt, &outcome.end) {
            outcome.end = Some(RoundEnd::Halted { stop_reason: halt.stop_reason });
        }
        Ok(outcome)
    }

    /// `call` under the name its tool is registered with, when the model used a former one.
    fn under_registered_name<'c>(&self, call: &'c ToolCall) -> Cow<'c, ToolCall> {
        let tools = &self.agent.tools;
        match tools.lookup(&call.name).map(|h| tools.spec(h).name.as_str()) {
            Some(name) if name != call.name => Cow::Owned(ToolCall { name: name.to_owned(), ..call.clone() }),
            Some(_) | None => Cow::Borrowed(call),
        }
    }

    /// Prepare, then `review_tool_call`: unknown tools, invalid arguments and tools this run
    /// may not call never reach hooks.
    fn admit(&self, call: &ToolCall, ledger: &mut Ledger) -> Result<PreparedCall, Settled> {
        let tools = &self.agent.tools;
        let prepared = tools
            .prepare(call, &self.cwd())
            .map_err(|error| Settled::from(self.settle_with_error(ledger, call, error, DecisionOutcome::Invalid)))?;
        review_tool_call(tools, &self.visibility, &prepared.name, Some(&call.id), &self.trace).map_err(|e| {
            Settled::from(self.settle_with_error(ledger, call, e.to_tool_error(), DecisionOutcome::NotAllowed))
        })?;
        Ok(prepared)
    }

    /// PreToolUse hooks: block, fail closed, stop the run, or propose (rewritten) arguments and
    /// a permission suggestion.
    async fn pre_tool_use(
        &self,
        call: &ToolCall,
        prepared: &PreparedCall,
        ledger: &mut Ledger,
    ) -> Result<Proposal, Settled> {
        let pre = self.hooks.pre_tool_use(&self.hook_ctx, self.agent.tools.as_ref(), prepared, &self.cwd()).await;
        ledger.record.pre = said(&pre.said);
        ledger.add_contexts(HookEventName::PreToolUse, pre.contexts);
        if let Some(halt) = pre.halt {
            let error =
                ToolError::new(ErrorCode::HookStoppedContinuation, "Skipped after a PreToolUse hook stopped the run");
            let outcome = self.settle_with_error(ledger, call, error, DecisionOutcome::Halted);
            return Err(outcome.ending(RoundEnd::Halted { stop_reason: halt.stop_reason }).into());
        }
        match pre.outcome {
            PreToolUseOutcome::Proceed { args, permission, suggested_by } => {
                Ok(Proposal { args, suggestion: permission, suggested_by })
            }
            PreToolUseOutcome::Blocked { reason, .. } => Err(self
                .settle_with_error(
                    ledger,
                    call,
                    ToolError::new(ErrorCode::HookBlocked, reason),
                    DecisionOutcome::Blocked,
                )
                .into()),
            PreToolUseOutcome::Failed(f) => {
                self.trace.warn(format!("PreToolUse hook `{}` failed closed: {}", f.hook_id, f.detail), Some(&call.id));
                Err(self.settle_with_error(ledger, call, f.tool_error(), DecisionOutcome::HookFailed).into())
            }
        }
    }

    /// A run canceled while the call was reviewed does not start the tool.
    fn not_canceled(&self, call: &ToolCall, ledger: &mut Ledger) -> Result<(), Settled> {
        if !self.cancel.is_cancelled() {
            return Ok(());
        }
        let error = ToolError::new(ErrorCode::Canceled, "the run was canceled before the tool ran");
        Err(self.settle_with_error(ledger, call, error, DecisionOutcome::Canceled).ending(RoundEnd::Canceled).into())
    }

    /// The `execute` stage with this run's tool context; `tool_reviewed` goes out first. With
    /// the execution, the elicitation hook that stopped the run while the tool ran, if any.
    async fn execute_call(&self, tool: &Arc<dyn Tool>, call: &ToolCall, args: &Args) -> (Execution, Option<HaltBy>) {
        if let Some(reports) = &self.reports {
            reports.tool_reviewed(&call.id, &call.name, &Value::Object((**args).clone()));
        }
        let elicitor = Arc::new(RunElicitor::new(
            Arc::clone(&self.hooks),
            self.hook_ctx.clone(),
            Arc::clone(&self.agent.approver),
            self.trace.clone(),
            call.id.clone(),
        ));
        // A call the sandbox rules take out of the sandbox (an excluded command, an approved
        // `dangerouslyDisableSandbox`) gets the unconfined environment.
        let exemption = self.agent.policy.confinement(&call.name, args).and_then(|c| c.exemption());
        let child_env = match &exemption {
            Some(_) => self.agent.config.child_env.unconfined(),
            None => self.agent.config.child_env.clone(),
        };
        let ctx = ToolContext {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            workspace: self.workspace(),
            cwd: self.cwd(),
            shell_cwd: self.keeps_shell.then(|| self.watch.shell_cwd()),
            // The call's own token: canceled with the run, or alone when the time limit passes.
            cancel: self.cancel.child_token(),
            env_file: self.hook_ctx.session.env_file.clone(),
            child_env,
            sandbox_exemption: exemption,
            sandbox_report: crate::tool::SandboxReport::default(),
            progress: self.progress.clone(),
            url_gate: super::permit::url_gate(&self.agent.policy, &call.name, tool.effect()),
            elicitor: Some(Arc::clone(&elicitor) as Arc<dyn crate::elicitation::Elicitor>),
            skills: Some(Arc::clone(&self.skill_session)),
        };
        let execution = execute(tool, args, &ctx, &self.cancel, &self.trace).await;
        (execution, elicitor.halt())
    }

    /// Answers a call with an error: records the decision as `outcome`, reports the failed
    /// call, and hands back the result the model reads.
    pub(super) fn settle_with_error(
        &self,
        ledger: &mut Ledger,
        call: &ToolCall,
        error: ToolError,
        outcome: DecisionOutcome,
    ) -> CallOutcome {
        ledger.emit(&self.trace, outcome, Some(error.code));
        if let Some(reports) = &self.reports {
            reports.tool_failed(&call.id, &call.name, &arguments_value(call), &error);
        }
        CallOutcome {
            result: Some(error_result(call, &error)),
            contexts: ledger.take_contexts(),
            end: None,
            error: Some(error),
            executed: None,
        }
    }
}

fn arguments_value(call: &ToolCall) -> Value {
    match &call.arguments {
        spine_protocol::tool::ToolArguments::Json(v) => v.clone(),
        spine_protocol::tool::ToolArguments::Raw(raw) => Value::String(raw.clone()),
    }
}

/// The hooks' answers as the decision record lists them.
pub(super) fn said(list: &[(String, &'static str)]) -> Vec<HookSaid> {
    list.iter().map(|(id, d)| HookSaid { hook_id: id.clone(), decision: (*d).to_owned() }).collect()
}

/// What a call gathers on its way: the hooks' contexts for after the round, and the combined
/// decision record, written once when the call settles.
pub(super) struct Ledger {
    tool_use_id: String,
    tool_name: String,
    /// The call's arguments, as the model sent them.
    arguments: Value,
    /// Context messages for after the round's results.
    contexts: Vec<Message>,
    /// The decision record's parts, filled as the call goes.
    pub record: RecordParts,
}

/// The parts of a decision record known before the call settles.
#[derive(Default)]
pub(super) struct RecordParts {
    /// What PreToolUse hooks answered.
    pub pre: Vec<HookSaid>,
    /// The permission decision, once made.
    pub permission: Option<PermissionDecision>,
    /// What PostToolUse hooks answered.
    pub post: Vec<HookSaid>,
}

impl Ledger {
    fn new(call: &ToolCall) -> Self {
        Ledger {
            tool_use_id: call.id.clone(),
            tool_name: call.name.clone(),
            arguments: arguments_value(call),
            contexts: Vec::new(),
            record: RecordParts::default(),
        }
    }

    /// Adds hook contexts of `event`, for after the round's results.
    pub(super) fn add_contexts(&mut self, event: HookEventName, contexts: Vec<String>) {
        self.contexts.extend(contexts.into_iter().map(|c| Message::context(event, c)));
    }

    /// Adds one context message.
    pub(super) fn add_context(&mut self, message: Message) {
        self.contexts.push(message);
    }

    /// The contexts gathered so far (the ledger keeps none).
    pub(super) fn take_contexts(&mut self) -> Vec<Message> {
        std::mem::take(&mut self.contexts)
    }

    /// Writes the call's decision record with its `outcome`.
    pub(super) fn emit(
        &mut self,
        trace: &crate::trace::Trace,
        outcome: DecisionOutcome,
        error_code: Option<ErrorCode>,
    ) {
        let parts = std::mem::take(&mut self.record);
        trace.record(TraceRecord::ToolDecision(ToolDecisionRecord {
            tool_use_id: self.tool_use_id.clone(),
            tool_name: self.tool_name.clone(),
            arguments: Some(std::mem::take(&mut self.arguments)),
            pre_tool_use: parts.pre,
            permission: parts.permission,
            post_tool_use: parts.post,
            outcome,
            error_code: error_code.map(|c| c.as_str().to_owned()),
        }));
    }
}
