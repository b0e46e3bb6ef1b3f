//! [`WireEvent`]: what an answer means for each event, one `read` function per event.
//!
//! | event | owns | exit 2 |
//! |---|---|---|
//! | PreToolUse | `permissionDecision` (`allow`/`ask`/`deny`/`defer` → a permission suggestion), `permissionDecisionReason`, `updatedInput`, `additionalContext`; legacy top-level `decision: approve/block` (other values ignored) | block, stderr is the reason (a JSON `deny` stays a deny) |
//! | PermissionRequest | `decision: {behavior: allow/deny, message?, updatedInput?, updatedPermissions?, interrupt?}` ([`super::permission_updates`]) | cannot block |
//! | PostToolUse | `decision: "block"` + `reason` (a reason beside the result), `additionalContext`, `updatedToolOutput` (string: the text; other: the structured result) | block reason = stderr |
//! | SessionStart | `additionalContext`, `watchPaths` (absolute paths) | cannot block |
//! | PostToolUseFailure, SubagentStart | `additionalContext` | cannot block |
//! | UserPromptSubmit | `decision: "block"` + `reason`, `additionalContext` | block |
//! | Stop, SubagentStop | `decision: "block"` + `reason` (force one more round), `additionalContext` | force continue, stderr is the reason |
//! | PreCompact | `decision: "block"` + `reason` | block |
//! | PostToolBatch | `additionalContext` (after the batch's results) | stderr reaches the model as context |
//! | PermissionDenied | `retry` (true: the model is told it may retry) | cannot block |
//! | PostCompact, SessionEnd, Notification, StopFailure, InstructionsLoaded | nothing | cannot block |
//! | UserPromptExpansion, PreModelSwitch, PostModelSwitch, Setup, ConfigChange, CwdChanged, FileChanged, Elicitation, ElicitationResult | see [`super::session_events`] | |
//!
//! Plain (non-JSON) stdout on exit 0 is additional context for SessionStart and
//! UserPromptSubmit only. A top-level `decision` of `"approve"` on events other than
//! PreToolUse is an old no-op and ignored; any other value but `"block"` is a contract error.
//!
//! The mapping from an event name to its marker type is [`visit_wire_event`], an exhaustive
//! `match`: a new event does not compile until it has a wire mapping here.

use serde_json::Value;
use spine_core::hooks::HookError;
use spine_protocol::hook::{
    ConfigChange, CwdChanged, Elicitation, ElicitationResult, FileChanged, PostModelSwitch, PreModelSwitch, Setup,
    UserPromptExpansion,
};
use spine_protocol::hook::{
    ContextAction, HookEvent, HookEventName, InstructionsLoaded, Notification, Observe, PermissionDenied,
    PermissionRequest, PermissionRequestAction, PostCompact, PostToolBatch, PostToolUse, PostToolUseAction,
    PostToolUseFailure, PreCompact, PreCompactAction, PreToolUse, PreToolUseAction, PromptAction, RetryAction,
    SessionEnd, SessionStart, SessionStartAction, Stop, StopAction, StopFailure, SubagentStart, SubagentStop,
    UpdatedOutput, UserPromptSubmit,
};
use spine_protocol::permission::PermissionSuggestion;

use super::answer::{Answer, name, or_default};
use spine_settings::type_name;

/// An event in Claude Code's wire format.
pub trait WireEvent: HookEvent {
    /// Takes the fields this event owns from a JSON answer and builds its action.
    fn read(answer: &mut Answer) -> Result<Self::Action, HookError>;

    /// The action after exit status 2, with stderr as `reason` (`action` is what JSON on stdout
    /// said, or the default). `None`: the event cannot block, exit 2 is a plain failure.
    fn exit_block(action: Self::Action, reason: String) -> Option<Self::Action>;

    /// Plain (non-JSON) stdout on exit 0: additional context where the event takes it.
    fn plain_text(_text: &str) -> Option<Self::Action> {
        None
    }
}

/// Something done once per event type, with its wire format available.
pub trait WireVisitor {
    /// What the visit returns.
    type Output;
    /// Visits one event type.
    fn visit<E: WireEvent>(self) -> Self::Output;
}

