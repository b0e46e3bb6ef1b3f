//! What a skill invocation gives the model: the `SKILL.md` body with the front matter removed,
//! the arguments and variables filled in, under the line naming the skill's directory — as
//! Claude Code 2.1.328 renders it (recorded in
//! `crates/spine-cli/tests/fixtures/claude-code-2.1.328/skill-tool.json`).
//!
//! Contract of [`render`]:
//! - The text is `Base directory for this skill: <dir>`, a blank line, then the body.
//! - `${CLAUDE_SKILL_DIR}`, `${CLAUDE_PROJECT_DIR}` and `${CLAUDE_SESSION_ID}` are replaced
//!   everywhere; `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` in a plugin's skill only.
//! - With arguments (`Some`, even empty), one pass over the body replaces, left to right: a
//!   declared name `$name` (the `arguments` front matter; not followed by `[` or a word
//!   character) by the argument at its position, or nothing; `$ARGUMENTS[N]` and `$N` (not
//!   followed by a word character) by the N-th argument (0-based), left as written when there
//!   is none; `$ARGUMENTS` by the whole argument string. Arguments are split as a shell splits
//!   words (quotes group). A backslash before such a placeholder (not itself after a
//!   backslash) writes it literally (`\$1.00` is `$1.00`). Substituted text is never scanned
//!   again. When no placeholder was used and the arguments are not empty, `\n\nARGUMENTS:
//!   <arguments>` is appended.
//! - Without arguments (`None`: a `Skill` call with no `args`), placeholders stay as written,
//!   as Claude Code leaves them.
//! - `` !`command` `` lines are not run: spine never runs a skill's commands; they reach the
//!   model as written.

use std::path::Path;

use super::SkillEntry;

/// The values an invocation fills in besides the arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillVars {
    /// `${CLAUDE_SESSION_ID}`.
    pub session_id: String,
    /// `${CLAUDE_PROJECT_DIR}`.
    pub project_dir: std::path::PathBuf,
}

/// The text the model reads for `entry` invoked with `args` (see the module documentation).
pub fn render(entry: &SkillEntry, body: &str, args: Option<&str>, vars: &SkillVars) -> String {
    let body = variables(entry, body, vars);
    let body = match args {
        Some(args) => substitute(&body, args, &entry.meta.arguments),
        None => body,
    };
    format!("Base directory for this skill: {}\n\n{body}", entry.root_path.display())
}

/// `${CLAUDE_*}` replaced in `text` (plugin variables for a plugin's skill only).
pub fn variables(entry: &SkillEntry, text: &str, vars: &SkillVars) -> String {
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let mut pairs = vec![
        ("${CLAUDE_SKILL_DIR}", path(&entry.root_path)),
        ("${CLAUDE_PROJECT_DIR}", path(&vars.project_dir)),
        ("${CLAUDE_SESSION_ID}", vars.session_id.clone()),
    ];
    if let Some(plugin) = &entry.plugin {
        pairs.push(("${CLAUDE_PLUGIN_ROOT}", path(&plugin.root)));
        pairs.push(("${CLAUDE_PLUGIN_DATA}", path(&plugin.data)));
    }
    pairs.into_iter().fold(text.to_owned(), |acc, (name, value)| acc.replace(name, &value))
}

/// The argument placeholders of `body` filled from `args` (see the module documentation).
pub fn substitute(body: &str, args: &str, declared: &[String]) -> String {
    let words = split_words(args);
    let mut names: Vec<(usize, &str)> = declared.iter().enumerate().map(|(i, n)| (i, n.as_str())).collect();
    names.sort_by_key(|(_, n)| std::cmp::Reverse(n.len()));
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut i = 0;
    let bytes = body.as_bytes();
    while i < body.len() {
        let rest = &body[i..];
        if rest.starts_with("\\$") && (i == 0 || bytes[i - 1] != b'\\') && escapable(&rest[2..], &names) {
            out.push('$');
            i += 2;
            continue;
        }
        if let Some(after) = rest.strip_prefix('$')
            && let Some((len, value)) = placeholder(after, &names).and_then(|p| fill(p, args, &words))
        {
            out.push_str(&value);
            used = true;
            i += 1 + len;
            continue;
        }
        let c = rest.chars().next().unwrap_or_default();
        out.push(c);
        i += c.len_utf8();
    }
    if !used && !args.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(args);
    }
    out
}

