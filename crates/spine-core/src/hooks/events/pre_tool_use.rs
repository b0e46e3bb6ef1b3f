//! PreToolUse: rewrites are re-validated against the same schema and frozen, the later
//! replacing the earlier (and visible to the next hook of a chain); permission suggestions
//! merge strongest-first; a block short-circuits. A rewrite discarded by a later block or
//! failure is recorded in the trace.

use std::path::Path;

use serde_json::Value;
use spine_protocol::hook::{HookEvent, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::permission::PermissionSuggestion;
use spine_protocol::tool::{ErrorCode, ToolError};

use crate::hooks::engine::{Flow, Fold, HaltBy, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError, HookErrorKind};
use crate::observer::RunEvent;
use crate::registry::{PreparedCall, ToolRegistry};
use crate::tool::Args;

/// What PreToolUse decided for a call.
#[derive(Debug, Clone, PartialEq)]
pub enum PreToolVerdict {
    /// Go on to the permission policy with these (frozen) arguments.
    Proceed {
        /// The arguments: the original ones, or the last valid rewrite.
        args: Args,
        /// The strongest suggestion.
        permission: PermissionSuggestion,
        /// The hook that made it.
        suggested_by: Option<String>,
    },
    /// A hook blocked the call.
    Blocked {
        /// For the model.
        reason: String,
        /// The hook.
        hook_id: String,
    },
    /// A hook failed closed or broke the contract; `error` is the fixed text the model reads.
    Failed {
        /// `hook_contract_error`, `hook_execution_error` or `hook_launch_error`.
        error: ToolError,
        /// The hook.
        hook_id: String,
        /// The detail for the trace.
        detail: String,
    },
}

/// The merged outcome of PreToolUse.
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolUseResult {
    /// The verdict.
    pub verdict: PreToolVerdict,
    /// Context for the model, placed after the round's results.
    pub contexts: Vec<String>,
    /// `continue: false`: the call is not executed and the run ends.
    pub halt: Option<HaltBy>,
    /// The hooks' answers, in order (for the decision record).
    pub said: Vec<(String, &'static str)>,
}

struct PreFold<'a> {
    tools: &'a ToolRegistry,
    call: &'a PreparedCall,
    cwd: &'a Path,
    args: Args,
    permission: PermissionSuggestion,
    suggested_by: Option<String>,
    rewritten_by: Option<String>,
    contexts: Vec<String>,
    end: Option<PreToolVerdict>,
    said: Vec<(String, &'static str)>,
}

impl Fold<PreToolUse> for PreFold<'_> {
    fn answer(
        &mut self,
        hook: &HookSpec<PreToolUse>,
        action: PreToolUseAction,
        input: &mut PreToolUseInput,
    ) -> Result<Flow, HookError> {
        use spine_protocol::hook::Action as _;
        self.said.push((hook.id.clone(), action.decision()));
        match action {
            PreToolUseAction::Proceed { permission, updated_input, additional_context } => {
                self.contexts.extend(additional_context);
                if let Some(mut update) = updated_input {
                    self.tools.tool(self.call.handle).normalize(&mut update, self.cwd);
                    let args = self
                        .tools
                        .revalidate(self.call.handle, update)
                        .map_err(|e| HookError::contract(format!("invalid updated input: {}", e.message)))?;
                    input.tool_input = Value::Object((*args).clone());
                    self.args = args;
                    self.rewritten_by = Some(hook.id.clone());
                }
                if permission.strength() > self.permission.strength() {
                    self.permission = permission;
                    self.suggested_by = Some(hook.id.clone());
                }
                Ok(Flow::Continue)
            }
            PreToolUseAction::Block { reason, additional_context } => {
                self.contexts.extend(additional_context);
                self.end = Some(PreToolVerdict::Blocked { reason, hook_id: hook.id.clone() });
                Ok(Flow::Stop)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<PreToolUse>, error: &HookError) -> Flow {
        self.said.push((hook.id.clone(), error.kind.as_str()));
        let error_result = match error.kind {
            HookErrorKind::Contract => {
                ToolError::new(ErrorCode::HookContractError, "PreToolUse hook returned an invalid update")
            }
            HookErrorKind::Launch => ToolError::new(ErrorCode::HookLaunchError, "PreToolUse hook could not be started"),
            HookErrorKind::Failed | HookErrorKind::Timeout => {
                ToolError::new(ErrorCode::HookExecutionError, "PreToolUse hook failed")
            }
        };
        self.end = Some(PreToolVerdict::Failed {
            error: error_result,
            hook_id: hook.id.clone(),
            detail: error.detail.clone(),
        });
        Flow::Stop
    }
}

impl HookRuntime {
    /// Fires PreToolUse for a prepared call.
    pub async fn pre_tool_use(
        &self,
        ctx: &HookContext,
        tools: &ToolRegistry,
        call: &PreparedCall,
        cwd: &Path,
    ) -> PreToolUseResult {
        self.observer().on_event(&RunEvent::HookFired {
            event: PreToolUse::NAME,
            tool_name: Some(&call.name),
            status: None,
        });
        let ctx = HookContext { event: PreToolUse::NAME, ..ctx.clone() };
        let mut fold = PreFold {
            tools,
            call,
            cwd,
            args: call.args.clone(),
            permission: PermissionSuggestion::Passthrough,
            suggested_by: None,
            rewritten_by: None,
            contexts: Vec::new(),
            end: None,
            said: Vec::new(),
        };
        if !self.registry().has::<PreToolUse>() {
            return PreToolUseResult {
                verdict: PreToolVerdict::Proceed { args: fold.args, permission: fold.permission, suggested_by: None },
                contexts: Vec::new(),
                halt: None,
                said: Vec::new(),
            };
        }
        let mut input = PreToolUseInput {
            tool_name: call.name.clone(),
            tool_input: Value::Object((*call.args).clone()),
            tool_use_id: call.id.clone(),
        };
        let d = self.dispatch::<PreToolUse, _>(&ctx, &mut input, &mut fold, Some(&call.id)).await;
        let verdict = match fold.end {
            Some(end) => {
                if let Some(by) = &fold.rewritten_by {
                    self.trace().warn(
                        format!("PreToolUse rewrite by `{by}` discarded: the call did not proceed"),
                        Some(&call.id),
                    );
                }
                end
            }
            None => PreToolVerdict::Proceed {
                args: fold.args,
                permission: fold.permission,
                suggested_by: fold.suggested_by,
            },
        };
        PreToolUseResult { verdict, contexts: fold.contexts, halt: d.halt, said: fold.said }
    }
}