/// Calls `visitor` with the marker type of the named event.
pub fn visit_wire_event<V: WireVisitor>(event: HookEventName, visitor: V) -> V::Output {
    match event {
        HookEventName::SessionStart => visitor.visit::<SessionStart>(),
        HookEventName::UserPromptSubmit => visitor.visit::<UserPromptSubmit>(),
        HookEventName::PreToolUse => visitor.visit::<PreToolUse>(),
        HookEventName::PermissionRequest => visitor.visit::<PermissionRequest>(),
        HookEventName::PostToolUse => visitor.visit::<PostToolUse>(),
        HookEventName::PostToolUseFailure => visitor.visit::<PostToolUseFailure>(),
        HookEventName::PreCompact => visitor.visit::<PreCompact>(),
        HookEventName::PostCompact => visitor.visit::<PostCompact>(),
        HookEventName::Stop => visitor.visit::<Stop>(),
        HookEventName::SubagentStart => visitor.visit::<SubagentStart>(),
        HookEventName::SubagentStop => visitor.visit::<SubagentStop>(),
        HookEventName::SessionEnd => visitor.visit::<SessionEnd>(),
        HookEventName::Notification => visitor.visit::<Notification>(),
        HookEventName::PostToolBatch => visitor.visit::<PostToolBatch>(),
        HookEventName::StopFailure => visitor.visit::<StopFailure>(),
        HookEventName::PermissionDenied => visitor.visit::<PermissionDenied>(),
        HookEventName::InstructionsLoaded => visitor.visit::<InstructionsLoaded>(),
        HookEventName::UserPromptExpansion => visitor.visit::<UserPromptExpansion>(),
        HookEventName::PreModelSwitch => visitor.visit::<PreModelSwitch>(),
        HookEventName::PostModelSwitch => visitor.visit::<PostModelSwitch>(),
        HookEventName::Setup => visitor.visit::<Setup>(),
        HookEventName::ConfigChange => visitor.visit::<ConfigChange>(),
        HookEventName::CwdChanged => visitor.visit::<CwdChanged>(),
        HookEventName::FileChanged => visitor.visit::<FileChanged>(),
        HookEventName::Elicitation => visitor.visit::<Elicitation>(),
        HookEventName::ElicitationResult => visitor.visit::<ElicitationResult>(),
    }
}

/// Reads top-level `decision`: `Some(reason)` for `"block"`, `None` when absent or the legacy
/// no-op `"approve"`; anything else is a contract error.
pub(super) fn read_block(answer: &mut Answer) -> Result<Option<Option<String>>, HookError> {
    let decision = answer.take_decision()?;
    let reason = answer.take_reason()?;
    match decision.as_deref() {
        None | Some("approve") => Ok(None),
        Some("block") => Ok(Some(reason)),
        Some(other) => Err(answer.violation(format!("`decision` must be \"block\", found \"{other}\""))),
    }
}

pub(super) fn blocked_by<E: HookEvent>() -> String {
    format!("blocked by a {} hook", name::<E>())
}

impl WireEvent for PreToolUse {
    fn read(answer: &mut Answer) -> Result<PreToolUseAction, HookError> {
        let legacy = answer.take_decision()?;
        let legacy_reason = answer.take_reason()?;
        let decision = answer.take_specific_str("permissionDecision")?;
        let reason = answer.take_specific_str("permissionDecisionReason")?.filter(|r| !r.trim().is_empty());
        let updated_input = match answer.take_specific("updatedInput") {
            None => None,
            Some(Value::Object(map)) => Some(map),
            Some(other) => {
                return Err(answer.violation(format!(
                    "`hookSpecificOutput.updatedInput` must be an object, found {}",
                    type_name(&other)
                )));
            }
        };
        let additional_context = answer.take_context()?;
        let permission = match decision.as_deref() {
            Some("allow") => PermissionSuggestion::Allow { reason },
            Some("ask") => PermissionSuggestion::Ask { reason },
            Some("deny") => PermissionSuggestion::Deny { reason },
            Some("defer") => {
                return Ok(PreToolUseAction::Proceed {
                    permission: PermissionSuggestion::Defer,
                    updated_input: None,
                    additional_context,
                });
            }
            Some(other) => {
                return Err(answer.violation(format!(
                    "`hookSpecificOutput.permissionDecision` must be allow, ask, deny or defer, found \"{other}\""
                )));
            }
            None => match legacy.as_deref() {
                Some("approve") => PermissionSuggestion::Allow { reason: legacy_reason },
                Some("block") => {
                    let reason = or_default(legacy_reason, blocked_by::<PreToolUse>);
                    return Ok(PreToolUseAction::Block { reason, additional_context });
                }
                _ => PermissionSuggestion::Passthrough,
            },
        };
        Ok(PreToolUseAction::Proceed { permission, updated_input, additional_context })
    }

    fn exit_block(action: PreToolUseAction, reason: String) -> Option<PreToolUseAction> {
        let reason = or_default(Some(reason), blocked_by::<PreToolUse>);
        Some(match action {
            deny @ PreToolUseAction::Proceed { permission: PermissionSuggestion::Deny { .. }, .. } => deny,
            block @ PreToolUseAction::Block { .. } => block,
            PreToolUseAction::Proceed { additional_context, .. } => {
                PreToolUseAction::Block { reason, additional_context }
            }
        })
    }
}

