//! `compact_context`: shrink the context when its estimate passes the budget threshold.
//!
//! Threshold: `budget_hints.advisory_hints.recommended_compaction_threshold`, else
//! `budget_hints.advisory_compaction_threshold_tokens`, else the configured value
//! (`context.compaction_threshold_tokens`), else 80 % of the model's context window when known;
//! 0 means never. Compaction happens only when the estimate is strictly above the threshold and
//! there are more than 2 messages.
//!
//! Strategies:
//! - `sandwich` (the default): keep the first message if it is a system message, then the note
//!   `Earlier context compacted for <model>.` as a **user** message (as Claude Code does with its
//!   summary: a second system message, or a tail that starts with an assistant turn right after
//!   the system prompt, is rejected by strict chat templates), then the last two messages — the
//!   cut moves back so that no tool result is separated from its call, and a result that would
//!   not be shorter than the input is not applied (a 3-message list would grow to 4: not here).
//! - `summarize`: one model request summarising the dropped middle with a fixed instruction;
//!   the summary becomes the note. If that request fails, `sandwich` is used and the fallback is
//!   recorded.

use std::time::Instant;

use serde_json::{Value, json};
use spine_protocol::message::Message;
use spine_protocol::run::Usage;
use spine_protocol::tool::ToolSpec;
use spine_protocol::trace::StageName;
use tokio_util::sync::CancellationToken;

use crate::fields;
use crate::model::{ModelClient, ModelRequest, NoStream};
use crate::trace::Trace;

/// The instruction of the `summarize` strategy.
pub const SUMMARY_INSTRUCTION: &str = "Summarize the conversation above for your own future reference: the user's goal, \
decisions made, files and commands involved, results of tool calls that still matter, and what remains to do. \
Be concise and factual; do not call tools.";

/// How to compact (spine-protocol's, shared with spine-settings).
pub use spine_protocol::compaction::CompactStrategy;

/// The threshold of a turn (0 = never).
pub fn compaction_threshold(budget_hints: Option<&Value>, configured: Option<u64>, context_window: Option<u64>) -> u64 {
    let hinted = budget_hints.and_then(|h| {
        h.pointer("/advisory_hints/recommended_compaction_threshold")
            .and_then(Value::as_u64)
            .or_else(|| h.get("advisory_compaction_threshold_tokens").and_then(Value::as_u64))
    });
    hinted.or(configured).or(context_window.map(|w| w.saturating_mul(8) / 10)).unwrap_or(0)
}

/// Whether a context of `estimate` tokens and `messages` messages should be compacted.
pub fn should_compact(estimate: u64, threshold: u64, messages: usize) -> bool {
    threshold > 0 && estimate > threshold && messages > 2
}

/// The result of `compact_context`.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The messages after compaction (the input when nothing changed).
    pub messages: Vec<Message>,
    /// Whether the list changed.
    pub compacted: bool,
    /// The strategy that produced it.
    pub strategy: CompactStrategy,
    /// Why `summarize` fell back to `sandwich`.
    pub fallback: Option<String>,
    /// The note that replaced the dropped messages.
    pub note: Option<String>,
    /// The summary request, when one was sent: the usage it reported (`None`: none reported).
    /// It is a model request like any other, and counts towards the run's usage and cost.
    pub summary_request: Option<SummaryRequest>,
}

/// The usage of a summary request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryRequest {
    /// What the server reported, if anything.
    pub usage: Option<Usage>,
}

/// Where the kept tail starts: the last two messages, moved back so that it does not start
/// with a tool result (or with context that belongs to a tool round).
fn tail_start(messages: &[Message]) -> usize {
    let mut cut = messages.len().saturating_sub(2);
    while cut > 0 && matches!(messages[cut], Message::Tool(_) | Message::Context(_)) {
        cut -= 1;
    }
    cut
}

/// Whether a sandwich would shrink the list (checked before firing PreCompact hooks, so that
/// hooks only hear about compactions that will happen).
pub fn can_compact(messages: &[Message]) -> bool {
    let head = usize::from(matches!(messages.first(), Some(Message::System { .. })));
    let cut = tail_start(messages).max(head);
    head + 1 + (messages.len() - cut) < messages.len()
}