/// Whether a backslash before a `$` followed by `after` escapes it: a digit, `ARGUMENTS` or a
/// declared name follows.
fn escapable(after: &str, names: &[(usize, &str)]) -> bool {
    after.starts_with(|c: char| c.is_ascii_digit())
        || after.starts_with("ARGUMENTS")
        || matches!(placeholder(after, names), Some(Placeholder::Named(..)))
}

/// A placeholder at the start of `after` (the text after a `$`).
enum Placeholder {
    /// A declared name: its position and length.
    Named(usize, usize),
    /// `ARGUMENTS[N]` or `N`: the index and the length written.
    Indexed(usize, usize),
    /// `ARGUMENTS`.
    All,
}

fn placeholder(after: &str, names: &[(usize, &str)]) -> Option<Placeholder> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for (position, name) in names {
        if let Some(tail) = after.strip_prefix(name)
            && !tail.starts_with(|c: char| c == '[' || word(c))
        {
            return Some(Placeholder::Named(*position, name.len()));
        }
    }
    if let Some(tail) = after.strip_prefix("ARGUMENTS[") {
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(']') {
            let n = tail[..digits].parse().unwrap_or(usize::MAX);
            return Some(Placeholder::Indexed(n, "ARGUMENTS[".len() + digits + 1));
        }
    }
    if after.starts_with("ARGUMENTS") {
        return Some(Placeholder::All);
    }
    let digits = after.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && !after[digits..].starts_with(word) {
        return Some(Placeholder::Indexed(after[..digits].parse().unwrap_or(usize::MAX), digits));
    }
    None
}

/// The text a placeholder stands for and its length, or `None` to leave it as written.
fn fill(p: Placeholder, args: &str, words: &[String]) -> Option<(usize, String)> {
    match p {
        Placeholder::Named(position, len) => Some((len, words.get(position).cloned().unwrap_or_default())),
        Placeholder::Indexed(n, len) => words.get(n).map(|w| (len, w.clone())),
        Placeholder::All => Some(("ARGUMENTS".len(), args.to_owned())),
    }
}

/// `text` split into words as a shell splits them: whitespace separates, single and double
/// quotes group, a backslash escapes the next character (outside single quotes). Unbalanced
/// quotes end at the end of the text.
pub fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current: Option<String> = None;
    let mut chars = text.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => {
                if let Some(next) = chars.next() {
                    current.get_or_insert_with(String::new).push(next);
                }
            }
            (Some(_), c) => current.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                current.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(current.take()),
            (None, c) => current.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(current);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn arguments_fill_placeholders_as_claude_code_does() {
        // Recorded: `/deploy-notes v9` left `$1` as written.
        let body = "Write deployment notes for $ARGUMENTS (first: $0, second: $1).\n";
        assert_eq!(
            substitute(body, "v1.2 staging", &[]),
            "Write deployment notes for v1.2 staging (first: v1.2, second: staging).\n"
        );
        assert_eq!(substitute(body, "v9", &[]), "Write deployment notes for v9 (first: v9, second: $1).\n");
        assert_eq!(substitute("Go $ARGUMENTS[1] $ARGUMENTS[5]", "a \"b c\"", &[]), "Go b c $ARGUMENTS[5]");
        assert_eq!(substitute("Fix $issue on $branch$", "12", &names(&["issue", "branch"])), "Fix 12 on $");
        assert_eq!(
            substitute("$issues and $issue[0]", "12", &names(&["issue"])),
            "$issues and $issue[0]\n\nARGUMENTS: 12"
        );
    }

    #[test]
    fn arguments_are_appended_when_no_placeholder_is_used_and_escapes_write_dollars() {
        // Recorded: "PLAIN BODY\n" with args "x y".
        assert_eq!(substitute("PLAIN BODY\n", "x y", &[]), "PLAIN BODY\n\n\nARGUMENTS: x y");
        assert_eq!(substitute("PLAIN BODY\n", "", &[]), "PLAIN BODY\n");
        assert_eq!(substitute("Costs \\$1.00, not $0", "x", &[]), "Costs $1.00, not x");
        assert_eq!(substitute("\\\\$0", "x", &[]), "\\\\x", "a doubled backslash escapes nothing");
        assert_eq!(substitute("$0", "$1 $0", &[]), "$1", "substituted text is not scanned again");
        assert_eq!(substitute("price $5x", "a", &[]), "price $5x\n\nARGUMENTS: a");
    }

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(split_words(r#"a "b c" 'd e' f\ g"#), ["a", "b c", "d e", "f g"]);
        assert_eq!(split_words("  "), Vec::<String>::new());
        assert_eq!(split_words("\"\""), [""]);
    }
}
