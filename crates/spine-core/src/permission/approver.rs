//! The approver answers `ask` decisions: a person at a terminal (the CLI provides one), or
//! [`DenyApprover`] when nobody can answer — `ask` then fails closed.
//!
//! It also answers the MCP elicitations no Elicitation hook answered ([`Approver::elicit`]):
//! by default it cannot (`None`), and the elicitation is declined ([`crate::elicitation`]).

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::elicitation::{ElicitationAnswer, ElicitationRequest};

/// A call waiting for approval.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalRequest<'a> {
    /// The tool.
    pub tool_name: &'a str,
    /// The call id.
    pub tool_use_id: &'a str,
    /// The frozen arguments (exactly what will run).
    pub args: &'a Map<String, Value>,
    /// Why approval is needed.
    pub reason: &'a str,
    /// Who asked: the rule, the hook, the mode's default or the workspace boundary.
    pub asked_by: &'a spine_protocol::permission::DecisionSource,
    /// The permission updates an "always" answer could apply (Claude Code's
    /// `permission_suggestions`); empty when there are none.
    pub suggestions: &'a [spine_protocol::permission_update::PermissionUpdate],
    /// The argument of `args` that holds the command line, for a tool that runs one (the tool
    /// looks like `Bash` to hooks and hosts: [`crate::hooks::tool_view`]).
    pub command_argument: Option<&'static str>,
}

/// The approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run it.
    Allow,
    /// Run it with changes: replacement arguments (checked against the rules again, as a
    /// PermissionRequest hook's are) and permission updates to apply to the session (and save,
    /// for a settings-file destination), as a PermissionRequest hook's `updatedPermissions`.
    AllowChanged {
        /// The arguments to run with instead, when they change.
        args: Option<Map<String, Value>>,
        /// The permission updates.
        updates: Vec<spine_protocol::permission_update::PermissionUpdate>,
    },
    /// Do not run it.
    Deny {
        /// Why (reaches the model).
        reason: String,
    },
}

/// Answers approval requests.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Decides one call.
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval;

    /// Asks the person what an MCP server's elicitation requests: the fields of a form (the
    /// answer's content should match its requested schema), or whether they opened a URL; or
    /// their decline or cancel. `None` when nobody can be asked here (the default: a
    /// non-interactive run, a worker), and the elicitation is declined.
    async fn elicit(&self, request: &ElicitationRequest) -> Option<ElicitationAnswer> {
        let _ = request;
        None
    }

    /// Where to record the files this approver writes into the project (the rules of an
    /// "always for this project" answer), so the session's command sandbox keeps them rather
    /// than undoing them as a running command's creation. Nothing by default.
    fn record_writes_in(&self, writes: std::sync::Arc<spine_process::OwnWrites>) {
        let _ = writes;
    }

    /// Whether [`Approver::elicit`] asks a person (a terminal can answer): the run then fires
    /// a Notification (`elicitation_dialog`) just before it. `false` by default, as `elicit`
    /// answers `None`.
    fn asks_elicitations(&self) -> bool {
        false
    }
}

/// The approver of non-interactive runs: every `ask` becomes a deny.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyApprover;

#[async_trait]
impl Approver for DenyApprover {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        Approval::Deny {
            reason: format!(
                "{} needs approval ({}) and no one can approve it in a non-interactive run; \
                 add an allow rule or change the permission mode",
                request.tool_name, request.reason
            ),
        }
    }
}
