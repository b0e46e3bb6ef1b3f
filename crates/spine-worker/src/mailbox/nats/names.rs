//! Subjects and stream names derived from the prefix, and the escaping of item ids into one
//! subject token.

use sha2::{Digest, Sha256};

/// Subjects and stream names of one prefix.
#[derive(Debug, Clone)]
pub(super) struct Names {
    pub(super) items_stream: String,
    pub(super) items_subject: String,
    pub(super) reports_stream: String,
    pub(super) reports_prefix: String,
    pub(super) exec_stream: String,
    pub(super) exec_prefix: String,
    pub(super) dead_stream: String,
    pub(super) dead_prefix: String,
    pub(super) cancel_subject: String,
    pub(super) consumer: String,
}

impl Names {
    pub(super) fn new(prefix: &str) -> Self {
        let upper = prefix.to_ascii_uppercase();
        Names {
            items_stream: format!("{upper}_ITEMS"),
            items_subject: format!("{prefix}.items"),
            reports_stream: format!("{upper}_REPORTS"),
            reports_prefix: format!("{prefix}.reports"),
            exec_stream: format!("{upper}_EXEC"),
            exec_prefix: format!("{prefix}.exec"),
            dead_stream: format!("{upper}_DEAD"),
            dead_prefix: format!("{prefix}.dead"),
            cancel_subject: format!("{prefix}.cancel"),
            consumer: format!("{prefix}-workers"),
        }
    }
}

/// Escaped tokens longer than this are replaced by a digest, so that every subject stays far
/// below the server's control-line limit (4 KiB by default, which drops the connection).
const MAX_SUBJECT_TOKEN: usize = 96;

/// One subject token for an item id: safe bytes kept, others escaped as `=XX`; a token that
/// would be longer than `MAX_SUBJECT_TOKEN` is `~` and the id's SHA-256 in hex.
pub fn subject_token(id: &str) -> String {
    if id.is_empty() {
        return "=".to_owned();
    }
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("={b:02X}"));
        }
    }
    if out.len() > MAX_SUBJECT_TOKEN {
        // `~` is escaped above, so a digest token never equals an escaped one.
        let digest = Sha256::digest(id.as_bytes());
        return digest.iter().fold(String::from("~"), |mut acc, b| {
            acc.push_str(&format!("{b:02x}"));
            acc
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subject_tokens_keep_safe_bytes_and_escape_the_rest() {
        assert_eq!(subject_token("item-0001_a"), "item-0001_a");
        assert_eq!(subject_token("a.b c*>"), "a=2Eb=20c=2A=3E");
        assert_eq!(subject_token("x=y"), "x=3Dy");
        assert_eq!(subject_token(""), "=");
    }

    #[test]
    fn long_ids_become_a_digest_token_of_bounded_length() {
        let long = "x".repeat(10_000);
        let token = subject_token(&long);
        assert!(token.starts_with('~') && token.len() == 65, "{token}");
        assert_ne!(token, subject_token(&"x".repeat(10_001)), "different ids, different tokens");
        let newlines = "a\n".repeat(40);
        assert!(subject_token(&newlines).len() <= 65);
        assert!(!subject_token(&newlines).contains('\n'));
        assert_eq!(subject_token(&"y".repeat(MAX_SUBJECT_TOKEN)), "y".repeat(MAX_SUBJECT_TOKEN));
    }
}
