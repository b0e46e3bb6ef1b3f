//! The pairing invariant: every assistant tool call has exactly one tool result, in the order
//! of the calls, before the next model request.
//!
//! [`validate_pairing`] checks a whole request history. It is run before every model request;
//! a violation is a bug in the runtime, and the request must not be sent.

use std::collections::HashSet;

use thiserror::Error;

use crate::message::{Message, ToolResultMessage};
use crate::tool::ToolError;

/// A broken pairing, with the index of the offending message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PairingError {
    /// A tool result whose id matches no pending call.
    #[error("message {index}: tool result for `{id}` answers no pending tool call")]
    OrphanResult {
        /// Index of the tool message.
        index: usize,
        /// Its `tool_call_id`.
        id: String,
    },
    /// A tool result out of order (it answers a later call before an earlier one).
    #[error("message {index}: tool result for `{got}` arrived before the result for `{expected}`")]
    OutOfOrder {
        /// Index of the tool message.
        index: usize,
        /// The call that should have been answered next.
        expected: String,
        /// The call that was answered.
        got: String,
    },
    /// A message other than a tool result or hook context while calls are still unanswered.
    #[error("message {index} ({role}) arrived while tool call `{pending}` had no result")]
    Unanswered {
        /// Index of the interrupting message (or the history length when it ended).
        index: usize,
        /// Role of the interrupting message, or `end` when the history ended.
        role: &'static str,
        /// The first unanswered call.
        pending: String,
    },
    /// Two calls of one assistant message share an id.
    #[error("message {index}: duplicate tool call id `{id}`")]
    DuplicateCallId {
        /// Index of the assistant message.
        index: usize,
        /// The repeated id.
        id: String,
    },
}

/// Checks the pairing invariant over a request history.
///
/// Hook context messages are allowed only after all results of a round (they never sit between
/// a call and its result).
pub fn validate_pairing(messages: &[Message]) -> Result<(), PairingError> {
    let mut pending: Vec<&str> = Vec::new();
    let mut next = 0usize;
    let mut seen: HashSet<&str> = HashSet::new();
    for (index, message) in messages.iter().enumerate() {
        match message {
            Message::Tool(result) => {
                let Some(expected) = pending.get(next) else {
                    return Err(PairingError::OrphanResult { index, id: result.tool_call_id.clone() });
                };
                if *expected != result.tool_call_id {
                    if pending[next..].contains(&result.tool_call_id.as_str()) {
                        return Err(PairingError::OutOfOrder {
                            index,
                            expected: (*expected).to_owned(),
                            got: result.tool_call_id.clone(),
                        });
                    }
                    return Err(PairingError::OrphanResult { index, id: result.tool_call_id.clone() });
                }
                next += 1;
            }
            other => {
                if let Some(p) = pending.get(next) {
                    return Err(PairingError::Unanswered { index, role: other.role(), pending: (*p).to_owned() });
                }
                pending.clear();
                next = 0;
                if let Message::Assistant(a) = other {
                    seen.clear();
                    for call in &a.tool_calls {
                        if !seen.insert(call.id.as_str()) {
                            return Err(PairingError::DuplicateCallId { index, id: call.id.clone() });
                        }
                        pending.push(call.id.as_str());
                    }
                }
            }
        }
    }
    if let Some(p) = pending.get(next) {
        return Err(PairingError::Unanswered { index: messages.len(), role: "end", pending: (*p).to_owned() });
    }
    Ok(())
}

/// Gives every call of a reply an id that is non-empty and unique in the conversation: a call
/// whose id is empty (a provider that sent none), repeats an earlier call's id in this reply,
/// or repeats an id of the conversation so far (`taken`) gets the synthetic id
/// `spine_<turn>_<index>` (with a suffix in the unlikely case that is taken too; a later call
/// that uses the same id is then the repeat, and is renamed in turn). Runs at
/// ingestion, before any call is looked at, for every provider and the scripted model alike.
/// Returns `(old id, new id)` for each call it renamed.
pub fn unique_call_ids(
    calls: &mut [crate::tool::ToolCall],
    taken: &HashSet<String>,
    turn: u32,
) -> Vec<(String, String)> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut renamed = Vec::new();
    for (index, call) in calls.iter_mut().enumerate() {
        let id = call.id.trim();
        if !id.is_empty() && !taken.contains(id) && !seen.contains(id) {
            seen.insert(id.to_owned());
            continue;
        }
        let base = format!("spine_{turn}_{index}");
        let mut fresh = base.clone();
        let mut n = 1;
        while taken.contains(&fresh) || seen.contains(&fresh) {
            fresh = format!("{base}_{n}");
            n += 1;
        }
        seen.insert(fresh.clone());
        renamed.push((std::mem::replace(&mut call.id, fresh.clone()), fresh));
    }
    renamed
}

