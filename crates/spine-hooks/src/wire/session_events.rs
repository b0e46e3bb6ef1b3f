//! [`WireEvent`] for the events around the session rather than one tool call.
//!
//! | event | owns | exit 2 |
//! |---|---|---|
//! | UserPromptExpansion | `decision: "block"` + `reason`, `additionalContext` (plain stdout is context too) | block, stderr is the reason |
//! | PreModelSwitch | `permissionDecision` (`allow`/`ask`/`deny`), `permissionDecisionReason`; `decision: "block"` is a deny | deny, stderr is the reason |
//! | PostModelSwitch, Setup | `additionalContext` | cannot block |
//! | ConfigChange | `decision: "block"` + `reason` | block, stderr is the reason |
//! | CwdChanged, FileChanged | `watchPaths` (absolute paths) | cannot block |
//! | Elicitation, ElicitationResult | `action` (`accept`/`decline`/`cancel`), `content` (an object, with `accept`) | decline |

use std::path::PathBuf;

use serde_json::Value;
use spine_core::hooks::HookError;
use spine_protocol::hook::{
    ConfigChange, ContextAction, CwdChanged, Elicitation, ElicitationAction, ElicitationResult, FileChanged,
    GateAction, ModelSwitchAction, PostModelSwitch, PreModelSwitch, PromptAction, Setup, UserPromptExpansion,
    WatchAction,
};
use spine_settings::type_name;

use super::answer::{Answer, or_default};
use super::events::{WireEvent, blocked_by, read_block, read_context};

impl WireEvent for UserPromptExpansion {
    fn read(answer: &mut Answer) -> Result<PromptAction, HookError> {
        let block = read_block(answer)?;
        answer.ignore_specific(&["suppressOriginalPrompt"]);
        let additional_context = answer.take_context()?;
        Ok(match block {
            Some(reason) => PromptAction::Block { reason: or_default(reason, blocked_by::<UserPromptExpansion>) },
            None => PromptAction::Proceed { additional_context },
        })
    }

    fn exit_block(action: PromptAction, reason: String) -> Option<PromptAction> {
        Some(match action {
            block @ PromptAction::Block { .. } => block,
            PromptAction::Proceed { .. } => {
                PromptAction::Block { reason: or_default(Some(reason), blocked_by::<UserPromptExpansion>) }
            }
        })
    }

    fn plain_text(text: &str) -> Option<PromptAction> {
        let text = text.trim();
        (!text.is_empty()).then(|| PromptAction::context(text))
    }
}

impl WireEvent for PreModelSwitch {
    fn read(answer: &mut Answer) -> Result<ModelSwitchAction, HookError> {
        let block = read_block(answer)?;
        let decision = answer.take_specific_str("permissionDecision")?;
        let reason = answer.take_specific_str("permissionDecisionReason")?.filter(|r| !r.trim().is_empty());
        let deny = |reason: Option<String>| ModelSwitchAction::Deny {
            reason: or_default(reason, blocked_by::<PreModelSwitch>),
        };
        match (decision.as_deref(), block) {
            (Some("deny"), _) => Ok(deny(reason)),
            (_, Some(block_reason)) => Ok(deny(block_reason.or(reason))),
            (Some("allow"), None) => Ok(ModelSwitchAction::Allow { reason }),
            (Some("ask"), None) => Ok(ModelSwitchAction::Ask { reason }),
            (None, None) => Ok(ModelSwitchAction::Proceed),
            (Some(other), None) => Err(answer.violation(format!(
                "`hookSpecificOutput.permissionDecision` must be \"allow\", \"ask\" or \"deny\", found \"{other}\""
            ))),
        }
    }

    fn exit_block(action: ModelSwitchAction, reason: String) -> Option<ModelSwitchAction> {
        Some(match action {
            deny @ ModelSwitchAction::Deny { .. } => deny,
            _ => ModelSwitchAction::Deny { reason: or_default(Some(reason), blocked_by::<PreModelSwitch>) },
        })
    }
}

/// Events whose answer is additional context only, and whose exit 2 is a plain failure.
macro_rules! context_only {
    ($($event:ty),*) => {$(
        impl WireEvent for $event {
            fn read(answer: &mut Answer) -> Result<ContextAction, HookError> {
                read_context(answer, &[])
            }

            fn exit_block(_action: ContextAction, _reason: String) -> Option<ContextAction> {
                None
            }
        }
    )*};
}

context_only!(PostModelSwitch, Setup);

impl WireEvent for ConfigChange {
    fn read(answer: &mut Answer) -> Result<GateAction, HookError> {
        Ok(match read_block(answer)? {
            Some(reason) => GateAction::Block { reason: or_default(reason, blocked_by::<ConfigChange>) },
            None => GateAction::Proceed,
        })
    }

