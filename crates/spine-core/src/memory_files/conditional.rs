//! Conditional rule files: a `.claude/rules/**/*.md` file whose front matter sets `paths:` is
//! not part of the memory loaded with the session; Claude Code shows it to the model the first
//! time a tool touches a file one of its globs matches. This module reads such a rule; the
//! runner decides when to show it (`runner/path_rules.rs`).
//!
//! Contract, as Claude Code 2.1 reads rules:
//! - [`globs`]: the `paths:` value as globs. A YAML list is flattened (items that are not
//!   strings are dropped); a string is split at commas outside braces; items are trimmed and
//!   empty ones dropped; brace groups are expanded (`lib/{a,b}/*.py` is `lib/a/*.py` and
//!   `lib/b/*.py`; past [`BRACE_RESULTS`] results an item stays unexpanded); a trailing `/**`
//!   is dropped (`docs/**` is `docs`). No glob, or only `**`, is no condition: the rule loads
//!   with the session like any other.
//! - [`front_matter`]: front matter that is not valid YAML is read again with every
//!   `key: value` line whose value holds YAML syntax characters quoted (`paths: {a,b}/**`,
//!   `paths: *.ts`), as Claude Code does; front matter that still does not parse sets nothing.
//! - [`ConditionalRule::matches`]: the globs are gitignore patterns (Claude Code matches them
//!   with an `ignore`-style matcher), applied to the file's path relative to the rule's base —
//!   the project root for the project's rules, the working directory for the user's
//!   (`~/.claude/rules`) — case-insensitively: a pattern without a slash matches at any depth,
//!   a pattern naming a directory matches everything under it, `!` re-includes. A file outside
//!   the base never matches. A glob that does not compile matches nothing (with a warning).
//! - [`ConditionalRule::message_text`]: what the model is shown — `Contents of PATH:`, a blank
//!   line and the rule's text after its front matter.

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde_json::Value;

use super::MemoryKind;

/// How many globs one `paths:` item may expand to before it is kept unexpanded.
pub const BRACE_RESULTS: usize = 1000;
/// Bytes of expanded globs one `paths:` value may produce.
const BRACE_BYTES: usize = 4 * 1024 * 1024;
/// Characters that make a front matter value YAML syntax rather than a plain string.
const YAML_SYNTAX: &[char] = &['{', '}', '[', ']', '*', '&', '#', '!', '|', '>', '%', '@', '`'];

/// A rule file with `paths:` globs.
#[derive(Debug, Clone)]
pub struct ConditionalRule {
    /// The rule file (symlinks resolved).
    pub path: PathBuf,
    /// Whose it is: `User` (`~/.claude/rules`) or `Project`.
    pub kind: MemoryKind,
    /// The globs, as [`globs`] read them.
    pub globs: Vec<String>,
    /// The directory the globs are relative to.
    pub base: PathBuf,
    /// The text after the front matter.
    pub body: String,
    matcher: Gitignore,
}

impl PartialEq for ConditionalRule {
    fn eq(&self, other: &Self) -> bool {
        (&self.path, self.kind, &self.globs, &self.base, &self.body)
            == (&other.path, other.kind, &other.globs, &other.base, &other.body)
    }
}

impl Eq for ConditionalRule {}

impl ConditionalRule {
    /// The rule in `text` (the file at `path`) when its front matter sets `paths:` globs, with
    /// the warnings of globs that do not compile; `None` for a rule that always applies.
    pub fn read(path: &Path, kind: MemoryKind, base: &Path, text: &str) -> Option<(ConditionalRule, Vec<String>)> {
        let (meta, body) = front_matter(text)?;
        let globs = globs(meta.get("paths")?);
        if globs.iter().all(|g| g == "**") {
            return None;
        }
        Some(ConditionalRule::new(path, kind, base, globs, body))
    }

    /// A rule with these globs, and the warnings of the ones that do not compile.
    pub fn new(path: &Path, kind: MemoryKind, base: &Path, globs: Vec<String>, body: &str) -> (Self, Vec<String>) {
        let mut builder = GitignoreBuilder::new(base);
        let mut warnings = Vec::new();
        if let Err(e) = builder.case_insensitive(true) {
            warnings.push(format!("rule file {}: {e}", path.display()));
        }
        for glob in &globs {
            if let Err(e) = builder.add_line(None, glob) {
                warnings.push(format!("rule file {}: `paths:` glob `{glob}` matches nothing: {e}", path.display()));
            }
        }
        let matcher = builder.build().unwrap_or_else(|e| {
            warnings.push(format!("rule file {}: its `paths:` globs match nothing: {e}", path.display()));
            Gitignore::empty()
        });
        let rule = ConditionalRule {
            path: path.to_path_buf(),
            kind,
            globs,
            base: base.to_path_buf(),
            body: body.to_owned(),
            matcher,
        };
        (rule, warnings)
    }

    /// Whether a file (an absolute, lexically normal path) is one the rule applies to.
    pub fn matches(&self, file: &Path) -> bool {
        let Ok(relative) = file.strip_prefix(&self.base) else { return false };
        if relative.as_os_str().is_empty() {
            return false;
        }
        self.matcher.matched_path_or_any_parents(relative, false).is_ignore()
    }