/// Answers every tool call that has no result with `error`, in place: the answers go right
/// after the call's last result (or its assistant message), before whatever interrupted the
/// round. Calls named in `keep_pending` are left alone (a deferred call awaits `--resume`).
/// Returns the ids answered. Used when a transcript ends mid-round (the process was killed).
pub fn answer_unanswered(messages: &mut Vec<Message>, error: &ToolError, keep_pending: &[&str]) -> Vec<String> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut answered = Vec::new();
    let mut pending: Vec<(String, String)> = Vec::new();
    let flush = |out: &mut Vec<Message>, pending: &mut Vec<(String, String)>, answered: &mut Vec<String>| {
        for (id, name) in pending.drain(..) {
            if keep_pending.contains(&id.as_str()) {
                continue;
            }
            out.push(Message::Tool(ToolResultMessage {
                tool_call_id: id.clone(),
                name,
                content: error.render(),
                error_code: Some(error.code),
                images: Vec::new(),
            }));
            answered.push(id);
        }
    };
    for message in messages.drain(..) {
        match &message {
            Message::Tool(result) => {
                if let Some(at) = pending.iter().position(|(id, _)| *id == result.tool_call_id) {
                    pending.remove(at);
                }
            }
            other => {
                flush(&mut out, &mut pending, &mut answered);
                if let Message::Assistant(a) = other {
                    pending = a.tool_calls.iter().map(|c| (c.id.clone(), c.name.clone())).collect();
                }
            }
        }
        out.push(message);
    }
    flush(&mut out, &mut pending, &mut answered);
    *messages = out;
    answered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::HookEventName;
    use crate::message::AssistantMessage;
    use crate::tool::{ErrorCode, ToolArguments, ToolCall};
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "t".into(), arguments: ToolArguments::Json(json!({})) }
    }
    fn asst(ids: &[&str]) -> Message {
        Message::Assistant(AssistantMessage {
            reasoning: Vec::new(),
            content: None,
            tool_calls: ids.iter().map(|i| call(i)).collect(),
        })
    }
    fn result(id: &str) -> Message {
        Message::Tool(ToolResultMessage {
            tool_call_id: id.into(),
            name: "t".into(),
            content: "ok".into(),
            error_code: None,
            images: Vec::new(),
        })
    }

    #[test]
    fn complete_rounds_with_trailing_context_are_valid() {
        let h = vec![
            Message::user("go"),
            asst(&["a", "b"]),
            result("a"),
            result("b"),
            Message::context(HookEventName::PostToolUse, "note"),
            Message::assistant_text("done"),
        ];
        assert_eq!(validate_pairing(&h), Ok(()));
    }

    #[test]
    fn a_missing_result_is_reported_at_the_end() {
        let h = vec![Message::user("go"), asst(&["a", "b"]), result("a")];
        assert!(
            matches!(validate_pairing(&h), Err(PairingError::Unanswered { role: "end", ref pending, .. }) if pending == "b")
        );
    }

    #[test]
    fn context_between_a_call_and_its_result_is_rejected() {
        let h = vec![asst(&["a"]), Message::context(HookEventName::PreToolUse, "x"), result("a")];
        assert!(matches!(validate_pairing(&h), Err(PairingError::Unanswered { index: 1, .. })));
    }

    #[test]
    fn results_out_of_call_order_are_rejected() {
        let h = vec![asst(&["a", "b"]), result("b"), result("a")];
        assert!(matches!(validate_pairing(&h), Err(PairingError::OutOfOrder { .. })));
    }

    #[test]
    fn orphan_and_duplicate_results_are_rejected() {
        assert!(matches!(validate_pairing(&[Message::user("x"), result("a")]), Err(PairingError::OrphanResult { .. })));
        let h = vec![asst(&["a"]), result("a"), result("a")];
        assert!(matches!(validate_pairing(&h), Err(PairingError::OrphanResult { index: 2, .. })));
        assert!(matches!(validate_pairing(&[asst(&["a", "a"])]), Err(PairingError::DuplicateCallId { .. })));
    }

    #[test]
    fn unanswered_calls_are_answered_in_place_and_the_history_becomes_valid() {
        let mut h = vec![Message::user("go"), asst(&["a", "b"]), result("a"), Message::user("next"), asst(&["c"])];
        let canceled = ToolError::new(ErrorCode::Canceled, "the run ended before the call was answered");
        let answered = answer_unanswered(&mut h, &canceled, &[]);
        assert_eq!(answered, ["b", "c"]);
        assert_eq!(validate_pairing(&h), Ok(()));
        let Message::Tool(b) = &h[3] else { panic!("b's answer follows a's result: {h:?}") };
        assert_eq!((b.tool_call_id.as_str(), b.error_code), ("b", Some(ErrorCode::Canceled)));
        assert!(b.content.starts_with("Error [canceled]"));
    }

    #[test]
    fn a_deferred_call_is_kept_pending_and_complete_histories_are_unchanged() {
        let mut h = vec![Message::user("go"), asst(&["a"]), result("a"), asst(&["d"])];
        let before = h.clone();
        let canceled = ToolError::new(ErrorCode::Canceled, "x");
        assert!(answer_unanswered(&mut h, &canceled, &["d"]).is_empty());
        assert_eq!(h, before);
    }

    #[test]
    fn empty_repeated_and_reused_call_ids_get_unique_synthetic_ids() {
        let mut calls = vec![call("a"), call("a"), call(""), call("old"), call("spine_3_1"), call("b")];
        let taken: HashSet<String> = ["old".to_owned()].into();
        let renamed = unique_call_ids(&mut calls, &taken, 3);
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "spine_3_1", "spine_3_2", "spine_3_3", "spine_3_4", "b"]);
        assert_eq!(renamed.len(), 4);
        assert_eq!(renamed[0], ("a".to_owned(), "spine_3_1".to_owned()));
        let unique: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len());
    }

    #[test]
    fn distinct_ids_are_left_alone() {
        let mut calls = vec![call("x"), call("y")];
        assert!(unique_call_ids(&mut calls, &HashSet::new(), 1).is_empty());
        assert_eq!(calls[0].id, "x");
    }
}