    fn exit_block(action: GateAction, reason: String) -> Option<GateAction> {
        Some(match action {
            block @ GateAction::Block { .. } => block,
            GateAction::Proceed => GateAction::Block { reason: or_default(Some(reason), blocked_by::<ConfigChange>) },
        })
    }
}

/// Reads `hookSpecificOutput.watchPaths`: an array of absolute paths.
pub(super) fn read_watch(answer: &mut Answer) -> Result<WatchAction, HookError> {
    let Some(value) = answer.take_specific("watchPaths") else {
        return Ok(WatchAction::default());
    };
    let Value::Array(items) = value else {
        return Err(answer.violation(format!(
            "`hookSpecificOutput.watchPaths` must be an array of absolute paths, found {}",
            type_name(&value)
        )));
    };
    let mut paths = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item.as_str().map(PathBuf::from) {
            Some(path) if path.is_absolute() => paths.push(path),
            Some(path) => {
                return Err(answer.violation(format!(
                    "`hookSpecificOutput.watchPaths[{i}]` must be an absolute path, found `{}`",
                    path.display()
                )));
            }
            None => {
                return Err(answer.violation(format!(
                    "`hookSpecificOutput.watchPaths[{i}]` must be a string, found {}",
                    type_name(item)
                )));
            }
        }
    }
    Ok(WatchAction { watch_paths: Some(paths) })
}

macro_rules! watch_event {
    ($($event:ty),*) => {$(
        impl WireEvent for $event {
            fn read(answer: &mut Answer) -> Result<WatchAction, HookError> {
                read_watch(answer)
            }

            fn exit_block(_action: WatchAction, _reason: String) -> Option<WatchAction> {
                None
            }
        }
    )*};
}

watch_event!(CwdChanged, FileChanged);

/// Reads `hookSpecificOutput.action` and `content`.
fn read_elicitation(answer: &mut Answer) -> Result<ElicitationAction, HookError> {
    let action = answer.take_specific_str("action")?;
    let content = answer.take_specific("content");
    match (action.as_deref(), content) {
        (None, None) => Ok(ElicitationAction::Proceed),
        (None, Some(_)) => {
            Err(answer.violation("`hookSpecificOutput.content` needs `hookSpecificOutput.action: \"accept\"`"))
        }
        (Some("accept"), content @ (None | Some(Value::Object(_)))) => {
            Ok(ElicitationAction::Respond { action: "accept".to_owned(), content })
        }
        (Some("accept"), Some(other)) => {
            Err(answer
                .violation(format!("`hookSpecificOutput.content` must be an object, found {}", type_name(&other))))
        }
        (Some(action @ ("decline" | "cancel")), None) => {
            Ok(ElicitationAction::Respond { action: action.to_owned(), content: None })
        }
        (Some("decline" | "cancel"), Some(_)) => {
            Err(answer.violation("`hookSpecificOutput.content` goes only with `action: \"accept\"`"))
        }
        (Some(other), _) => Err(answer.violation(format!(
            "`hookSpecificOutput.action` must be \"accept\", \"decline\" or \"cancel\", found \"{other}\""
        ))),
    }
}

macro_rules! elicitation_event {
    ($($event:ty),*) => {$(
        impl WireEvent for $event {
            fn read(answer: &mut Answer) -> Result<ElicitationAction, HookError> {
                read_elicitation(answer)
            }

            fn exit_block(action: ElicitationAction, _reason: String) -> Option<ElicitationAction> {
                Some(match action {
                    ElicitationAction::Proceed => {
                        ElicitationAction::Respond { action: "decline".to_owned(), content: None }
                    }
                    answered => answered,
                })
            }
        }
    )*};
}

elicitation_event!(Elicitation, ElicitationResult);

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use spine_protocol::hook::SessionStart;

    use super::super::answer::parse;
    use super::*;

    #[test]
    fn session_start_keeps_its_watch_paths_and_a_relative_one_is_a_contract_error() {
        let answer = r#"{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "c",
            "watchPaths": ["/p/.envrc", "/p/package.json"]}}"#;
        let out = parse::<SessionStart>(answer).expect("an answer");
        assert_eq!(out.action.additional_context.as_deref(), Some("c"));
        assert_eq!(out.action.watch_paths, Some(vec![PathBuf::from("/p/.envrc"), PathBuf::from("/p/package.json")]));
        let relative = r#"{"hookSpecificOutput": {"hookEventName": "SessionStart", "watchPaths": [".envrc"]}}"#;
        let error = parse::<SessionStart>(relative).expect_err("relative");
        assert!(error.detail.contains("must be an absolute path"), "{}", error.detail);
        let changed = r#"{"hookSpecificOutput": {"hookEventName": "FileChanged", "watchPaths": []}}"#;
        assert_eq!(parse::<FileChanged>(changed).expect("an answer").action.watch_paths, Some(Vec::new()));
    }
}