impl WireEvent for PermissionRequest {
    fn read(answer: &mut Answer) -> Result<PermissionRequestAction, HookError> {
        let Some(decision) = answer.take_specific("decision") else {
            return Ok(PermissionRequestAction::NoDecision);
        };
        let Value::Object(mut d) = decision else {
            return Err(answer.violation("`hookSpecificOutput.decision` must be an object {behavior, message?}"));
        };
        let behavior = d.remove("behavior");
        let message = d.remove("message").filter(|v| !v.is_null());
        let updated = d.remove("updatedInput").filter(|v| !v.is_null());
        let interrupt = d.remove("interrupt").filter(|v| !v.is_null());
        let updated_permissions = d.remove("updatedPermissions").filter(|v| !v.is_null());
        if !d.is_empty() {
            let left: Vec<String> = d.keys().map(|k| format!("`hookSpecificOutput.decision.{k}`")).collect();
            return Err(answer.violation(format!("fields the event does not own: {}", left.join(", "))));
        }
        let message = match message {
            None => None,
            Some(Value::String(m)) => Some(m),
            Some(other) => {
                return Err(
                    answer.violation(format!("`decision.message` must be a string, found {}", type_name(&other)))
                );
            }
        };
        match behavior.as_ref().and_then(Value::as_str) {
            Some("allow") => {
                let updated_input = match updated {
                    None => None,
                    Some(Value::Object(map)) => Some(map),
                    Some(other) => {
                        return Err(answer.violation(format!(
                            "`decision.updatedInput` must be an object, found {}",
                            type_name(&other)
                        )));
                    }
                };
                let updated_permissions = match updated_permissions {
                    None => Vec::new(),
                    Some(value) => super::permission_updates::read(answer, value)?,
                };
                Ok(PermissionRequestAction::Allow { updated_input, updated_permissions })
            }
            Some("deny") => {
                let message = or_default(message, || "denied by a PermissionRequest hook".to_owned());
                if interrupt == Some(Value::Bool(true)) {
                    answer.interrupt = Some(message.clone());
                }
                Ok(PermissionRequestAction::Deny { message })
            }
            _ => Err(answer.violation("`decision.behavior` must be \"allow\" or \"deny\"")),
        }
    }

    fn exit_block(_action: PermissionRequestAction, _reason: String) -> Option<PermissionRequestAction> {
        None
    }
}

impl WireEvent for PostToolUse {
    fn read(answer: &mut Answer) -> Result<PostToolUseAction, HookError> {
        let block = read_block(answer)?;
        let additional_context = answer.take_context()?;
        let updated = match answer.take_specific("updatedToolOutput") {
            Some(v) => Some(v),
            None => answer.take_specific("updatedMCPToolOutput"),
        };
        answer.ignore_specific(&["classifierContext"]);
        let updated_output = match updated {
            None => None,
            Some(Value::String(text)) => Some(UpdatedOutput::Text(text)),
            Some(v @ (Value::Object(_) | Value::Array(_))) => Some(UpdatedOutput::Structured(v)),
            Some(other) => {
                return Err(answer.violation(format!(
                    "`hookSpecificOutput.updatedToolOutput` must be a string or an object, found {}",
                    type_name(&other)
                )));
            }
        };
        let block_reason = block.map(|reason| or_default(reason, blocked_by::<PostToolUse>));
        Ok(PostToolUseAction { updated_output, block_reason, additional_context })
    }

    fn exit_block(mut action: PostToolUseAction, reason: String) -> Option<PostToolUseAction> {
        if action.block_reason.is_none() {
            action.block_reason = Some(or_default(Some(reason), blocked_by::<PostToolUse>));
        }
        Some(action)
    }
}

pub(super) fn read_context(answer: &mut Answer, ignored: &[&str]) -> Result<ContextAction, HookError> {
    answer.ignore_specific(ignored);
    Ok(ContextAction { additional_context: answer.take_context()? })
}

impl WireEvent for SessionStart {
    fn read(answer: &mut Answer) -> Result<SessionStartAction, HookError> {
        let watch_paths = super::session_events::read_watch(answer)?.watch_paths;
        let ContextAction { additional_context } = read_context(answer, &["sessionTitle", "reloadSkills"])?;
        Ok(SessionStartAction { additional_context, watch_paths })
    }

    fn exit_block(_action: SessionStartAction, _reason: String) -> Option<SessionStartAction> {
        None
    }

    fn plain_text(text: &str) -> Option<SessionStartAction> {
        let text = text.trim();
        (!text.is_empty()).then(|| SessionStartAction::context(text))
    }
}