/// The sandwich with a given note text. `None` when it would not shrink the list.
pub fn sandwich(messages: &[Message], note: String) -> Option<Vec<Message>> {
    let head = usize::from(matches!(messages.first(), Some(Message::System { .. })));
    let cut = tail_start(messages).max(head);
    let mut out = Vec::with_capacity(messages.len() - cut + head + 1);
    out.extend(messages[..head].iter().cloned());
    out.push(Message::user(note));
    out.extend(messages[cut..].iter().cloned());
    if out.len() < messages.len() { Some(out) } else { None }
}

/// The model that writes summaries, and the tool specs to send with the request (providers
/// require the tools of a history that holds tool calls).
#[derive(Clone, Copy)]
pub struct Summarizer<'a> {
    /// The model.
    pub model: &'a dyn ModelClient,
    /// The run's tool specs.
    pub tools: &'a [ToolSpec],
    /// The user's instructions for the summary (`/compact <instructions>`), added to
    /// [`SUMMARY_INSTRUCTION`].
    pub instructions: Option<&'a str>,
}

/// Compacts `messages` (the caller decided it should, see [`should_compact`]) and records the
/// stage. `summarizer` is required by `summarize`; without it `sandwich` is used.
pub async fn compact_context(
    messages: &[Message],
    likely_model: Option<&str>,
    strategy: CompactStrategy,
    summarizer: Option<Summarizer<'_>>,
    cancel: &CancellationToken,
    trace: &Trace,
) -> Compaction {
    let started = Instant::now();
    let model = likely_model.unwrap_or("unknown-model");
    let default_note = format!("Earlier context compacted for {model}.");
    let mut fallback = None;
    let mut used = CompactStrategy::Sandwich;
    let mut note = default_note.clone();
    let mut summary_request = None;
    if strategy == CompactStrategy::Summarize {
        let (result, sent) = summarize(messages, summarizer, cancel).await;
        summary_request = sent;
        match result {
            Ok(summary) => {
                used = CompactStrategy::Summarize;
                note = format!("{default_note} Summary of the earlier conversation:\n{summary}");
            }
            Err(why) => fallback = Some(why),
        }
    }
    let result = sandwich(messages, note.clone());
    let compacted = result.is_some();
    let out = result.unwrap_or_else(|| messages.to_vec());
    let mut f = fields! {
        "compacted" => compacted,
        "likely_model" => likely_model,
        "before_message_count" => messages.len(),
        "after_message_count" => out.len(),
        "strategy" => used.as_str(),
    };
    if let Some(why) = &fallback {
        f.insert("fallback".into(), json!({"from": "summarize", "to": "sandwich", "reason": why}));
    }
    trace.stage(StageName::CompactContext, None, started, f);
    Compaction { messages: out, compacted, strategy: used, fallback, note: compacted.then_some(note), summary_request }
}

/// Records a turn where no compaction was needed.
pub fn record_not_compacted(messages: usize, likely_model: Option<&str>, trace: &Trace) {
    trace.stage(
        StageName::CompactContext,
        None,
        Instant::now(),
        fields! {
            "compacted" => false,
            "likely_model" => likely_model,
            "before_message_count" => messages,
            "after_message_count" => messages,
            "strategy" => serde_json::Value::Null,
        },
    );
}

