//! MCP elicitation: an MCP server asks the user for input while one of its tools runs
//! (`elicitation/create`), and gets back `accept` with the fields, `decline` or `cancel`.
//!
//! # Contract
//!
//! - The MCP client (spine-tools) turns the server's request into an [`ElicitationRequest`]
//!   and asks the [`Elicitor`] of the tool call running on that server
//!   ([`ToolContext::elicitor`](crate::tool::ToolContext::elicitor)); the [`ElicitationAnswer`]
//!   goes back to the server. A call without an elicitor (a direct call, an `mcp_tool` hook)
//!   has every elicitation declined.
//! - In a run, every call's elicitor is a [`RunElicitor`], which decides in this order:
//!   1. **Elicitation** hooks (matcher: the server's name). The first that answers (`accept`
//!      with `content`, `decline`, `cancel`) decides. A hook that fails closed, breaks the
//!      contract, or accepts with content that does not match the requested schema (a contract
//!      error) declines, with a warning; that decline is final (step 3 does not run).
//!   2. If no hook answered, the run's [`Approver`](crate::permission::Approver)
//!      ([`Approver::elicit`](crate::permission::Approver::elicit)): the person fills the form
//!      or declines or cancels; a Notification hook fires first (`elicitation_dialog`, or
//!      `elicitation_url_dialog` for a URL) when the approver asks someone
//!      ([`Approver::asks_elicitations`](crate::permission::Approver::asks_elicitations)). An
//!      approver that cannot ask (a non-interactive run, a worker) leaves it unanswered:
//!      declined, with a warning naming the server.
//!   3. **ElicitationResult** hooks see the answer (`action`, `content`) and may replace it; a
//!      failing hook, or replaced content that does not match the schema, declines.
//!   4. Accepted content of a form always matches the requested schema when it is sent
//!      (checked with [`check_content`]); anything else is declined. A URL elicitation's
//!      `accept` carries no content.
//! - A hook of either event answering `continue: false` declines (nobody is asked, no later
//!   hook runs, later elicitations of the call decline too) and the run ends after the tool
//!   call ([`RunElicitor::halt`]; the runner reads it when the tool returns).
//! - Trace: one stage entry `elicitation` per elicitation, on the tool call's id: `server`,
//!   `mode`, `action`, `answered_by` (`hook`, `user`, `nobody`), `hook_id` (the answering
//!   hook), `replaced_by` (an ElicitationResult hook that replaced the answer), `stopped_by`
//!   (the hook that answered `continue: false`) and `fields` (the names of the fields sent).
//!   MCP has no flag for sensitive fields, so every value is treated as one: values are never
//!   written to the trace, and the hook entries of both events name only the fields of a
//!   hook's `content` (`content_fields`).

mod run;

use async_trait::async_trait;
use serde_json::{Map, Value};

pub use run::RunElicitor;

/// What an MCP server asks.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The server's name in the MCP configuration.
    pub server: String,
    /// What the server says to the user.
    pub message: String,
    /// A form, or a page to open.
    pub mode: ElicitationMode,
}

/// How the server wants its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationMode {
    /// Fields, described by a JSON schema of type `object` with primitive properties.
    Form {
        /// The schema of the answer's `content`.
        requested_schema: Value,
    },
    /// A page the user opens; `accept` means they did.
    Url {
        /// The page.
        url: String,
        /// The server's id of this elicitation (empty when the server gave none).
        elicitation_id: String,
    },
}

impl ElicitationMode {
    /// `form` or `url`, as hooks read it.
    pub fn as_str(&self) -> &'static str {
        match self {
            ElicitationMode::Form { .. } => "form",
            ElicitationMode::Url { .. } => "url",
        }
    }

    /// The requested schema of a form.
    pub fn schema(&self) -> Option<&Value> {
        match self {
            ElicitationMode::Form { requested_schema } => Some(requested_schema),
            ElicitationMode::Url { .. } => None,
        }
    }
}

