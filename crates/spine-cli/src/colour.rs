//! Whether spine's output may carry colour (ANSI escape codes), decided once per process and
//! passed to what writes it.
//!
//! Contract: stdout and stderr are decided separately. An output gets colour when it is a
//! terminal whose `TERM` is not `dumb`; `NO_COLOR` set to any non-empty value turns colour off
//! even on a terminal; otherwise `FORCE_COLOR` or `CLICOLOR_FORCE` set to a non-empty value
//! other than `0` turns it on even where it is not a terminal (`NO_COLOR` wins over both).
//! [`Colour::detect`] reads the environment and the terminals; [`Colour::decide`] is the rule.
//! Nothing here is process-wide state: callers keep the value they were given.
//!
//! Cursor control of a live status line (`\r`, erase line) is not colour: it is drawn only on a
//! terminal (`crate::render::status`), `NO_COLOR` or not.

use std::ffi::OsString;
use std::io::IsTerminal;

/// Whether stdout and stderr may carry colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Colour {
    /// Colour on stdout.
    pub(crate) stdout: bool,
    /// Colour on stderr.
    pub(crate) stderr: bool,
}

impl Colour {
    /// The decision for this process, from its environment and whether stdout and stderr are
    /// terminals.
    pub(crate) fn detect() -> Self {
        let env = |name: &str| std::env::var_os(name);
        Colour {
            stdout: Self::decide(env, std::io::stdout().is_terminal()),
            stderr: Self::decide(env, std::io::stderr().is_terminal()),
        }
    }

    /// The rule (see the module documentation) for one output that is a terminal or not.
    pub(crate) fn decide(env: impl Fn(&str) -> Option<OsString>, terminal: bool) -> bool {
        let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
        let forced = |name: &str| env(name).is_some_and(|v| !v.is_empty() && v != "0");
        if set("NO_COLOR") {
            return false;
        }
        if forced("FORCE_COLOR") || forced("CLICOLOR_FORCE") {
            return true;
        }
        terminal && env("TERM").is_none_or(|t| t != "dumb")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let vars: Vec<(String, OsString)> = vars.iter().map(|(k, v)| ((*k).to_owned(), OsString::from(v))).collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn colour_only_on_a_terminal_that_is_not_dumb() {
        assert!(Colour::decide(with(&[]), true));
        assert!(!Colour::decide(with(&[]), false));
        assert!(!Colour::decide(with(&[("TERM", "dumb")]), true));
    }

    #[test]
    fn no_color_turns_it_off_even_on_a_terminal_and_wins_over_force() {
        assert!(!Colour::decide(with(&[("NO_COLOR", "1")]), true));
        assert!(!Colour::decide(with(&[("NO_COLOR", "yes"), ("FORCE_COLOR", "1")]), true));
        assert!(Colour::decide(with(&[("NO_COLOR", "")]), true), "an empty NO_COLOR is not set");
    }

    #[test]
    fn force_color_or_clicolor_force_turn_it_on_off_a_terminal() {
        assert!(Colour::decide(with(&[("FORCE_COLOR", "1")]), false));
        assert!(Colour::decide(with(&[("CLICOLOR_FORCE", "1")]), false));
        assert!(!Colour::decide(with(&[("FORCE_COLOR", "0")]), false));
    }
}