async fn summarize(
    messages: &[Message],
    summarizer: Option<Summarizer<'_>>,
    cancel: &CancellationToken,
) -> (Result<String, String>, Option<SummaryRequest>) {
    let Some(Summarizer { model, tools, instructions }) = summarizer else {
        return (Err("no model available to summarize".to_owned()), None);
    };
    let head = usize::from(matches!(messages.first(), Some(Message::System { .. })));
    let cut = tail_start(messages).max(head);
    let mut request: Vec<Message> = messages[..cut].to_vec();
    request.push(Message::user(match instructions.map(str::trim).filter(|i| !i.is_empty()) {
        Some(extra) => format!("{SUMMARY_INSTRUCTION}\n\nAdditional instructions: {extra}"),
        None => SUMMARY_INSTRUCTION.to_owned(),
    }));
    let reply =
        model.complete(ModelRequest { messages: &request, tools, stable_prefix: None }, &NoStream, cancel).await;
    let sent = Some(SummaryRequest { usage: reply.as_ref().map_or_else(|e| e.usage, |r| r.usage) });
    let result = match reply {
        Err(e) => Err(format!("summary request failed: {}", e.message)),
        Ok(reply) => match reply.message.content {
            Some(text) if !text.trim().is_empty() && reply.message.tool_calls.is_empty() => Ok(text.trim().to_owned()),
            _ => Err("summary request returned no text".to_owned()),
        },
    };
    (result, sent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use spine_protocol::message::{AssistantMessage, ToolResultMessage};
    use spine_protocol::tool::{ToolArguments, ToolCall};

    fn conversation(n: usize) -> Vec<Message> {
        let mut v = vec![Message::system("sys")];
        for i in 1..n {
            v.push(if i % 2 == 1 { Message::user(format!("u{i}")) } else { Message::assistant_text(format!("a{i}")) });
        }
        v
    }

    #[test]
    fn threshold_prefers_budget_hints_then_configuration_then_the_window() {
        let hints = json!({"advisory_hints": {"recommended_compaction_threshold": 8}, "advisory_compaction_threshold_tokens": 99});
        assert_eq!(compaction_threshold(Some(&hints), Some(5), Some(1000)), 8);
        assert_eq!(compaction_threshold(Some(&json!({"advisory_compaction_threshold_tokens": 99})), Some(5), None), 99);
        assert_eq!(compaction_threshold(None, Some(5), Some(1000)), 5);
        assert_eq!(compaction_threshold(None, None, Some(1000)), 800);
        assert_eq!(compaction_threshold(None, None, None), 0);
        assert!(
            should_compact(9, 8, 3)
                && !should_compact(8, 8, 12)
                && !should_compact(9, 8, 2)
                && !should_compact(9, 0, 12)
        );
    }

    #[tokio::test]
    async fn twelve_messages_over_threshold_keep_system_note_and_last_two() {
        let msgs = conversation(12);
        let trace = Trace::default();
        let c = compact_context(
            &msgs,
            Some("gpt-4.1-mini"),
            CompactStrategy::Sandwich,
            None,
            &CancellationToken::new(),
            &trace,
        )
        .await;
        assert!(c.compacted);
        assert_eq!(c.messages.len(), 4);
        assert_eq!(c.messages[0], Message::system("sys"));
        assert_eq!(c.messages[1], Message::user("Earlier context compacted for gpt-4.1-mini."));
        assert_eq!(&c.messages[2..], &msgs[10..]);
        assert_eq!(trace.stage_names(), vec!["compact_context"]);
    }

    #[test]
    fn the_three_message_case_does_not_grow() {
        let msgs = conversation(3);
        assert_eq!(sandwich(&msgs, "note".into()), None);
        assert!(!can_compact(&msgs) && can_compact(&conversation(5)));
    }

    #[test]
    fn the_cut_never_separates_a_tool_result_from_its_call() {
        let call = |id: &str| ToolCall { id: id.into(), name: "t".into(), arguments: ToolArguments::Json(json!({})) };
        let result = |id: &str| {
            Message::Tool(ToolResultMessage {
                tool_call_id: id.into(),
                name: "t".into(),
                content: "r".into(),
                error_code: None,
                images: Vec::new(),
            })
        };
        let mut msgs = conversation(6);
        msgs.push(Message::Assistant(AssistantMessage {
            reasoning: Vec::new(),
            content: None,
            tool_calls: vec![call("a"), call("b")],
        }));
        msgs.push(result("a"));
        msgs.push(result("b"));
        let out = sandwich(&msgs, "note".into()).expect("shrinks");
        spine_protocol::pairing::validate_pairing(&out).expect("pairs kept whole");
        assert_eq!(out.len(), 5, "system, note, assistant with calls, two results");
    }
}
