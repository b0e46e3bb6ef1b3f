//! API keys as a [`Secret`] ([`spine_protocol::secret`]: the value is reachable only through
//! [`Secret::expose`], its `Debug` prints `Secret([REDACTED])`, and it has no `Display`, so a
//! key cannot reach an error message, a trace or a log by formatting). [`scrub`] removes the key
//! from text a server sent back (some servers echo the key they rejected).

pub use spine_protocol::secret::Secret;

/// `text` with every occurrence of `secret` replaced by `[REDACTED]`. Secrets shorter than 8
/// characters are not searched for (they would redact ordinary words).
pub fn scrub(secret: &Secret, text: &str) -> String {
    let value = secret.expose();
    if value.len() >= 8 && text.contains(value) { text.replace(value, "[REDACTED]") } else { text.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_redacts_echoed_keys_but_not_short_ones() {
        let s = Secret::new("sk-very-secret-value");
        assert_eq!(
            scrub(&s, "Incorrect API key provided: sk-very-secret-value."),
            "Incorrect API key provided: [REDACTED]."
        );
        assert_eq!(scrub(&Secret::new("abc"), "abc def"), "abc def");
    }
}
