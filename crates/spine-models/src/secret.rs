//! API keys as a [`Secret`]: the value is reachable only through [`Secret::expose`], its
//! `Debug` prints `Secret([REDACTED])`, and it has no `Display`, so a key cannot reach an error
//! message, a trace or a log by formatting. [`Secret::scrub`] removes the key from text a server
//! sent back (some servers echo the key they rejected).

use std::fmt;

/// A secret string (an API key).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret value, for the one place that sends it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the secret replaced by `[REDACTED]`. Secrets shorter than
    /// 8 characters are not searched for (they would redact ordinary words).
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() >= 8 && text.contains(self.0.as_str()) {
            text.replace(self.0.as_str(), "[REDACTED]")
        } else {
            text.to_owned()
        }
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret::new("sk-very-secret-value");
        assert_eq!(format!("{s:?}"), "Secret([REDACTED])");
        assert_eq!(format!("{:?}", Some(s.clone())), "Some(Secret([REDACTED]))");
    }

    #[test]
    fn scrub_redacts_echoed_keys_but_not_short_ones() {
        let s = Secret::new("sk-very-secret-value");
        assert_eq!(
            s.scrub("Incorrect API key provided: sk-very-secret-value."),
            "Incorrect API key provided: [REDACTED]."
        );
        assert_eq!(Secret::new("abc").scrub("abc def"), "abc def");
    }
}
