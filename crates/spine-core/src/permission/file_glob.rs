//! Pathname expansion as bash does it by default, for the file operands of shell commands
//! that are patterns (`cat .e*`, `rm {a,b}.txt`): brace expansion, then tilde expansion, then
//! globbing against the file system.
//!
//! Contract of [`expand`]:
//! - braces: `{a,b}` (nested, with prefixes and suffixes) expand; a brace group without a
//!   comma is literal, a sequence `{a..c}` is not expanded here (an error: computed);
//! - a leading unquoted `~` (alone or before `/`) is the user's home;
//! - `*`, `?` and `[…]` (ranges, `!`/`^` negation, `[:class:]`) match within one path
//!   component; quoted characters are literal; a name starting with `.` is matched only by a
//!   pattern starting with a `.` (bash without `dotglob`) — or, erring towards more matches,
//!   by a bracket expression that admits `.`; `.` and `..` are candidates for patterns that
//!   start with `.` (bash before 5.2 matched them);
//! - every word is also returned as written (bash passes a pattern that matches nothing
//!   unchanged), so a file created later under that name is not missed;
//! - more than [`MAX_MATCHES`] paths, [`MAX_ALTERNATIVES`] brace alternatives or
//!   [`MAX_ENTRIES`] directory entries read are an error: the operand is computed.
//!
//! Each result is the word bash would pass (for the leading `-` check) and its absolute,
//! lexically normal path.

use std::path::{Path, PathBuf};

use crate::workspace::Workspace;

/// The most paths one pattern may expand to before it counts as computed.
pub const MAX_MATCHES: usize = 4096;
/// The most brace alternatives.
pub const MAX_ALTERNATIVES: usize = 256;
/// The most directory entries read for one pattern.
pub const MAX_ENTRIES: usize = 100_000;

/// Why a pattern's expansion cannot be known before the command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unknown {
    /// More than [`MAX_MATCHES`] paths.
    #[error("more than {MAX_MATCHES} matches")]
    Matches,
    /// More than [`MAX_ALTERNATIVES`] brace alternatives.
    #[error("more than {MAX_ALTERNATIVES} brace alternatives")]
    Alternatives,
    /// More than [`MAX_ENTRIES`] directory entries to read.
    #[error("more than {MAX_ENTRIES} directory entries")]
    Entries,
    /// A brace sequence (`{a..z}`).
    #[error("a brace sequence")]
    Sequence,
    /// `~user`, `~+`, `~-`.
    #[error("a tilde prefix other than `~`")]
    TildePrefix,
}

/// A character of a word after quote removal, with whether it was quoted.
pub type Marked = (char, bool);

/// The words a pattern expands to against the file system, with their paths (see the module
/// contract); `Err` says why the expansion cannot be known.
pub fn expand(chars: &[Marked], cwd: &Path) -> Result<Vec<(String, PathBuf)>, Unknown> {
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    let mut budget = MAX_ENTRIES;
    for alternative in braces(chars)? {
        let alternative = tilde(&alternative)?;
        let literal: String = alternative.iter().map(|(c, _)| *c).collect();
        add(&mut out, literal.clone(), Workspace::normalize(&escape_tilde(&literal), cwd));
        for word in glob(&alternative, cwd, &mut budget)? {
            let path = Workspace::normalize(&escape_tilde(&word), cwd);
            add(&mut out, word, path);
        }
        if out.len() > MAX_MATCHES {
            return Err(Unknown::Matches);
        }
    }
    Ok(out)
}

fn add(out: &mut Vec<(String, PathBuf)>, word: String, path: PathBuf) {
    if !out.iter().any(|(w, p)| *w == word && *p == path) {
        out.push((word, path));
    }
}

/// A word whose `~` was already dealt with: one left at its start is a literal directory.
fn escape_tilde(word: &str) -> String {
    if word.starts_with('~') { format!("./{word}") } else { word.to_owned() }
}

