//! `--permission-prompt-tool stdio`: the host answers spine's `ask` decisions with
//! `can_use_tool` control requests, as Claude Code asks an SDK host's `canUseTool` callback.
//!
//! Contract of [`HostApprover`]:
//! - The request carries the call as hooks see it (`tool_name`, `input`: a tool that runs a
//!   command line is `Bash` with `command`), `description` (the input's, when it has one),
//!   `tool_use_id`, `permission_suggestions`, and `decision_reason` (why the rules ask).
//! - `{"behavior":"allow"}` runs the call; an `updatedInput` that differs from the input
//!   replaces the arguments, which the pipeline validates and checks against the rules again
//!   (a deny rule still denies); `updatedPermissions` are applied like a PermissionRequest
//!   hook's. `{"behavior":"deny","message"}` refuses it with the message; with
//!   `"interrupt": true` the turn is canceled as by an `interrupt` request.
//! - Anything else — an error answer, a malformed answer, the host gone, the turn canceled,
//!   no answer within [`ANSWER_LIMIT`] — denies, with the reason: an approver that cannot
//!   answer never lets a call through.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::tool_view;
use spine_core::permission::{Approval, ApprovalRequest, Approver};

use super::control::Control;

/// How long the host has to answer a permission question before it counts as denied.
pub(crate) const ANSWER_LIMIT: Duration = Duration::from_secs(600);

/// The approver that asks the host.
pub(crate) struct HostApprover {
    control: Arc<Control>,
    turn: Mutex<CancellationToken>,
}

impl HostApprover {
    /// An approver asking through `control`.
    pub(crate) fn new(control: Arc<Control>) -> Self {
        HostApprover { control, turn: Mutex::new(CancellationToken::new()) }
    }

    /// The running turn's token: a pending question ends with it, and an answer with
    /// `interrupt: true` cancels it.
    pub(crate) fn set_turn(&self, cancel: CancellationToken) {
        if let Ok(mut turn) = self.turn.lock() {
            *turn = cancel;
        }
    }

    fn turn(&self) -> CancellationToken {
        self.turn.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl Approver for HostApprover {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        let view = tool_view::view(request.tool_name, request.command_argument, request.args);
        let mut body = json!({
            "subtype": "can_use_tool",
            "tool_name": view.tool_name,
            "display_name": view.tool_name,
            "input": view.tool_input,
            "permission_suggestions": request.suggestions,
            "blocked_path": Value::Null,
            "decision_reason": request.reason,
            "tool_use_id": request.tool_use_id,
        });
        // Claude Code's `description` of the call (the SDKs pass it to the callback): the one
        // the model gave in the input (Bash's), when it gave one.
        if let (Some(description), Some(map)) = (view.tool_input.get("description").cloned(), body.as_object_mut())
            && description.is_string()
        {
            map.insert("description".to_owned(), description);
        }
        let turn = self.turn();
        self.control.state("requires_action");
        let answered = self.control.request(body, &turn, Some(ANSWER_LIMIT)).await;
        self.control.state("running");
        match answered {
            Ok(answer) => {
                let (approval, interrupt) = read_answer(answer, &view.tool_input);
                if interrupt {
                    turn.cancel();
                }
                approval
            }
            Err(e) => Approval::Deny { reason: format!("permission to use {} was not given: {e}", request.tool_name) },
        }
    }
}

/// The host's answer as an approval, and whether it interrupts the turn.
fn read_answer(answer: Value, asked_input: &Value) -> (Approval, bool) {
    let Value::Object(mut answer) = answer else {
        return (deny("the host's permission answer is not an object"), false);
    };
    match answer.get("behavior").and_then(Value::as_str) {
        Some("allow") => {
            let args = match answer.remove("updatedInput") {
                None | Some(Value::Null) => None,
                Some(Value::Object(input)) if Value::Object(input.clone()) == *asked_input => None,
                Some(Value::Object(input)) => Some(input),
                Some(_) => return (deny("the host's `updatedInput` is not an object"), false),
            };
            let updates = match answer.remove("updatedPermissions") {
                None | Some(Value::Null) => Vec::new(),
                Some(list) => match spine_hooks::wire::permission_updates::read_list(list, "updatedPermissions") {
                    Ok(updates) => updates,
                    Err(e) => return (deny(&format!("the host's answer is invalid: {e}")), false),
                },
            };
            if args.is_none() && updates.is_empty() {
                (Approval::Allow, false)
            } else {
                (Approval::AllowChanged { args, updates }, false)
            }
        }
        Some("deny") => {
            let message = answer.get("message").and_then(Value::as_str).unwrap_or("denied by the host").to_owned();
            let interrupt = answer.get("interrupt").and_then(Value::as_bool).unwrap_or(false);
            (Approval::Deny { reason: message }, interrupt)
        }
        _ => (deny("the host's permission answer needs `behavior`: `allow` or `deny`"), false),
    }
}

fn deny(reason: &str) -> Approval {
    Approval::Deny { reason: reason.to_owned() }
}

/// The input as an object (for comparisons in tests).
#[cfg(test)]
fn object(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allow_with_the_same_input_changes_nothing() {
        let input = json!({"command": "ls"});
        let (approval, interrupt) = read_answer(json!({"behavior": "allow", "updatedInput": input.clone()}), &input);
        assert_eq!(approval, Approval::Allow);
        assert!(!interrupt);
    }

    #[test]
    fn an_allow_with_another_input_replaces_the_arguments() {
        let input = json!({"command": "rm -rf /"});
        let answer = json!({"behavior": "allow", "updatedInput": {"command": "echo safe"}});
        let (approval, _) = read_answer(answer, &input);
        assert_eq!(
            approval,
            Approval::AllowChanged { args: Some(object(json!({"command": "echo safe"}))), updates: Vec::new() }
        );
    }

    #[test]
    fn a_deny_with_interrupt_denies_and_interrupts() {
        let (approval, interrupt) =
            read_answer(json!({"behavior": "deny", "message": "no", "interrupt": true}), &json!({}));
        assert_eq!(approval, Approval::Deny { reason: "no".to_owned() });
        assert!(interrupt);
    }

    #[test]
    fn a_malformed_answer_denies_with_the_reason() {
        let (approval, _) = read_answer(json!({"behavior": "maybe"}), &json!({}));
        assert!(matches!(approval, Approval::Deny { ref reason } if reason.contains("behavior")));
        let (approval, _) =
            read_answer(json!({"behavior": "allow", "updatedPermissions": [{"type": "addRules"}]}), &json!({}));
        assert!(matches!(approval, Approval::Deny { ref reason } if reason.contains("updatedPermissions[0]")));
    }

    #[test]
    fn allowed_permission_updates_are_passed_on() {
        let answer = json!({"behavior": "allow", "updatedPermissions": [
            {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}], "behavior": "allow", "destination": "session"}
        ]});
        let (approval, _) = read_answer(answer, &json!({}));
        assert!(matches!(approval, Approval::AllowChanged { args: None, ref updates } if updates.len() == 1));
    }
}
