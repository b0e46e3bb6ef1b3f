//! Conditional rule files at run time (Claude Code's `paths:` rules): after a tool call, each
//! rule of [`MemoryFiles::conditional`](crate::memory_files::MemoryFiles::conditional) whose
//! globs match a file the call touched ([`touched_files`]) and that this session has not shown
//! yet is shown to the model — one context message per rule, `Contents of PATH:` and the rule's
//! text, after the round's results — and InstructionsLoaded fires for it with `load_reason`
//! `path_glob_match`, the rule's `globs` and the touched file as `trigger_file_path`.
//!
//! Once per rule per session: a run shows a rule at most once, and a run that continues a
//! conversation (a later turn, a resumed session) counts the rules its history shows already.
//! A subagent's run starts its own conversation, so it shows a rule again when its own tools
//! touch a matching file, as Claude Code does.

use std::collections::HashSet;
use std::path::PathBuf;

use spine_protocol::hook::{HookEventName, InstructionsLoaded, InstructionsLoadedInput};
use spine_protocol::message::Message;

use super::Run;
use crate::memory_files::conditional::ConditionalRule;
use crate::memory_files::triggers::touched_files;
use crate::tool::Args;

/// The rules a run has shown, filled from its history on first use.
pub(super) type ShownRules = std::sync::Mutex<Option<HashSet<PathBuf>>>;

/// The prefix of the text a rule is shown with (before its path).
const SHOWN_PREFIX: &str = "Contents of ";

impl Run<'_> {
    /// The context messages of the rules a call of `tool_name` brings in, after firing
    /// InstructionsLoaded for each (see the module documentation).
    pub(super) async fn path_rules(&self, tool_name: &str, input: &Args, succeeded: bool) -> Vec<Message> {
        if self.memory.conditional.is_empty() {
            return Vec::new();
        }
        let touched = touched_files(tool_name, input, succeeded, &self.agent.config.cwd);
        let due = self.rules_due(&touched);
        let mut messages = Vec::with_capacity(due.len());
        for (rule, trigger) in due {
            let input = InstructionsLoadedInput {
                file_path: rule.path.clone(),
                memory_type: rule.kind.memory_type().to_owned(),
                load_reason: "path_glob_match".to_owned(),
                globs: Some(rule.globs.clone()),
                trigger_file_path: Some(trigger),
                parent_file_path: None,
            };
            self.hooks.observe::<InstructionsLoaded>(&self.hook_ctx, input).await;
            messages.push(Message::context(HookEventName::InstructionsLoaded, rule.message_text()));
        }
        messages
    }

    /// The rules not shown yet that match a touched file, each with the first file it matches,
    /// marked shown.
    fn rules_due(&self, touched: &[PathBuf]) -> Vec<(&ConditionalRule, PathBuf)> {
        if touched.is_empty() {
            return Vec::new();
        }
        let mut guard = self.rules_shown.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let shown = guard.get_or_insert_with(|| shown_in(&self.conversation));
        let mut due = Vec::new();
        for rule in &self.memory.conditional {
            if shown.contains(&rule.path) {
                continue;
            }
            if let Some(file) = touched.iter().find(|f| rule.matches(f)) {
                shown.insert(rule.path.clone());
                due.push((rule, file.clone()));
            }
        }
        due
    }
}

/// The rule files a conversation shows already: its InstructionsLoaded context messages.
pub(super) fn shown_in(conversation: &[Message]) -> HashSet<PathBuf> {
    conversation
        .iter()
        .filter_map(|m| match m {
            Message::Context(c) if c.event == HookEventName::InstructionsLoaded => {
                let (path, _) = c.content.strip_prefix(SHOWN_PREFIX)?.split_once(":\n\n")?;
                Some(PathBuf::from(path))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::memory_files::MemoryKind;

    #[test]
    fn a_conversation_shows_the_rules_of_its_instructions_loaded_contexts() {
        let (rule, _) = ConditionalRule::new(
            Path::new("/p/.claude/rules/ts.md"),
            MemoryKind::Project,
            Path::new("/p"),
            vec!["*.ts".into()],
            "Use strict mode.\n",
        );
        let conversation = vec![
            Message::user("go"),
            Message::context(HookEventName::InstructionsLoaded, rule.message_text()),
            Message::context(HookEventName::PostToolUse, "Contents of /p/other.md:\n\nnot a rule"),
        ];
        assert_eq!(shown_in(&conversation), HashSet::from([PathBuf::from("/p/.claude/rules/ts.md")]));
    }
}
