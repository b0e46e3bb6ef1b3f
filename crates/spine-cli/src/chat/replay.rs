//! Where a resumed session was: when an interactive session opens on an earlier conversation
//! (`--continue`, `--resume ID`, `/resume`), its last turns are drawn again as the live chat
//! showed them.
//!
//! Contract of [`redraw`]:
//! - a turn starts at each user message (a prompt, or what a Stop hook made the agent go on
//!   with); the last [`TURNS`] are drawn, after one line saying how many earlier turns are left
//!   out (`… 12 earlier turns not shown`) when some are;
//! - a user message is drawn as it was typed at the prompt (`> ` before it, `  ` before each
//!   further line), folded to [`super::view::FOLDED_LINES`] lines like a tool's output;
//! - the model's text as the live chat printed it; each tool call as its one line and folded
//!   output, by the live chat's own [`super::view::tool_lines`] and
//!   [`super::view::shown_call`] (without a duration: the transcript keeps none); a call with
//!   no result in the conversation (a deferred one) is `⏺ Bash(…) · no result`;
//! - system messages (the system prompt, compaction notes) and hooks' added context are not
//!   drawn; a conversation with no user message draws nothing.

use std::collections::HashMap;

use spine_protocol::message::{Message, ToolResultMessage};

use super::view::{FOLDED_LINES, shown_call, tool_lines};

/// How many of the last turns are drawn.
pub const TURNS: usize = 10;

/// Draws the last [`TURNS`] turns of `history` on stdout (nothing when there are none).
pub fn show(history: &[Message]) {
    let text = redraw(history, TURNS);
    if !text.is_empty() {
        println!("{text}");
    }
}

/// The text drawn for `history` (see the module contract); empty when there is nothing to draw.
pub fn redraw(history: &[Message], turns: usize) -> String {
    let starts: Vec<usize> =
        history.iter().enumerate().filter(|(_, m)| matches!(m, Message::User { .. })).map(|(i, _)| i).collect();
    let left_out = starts.len().saturating_sub(turns.max(1));
    let Some(&first) = starts.get(left_out) else {
        return String::new();
    };
    let results: HashMap<&str, &ToolResultMessage> = history
        .iter()
        .filter_map(|m| match m {
            Message::Tool(result) => Some((result.tool_call_id.as_str(), result)),
            _ => None,
        })
        .collect();
    let mut lines: Vec<String> = Vec::new();
    if left_out > 0 {
        lines.push(format!("… {left_out} earlier turn{} not shown", if left_out == 1 { "" } else { "s" }));
    }
    for message in &history[first..] {
        match message {
            Message::User { content, .. } => lines.push(user_lines(content)),
            Message::Assistant(reply) => {
                if let Some(text) = reply.content.as_deref().filter(|t| !t.trim().is_empty()) {
                    lines.push(text.trim_end().to_owned());
                }
                for call in &reply.tool_calls {
                    let shown = shown_call(call);
                    lines.push(match results.get(call.id.as_str()) {
                        Some(result) => tool_lines(&shown, None, result),
                        None => format!("⏺ {shown} · no result"),
                    });
                }
            }
            Message::System { .. } | Message::Tool(_) | Message::Context(_) => {}
        }
    }
    lines.join("\n")
}

/// A user message as the prompt showed it, folded.
fn user_lines(content: &str) -> String {
    let body: Vec<&str> = content.trim_end().lines().collect();
    let mut text = String::new();
    for (i, line) in body.iter().take(FOLDED_LINES).enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(if i == 0 { "> " } else { "  " });
        text.push_str(line);
    }
    if body.len() > FOLDED_LINES {
        text.push_str(&format!("\n  … +{} lines", body.len() - FOLDED_LINES));
    }
    if text.is_empty() { "> ".to_owned() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use spine_protocol::message::AssistantMessage;
    use spine_protocol::tool::{ToolArguments, ToolCall};

    fn user(text: &str) -> Message {
        Message::User { content: text.into(), images: Vec::new() }
    }

    fn said(text: &str) -> Message {
        Message::Assistant(AssistantMessage { content: Some(text.into()), ..Default::default() })
    }

    fn call(id: &str, command: &str) -> Message {
        let arguments = ToolArguments::Json(json!({"command": command}));
        Message::Assistant(AssistantMessage {
            tool_calls: vec![ToolCall { id: id.into(), name: "Bash".into(), arguments }],
            ..Default::default()
        })
    }

    fn result(id: &str, content: &str) -> Message {
        Message::Tool(ToolResultMessage {
            tool_call_id: id.into(),
            name: "Bash".into(),
            content: content.into(),
            error_code: None,
            images: Vec::new(),
        })
    }

    #[test]
    fn the_last_turns_are_drawn_as_the_live_chat_showed_them_after_a_line_for_those_left_out() {
        let history = vec![
            Message::System { content: "system".into() },
            user("first"),
            said("one"),
            user("run it\nplease"),
            call("c1", "echo hi"),
            result("c1", "hi\n"),
            said("done"),
            user("later"),
            call("c2", "sleep 9"),
        ];
        assert_eq!(
            redraw(&history, 2),
            "… 1 earlier turn not shown\n> run it\n  please\n⏺ Bash(echo hi) ✓\n  ⎿ hi\ndone\n> later\n⏺ Bash(sleep 9) · no result"
        );
        assert_eq!(redraw(&history, 10).lines().next(), Some("> first"), "nothing left out");
        assert_eq!(redraw(&[Message::System { content: "s".into() }], 10), "");
    }

    #[test]
    fn a_long_user_message_folds_like_a_tools_output() {
        assert_eq!(user_lines("a\nb\nc\nd\ne"), "> a\n  b\n  c\n  … +2 lines");
    }
}