impl WireEvent for SubagentStart {
    fn read(answer: &mut Answer) -> Result<ContextAction, HookError> {
        read_context(answer, &[])
    }

    fn exit_block(_action: ContextAction, _reason: String) -> Option<ContextAction> {
        None
    }
}

impl WireEvent for PostToolBatch {
    fn read(answer: &mut Answer) -> Result<ContextAction, HookError> {
        read_context(answer, &[])
    }

    fn exit_block(action: ContextAction, reason: String) -> Option<ContextAction> {
        let reason = reason.trim();
        match action.additional_context {
            Some(context) if !reason.is_empty() => Some(ContextAction::context(format!("{context}\n{reason}"))),
            Some(context) => Some(ContextAction::context(context)),
            None => Some(ContextAction::context(or_default(Some(reason.to_owned()), blocked_by::<PostToolBatch>))),
        }
    }
}

impl WireEvent for PermissionDenied {
    fn read(answer: &mut Answer) -> Result<RetryAction, HookError> {
        match answer.take_specific("retry") {
            None => Ok(RetryAction { retry: false }),
            Some(Value::Bool(retry)) => Ok(RetryAction { retry }),
            Some(other) => {
                Err(answer
                    .violation(format!("`hookSpecificOutput.retry` must be a boolean, found {}", type_name(&other))))
            }
        }
    }

    fn exit_block(_action: RetryAction, _reason: String) -> Option<RetryAction> {
        None
    }
}

impl WireEvent for PostToolUseFailure {
    fn read(answer: &mut Answer) -> Result<ContextAction, HookError> {
        read_context(answer, &[])
    }

    fn exit_block(_action: ContextAction, _reason: String) -> Option<ContextAction> {
        None
    }
}

impl WireEvent for UserPromptSubmit {
    fn read(answer: &mut Answer) -> Result<PromptAction, HookError> {
        let block = read_block(answer)?;
        answer.ignore_specific(&["sessionTitle", "suppressOriginalPrompt"]);
        let additional_context = answer.take_context()?;
        Ok(match block {
            Some(reason) => PromptAction::Block { reason: or_default(reason, blocked_by::<UserPromptSubmit>) },
            None => PromptAction::Proceed { additional_context },
        })
    }

    fn exit_block(action: PromptAction, reason: String) -> Option<PromptAction> {
        Some(match action {
            block @ PromptAction::Block { .. } => block,
            PromptAction::Proceed { .. } => {
                PromptAction::Block { reason: or_default(Some(reason), blocked_by::<UserPromptSubmit>) }
            }
        })
    }

    fn plain_text(text: &str) -> Option<PromptAction> {
        let text = text.trim();
        (!text.is_empty()).then(|| PromptAction::context(text))
    }
}

/// Stop's answers, for Stop and SubagentStop alike.
macro_rules! stop_like {
    ($($event:ty),*) => {$(
impl WireEvent for $event {
    fn read(answer: &mut Answer) -> Result<StopAction, HookError> {
        let block = read_block(answer)?;
        let additional_context = answer.take_context()?;
        Ok(match block {
            // An empty reason stays empty: the engine rejects it as a contract error.
            Some(reason) => StopAction::ForceContinue { reason: reason.unwrap_or_default(), additional_context },
            None => StopAction::Allow { additional_context },
        })
    }

    fn exit_block(action: StopAction, reason: String) -> Option<StopAction> {
        Some(match action {
            forced @ StopAction::ForceContinue { .. } => forced,
            StopAction::Allow { additional_context } => {
                StopAction::ForceContinue { reason: reason.trim().to_owned(), additional_context }
            }
        })
    }
}
    )*};
}

stop_like!(Stop, SubagentStop);

impl WireEvent for PreCompact {
    fn read(answer: &mut Answer) -> Result<PreCompactAction, HookError> {
        Ok(match read_block(answer)? {
            Some(reason) => PreCompactAction::Block { reason: or_default(reason, blocked_by::<PreCompact>) },
            None => PreCompactAction::Proceed,
        })
    }

    fn exit_block(action: PreCompactAction, reason: String) -> Option<PreCompactAction> {
        Some(match action {
            block @ PreCompactAction::Block { .. } => block,
            PreCompactAction::Proceed => {
                PreCompactAction::Block { reason: or_default(Some(reason), blocked_by::<PreCompact>) }
            }
        })
    }
}

macro_rules! observe_only {
    ($($event:ty),*) => {$(
        impl WireEvent for $event {
            fn read(_answer: &mut Answer) -> Result<Observe, HookError> {
                Ok(Observe)
            }

            fn exit_block(_action: Observe, _reason: String) -> Option<Observe> {
                None
            }
        }
    )*};
}

observe_only!(PostCompact, SessionEnd, Notification, StopFailure, InstructionsLoaded);
