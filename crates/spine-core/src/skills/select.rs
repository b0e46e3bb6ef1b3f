//! The seed's selection of skills by reference, kept beside the `Skill` tool: a turn's
//! Selected Skills are a subagent's preloaded skills, then the skills its messages name.
//!
//! Contract: user and assistant messages are scanned (never tool output or hook context, so
//! fetched content cannot load skills) for `[$name](…)` links and inline `$name` not preceded
//! by a word character or `/`; a name may be a plugin's `plugin:skill`. The names are
//! de-duplicated and kept only when active. A skill whose front matter sets
//! `disable-model-invocation` is selected only by the user's messages: the model's own
//! messages and a subagent's preloaded `skills` do not load it (Claude Code does not preload
//! such a skill either).

use std::sync::OnceLock;

use regex::Regex;
use spine_protocol::message::Message;

use super::{LoadedSkill, SkillCatalog, SkillIssue};

fn link_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\[\$([A-Za-z0-9._-]+(?::[A-Za-z0-9._-]+)?)\]\([^)]*\)")
            .unwrap_or_else(|_| unreachable!("valid regex"))
    })
}

fn inline_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?:^|[^\w/])\$([A-Za-z0-9._-]+(?::[A-Za-z0-9._-]+)?)")
            .unwrap_or_else(|_| unreachable!("valid regex"))
    })
}

/// Who named a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum By {
    /// The user (a user message).
    User,
    /// The model (an assistant message), or a subagent definition's `skills`.
    Model,
}

/// The skill names referenced by user and assistant messages, de-duplicated, in order of first
/// reference. Trailing dots (sentence punctuation) are not part of a name.
pub fn referenced_names(messages: &[Message]) -> Vec<String> {
    references(messages).into_iter().map(|(name, _)| name).collect()
}

/// Each referenced name with whether a user message names it.
fn references(messages: &[Message]) -> Vec<(String, By)> {
    let mut names: Vec<(String, By)> = Vec::new();
    for m in messages {
        let (text, by) = match m {
            Message::User { content, .. } => (content.as_str(), By::User),
            Message::Assistant(a) => (a.content.as_deref().unwrap_or(""), By::Model),
            Message::System { .. } | Message::Tool(_) | Message::Context(_) => continue,
        };
        if !text.contains('$') {
            continue;
        }
        for caps in link_re().captures_iter(text).chain(inline_re().captures_iter(text)) {
            if let Some(m) = caps.get(1) {
                let name = m.as_str().trim_end_matches('.');
                match names.iter_mut().find(|(n, _)| n == name) {
                    Some(seen) if by == By::User => seen.1 = By::User,
                    Some(_) => {}
                    None if !name.is_empty() => names.push((name.to_owned(), by)),
                    None => {}
                }
            }
        }
    }
    names
}

/// The outcome of selecting skills for a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Every referenced name.
    pub requested: Vec<String>,
    /// The active skills loaded.
    pub selected: Vec<LoadedSkill>,
    /// Referenced names that were not loaded, and why.
    pub skipped: Vec<SkillIssue>,
}

/// Selects and loads the skills a transcript references.
pub fn select(catalog: &SkillCatalog, messages: &[Message]) -> Selection {
    select_with(catalog, &[], messages)
}

/// Selects and loads the `preloaded` skills (a subagent definition's `skills`), then those the
/// transcript references and `preloaded` does not name.
pub fn select_with(catalog: &SkillCatalog, preloaded: &[String], messages: &[Message]) -> Selection {
    let mut requested: Vec<(String, By)> = preloaded.iter().map(|n| (n.clone(), By::Model)).collect();
    for (name, by) in references(messages) {
        match requested.iter_mut().find(|(n, _)| *n == name) {
            Some(seen) => seen.1 = if by == By::User { By::User } else { seen.1 },
            None => requested.push((name, by)),
        }
    }
    let mut selection =
        Selection { requested: requested.iter().map(|(n, _)| n.clone()).collect(), ..Default::default() };
    for (name, by) in requested {
        let user_only = catalog.get(&name).is_some_and(|e| e.meta.disable_model_invocation);
        if user_only && by == By::Model {
            let reason = "only the user may load it (disable-model-invocation)".to_owned();
            selection.skipped.push(SkillIssue { name, reason });
            continue;
        }
        match catalog.load(&name) {
            Ok(skill) => selection.selected.push(skill),
            Err(e) => selection.skipped.push(SkillIssue { name, reason: e.to_string() }),
        }
    }
    selection
}
