//! The permission step of a call: the policy decides (`allow`, `deny`, `ask`, `defer`); what
//! it does not deny, an active skill's tool lists may still refuse (`skill_use`); an
//! `ask` goes to PermissionRequest hooks, then to the approver; replacement arguments from a
//! hook are checked against the rules again. A protected-path `ask` goes to the approver only.
//! A `defer` needs a single call in a run that may defer; otherwise it is asked.
//!
//! Just before the approver is asked, a Notification fires with `notification_type:
//! permission_prompt` and a message naming the tool (Claude Code's main use of Notification).
//!
//! PermissionRequest hooks are offered the call's `permission_suggestions`
//! ([`permission_suggestions`]). When a hook's allow stands, its `updatedPermissions` are
//! applied to the session ([`PermissionPolicy::apply_updates`]), those whose destination is a
//! settings file are saved through the agent's [`crate::permission::PermissionStore`], and the
//! decision records what became of each (`permission_updates`).

use std::path::PathBuf;
use std::sync::Arc;

use spine_protocol::hook::{HookEventName, Notification, NotificationInput, PermissionDeniedInput};
use spine_protocol::permission::{
    DecisionSource, PermissionBehavior, PermissionDecision, PermissionMode, PermissionSuggestion,
};
use spine_protocol::permission_update::{AppliedUpdate, PermissionUpdate};
use spine_protocol::tool::{Effect, ErrorCode, ToolCall, ToolError};
use spine_protocol::trace::DecisionOutcome;

use super::Run;
use super::call::{CallOutcome, Ledger, Proposal, RecordParts, RoundEnd, Settled};
use crate::hooks::events::{Asked, PermissionRequestOutcome};
use crate::hooks::tool_view;
use crate::observer::RunEvent;
use crate::permission::policy::{resolve_write_paths, shell_analysis};
use crate::permission::{
    Approval, ApprovalRequest, CallFacts, PermissionPolicy, PolicyUrlGate, permission_suggestions,
};
use crate::registry::PreparedCall;
use crate::tool::{Args, UrlGate};
use crate::workspace::Workspace;

/// What the model reads after a refusal when a PermissionDenied hook answered `retry: true`.
const RETRY_NOTE: &str = " (A PermissionDenied hook says you may retry this call, differently.)";

/// The `notification_type` of the Notification fired before the approver is asked.
const PERMISSION_PROMPT: &str = "permission_prompt";

/// The permission step's answer.
enum Authorized {
    Run(Args),
    Refused(ToolError),
    Defer,
    Halt(Option<String>),
}

/// The redirect gate of a network tool: hops are decided by the run's policy, as calls of the
/// same tool with that URL and no hook suggestion.
pub(super) fn url_gate(policy: &PermissionPolicy, tool_name: &str, effect: Effect) -> Option<Arc<dyn UrlGate>> {
    match effect {
        Effect::Network => Some(Arc::new(PolicyUrlGate::new(policy.clone(), tool_name, effect))),
        Effect::Read | Effect::Write | Effect::Execute => None,
    }
}

