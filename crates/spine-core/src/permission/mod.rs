//! Permission: hooks may suggest, never authorise.
//!
//! Order is fixed: PreToolUse → [`PermissionPolicy::decide`] → (ask → PermissionRequest hooks
//! → [`Approver`]) → handler. The policy combines the workspace boundary, the configured
//! rules, the permission mode and the hooks' merged suggestion in one precedence table (see
//! [`policy`]). What a PermissionRequest hook is offered ([`suggest`]) and what its allow may
//! change for the session ([`session`]) stay below the same table: updates add, replace or
//! remove rules, never reorder the precedence.

pub mod approver;
mod call_facts;
pub mod exact;
pub mod file_glob;
pub mod file_rules;
pub mod harmless;
mod harmless_git;
mod harmless_search;
mod harmless_special;
mod harmless_table;
pub mod narrow;
pub mod policy;
pub mod protected;
pub mod rule;
pub mod session;
pub mod shell;
pub mod suggest;
pub mod web;

pub use approver::{Approval, ApprovalRequest, Approver, DenyApprover};
pub use narrow::{covering_rules, narrowest_rule};
pub use policy::{CallFacts, PermissionPolicy, PermissionRules};
pub use rule::{PermissionRule, RuleError, RuleUse};
pub use session::{PermissionStore, RuleOrigins, UpdateLimits, check_update};
pub use suggest::permission_suggestions;
pub use web::{PolicyUrlGate, url_in_domain};
