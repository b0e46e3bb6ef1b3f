//! What the model reads of a background subagent, in Claude Code 2.1's words: the `Agent`
//! call's immediate result ([`launched_response`]) and, when the subagent ends, the
//! `<task-notification>` user message ([`notification`]).
//!
//! Contract:
//! - the launched result names the agent's id (`agentId: <id>`), says the agent works in the
//!   background and that its result arrives in a later message; spine has no `SendMessage` and
//!   no tool reading a running agent's output, so the text offers neither (Claude Code's text
//!   when it cannot continue an agent or read its output file);
//! - the notification is Claude Code's: `<task-id>` (the agent id), `<tool-use-id>` (the
//!   `Agent` call), `<status>` (`completed`, `failed`, `killed`), `<summary>` (`Agent "<description>"
//!   finished` / `failed: <error>` / `was stopped`), then `<result>` (the final answer, only when
//!   it completed) and `<usage>` (`subagent_tokens` when usage was reported, `tool_uses`,
//!   `duration_ms`). A closing `</task-notification` inside the answer is escaped so the
//!   message keeps its shape.

use std::path::Path;

use serde_json::{Value, json};

use super::AgentIdentity;

/// How a background subagent ended, as the notification says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It answered: its final message.
    Completed(String),
    /// It ended without an answer: why.
    Failed(String),
    /// Its run was canceled.
    Killed,
}

/// What a notification reports besides the ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice<'a> {
    /// The agent.
    pub identity: &'a AgentIdentity,
    /// The `Agent` call that started it.
    pub tool_use_id: &'a str,
    /// The call's `description`.
    pub description: &'a str,
    /// Input plus output tokens, when usage was reported.
    pub tokens: Option<u64>,
    /// Tool calls the agent made.
    pub tool_uses: usize,
    /// How long it ran.
    pub duration_ms: u64,
}

/// The text of a background launch (Claude Code's, see the module contract).
pub fn launched_text(agent_id: &str) -> String {
    format!(
        "Async agent launched successfully. (This tool result is internal metadata \u{2014} never quote or paste any \
         part of it, including the agentId below, into a user-facing reply.)\n\
         agentId: {agent_id} (internal ID - do not mention to user.)\n\
         The agent is working in the background. You will be notified automatically when it completes. You know \
         nothing about its results until that notification arrives \u{2014} do not report, assume, or predict them; \
         continue other work or respond to the user in the meantime.\n\
         In your own words, briefly tell the user what you launched \u{2014} do not echo this tool result. Agent \
         results will arrive in a subsequent message. If the user asks for progress, say the agent is still running."
    )
}

/// The `Agent` call's response for a background launch (Claude Code's `async_launched` shape,
/// with `content` holding [`launched_text`], which the model reads).
pub fn launched_response(identity: &AgentIdentity, description: &str, prompt: &str, transcript: &Path) -> Value {
    json!({
        "status": "async_launched",
        "agentId": identity.agent_id,
        "agentType": identity.agent_type,
        "description": description,
        "prompt": prompt,
        "outputFile": transcript,
        "canReadOutputFile": false,
        "content": [{"type": "text", "text": launched_text(&identity.agent_id)}],
    })
}

/// The one-line summary of an ending (`Agent "<description>" finished`).
pub fn summary(description: &str, ending: &Ending) -> String {
    match ending {
        Ending::Completed(_) => format!("Agent \"{description}\" finished"),
        Ending::Failed(why) => format!("Agent \"{description}\" failed: {why}"),
        Ending::Killed => format!("Agent \"{description}\" was stopped"),
    }
}

/// The `<task-notification>` message of a background subagent that ended.
pub fn notification(notice: &Notice<'_>, ending: &Ending) -> String {
    let status = match ending {
        Ending::Completed(_) => "completed",
        Ending::Failed(_) => "failed",
        Ending::Killed => "killed",
    };
    let mut text = format!(
        "<task-notification>\n<task-id>{}</task-id>\n<tool-use-id>{}</tool-use-id>\n<status>{status}</status>\n\
         <summary>{}</summary>",
        notice.identity.agent_id,
        notice.tool_use_id,
        escape(&summary(notice.description, ending))
    );
    if let Ending::Completed(answer) = ending {
        let answer = if answer.trim().is_empty() { "(Subagent completed but returned no output.)" } else { answer };
        text.push_str(&format!("\n<result>{}</result>", escape(answer)));
    }
    text.push_str("\n<usage>");
    if let Some(tokens) = notice.tokens {
        text.push_str(&format!("<subagent_tokens>{tokens}</subagent_tokens>"));
    }
    text.push_str(&format!(
        "<tool_uses>{}</tool_uses><duration_ms>{}</duration_ms></usage>\n</task-notification>",
        notice.tool_uses, notice.duration_ms
    ));
    text
}

/// `text` with a closing `</task-notification` made harmless.
fn escape(text: &str) -> String {
    text.replace("</task-notification", "&lt;/task-notification")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice(identity: &AgentIdentity) -> Notice<'_> {
        Notice {
            identity,
            tool_use_id: "t1",
            description: "Find the bug",
            tokens: Some(12),
            tool_uses: 2,
            duration_ms: 40,
        }
    }

    #[test]
    fn a_completed_background_agent_notifies_with_claude_codes_tags_and_its_answer() {
        let identity = AgentIdentity { agent_id: "a1b2".into(), agent_type: "worker".into() };
        let text = notification(&notice(&identity), &Ending::Completed("found it".into()));
        assert_eq!(
            text,
            "<task-notification>\n<task-id>a1b2</task-id>\n<tool-use-id>t1</tool-use-id>\n<status>completed</status>\n\
             <summary>Agent \"Find the bug\" finished</summary>\n<result>found it</result>\n\
             <usage><subagent_tokens>12</subagent_tokens><tool_uses>2</tool_uses><duration_ms>40</duration_ms></usage>\n\
             </task-notification>"
        );
    }

    #[test]
    fn a_failed_or_killed_agent_notifies_without_a_result_and_unknown_tokens_are_left_out() {
        let identity = AgentIdentity { agent_id: "a1".into(), agent_type: "worker".into() };
        let mut n = notice(&identity);
        n.tokens = None;
        let failed = notification(&n, &Ending::Failed("max turns".into()));
        assert!(
            failed.contains("<status>failed</status>\n<summary>Agent \"Find the bug\" failed: max turns</summary>")
        );
        assert!(!failed.contains("<result>") && !failed.contains("subagent_tokens"), "{failed}");
        let killed = notification(&n, &Ending::Killed);
        assert!(killed.contains("<status>killed</status>\n<summary>Agent \"Find the bug\" was stopped</summary>"));
    }

    #[test]
    fn an_answer_cannot_close_the_notification_early() {
        let identity = AgentIdentity { agent_id: "a1".into(), agent_type: "worker".into() };
        let text = notification(&notice(&identity), &Ending::Completed("x</task-notification>y".into()));
        assert_eq!(text.matches("</task-notification>").count(), 1, "{text}");
    }

    #[test]
    fn the_launched_result_names_the_agent_id_and_promises_a_notification() {
        let identity = AgentIdentity { agent_id: "c4b6".into(), agent_type: "worker".into() };
        let response = launched_response(&identity, "d", "p", Path::new("/t/agent-c4b6.jsonl"));
        assert_eq!(response["status"], "async_launched");
        let text = response["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with("Async agent launched successfully."), "{text}");
        assert!(text.contains("agentId: c4b6 (internal ID - do not mention to user.)"), "{text}");
        assert!(text.contains("You will be notified automatically when it completes."), "{text}");
    }
}
