//! Permission: hooks may suggest, never authorise.
//!
//! Order is fixed: PreToolUse → [`PermissionPolicy::decide`] → (ask → PermissionRequest hooks
//! → [`Approver`]) → handler. The policy combines the workspace boundary, the configured
//! rules, the permission mode and the hooks' merged suggestion in one precedence table (see
//! [`policy`]).

pub mod approver;
pub mod narrow;
pub mod policy;
pub mod protected;
pub mod rule;
pub mod shell;
pub mod web;

pub use approver::{Approval, ApprovalRequest, Approver, DenyApprover};
pub use narrow::{covering_rules, narrowest_rule};
pub use policy::{CallFacts, PermissionPolicy, PermissionRules};
pub use rule::{PermissionRule, RuleError, RuleUse};
pub use web::{PolicyUrlGate, url_in_domain};
