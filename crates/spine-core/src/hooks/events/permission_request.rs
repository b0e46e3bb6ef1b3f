//! PermissionRequest: hooks answer in the approver's place. A deny short-circuits and beats an
//! earlier allow; an allow's replacement arguments are re-validated and frozen; a hook failing
//! closed is a failure the caller treats as a denial ([`HookFailure::reason`]).
//!
//! The input carries the call's `permission_suggestions` (the caller's, see
//! [`crate::permission::suggest`]). An allow's `updatedPermissions` are checked here
//! ([`check_update`]: an invalid entry is a contract error naming
//! `updatedPermissions[i]…`) and returned with the allow; the caller applies them when the call
//! is allowed. With several allows, the last one's updates are the ones returned.

use std::path::Path;

use spine_protocol::hook::{HookEvent, PermissionRequest, PermissionRequestAction, PermissionRequestInput};
use spine_protocol::permission_update::PermissionUpdate;

use super::{ArgumentCheck, HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError, tool_view};
use crate::observer::RunEvent;
use crate::permission::check_update;
use crate::registry::PreparedCall;
use crate::tool::Args;

/// What the PermissionRequest hooks decided.
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionRequestOutcome {
    /// No hook decided: the approver decides.
    NoDecision,
    /// Approved.
    Allow {
        /// The approving hook.
        hook_id: String,
        /// Replacement arguments, validated and frozen.
        args: Option<Args>,
        /// The permission updates of the allow (`updatedPermissions`), checked.
        updates: Vec<PermissionUpdate>,
    },
    /// Refused.
    Deny {
        /// The denying hook.
        hook_id: String,
        /// For the model.
        message: String,
    },
    /// A hook failed closed or broke the contract: the call is denied with
    /// [`HookFailure::reason`].
    Failed(HookFailure),
}

struct RequestFold<'a> {
    tools: &'a dyn ArgumentCheck,
    call: &'a PreparedCall,
    args: &'a Args,
    cwd: &'a Path,
    outcome: PermissionRequestOutcome,
}
impl Fold<PermissionRequest> for RequestFold<'_> {
    fn answer(
        &mut self,
        hook: &HookSpec<PermissionRequest>,
        action: PermissionRequestAction,
        input: &mut PermissionRequestInput,
    ) -> Result<Flow, HookError> {
        match action {
            PermissionRequestAction::NoDecision => Ok(Flow::Continue),
            PermissionRequestAction::Allow { updated_input, updated_permissions } => {
                for (i, update) in updated_permissions.iter().enumerate() {
                    check_update(update, self.cwd).map_err(|e| {
                        HookError::contract(format!("invalid `updatedPermissions[{i}]` ({}): {e}", update.kind()))
                    })?;
                }
                let args = match updated_input {
                    Some(mut update) => {
                        let command_argument = self.tools.command_argument(self.call);
                        tool_view::unview(command_argument, self.args, &mut update);
                        let args = self
                            .tools
                            .validate(self.call, update)
                            .map_err(|e| HookError::contract(format!("invalid updated input: {}", e.message)))?;
                        input.tool_input = tool_view::view(&self.call.name, command_argument, &args).tool_input;
                        Some(args)
                    }
                    None => None,
                };
                self.outcome =
                    PermissionRequestOutcome::Allow { hook_id: hook.id.clone(), args, updates: updated_permissions };
                Ok(Flow::Continue)
            }
            PermissionRequestAction::Deny { message } => {
                self.outcome = PermissionRequestOutcome::Deny { hook_id: hook.id.clone(), message };
                Ok(Flow::ShortCircuit)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<PermissionRequest>, error: &HookError) -> Flow {
        self.outcome = PermissionRequestOutcome::Deny {
            hook_id: hook.id.clone(),
            message: format!("PermissionRequest hook failed ({})", error.kind),
        };
        Flow::ShortCircuit
    }
}

/// Why a call is asked about, and what an "always" answer would store.
#[derive(Debug, Clone)]
pub struct Asked<'a> {
    /// The policy's reason.
    pub reason: &'a str,
    /// The `permission_suggestions` of the input.
    pub suggestions: Vec<PermissionUpdate>,
}

impl HookRuntime {
    /// Fires PermissionRequest for a call the policy wants approved, offering `suggestions`;
    /// `tools` re-validates replacement arguments.
    pub async fn permission_request(
        &self,
        ctx: &HookContext,
        tools: &dyn ArgumentCheck,
        call: &PreparedCall,
        args: &Args,
        asked: Asked<'_>,
    ) -> Merged<PermissionRequestOutcome> {
        self.observer().on_event(&RunEvent::HookFired {
            event: PermissionRequest::NAME,
            tool_name: Some(&call.name),
            status: None,
        });
        let ctx = HookContext { event: PermissionRequest::NAME, ..ctx.clone() };
        let cwd = ctx.session.cwd.as_path();
        let mut fold = RequestFold { tools, call, args, cwd, outcome: PermissionRequestOutcome::NoDecision };
        let view = tool_view::view(&call.name, tools.command_argument(call), args);
        let mut input = PermissionRequestInput {
            tool_name: view.tool_name,
            spine_tool_name: view.spine_tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
            reason: asked.reason.to_owned(),
            permission_suggestions: asked.suggestions,
        };
        let d = self.dispatch::<PermissionRequest, _>(&ctx, &mut input, &mut fold, Some(&call.id)).await;
        Merged::new(fold.outcome, Vec::new(), d)
    }
}
