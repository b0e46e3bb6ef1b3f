//! [`RunElicitor`]: the elicitor the runner gives each tool call. It follows the order of the
//! module contract ([`super`]): Elicitation hooks, else the approver; then ElicitationResult
//! hooks; accepted form content checked against the requested schema; one trace entry.
//! Every problem declines, with a warning on the trace and to the run's observer.
//!
//! Just before the approver is asked, when it asks someone ([`Approver::asks_elicitations`]),
//! a Notification fires: `notification_type` `elicitation_dialog` (a form) or
//! `elicitation_url_dialog` (a URL), as Claude Code fires it when it shows the dialog.
//!
//! A hook of either event that answers `continue: false` declines the elicitation (whatever
//! it or another hook answered; nobody is asked, no later hook runs) and stops the run: the
//! first such hook is kept ([`RunElicitor::halt`]) and the runner ends the run after the tool
//! call, as for a PostToolBatch hook's `continue: false`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Map, Value};
use spine_protocol::hook::{ElicitationInput, ElicitationResultInput, HookEventName, Notification, NotificationInput};
use spine_protocol::trace::StageName;

use super::{ElicitAction, ElicitationAnswer, ElicitationMode, ElicitationRequest, Elicitor, check_content};
use crate::hooks::engine::HaltBy;
use crate::hooks::events::ElicitationOutcome;
use crate::hooks::{HookContext, HookRuntime};
use crate::observer::RunEvent;
use crate::permission::Approver;
use crate::trace::Trace;

/// The elicitor of one tool call of a run: the run's hooks, approver and trace.
pub struct RunElicitor {
    hooks: Arc<HookRuntime>,
    ctx: HookContext,
    approver: Arc<dyn Approver>,
    trace: Trace,
    tool_use_id: String,
    /// The first hook that answered `continue: false`.
    halt: Mutex<Option<HaltBy>>,
}

/// The Notification message before the approver asks, with Claude Code's wording.
const INPUT_NEEDED: &str = "spine needs your input";

/// Who gave the answer.
enum AnsweredBy {
    Hook(String),
    User,
    Nobody,
}

/// The first answer, and whether ElicitationResult hooks may still replace it (not after a
/// failing Elicitation hook: its decline is final).
struct First {
    answer: ElicitationAnswer,
    by: AnsweredBy,
    open: bool,
}

impl RunElicitor {
    /// The elicitor of the call `tool_use_id`, with the run's hooks and hook context, its
    /// approver and its trace.
    pub fn new(
        hooks: Arc<HookRuntime>,
        ctx: HookContext,
        approver: Arc<dyn Approver>,
        trace: Trace,
        tool_use_id: impl Into<String>,
    ) -> Self {
        RunElicitor { hooks, ctx, approver, trace, tool_use_id: tool_use_id.into(), halt: Mutex::new(None) }
    }

