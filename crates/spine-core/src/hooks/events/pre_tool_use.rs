//! PreToolUse: rewrites are re-validated against the same schema and frozen, the later
//! replacing the earlier (and visible to the next hook of a chain); permission suggestions
//! merge strongest-first; a block short-circuits. A rewrite discarded by a later block or
//! failure is recorded in the trace.

use std::path::Path;

use spine_protocol::hook::{HookEvent, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::permission::PermissionSuggestion;

use super::{ArgumentCheck, HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError, tool_view};
use crate::observer::RunEvent;
use crate::registry::PreparedCall;
use crate::tool::Args;

/// What PreToolUse decided for a call.
#[derive(Debug, Clone, PartialEq)]
pub enum PreToolUseOutcome {
    /// Go on to the permission policy with these (frozen) arguments.
    Proceed {
        /// The original arguments, or the last valid rewrite.
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
        /// The blocking hook.
        hook_id: String,
    },
    /// A hook failed closed or broke the contract; the model reads
    /// [`HookFailure::tool_error`].
    Failed(HookFailure),
}

struct PreFold<'a> {
    tools: &'a dyn ArgumentCheck,
    call: &'a PreparedCall,
    cwd: &'a Path,
    args: Args,
    permission: PermissionSuggestion,
    suggested_by: Option<String>,
    rewritten_by: Option<String>,
    contexts: Vec<String>,
    end: Option<PreToolUseOutcome>,
}

impl Fold<PreToolUse> for PreFold<'_> {
    fn answer(
        &mut self,
        hook: &HookSpec<PreToolUse>,
        action: PreToolUseAction,
        input: &mut PreToolUseInput,
    ) -> Result<Flow, HookError> {
        match action {
            PreToolUseAction::Proceed { permission, updated_input, additional_context } => {
                self.contexts.extend(additional_context);
                if let Some(mut update) = updated_input {
                    let command_argument = self.tools.command_argument(self.call);
                    tool_view::unview(command_argument, &self.args, &mut update);
                    self.tools.normalize(self.call, &mut update, self.cwd);
                    let args = self
                        .tools
                        .validate(self.call, update)
                        .map_err(|e| HookError::contract(format!("invalid updated input: {}", e.message)))?;
                    input.tool_input = tool_view::view(&self.call.name, command_argument, &args).tool_input;
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
                self.end = Some(PreToolUseOutcome::Blocked { reason, hook_id: hook.id.clone() });
                Ok(Flow::ShortCircuit)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<PreToolUse>, error: &HookError) -> Flow {
        self.end = Some(PreToolUseOutcome::Failed(HookFailure::new(PreToolUse::NAME, &hook.id, error)));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires PreToolUse for a prepared call; `tools` re-validates rewrites.
    pub async fn pre_tool_use(
        &self,
        ctx: &HookContext,
        tools: &dyn ArgumentCheck,
        call: &PreparedCall,
        cwd: &Path,
    ) -> Merged<PreToolUseOutcome> {
        self.observer().on_event(&RunEvent::HookFired {
            event: PreToolUse::NAME,
            tool_name: Some(&call.name),
            status: None,
        });
        if !self.registry().has::<PreToolUse>() {
            return Merged::alone(PreToolUseOutcome::Proceed {
                args: call.args.clone(),
                permission: PermissionSuggestion::Passthrough,
                suggested_by: None,
            });
        }
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
        };
        let view = tool_view::view(&call.name, tools.command_argument(call), &call.args);
        let mut input = PreToolUseInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
        };
        let d = self.dispatch::<PreToolUse, _>(&ctx, &mut input, &mut fold, Some(&call.id)).await;
        let outcome = match fold.end {
            Some(end) => {
                if let Some(by) = &fold.rewritten_by {
                    self.trace().warn(
                        format!("PreToolUse rewrite by `{by}` discarded: the call did not proceed"),
                        Some(&call.id),
                    );
                }
                end
            }
            None => PreToolUseOutcome::Proceed {
                args: fold.args,
                permission: fold.permission,
                suggested_by: fold.suggested_by,
            },
        };
        Merged::new(outcome, fold.contexts, d)
    }
}