impl Run<'_> {
    /// Fires PermissionDenied for a refused call; whether a hook answered `retry: true`.
    async fn permission_denied(&self, prepared: &PreparedCall, error: &ToolError, ledger: &mut Ledger) -> bool {
        let command_argument = self.agent.tools.tool(prepared.handle).command_argument();
        let view = tool_view::view(&prepared.name, command_argument, &prepared.args);
        let input = PermissionDeniedInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: prepared.id.clone(),
            reason: error.message.clone(),
        };
        let denied = self.hooks.permission_denied(&self.hook_ctx, input).await;
        ledger.add_contexts(HookEventName::PermissionDenied, denied.contexts);
        denied.outcome
    }

    /// The arguments the tool runs with, or the call settled: denied, deferred (the run ends
    /// with the call pending), or halted by a PermissionRequest hook.
    pub(super) async fn permit(
        &self,
        call: &ToolCall,
        prepared: &PreparedCall,
        proposal: Proposal,
        batch: usize,
        ledger: &mut Ledger,
    ) -> Result<Args, Settled> {
        match self.authorize(prepared, proposal, batch, &mut ledger.record).await {
            Authorized::Run(args) => Ok(args),
            Authorized::Refused(mut error) => {
                if self.permission_denied(prepared, &error, ledger).await {
                    error.message.push_str(RETRY_NOTE);
                }
                Err(self.settle_with_error(ledger, call, error, DecisionOutcome::Denied).into())
            }
            Authorized::Defer => {
                ledger.emit(&self.trace, DecisionOutcome::Deferred, None);
                let outcome = CallOutcome {
                    result: None,
                    contexts: ledger.take_contexts(),
                    end: Some(RoundEnd::Deferred(call.clone())),
                    error: None,
                    executed: None,
                };
                Err(outcome.into())
            }
            Authorized::Halt(stop_reason) => {
                let error = ToolError::new(
                    ErrorCode::HookStoppedContinuation,
                    "Skipped after a PermissionRequest hook stopped the run",
                );
                Err(self
                    .settle_with_error(ledger, call, error, DecisionOutcome::Halted)
                    .ending(RoundEnd::Halted { stop_reason })
                    .into())
            }
        }
    }

    async fn authorize(
        &self,
        call: &PreparedCall,
        proposal: Proposal,
        batch: usize,
        record: &mut RecordParts,
    ) -> Authorized {
        let Proposal { mut args, suggestion, suggested_by } = proposal;
        let (suggestion, suggested_by) = (&suggestion, suggested_by.as_deref());
        let mut decision = self.policy_decision(call, &args, suggestion, suggested_by);
        if decision.behavior == PermissionBehavior::Defer && !(self.allow_defer && batch == 1) {
            decision = PermissionDecision::new(
                PermissionBehavior::Ask,
                decision.source,
                "defer needs a single call in a non-interactive run; asking instead",
            );
        }
        // An active skill's tool lists refuse what they do not allow; they never allow more.
        if decision.behavior != PermissionBehavior::Deny
            && let Some(refusal) = self.skill_refusal(call, &args)
        {
            decision = refusal;
        }
        if decision.behavior == PermissionBehavior::Ask {
            let asked_with = Arc::clone(&args);
            decision = match self.ask(call, &mut args, &decision).await {
                Ok(answered) => answered,
                Err(stop_reason) => return Authorized::Halt(stop_reason),
            };
            // A hook's replacement arguments are held to the active skills' lists too.
            if decision.behavior == PermissionBehavior::Allow
                && !Arc::ptr_eq(&asked_with, &args)
                && let Some(refusal) = self.skill_refusal(call, &args)
            {
                decision = refusal;
            }
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

    /// Answers an `ask`: PermissionRequest hooks (not for a protected path), then the approver
    /// when no hook decided. A hook's replacement arguments replace `args` and are checked
    /// against the rules again. `Err` carries the stop reason of a hook that stopped the run.
    async fn ask(
        &self,
        call: &PreparedCall,
        args: &mut Args,
        asked: &PermissionDecision,
    ) -> Result<PermissionDecision, Option<String>> {
        // A protected-path ask (policy row 5) goes to the approver only: no hook answers it.
        let tools = Arc::clone(&self.agent.tools);
        let suggestions = if asked.source == DecisionSource::Workspace {
            Vec::new()
        } else {
            let paths = tools.tool(call.handle).workspace_paths(args);
            permission_suggestions(&call.name, args, &self.workspace(), &self.cwd(), &paths)
        };
        let verdict = if asked.source == DecisionSource::Workspace {
            PermissionRequestOutcome::NoDecision
        } else {
            let asked_for = Asked { reason: &asked.reason, suggestions: suggestions.clone() };
            let answer = self.hooks.permission_request(&self.hook_ctx, tools.as_ref(), call, args, asked_for).await;
            if let Some(halt) = answer.halt {
                return Err(halt.stop_reason);
            }
            answer.outcome
        };
        let mut updates = Vec::new();
        let mut decision = match verdict {
            PermissionRequestOutcome::Allow { hook_id, args: new_args, updates: asked_updates } => {
                updates = asked_updates;
                let source = DecisionSource::PermissionRequestHook { hook_id };
                self.allowed_with(call, args, new_args, source, "approved by PermissionRequest hook")
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
                self.notify_permission_prompt(&call.name).await;
                let command_argument = tools.tool(call.handle).command_argument();
                let request = ApprovalRequest {
                    tool_name: &call.name,
                    tool_use_id: &call.id,
                    args,
                    reason: &asked.reason,
                    asked_by: &asked.source,
                    suggestions: &suggestions,
                    command_argument,
                };
                match self.agent.approver.approve(&request).await {
                    Approval::Allow => {
                        PermissionDecision::new(PermissionBehavior::Allow, DecisionSource::Approver, "approved")
                    }
                    Approval::AllowChanged { args: new_args, updates: answered } => {
                        let new_args = match new_args {
                            None => Ok(None),
                            Some(update) => self.approver_args(call, args, update).map(Some),
                        };
                        match new_args {
                            Ok(new_args) => {
                                updates = answered;
                                self.allowed_with(call, args, new_args, DecisionSource::Approver, "approved")
                            }
                            Err(why) => PermissionDecision::new(
                                PermissionBehavior::Deny,
                                DecisionSource::Approver,
                                format!("the approver's updated input is invalid: {why}"),
                            ),
                        }
                    }
                    Approval::Deny { reason } => {
                        PermissionDecision::new(PermissionBehavior::Deny, DecisionSource::Approver, reason)
                    }
                }
            }
        };
        if decision.behavior == PermissionBehavior::Allow && !updates.is_empty() {
            decision.permission_updates = self.apply_permission_updates(&updates, call);
        }
        Ok(decision)
    }

    /// An allow (by a hook or the approver) with optional replacement arguments: these replace
    /// `args` and are checked against the rules again — a deny rule still denies, and a
    /// protected path still needs an allow rule naming it.
    fn allowed_with(
        &self,
        call: &PreparedCall,
        args: &mut Args,
        new_args: Option<Args>,
        source: DecisionSource,
        reason: &str,
    ) -> PermissionDecision {
        let approved = PermissionDecision::new(PermissionBehavior::Allow, source, reason);
        let Some(new_args) = new_args else { return approved };
        let recheck = self.policy_decision(call, &new_args, &PermissionSuggestion::Allow { reason: None }, None);
        *args = new_args;
        match recheck.behavior {
            PermissionBehavior::Deny => recheck,
            PermissionBehavior::Ask if recheck.source == DecisionSource::Workspace => recheck,
            PermissionBehavior::Allow | PermissionBehavior::Ask | PermissionBehavior::Defer => approved,
        }
    }

    /// The approver's replacement arguments, as the tool sees them (a shell tool's `command`
    /// mapped back to its own argument), normalised and validated like a hook's.
    fn approver_args(
        &self,
        call: &PreparedCall,
        args: &Args,
        mut update: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Args, String> {
        use crate::hooks::events::ArgumentCheck;
        let tools = self.agent.tools.as_ref();
        tool_view::unview(tools.command_argument(call), args, &mut update);
        tools.normalize(call, &mut update, &self.cwd());
        tools.validate(call, update).map_err(|e| e.message)
    }

    /// The workspace in force: the agent's, with the roots permission updates added or removed.
    pub(super) fn workspace(&self) -> Arc<Workspace> {
        self.agent.policy.workspace(&self.agent.config.workspace)
    }

    /// Applies an allowing hook's `updatedPermissions` to the session and saves those whose
    /// destination is a settings file; what became of each, also said on the observer (a note,
    /// or a warning for a refused update) and in the trace.
    fn apply_permission_updates(&self, updates: &[PermissionUpdate], call: &PreparedCall) -> Vec<AppliedUpdate> {
        let config = &self.agent.config;
        let mut applied = self.agent.policy.apply_updates(updates, &config.workspace, &config.cwd);
        for entry in &mut applied {
            let bypass =
                matches!(entry.update, PermissionUpdate::SetMode { mode: PermissionMode::BypassPermissions, .. });
            if entry.applied && entry.update.destination().is_settings_file() {
                let saved = match (&config.permission_store, bypass) {
                    (_, true) => "bypassPermissions holds for the session only, never saved".to_owned(),
                    (Some(store), false) => match store.save(&entry.update) {
                        Ok(file) => {
                            // Spine's own write: no ConfigChange for it.
                            self.watch.written_by_spine(&file);
                            format!("saved to {}", file.display())
                        }
                        Err(why) => format!("not saved ({why}); this session only"),
                    },
                    (None, false) => "this session only (no settings file to save to)".to_owned(),
                };
                entry.note = Some(match entry.note.take() {
                    Some(note) => format!("{note}; {saved}"),
                    None => saved,
                });
            }
            let what = serde_json::to_string(&entry.update).unwrap_or_default();
            let text = match (&entry.applied, &entry.note) {
                (true, None) => format!("permission update applied: {what}"),
                (true, Some(note)) => format!("permission update applied: {what} ({note})"),
                (false, note) => format!("permission update refused: {what}: {}", note.as_deref().unwrap_or("")),
            };
            if entry.applied {
                self.observer.on_event(&RunEvent::Note { text: &text });
            } else {
                self.trace.warn(text.clone(), Some(&call.id));
                self.observer.on_event(&RunEvent::Warning { text: &text });
            }
        }
        applied
    }

    /// The Notification of a permission prompt: the approver is about to be asked about `tool`.
    async fn notify_permission_prompt(&self, tool: &str) {
        let input = NotificationInput {
            message: format!("spine needs your permission to use {tool}"),
            title: Some("Permission needed".to_owned()),
            notification_type: PERMISSION_PROMPT.to_owned(),
        };
        self.hooks.observe::<Notification>(&self.hook_ctx, input).await;
    }

    fn policy_decision(
        &self,
        call: &PreparedCall,
        args: &Args,
        suggestion: &PermissionSuggestion,
        suggested_by: Option<&str>,
    ) -> PermissionDecision {
        let tools = &self.agent.tools;
        let cwd = &self.cwd();
        let effect = tools.effect(call.handle);
        let workspace_paths = tools.tool(call.handle).workspace_paths(args);
        // The shell command is parsed once per decision; its redirection and `tee` targets are
        // writes, checked against the boundary like a file tool's path.
        let shell = shell_analysis(&call.name, args);
        let mut targets: Vec<PathBuf> = shell.as_ref().map(|a| a.write_paths(cwd)).unwrap_or_default();
        if effect == Effect::Write {
            targets.extend(workspace_paths.iter().map(|p| Workspace::normalize(p, cwd)));
        }
        let workspace = self.workspace();
        let (write_paths, write_violation) = resolve_write_paths(&workspace, cwd, targets);
        let boundary = workspace_paths.iter().find_map(|p| workspace.resolve(p, cwd).err()).or(write_violation);
        let facts = CallFacts {
            tool_name: &call.name,
            effect,
            args,
            boundary: boundary.as_ref(),
            write_paths: &write_paths,
            shell: shell.as_ref(),
            cwd: Some(cwd),
            workspace: Some(&workspace),
        };
        self.agent.policy.decide(facts, suggestion, suggested_by)
    }
}
