//! PermissionRequest: hooks answer in the approver's place. A deny short-circuits and beats an
//! earlier allow; an allow's replacement arguments are re-validated and frozen; a hook failing
//! closed denies.

use serde_json::Value;
use spine_protocol::hook::{HookEvent, PermissionRequest, PermissionRequestAction, PermissionRequestInput};

use crate::hooks::engine::{Flow, Fold, HaltBy, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;
use crate::registry::{PreparedCall, ToolRegistry};
use crate::tool::Args;

/// What the PermissionRequest hooks decided.
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionVerdict {
    /// No hook decided: the approver decides.
    NoDecision,
    /// Approved.
    Allow {
        /// The hook.
        hook_id: String,
        /// Replacement arguments, validated and frozen.
        args: Option<Args>,
    },
    /// Refused.
    Deny {
        /// The hook.
        hook_id: String,
        /// For the model.
        message: String,
    },
}

/// The merged outcome of PermissionRequest.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequestResult {
    /// The verdict.
    pub verdict: PermissionVerdict,
    /// `continue: false`.
    pub halt: Option<HaltBy>,
}

struct RequestFold<'a> {
    tools: &'a ToolRegistry,
    call: &'a PreparedCall,
    verdict: PermissionVerdict,
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
            PermissionRequestAction::Allow { updated_input } => {
                let args = match updated_input {
                    Some(update) => {
                        let args = self
                            .tools
                            .revalidate(self.call.handle, update)
                            .map_err(|e| HookError::contract(format!("invalid updated input: {}", e.message)))?;
                        input.tool_input = Value::Object((*args).clone());
                        Some(args)
                    }
                    None => None,
                };
                self.verdict = PermissionVerdict::Allow { hook_id: hook.id.clone(), args };
                Ok(Flow::Continue)
            }
            PermissionRequestAction::Deny { message } => {
                self.verdict = PermissionVerdict::Deny { hook_id: hook.id.clone(), message };
                Ok(Flow::Stop)
            }
        }
    }

    fn failure(&mut self, hook: &HookSpec<PermissionRequest>, error: &HookError) -> Flow {
        self.verdict = PermissionVerdict::Deny {
            hook_id: hook.id.clone(),
            message: format!("PermissionRequest hook failed ({})", error.kind),
        };
        Flow::Stop
    }
}

impl HookRuntime {
    /// Fires PermissionRequest for a call the policy wants approved.
    pub async fn permission_request(
        &self,
        ctx: &HookContext,
        tools: &ToolRegistry,
        call: &PreparedCall,
        args: &Args,
        reason: &str,
    ) -> PermissionRequestResult {
        self.observer().on_event(&RunEvent::HookFired {
            event: PermissionRequest::NAME,
            tool_name: Some(&call.name),
            status: None,
        });
        let ctx = HookContext { event: PermissionRequest::NAME, ..ctx.clone() };
        let mut fold = RequestFold { tools, call, verdict: PermissionVerdict::NoDecision };
        let mut input = PermissionRequestInput {
            tool_name: call.name.clone(),
            tool_input: Value::Object((**args).clone()),
            tool_use_id: call.id.clone(),
            reason: reason.to_owned(),
        };
        let d = self.dispatch::<PermissionRequest, _>(&ctx, &mut input, &mut fold, Some(&call.id)).await;
        PermissionRequestResult { verdict: fold.verdict, halt: d.halt }
    }
}
