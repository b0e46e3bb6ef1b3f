//! What a key spine does not know means: forward compatible, and still strict where it matters.
//!
//! Contract of [`unknown_key`] (docs/cli.md, "Keys spine does not know"):
//! - A key within a small edit distance of a key known at the same place — spine's own or Claude
//!   Code's — is an error with "did you mean": `timout` for `timeout`, `alow` for `allow`.
//!   Ignoring it would silently change what the user asked for. "Small" is at most 1 edit (an
//!   insertion, deletion, substitution or swap of neighbours) for keys of up to 5 characters, at
//!   most 2 beyond, compared without case; a key of 4 or more characters that a known key
//!   starts with (`onFail` for `onFailure`) is a near miss too.
//! - Any other key is a warning naming the file and the JSON path: a settings file written for a
//!   newer Claude Code (or another tool) never stops spine.
//!
//! A key Claude Code has and spine does not apply is neither: each place that reads settings
//! lists those with the reason, and says so in a note or a warning of its own.

use crate::source::{Origin, SettingsError};

/// The nearest of `known` to `key`, when it is near enough to be a typo of it.
pub fn near_miss<'a>(key: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = key.to_ascii_lowercase();
    let limit = if key.chars().count() <= 5 { 1 } else { 2 };
    let abbreviates = |k: &str| lower.len() >= 4 && k.to_ascii_lowercase().starts_with(&lower);
    known
        .into_iter()
        .filter(|k| *k != key)
        .map(|k| (strsim::osa_distance(&lower, &k.to_ascii_lowercase()), k))
        .filter(|(d, k)| *d <= limit || abbreviates(k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// An unknown key at `path` (its full JSON path): an error for a near miss of one of `known`,
/// else the warning to show.
pub fn unknown_key<'a>(
    origin: &Origin,
    path: &str,
    key: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Result<String, SettingsError> {
    match near_miss(key, known) {
        Some(nearest) => {
            Err(SettingsError::at(origin, path, format!("unknown field `{key}` (did you mean `{nearest}`?)")))
        }
        None => Ok(format!("{origin}: {path}: unknown field `{key}` ignored (written for a newer version?)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["timeout", "allow", "deny", "defaultMode", "additionalDirectories"];

    #[test]
    fn a_key_one_or_two_edits_from_a_known_one_is_an_error_with_a_suggestion() {
        let origin = Origin::Cli { index: 1, path: None };
        let err = unknown_key(&origin, "hooks.x.timout", "timout", KNOWN.iter().copied()).expect_err("typo");
        assert!(err.to_string().contains("did you mean `timeout`?"), "{err}");
        assert_eq!(near_miss("alow", KNOWN.iter().copied()), Some("allow"));
        assert_eq!(near_miss("DefaultMode", KNOWN.iter().copied()), Some("defaultMode"));
        assert_eq!(near_miss("defaultMod", KNOWN.iter().copied()), Some("defaultMode"));
    }

    #[test]
    fn a_key_far_from_every_known_one_is_a_warning_naming_file_and_path() {
        let origin = Origin::Cli { index: 1, path: None };
        let warning = unknown_key(&origin, "permissions.futureFeature", "futureFeature", KNOWN.iter().copied())
            .expect("not a typo");
        assert!(warning.contains("permissions.futureFeature") && warning.contains("--settings #1"), "{warning}");
        assert_eq!(near_miss("den", ["deny", "ask"]), Some("deny"));
        assert_eq!(near_miss("dn", ["deny"]), None, "two edits on a short key is not a typo");
        assert_eq!(near_miss("onFail", ["onFailure", "once"]), Some("onFailure"), "an abbreviation");
        assert_eq!(near_miss("on", ["onFailure"]), None, "too short to be one");
    }
}
