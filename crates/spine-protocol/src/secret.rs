//! A value that never prints: API keys, passwords, tokens.
//!
//! Contract:
//!
//! - [`Secret`]'s `Debug` prints the redaction marker `Secret([REDACTED])`, never the value; it
//!   has no `Display`, so a secret cannot reach an error message, a trace or a log by
//!   formatting (nor through the `Debug` of a struct or enum that holds one).
//! - The value comes out only through [`Secret::expose`], for the one place that sends it (an
//!   HTTP header, a client connection).
//! - It is not serialisable (no serde): a secret is read from the environment or a URL, never
//!   written out with the data it travels with.
//! - Two secrets are equal when their values are (configurations compare whole).

use std::fmt;

/// A secret string; see the module's contract.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
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
        assert_eq!(s.expose(), "sk-very-secret-value");
    }
}