    /// The text the model is shown when the rule applies (Claude Code's wording).
    pub fn message_text(&self) -> String {
        format!("Contents of {}:\n\n{}", self.path.display(), self.body)
    }
}

/// The globs of a `paths:` value (see the module documentation).
pub fn globs(value: &Value) -> Vec<String> {
    let mut items = Vec::new();
    split_items(value, &mut items);
    let mut budget = Budget { results: BRACE_RESULTS, bytes: BRACE_BYTES };
    items
        .iter()
        .flat_map(|item| expand_braces(item, &mut budget))
        .map(|g| g.strip_suffix("/**").map(str::to_owned).unwrap_or(g))
        .filter(|g| !g.is_empty())
        .collect()
}

/// A list's items in order, a string's comma-separated items (commas inside braces belong to
/// the item), trimmed; anything else has none.
fn split_items(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| split_items(v, out)),
        Value::String(text) => {
            let (mut depth, mut current) = (0i64, String::new());
            for c in text.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(std::mem::take(&mut current).trim().to_owned());
                        continue;
                    }
                    _ => {}
                }
                current.push(c);
            }
            out.push(current.trim().to_owned());
            out.retain(|item| !item.is_empty());
        }
        _ => {}
    }
}

/// What brace expansion may still produce for one `paths:` value.
struct Budget {
    results: usize,
    bytes: usize,
}

/// The item with its brace groups expanded, first group first and alternatives in order; the
/// item itself when it has none or expanding it would exceed the budget.
fn expand_braces(item: &str, budget: &mut Budget) -> Vec<String> {
    if !item.contains('{') {
        return vec![item.to_owned()];
    }
    let mut done = Vec::new();
    let mut pending = vec![item.to_owned()];
    while let Some(next) = pending.pop() {
        let Some((head, alternatives, tail)) = first_group(&next) else {
            done.push(next);
            continue;
        };
        let options: Vec<&str> = alternatives.split(',').map(str::trim).collect();
        budget.bytes = budget.bytes.saturating_sub(next.len());
        let count = done.len() + pending.len() + options.len();
        if budget.bytes == 0 || count > budget.results || count * item.len() > budget.bytes {
            return vec![item.to_owned()];
        }
        pending.extend(options.iter().rev().map(|o| format!("{head}{o}{tail}")));
    }
    budget.results = budget.results.saturating_sub(done.len());
    budget.bytes = budget.bytes.saturating_sub(done.len() * item.len());
    done
}

/// The first `{…}` group of `text` with no brace inside: what comes before it, its inside and
/// what comes after it (Claude Code's `^([^{]*)\{([^}]+)\}(.*)$`).
fn first_group(text: &str) -> Option<(&str, &str, &str)> {
    let open = text.find('{')?;
    let close = open + 1 + text[open + 1..].find('}')?;
    let inside = &text[open + 1..close];
    (!inside.is_empty()).then(|| (&text[..open], inside, &text[close + 1..]))
}

/// The front matter of a rule file as a JSON object and the text after it; `None` when the
/// file has none that parses (see the module documentation).
pub fn front_matter(text: &str) -> Option<(serde_json::Map<String, Value>, &str)> {
    let parsed = crate::front_matter::parse::<Value>(text).ok().or_else(|| {
        let quoted = quote_values(text)?;
        let (meta, body) = crate::front_matter::parse::<Value>(&quoted).ok()?;
        // Quoting changes the front matter only: the body is the same end of `text`.
        Some((meta, text.get(text.len().checked_sub(body.len())?..)?))
    });
    match parsed? {
        (Value::Object(meta), body) => Some((meta, body)),
        _ => None,
    }
}

/// The text with every front matter line `key: value` whose value is YAML syntax quoted as a
/// string, and leading tabs made spaces; `None` when the text has no front matter.
fn quote_values(text: &str) -> Option<String> {
    let mut lines = text.split('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut out = vec![first.to_owned()];
    let mut closed = false;
    for line in lines {
        if closed {
            out.push(line.to_owned());
            continue;
        }
        if line.trim_end() == "---" {
            closed = true;
            out.push(line.to_owned());
            continue;
        }
        let tabs = line.len() - line.trim_start_matches('\t').len();
        out.push(quote_line(&format!("{}{}", "  ".repeat(tabs), &line[tabs..])));
    }
    closed.then(|| out.join("\n"))
}

/// One `key: value` line with its value quoted when it is YAML syntax (not when it is quoted
/// already or a flow list that parses).
fn quote_line(line: &str) -> String {
    let Some((key, rest)) = line.split_once(':') else { return line.to_owned() };
    let value = rest.trim_start();
    let plain_key = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-');
    if !plain_key || value.is_empty() || value.len() == rest.len() {
        return line.to_owned();
    }
    let quoted = (value.starts_with('"') && value.ends_with('"') && value.len() > 1)
        || (value.starts_with('\'') && value.ends_with('\'') && value.len() > 1);
    let list = value.starts_with('[')
        && value.ends_with(']')
        && serde_saphyr::from_str::<Vec<serde::de::IgnoredAny>>(value).is_ok();
    if quoted || list || !(value.contains(YAML_SYNTAX) || value.contains(": ")) {
        return line.to_owned();
    }
    format!("{key}: \"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
#[path = "conditional_tests.rs"]
mod tests;
