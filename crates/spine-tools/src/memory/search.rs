//! Ranking memory files against a query.
//!
//! The query is matched case-insensitively two ways: as a whole **phrase** (substring) and as
//! **tokens** (runs of letters and digits; each token matches as a substring, so `deploy`
//! finds `deployment`). A file's score:
//!
//! - 10 per line containing the phrase (only for queries of more than one token, where the
//!   phrase says more than its tokens),
//! - 5 per distinct token found in the file, plus 1 per line hit (at most 20 such points),
//! - 5 more when every token is in the file,
//! - 3 per token found in the key itself.
//!
//! Files without any token are not results. Snippets are the best lines (phrase first, then
//! most tokens), at most [`SNIPPETS`] per file, in file order, each cut to [`SNIPPET_CHARS`]
//! characters around its first match.

/// Snippets per result.
pub(crate) const SNIPPETS: usize = 3;
/// Characters per snippet.
pub(crate) const SNIPPET_CHARS: usize = 160;

/// A query, lowercased and split.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    phrase: String,
    tokens: Vec<String>,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snippet {
    /// 1-based line number.
    pub line: usize,
    /// The line, cut around the match.
    pub text: String,
}

/// A file's score and snippets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The score (see the module documentation).
    pub score: u32,
    /// The best lines.
    pub snippets: Vec<Snippet>,
}

impl Query {
    /// Parses a query; `None` when it has no letters or digits.
    pub(crate) fn parse(text: &str) -> Option<Query> {
        let phrase = text.trim().to_lowercase();
        let mut tokens: Vec<String> = Vec::new();
        for t in phrase.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()) {
            if !tokens.iter().any(|x| x == t) {
                tokens.push(t.to_owned());
            }
        }
        if tokens.is_empty() { None } else { Some(Query { phrase, tokens }) }
    }

    /// Scores one file (`key` is its name, `text` its content).
    pub(crate) fn score(&self, key: &str, text: &str) -> Option<Hit> {
        let use_phrase = self.tokens.len() > 1;
        let mut found = vec![false; self.tokens.len()];
        let mut phrase_lines = 0u32;
        let mut line_hits = 0u32;
        // (phrase?, tokens in line, line index, first match byte offset)
        let mut ranked: Vec<(bool, usize, usize, usize)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let phrase_at = if use_phrase { lower.find(&self.phrase) } else { None };
            let mut in_line = 0;
            let mut first = phrase_at;
            for (t, token) in self.tokens.iter().enumerate() {
                if let Some(at) = lower.find(token.as_str()) {
                    found[t] = true;
                    in_line += 1;
                    first = Some(first.map_or(at, |f| f.min(at)));
                }
            }
            if phrase_at.is_some() {
                phrase_lines += 1;
            }
            if in_line > 0 {
                line_hits += 1;
                ranked.push((phrase_at.is_some(), in_line, i, first.unwrap_or(0)));
            }
        }
        let key_lower = key.to_lowercase();
        let key_tokens = self.tokens.iter().filter(|t| key_lower.contains(t.as_str())).count() as u32;
        let distinct = found.iter().filter(|f| **f).count() as u32;
        if distinct == 0 && key_tokens == 0 {
            return None;
        }
        let all = found.iter().all(|f| *f);
        let score = 10 * phrase_lines + 5 * distinct + line_hits.min(20) + if all { 5 } else { 0 } + 3 * key_tokens;
        ranked.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        ranked.truncate(SNIPPETS);
        ranked.sort_by_key(|r| r.2);
        let lines: Vec<&str> = text.lines().collect();
        let snippets = ranked
            .into_iter()
            .map(|(_, _, i, at)| Snippet { line: i + 1, text: cut_around(lines.get(i).copied().unwrap_or(""), at) })
            .collect();
        Some(Hit { score, snippets })
    }
}

/// Cuts a line to [`SNIPPET_CHARS`] characters, starting a little before byte `at` of its
/// lowercased form (an approximation for non-ASCII lines, whose case mapping may change length).
fn cut_around(line: &str, at: usize) -> String {
    let line = line.trim();
    let total = line.chars().count();
    if total <= SNIPPET_CHARS {
        return line.to_owned();
    }
    let at_char = line.char_indices().take_while(|(b, _)| *b < at).count();
    let start = at_char.saturating_sub(SNIPPET_CHARS / 4).min(total - SNIPPET_CHARS);
    let body: String = line.chars().skip(start).take(SNIPPET_CHARS).collect();
    let lead = if start > 0 { "…" } else { "" };
    let trail = if start + SNIPPET_CHARS < total { "…" } else { "" };
    format!("{lead}{body}{trail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrase_lines_outrank_scattered_tokens() {
        let q = Query::parse("deploy staging").expect("query");
        let phrase = q.score("a", "we deploy staging on fridays").expect("hit");
        let scattered = q.score("b", "deploy\nstaging").expect("hit");
        assert!(phrase.score > scattered.score, "{phrase:?} {scattered:?}");
    }

    #[test]
    fn tokens_match_inside_words_and_case_insensitively() {
        let q = Query::parse("DEPLOY").expect("query");
        let hit = q.score("notes", "Deployment runbook").expect("hit");
        assert_eq!(hit.snippets, vec![Snippet { line: 1, text: "Deployment runbook".into() }]);
        assert!(q.score("notes", "nothing here").is_none());
    }

    #[test]
    fn queries_without_letters_or_digits_are_refused() {
        assert!(Query::parse(" -- ").is_none());
    }

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let q = Query::parse("needle").expect("query");
        let line = format!("{}needle{}", "x".repeat(300), "y".repeat(300));
        let hit = q.score("k", &line).expect("hit");
        let text = &hit.snippets[0].text;
        assert!(text.contains("needle") && text.starts_with('…') && text.ends_with('…'), "{text}");
    }
}