/// The three answers MCP defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitAction {
    /// The user gives the fields (or opened the page).
    Accept,
    /// The user refuses; the tool goes on without the input.
    Decline,
    /// The user dismissed the question.
    Cancel,
}

impl ElicitAction {
    /// `accept`, `decline` or `cancel`.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }

    /// The action of its wire name.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "accept" => Some(ElicitAction::Accept),
            "decline" => Some(ElicitAction::Decline),
            "cancel" => Some(ElicitAction::Cancel),
            _ => None,
        }
    }
}

/// The answer sent back to the server.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationAnswer {
    /// What was answered.
    pub action: ElicitAction,
    /// The fields, with `accept` of a form.
    pub content: Option<Map<String, Value>>,
}

impl ElicitationAnswer {
    /// `accept` with these fields.
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitationAnswer { action: ElicitAction::Accept, content: Some(content) }
    }

    /// `decline`.
    pub fn decline() -> Self {
        ElicitationAnswer { action: ElicitAction::Decline, content: None }
    }

    /// `cancel`.
    pub fn cancel() -> Self {
        ElicitationAnswer { action: ElicitAction::Cancel, content: None }
    }

    /// The names of the fields given (never their values), in order.
    pub fn field_names(&self) -> Vec<String> {
        self.content.iter().flat_map(|c| c.keys().cloned()).collect()
    }
}

/// Answers the elicitations of one tool call.
#[async_trait]
pub trait Elicitor: Send + Sync {
    /// Decides one elicitation. Never fails: whatever goes wrong is a `decline`.
    async fn elicit(&self, request: &ElicitationRequest) -> ElicitationAnswer;
}

/// Checks accepted `content` against a form's requested schema. The reasons name the fields
/// and the keywords they fail, never the values (they go to the trace).
pub fn check_content(schema: &Value, content: &Map<String, Value>) -> Result<(), Vec<String>> {
    let validator =
        jsonschema::validator_for(schema).map_err(|e| vec![format!("the requested schema is invalid: {e}")])?;
    let instance = Value::Object(content.clone());
    let reasons: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| match e.kind() {
            jsonschema::error::ValidationErrorKind::Required { property } => {
                format!("the required field {property} is missing")
            }
            kind => {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() { "the answer".to_owned() } else { format!("`{path}`") };
                format!("{at} fails `{}`", kind.keyword())
            }
        })
        .collect();
    if reasons.is_empty() { Ok(()) } else { Err(reasons) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn content_is_checked_against_the_schema_and_the_reasons_never_hold_a_value() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}});
        assert_eq!(check_content(&schema, &map(json!({"name": "Ada", "age": 36}))), Ok(()));
        let reasons = check_content(&schema, &map(json!({"age": -7}))).expect_err("invalid");
        assert!(reasons.iter().any(|r| r.contains("required field \"name\"")), "{reasons:?}");
        assert!(reasons.iter().any(|r| r.contains("`/age` fails `minimum`")), "{reasons:?}");
        assert!(reasons.iter().all(|r| !r.contains("-7")), "no value: {reasons:?}");
        let secret = check_content(&schema, &map(json!({"name": 12345}))).expect_err("invalid");
        assert!(secret.iter().all(|r| !r.contains("12345")), "no value: {secret:?}");
    }

    #[test]
    fn actions_have_one_wire_name_each_and_answers_name_only_their_fields() {
        for action in [ElicitAction::Accept, ElicitAction::Decline, ElicitAction::Cancel] {
            assert_eq!(ElicitAction::parse(action.as_str()), Some(action));
        }
        assert_eq!(ElicitAction::parse("maybe"), None);
        let answer = ElicitationAnswer::accept(map(json!({"b": "secret", "a": 1})));
        assert_eq!(answer.field_names(), ["b", "a"]);
        assert!(ElicitationAnswer::decline().field_names().is_empty());
    }
}