/// Brace expansion (see the module contract).
fn braces(chars: &[Marked]) -> Result<Vec<Vec<Marked>>, Unknown> {
    let mut done = Vec::new();
    let mut todo = vec![chars.to_vec()];
    while let Some(word) = todo.pop() {
        match first_group(&word)? {
            None => done.push(word),
            Some((open, close, commas)) => {
                let mut start = open + 1;
                for end in commas.iter().copied().chain([close]) {
                    let mut expanded = word.get(..open).unwrap_or_default().to_vec();
                    expanded.extend_from_slice(word.get(start..end).unwrap_or_default());
                    expanded.extend_from_slice(word.get(close + 1..).unwrap_or_default());
                    todo.push(expanded);
                    start = end + 1;
                }
            }
        }
        if done.len() + todo.len() > MAX_ALTERNATIVES {
            return Err(Unknown::Alternatives);
        }
    }
    done.reverse();
    Ok(done)
}

/// The first brace group with a comma at its top level: `{`, `}` and the commas' indices.
fn first_group(word: &[Marked]) -> Result<Option<(usize, usize, Vec<usize>)>, Unknown> {
    for (open, c) in word.iter().enumerate() {
        if *c != ('{', false) {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (i, c) in word.iter().enumerate().skip(open) {
            match c {
                ('{', false) => depth += 1,
                ('}', false) => {
                    depth -= 1;
                    if depth == 0 {
                        if !commas.is_empty() {
                            return Ok(Some((open, i, commas)));
                        }
                        let inner: String = word.get(open..i).unwrap_or_default().iter().map(|(c, _)| *c).collect();
                        if inner.contains("..") {
                            return Err(Unknown::Sequence);
                        }
                        break;
                    }
                }
                (',', false) if depth == 1 => commas.push(i),
                _ => {}
            }
        }
    }
    Ok(None)
}

/// Tilde expansion at the start of a word.
fn tilde(word: &[Marked]) -> Result<Vec<Marked>, Unknown> {
    if word.first() != Some(&('~', false)) {
        return Ok(word.to_vec());
    }
    let prefix = word.iter().take_while(|(c, _)| *c != '/').count();
    if prefix > 1 {
        return Err(Unknown::TildePrefix);
    }
    let Some(home) = spine_protocol::home::user_home() else {
        return Ok(word.to_vec());
    };
    let mut out: Vec<Marked> = home.to_string_lossy().chars().map(|c| (c, true)).collect();
    out.extend_from_slice(word.get(1..).unwrap_or_default());
    Ok(out)
}

/// The words a brace-free, tilde-free pattern matches against the file system (none when it
/// has no glob character).
fn glob(word: &[Marked], cwd: &Path, budget: &mut usize) -> Result<Vec<String>, Unknown> {
    let components: Vec<&[Marked]> = word.split(|(c, _)| *c == '/').collect();
    if !components.iter().any(|c| Pattern::parse(c).is_some()) {
        return Ok(Vec::new());
    }
    let absolute = word.first().is_some_and(|(c, _)| *c == '/');
    // (the word so far, the directory it names)
    let mut current: Vec<(String, PathBuf)> = vec![(
        if absolute { "/".into() } else { String::new() },
        if absolute { PathBuf::from("/") } else { cwd.to_path_buf() },
    )];
    let count = components.len();
    for (index, component) in components.into_iter().enumerate() {
        if component.is_empty() {
            continue;
        }
        let last = index + 1 == count;
        let mut next = Vec::new();
        for (text, dir) in &current {
            let join = |name: &str| {
                let sep = if text.is_empty() || text.ends_with('/') { "" } else { "/" };
                (format!("{text}{sep}{name}"), dir.join(name))
            };
            match Pattern::parse(component) {
                None => {
                    let name: String = component.iter().map(|(c, _)| *c).collect();
                    next.push(join(&name));
                }
                Some(pattern) => {
                    for name in entries(dir, pattern.starts_with_dot(), budget)? {
                        if pattern.matches_name(&name) && (last || dir.join(&name).is_dir()) {
                            next.push(join(&name));
                        }
                    }
                }
            }
            if next.len() > MAX_MATCHES {
                return Err(Unknown::Matches);
            }
        }
        current = next;
    }
    Ok(current.into_iter().map(|(text, _)| text).collect())
}

fn entries(dir: &Path, dots: bool, budget: &mut usize) -> Result<Vec<String>, Unknown> {
    let mut names: Vec<String> = if dots { vec![".".into(), "..".into()] } else { Vec::new() };
    let Ok(read) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    for entry in read.flatten() {
        *budget = budget.checked_sub(1).ok_or(Unknown::Entries)?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// One path component of a pattern.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Char(char),
    Star,
    Any,
    Class { negated: bool, items: Vec<Item> },
}

#[derive(Debug, Clone, PartialEq)]
enum Item {
    Char(char),
    Range(char, char),
    /// `[:alpha:]`…; an unknown class admits anything.
    Named(String),
}

struct Pattern(Vec<Token>);

impl Pattern {
    /// The tokens of a component, or `None` when it has no glob character.
    fn parse(chars: &[Marked]) -> Option<Pattern> {
        let mut tokens = Vec::new();
        let mut glob = false;
        let mut i = 0;
        while let Some(&(c, quoted)) = chars.get(i) {
            i += 1;
            match (c, quoted) {
                ('*', false) => {
                    glob = true;
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                }
                ('?', false) => {
                    glob = true;
                    tokens.push(Token::Any);
                }
                ('[', false) => match class(chars, i) {
                    Some((token, end)) => {
                        glob = true;
                        tokens.push(token);
                        i = end;
                    }
                    None => tokens.push(Token::Char('[')),
                },
                (c, _) => tokens.push(Token::Char(c)),
            }
        }
        glob.then_some(Pattern(tokens))
    }

    /// Whether the pattern can match a name starting with `.`: it starts with a `.` (or,
    /// erring towards more matches, a bracket expression that admits one).
    fn starts_with_dot(&self) -> bool {
        match self.0.first() {
            Some(Token::Char('.')) => true,
            Some(t @ Token::Class { .. }) => token_matches(t, '.'),
            _ => false,
        }
    }

    fn matches_name(&self, name: &str) -> bool {
        if name.starts_with('.') && !self.starts_with_dot() {
            return false;
        }
        let chars: Vec<char> = name.chars().collect();
        matches_from(&self.0, &chars)
    }
}

/// A bracket expression starting after the `[` at `start`: the token and the index after `]`.
fn class(chars: &[Marked], start: usize) -> Option<(Token, usize)> {
    let mut i = start;
    let negated = matches!(chars.get(i), Some(('!' | '^', false)));
    if negated {
        i += 1;
    }
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let &(c, quoted) = chars.get(i)?;
        if c == ']' && !quoted && !first {
            return Some((Token::Class { negated, items }, i + 1));
        }
        first = false;
        if c == '[' && !quoted && matches!(chars.get(i + 1), Some((':' | '=' | '.', false))) {
            let kind = chars.get(i + 1).map_or(':', |(k, _)| *k);
            let rest = chars.get(i + 2..)?;
            let end = rest.windows(2).position(|w| w[0] == (kind, false) && w[1] == (']', false))?;
            let name: String = rest.get(..end)?.iter().map(|(c, _)| *c).collect();
            items.push(if kind == ':' { Item::Named(name) } else { Item::Named(String::new()) });
            i += 2 + end + 2;
            continue;
        }
        if matches!(chars.get(i + 1), Some(('-', false))) && chars.get(i + 2).is_some_and(|(n, q)| *n != ']' || *q) {
            let to = chars.get(i + 2)?.0;
            items.push(Item::Range(c, to));
            i += 3;
            continue;
        }
        items.push(Item::Char(c));
        i += 1;
    }
}

fn item_matches(item: &Item, c: char) -> bool {
    match item {
        Item::Char(x) => *x == c,
        Item::Range(a, b) => (*a..=*b).contains(&c),
        Item::Named(name) => match name.as_str() {
            "alpha" => c.is_alphabetic(),
            "digit" => c.is_ascii_digit(),
            "alnum" => c.is_alphanumeric(),
            "upper" => c.is_uppercase(),
            "lower" => c.is_lowercase(),
            "space" => c.is_whitespace(),
            "blank" => c == ' ' || c == '\t',
            "punct" => c.is_ascii_punctuation(),
            "xdigit" => c.is_ascii_hexdigit(),
            "cntrl" => c.is_control(),
            "word" => c.is_alphanumeric() || c == '_',
            // `graph`, `print`, equivalence classes, collating symbols, unknown names.
            _ => true,
        },
    }
}

fn token_matches(token: &Token, c: char) -> bool {
    match token {
        Token::Char(x) => *x == c,
        Token::Any | Token::Star => true,
        Token::Class { negated, items } => {
            let any_unknown = items.iter().any(|i| matches!(i, Item::Named(n) if !KNOWN.contains(&n.as_str())));
            let hit = items.iter().any(|i| item_matches(i, c));
            // An unknown class may admit `c`: erring towards more matches.
            if *negated { !hit || any_unknown } else { hit }
        }
    }
}

const KNOWN: &[&str] =
    &["alpha", "digit", "alnum", "upper", "lower", "space", "blank", "punct", "xdigit", "cntrl", "word"];

fn matches_from(tokens: &[Token], name: &[char]) -> bool {
    match tokens.split_first() {
        None => name.is_empty(),
        Some((Token::Star, rest)) => (0..=name.len()).any(|k| matches_from(rest, name.get(k..).unwrap_or_default())),
        Some((token, rest)) => match name.split_first() {
            Some((c, tail)) => token_matches(token, *c) && matches_from(rest, tail),
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Vec<Marked> {
        text.chars().map(|c| (c, false)).collect()
    }

    fn words(text: &str, cwd: &Path) -> Vec<String> {
        let mut w: Vec<String> = expand(&plain(text), cwd).expect("expands").into_iter().map(|(w, _)| w).collect();
        w.sort();
        w
    }

    #[test]
    fn a_glob_matches_hidden_files_only_with_a_leading_dot_as_bash_does() {
        let dir = tempfile::tempdir().expect("dir");
        for f in [".env", ".envrc", "a.env", "README.md"] {
            std::fs::write(dir.path().join(f), "x").expect("write");
        }
        assert_eq!(words(".e*", dir.path()), [".e*", ".env", ".envrc"]);
        assert_eq!(words("*.env", dir.path()), ["*.env", "a.env"]);
        assert_eq!(words("*", dir.path()), ["*", "README.md", "a.env"]);
        assert_eq!(words("?env", dir.path()), ["?env"]);
        assert_eq!(words("[.]env", dir.path()), [".env", "[.]env"]);
        assert_eq!(words(".[a-f]nv", dir.path()), [".[a-f]nv", ".env"]);
        assert_eq!(words(".[!a-f]nv", dir.path()), [".[!a-f]nv"]);
        assert!(words(".*", dir.path()).contains(&"..".to_owned()), "`..` is a candidate of `.*`");
    }

    #[test]
    fn braces_expand_before_globs_and_quoted_characters_are_literal() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join(".env"), "x").expect("write");
        assert_eq!(words("{.env,b}", dir.path()), [".env", "b"]);
        assert_eq!(words(".{e,x}*", dir.path()), [".e*", ".env", ".x*"]);
        let quoted = vec![('.', false), ('e', false), ('*', true)];
        assert_eq!(expand(&quoted, dir.path()).expect("expands").len(), 1, "a quoted `*` is literal");
        assert!(expand(&plain("{a..z}"), dir.path()).is_err(), "a sequence is not expanded here");
    }

    #[test]
    fn patterns_in_directories_match_directories_only_before_the_last_component() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join("sub/deep")).expect("mkdir");
        std::fs::write(dir.path().join("sub/.env"), "x").expect("write");
        std::fs::write(dir.path().join("file"), "x").expect("write");
        assert_eq!(words("s*/.e*", dir.path()), ["s*/.e*", "sub/.env"]);
        assert_eq!(words("*/deep", dir.path()), ["*/deep", "sub/deep"]);
        let abs = format!("{}/s?b/.env", dir.path().display());
        assert!(words(&abs, dir.path()).contains(&format!("{}/sub/.env", dir.path().display())));
    }
}