    /// The first hook of this call's elicitations that answered `continue: false`: the run
    /// ends after the call.
    pub fn halt(&self) -> Option<HaltBy> {
        self.halt.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Keeps `halt` unless an earlier hook stopped the run.
    fn stop(&self, halt: HaltBy) {
        let mut kept = self.halt.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.is_none() {
            *kept = Some(halt);
        }
    }

    /// The Notification of the dialog the approver is about to show.
    async fn notify_dialog(&self, request: &ElicitationRequest) {
        let notification_type = match request.mode {
            ElicitationMode::Form { .. } => "elicitation_dialog",
            ElicitationMode::Url { .. } => "elicitation_url_dialog",
        };
        let input = NotificationInput {
            message: INPUT_NEEDED.to_owned(),
            title: None,
            notification_type: notification_type.to_owned(),
        };
        self.hooks.observe::<Notification>(&self.ctx, input).await;
    }

    fn warn(&self, text: String) {
        self.trace.warn(text.clone(), Some(&self.tool_use_id));
        self.hooks.observer().on_event(&RunEvent::Warning { text: &text });
    }

    /// Elicitation hooks, else the approver; after a hook stopped the run, a decline.
    async fn first_answer(&self, request: &ElicitationRequest) -> First {
        if let Some(halt) = self.halt() {
            return First { answer: ElicitationAnswer::decline(), by: AnsweredBy::Hook(halt.hook_id), open: false };
        }
        let (url, elicitation_id) = match &request.mode {
            ElicitationMode::Url { url, elicitation_id } => (Some(url.clone()), non_empty(elicitation_id)),
            ElicitationMode::Form { .. } => (None, None),
        };
        let input = ElicitationInput {
            mcp_server_name: request.server.clone(),
            message: request.message.clone(),
            mode: Some(request.mode.as_str().to_owned()),
            url,
            elicitation_id,
            requested_schema: request.mode.schema().cloned(),
        };
        let merged = self.hooks.elicitation(&self.ctx, input).await;
        if let Some(halt) = merged.halt {
            let by = AnsweredBy::Hook(halt.hook_id.clone());
            self.stop(halt);
            return First { answer: ElicitationAnswer::decline(), by, open: false };
        }
        match merged.outcome {
            ElicitationOutcome::Respond { action, content, hook_id } => {
                match self.hook_answer(request, HookEventName::Elicitation, &hook_id, &action, content) {
                    Some(answer) => First { answer, by: AnsweredBy::Hook(hook_id), open: true },
                    None => First { answer: ElicitationAnswer::decline(), by: AnsweredBy::Hook(hook_id), open: false },
                }
            }
            ElicitationOutcome::Failed(failure) => {
                self.warn(format!("{failure}; the elicitation of MCP server `{}` is declined", request.server));
                First { answer: ElicitationAnswer::decline(), by: AnsweredBy::Hook(failure.hook_id), open: false }
            }
            ElicitationOutcome::Proceed => match self.ask_user(request).await {
                Some(answer) => {
                    let answer = self.user_answer(request, answer);
                    First { answer, by: AnsweredBy::User, open: true }
                }
                None => {
                    self.warn(format!(
                        "MCP server `{}` asked for input (elicitation) and nobody can answer in this run; declined",
                        request.server
                    ));
                    First { answer: ElicitationAnswer::decline(), by: AnsweredBy::Nobody, open: true }
                }
            },
        }
    }

    /// The approver, after the dialog's Notification when it asks someone.
    async fn ask_user(&self, request: &ElicitationRequest) -> Option<ElicitationAnswer> {
        if self.approver.asks_elicitations() {
            self.notify_dialog(request).await;
        }
        self.approver.elicit(request).await
    }

    /// ElicitationResult hooks: the answer that stands, and the hook that replaced it.
    async fn result_hooks(
        &self,
        request: &ElicitationRequest,
        answer: ElicitationAnswer,
    ) -> (ElicitationAnswer, Option<String>) {
        let elicitation_id = match &request.mode {
            ElicitationMode::Url { elicitation_id, .. } => non_empty(elicitation_id),
            ElicitationMode::Form { .. } => None,
        };
        let input = ElicitationResultInput {
            mcp_server_name: request.server.clone(),
            elicitation_id,
            mode: Some(request.mode.as_str().to_owned()),
            action: answer.action.as_str().to_owned(),
            content: answer.content.clone().map(Value::Object),
        };
        let merged = self.hooks.elicitation_result(&self.ctx, input).await;
        if let Some(halt) = merged.halt {
            let hook_id = halt.hook_id.clone();
            self.stop(halt);
            return (ElicitationAnswer::decline(), Some(hook_id));
        }
        match merged.outcome {
            ElicitationOutcome::Proceed => (answer, None),
            ElicitationOutcome::Respond { action, content, hook_id } => {
                let replaced = self.hook_answer(request, HookEventName::ElicitationResult, &hook_id, &action, content);
                (replaced.unwrap_or_else(ElicitationAnswer::decline), Some(hook_id))
            }
            ElicitationOutcome::Failed(failure) => {
                self.warn(format!("{failure}; the elicitation of MCP server `{}` is declined", request.server));
                (ElicitationAnswer::decline(), Some(failure.hook_id))
            }
        }
    }

    /// A hook's answer, checked: `None` (with a contract-error warning) when it breaks the
    /// contract — an unknown action, content that is not an object, or content that does not
    /// match the requested schema.
    fn hook_answer(
        &self,
        request: &ElicitationRequest,
        event: HookEventName,
        hook_id: &str,
        action: &str,
        content: Option<Value>,
    ) -> Option<ElicitationAnswer> {
        let broke = |why: String| {
            self.warn(format!(
                "{event} hook `{hook_id}` contract_error: {why}; the elicitation of MCP server `{}` is declined",
                request.server
            ));
        };
        let Some(action) = ElicitAction::parse(action) else {
            broke(format!("`action` must be accept, decline or cancel, found {action:?}"));
            return None;
        };
        let (ElicitAction::Accept, Some(schema)) = (action, request.mode.schema()) else {
            return Some(ElicitationAnswer { action, content: None });
        };
        let content = match content {
            None => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => {
                broke("`content` must be an object".to_owned());
                return None;
            }
        };
        match check_content(schema, &content) {
            Ok(()) => Some(ElicitationAnswer::accept(content)),
            Err(reasons) => {
                broke(format!("its content does not match the requested schema ({})", reasons.join("; ")));
                None
            }
        }
    }

    /// The approver's answer, checked like a hook's: content that does not match declines.
    fn user_answer(&self, request: &ElicitationRequest, answer: ElicitationAnswer) -> ElicitationAnswer {
        let (ElicitAction::Accept, Some(schema)) = (answer.action, request.mode.schema()) else {
            return ElicitationAnswer { action: answer.action, content: None };
        };
        let content = answer.content.unwrap_or_default();
        match check_content(schema, &content) {
            Ok(()) => ElicitationAnswer::accept(content),
            Err(reasons) => {
                self.warn(format!(
                    "the answer to MCP server `{}` does not match its requested schema ({}); declined",
                    request.server,
                    reasons.join("; ")
                ));
                ElicitationAnswer::decline()
            }
        }
    }

    /// The trace entry: who answered what, with the names of the fields sent.
    fn record(
        &self,
        request: &ElicitationRequest,
        started: Instant,
        sent: &ElicitationAnswer,
        first: &First,
        replaced_by: Option<String>,
    ) {
        let mut fields = Map::new();
        fields.insert("server".into(), Value::from(request.server.as_str()));
        fields.insert("mode".into(), Value::from(request.mode.as_str()));
        fields.insert("action".into(), Value::from(sent.action.as_str()));
        let (by, hook_id) = match &first.by {
            AnsweredBy::Hook(id) => ("hook", Some(id.as_str())),
            AnsweredBy::User => ("user", None),
            AnsweredBy::Nobody => ("nobody", None),
        };
        fields.insert("answered_by".into(), Value::from(by));
        if let Some(id) = hook_id {
            fields.insert("hook_id".into(), Value::from(id));
        }
        if let Some(id) = replaced_by {
            fields.insert("replaced_by".into(), Value::from(id));
        }
        if let Some(halt) = self.halt() {
            fields.insert("stopped_by".into(), Value::from(halt.hook_id));
        }
        fields.insert("fields".into(), Value::from(sent.field_names()));
        self.trace.stage(StageName::Elicitation, Some(&self.tool_use_id), started, fields);
    }
}

#[async_trait]
impl Elicitor for RunElicitor {
    async fn elicit(&self, request: &ElicitationRequest) -> ElicitationAnswer {
        let started = Instant::now();
        let first = self.first_answer(request).await;
        let (sent, replaced_by) = if first.open {
            self.result_hooks(request, first.answer.clone()).await
        } else {
            (first.answer.clone(), None)
        };
        self.record(request, started, &sent, &first, replaced_by);
        sent
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}
