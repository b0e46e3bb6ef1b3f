//! The listing of the skills the model may load, within Claude Code's budget.
//!
//! Contract of [`listing`]:
//! - Entries are the active skills without `disable-model-invocation`, in catalog order, one
//!   line each: `- <name>: <description>` (with ` - <when_to_use>` appended), or `- <name>`
//!   when there is nothing to describe it. A description longer than [`DESCRIPTION_CAP`]
//!   characters is cut to one less and ends with `…`.
//! - The listing's size is the characters of its lines plus one newline between each. When it
//!   fits the budget, every line is whole. Otherwise every skill is first listed by name
//!   alone, then, in listing order, each description is put back while it still fits; the
//!   names of the skills left without their description are in [`Listing::shortened`]. Every
//!   name is always listed, whatever the budget (Claude Code's rule; it puts back the
//!   descriptions of the skills used most first — spine keeps no usage counts, so it goes in
//!   listing order: the user's skills, then the project's, then the plugins').
//! - [`listing_budget`]: a fixed number of characters when given
//!   (`SLASH_COMMAND_TOOL_CHAR_BUDGET`), else [`BUDGET_FRACTION`] of the model's context
//!   window (in tokens, [`DEFAULT_CONTEXT_WINDOW`] when unknown) times [`CHARS_PER_TOKEN`]:
//!   8,000 characters for a 200,000-token window, as Claude Code 2.1.328 computes it.

use super::{SkillCatalog, SkillEntry};

/// The line before the entries when the `Skill` tool is offered (Claude Code's wording).
pub const LISTING_HEADING: &str = "The following skills are available for use with the Skill tool:";
/// The longest description listed, in characters (Claude Code's `skillListingMaxDescChars`
/// default).
pub const DESCRIPTION_CAP: usize = 1536;
/// The share of the context window the listing may take.
pub const BUDGET_FRACTION: f64 = 0.01;
/// Characters per token in the budget.
pub const CHARS_PER_TOKEN: u64 = 4;
/// The context window assumed when the model's is unknown, in tokens.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// A listing and what the budget did to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The entries, one line each (no heading).
    pub lines: Vec<String>,
    /// The names listed without their description because of the budget.
    pub shortened: Vec<String>,
    /// The budget, in characters.
    pub budget: usize,
    /// The size every description would have taken, in characters.
    pub full_size: usize,
}

/// The listing's budget in characters (see the module documentation).
pub fn listing_budget(context_window: Option<u64>, fixed: Option<usize>) -> usize {
    if let Some(chars) = fixed.filter(|c| *c > 0) {
        return chars;
    }
    let window = context_window.filter(|w| *w > 0).unwrap_or(DEFAULT_CONTEXT_WINDOW);
    let budget = (window.saturating_mul(CHARS_PER_TOKEN) as f64 * BUDGET_FRACTION).floor();
    (budget as usize).max(1)
}

/// The text of an entry's description: `description - when_to_use`, capped.
fn describe(entry: &SkillEntry) -> String {
    let text = match &entry.meta.when_to_use {
        Some(when) if !entry.description.is_empty() => format!("{} - {when}", entry.description),
        Some(when) => when.clone(),
        None => entry.description.clone(),
    };
    if text.chars().count() > DESCRIPTION_CAP {
        let cut: String = text.chars().take(DESCRIPTION_CAP - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// The listing of `catalog` within `budget` characters (see the module documentation).
pub fn listing(catalog: &SkillCatalog, budget: usize) -> Listing {
    let entries: Vec<(String, String)> = catalog
        .model_invocable()
        .map(|e| {
            let bare = format!("- {}", e.name);
            let description = describe(e);
            let full = if description.is_empty() { bare.clone() } else { format!("{bare}: {description}") };
            (bare, full)
        })
        .collect();
    let chars = |s: &String| s.chars().count();
    let separators = entries.len().saturating_sub(1);
    let full_size = entries.iter().map(|(_, full)| chars(full)).sum::<usize>() + separators;
    if full_size <= budget {
        let lines = entries.into_iter().map(|(_, full)| full).collect();
        return Listing { lines, shortened: Vec::new(), budget, full_size };
    }
    let mut left = budget.saturating_sub(entries.iter().map(|(bare, _)| chars(bare)).sum::<usize>() + separators);
    let mut lines = Vec::with_capacity(entries.len());
    let mut shortened = Vec::new();
    for (bare, full) in entries {
        let extra = chars(&full) - chars(&bare);
        if extra <= left {
            left -= extra;
            lines.push(full);
        } else {
            shortened.push(bare.trim_start_matches("- ").to_owned());
            lines.push(bare);
        }
    }
    Listing { lines, shortened, budget, full_size }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{SkillRoot, SkillRootKind};

    fn catalog(skills: &[(&str, &str)]) -> (tempfile::TempDir, SkillCatalog) {
        let dir = tempfile::tempdir().expect("tmp");
        for (name, md) in skills {
            std::fs::create_dir_all(dir.path().join(name)).expect("mkdir");
            std::fs::write(dir.path().join(name).join("SKILL.md"), md).expect("write");
        }
        let (catalog, _) =
            SkillCatalog::scan(&[SkillRoot { path: dir.path().to_path_buf(), kind: SkillRootKind::Live }]);
        (dir, catalog)
    }

    #[test]
    fn the_budget_is_one_percent_of_the_window_in_characters_or_a_fixed_count() {
        assert_eq!(listing_budget(None, None), 8000);
        assert_eq!(listing_budget(Some(1_000_000), None), 40_000);
        assert_eq!(listing_budget(Some(1_000_000), Some(300)), 300);
    }

    #[test]
    fn hidden_skills_are_not_listed_and_when_to_use_is_appended() {
        let (_d, c) = catalog(&[
            ("a", "---\ndescription: Desc.\nwhen_to_use: When asked.\n---\nbody"),
            ("b", "---\ndescription: Only you.\ndisable-model-invocation: true\n---\nbody"),
            ("c", "First line\nsecond line\n"),
        ]);
        let l = listing(&c, 8000);
        assert_eq!(l.lines, ["- a: Desc. - When asked.", "- c: First line"]);
        assert!(l.shortened.is_empty());
    }

    #[test]
    fn past_the_budget_names_stay_and_descriptions_return_in_order_while_they_fit() {
        let long = "x".repeat(40);
        let (_d, c) = catalog(&[
            ("a", &format!("---\ndescription: {long}\n---\n")),
            ("b", "---\ndescription: short\n---\n"),
            ("c", &format!("---\ndescription: {long}\n---\n")),
        ]);
        // Names alone: "- a", "- b", "- c" and two newlines = 11; "- b: short" adds 7.
        let l = listing(&c, 20);
        assert_eq!(l.lines, ["- a", "- b: short", "- c"]);
        assert_eq!(l.shortened, ["a", "c"]);
        let l = listing(&c, 1);
        assert_eq!(l.lines, ["- a", "- b", "- c"], "every name is listed whatever the budget");
        let capped = "y".repeat(DESCRIPTION_CAP + 10);
        let (_d, c) = catalog(&[("d", &format!("---\ndescription: {capped}\n---\n"))]);
        let line = &listing(&c, 100_000).lines[0];
        assert_eq!(line.chars().count(), "- d: ".len() + DESCRIPTION_CAP);
        assert!(line.ends_with('…'));
    }
}
