//! The trust question an interactive session asks at start in a project that is not trusted
//! and whose files bring something spine withholds (Claude Code's trust dialog).
//!
//! Contract: asked on stderr, answered on stdin like the approval question ([`super::approver`]'s
//! line reading); three answers:
//!
//! - `t` / `trust` (or `y` / `yes`) — trust the project, remembered as `spine trust` does;
//! - `s` / `session` — trust it for this session only, nothing recorded;
//! - `n` / `no`, an empty line or anything else — go on untrusted (fail closed).
//!
//! Ctrl-C while it waits is SIGINT's default: spine ends before anything started.
//!
//! The question names the project, what is withheld ([`crate::withheld::Withheld::counts`]) and
//! the files it comes from.

use spine_core::CancellationToken;

use crate::withheld::Withheld;

/// What the person answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrustAnswer {
    /// Trust the project and remember it (`spine trust`).
    Trust,
    /// Trust it for this session only.
    Session,
    /// Go on untrusted.
    No,
}

/// The question's text for `project` and what it withholds.
pub(crate) fn question(project: &std::path::Path, withheld: &Withheld) -> String {
    format!(
        "Do you trust the files in {}?\n  They bring {} ({}),\n  withheld until you trust the project. \
         Trusted, they can run code on this machine.\n[t]rust (remembered, as `spine trust`) / this [s]ession \
         only / [n]o: ",
        project.display(),
        withheld.counts(),
        withheld.files.join(", ")
    )
}

/// Asks the question (blocking: call it before the session's editor starts); a line that
/// cannot be read is a no.
pub(crate) fn ask(project: &std::path::Path, withheld: &Withheld) -> TrustAnswer {
    match super::approver::prompt(&question(project, withheld), &CancellationToken::new()) {
        Ok(line) => parse(&line),
        Err(_) => TrustAnswer::No,
    }
}

/// The answer a line means; anything unrecognised is a no.
fn parse(line: &str) -> TrustAnswer {
    match line.trim().to_ascii_lowercase().as_str() {
        "t" | "trust" | "y" | "yes" => TrustAnswer::Trust,
        "s" | "session" | "this session only" => TrustAnswer::Session,
        _ => TrustAnswer::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_trust_session_or_no_and_anything_else_is_no() {
        assert_eq!(parse("t\n"), TrustAnswer::Trust);
        assert_eq!(parse("Trust"), TrustAnswer::Trust);
        assert_eq!(parse("yes"), TrustAnswer::Trust);
        assert_eq!(parse("s"), TrustAnswer::Session);
        assert_eq!(parse("n"), TrustAnswer::No);
        assert_eq!(parse(""), TrustAnswer::No);
        assert_eq!(parse("sure"), TrustAnswer::No);
    }

    #[test]
    fn the_question_names_the_project_what_is_withheld_and_the_three_answers() {
        let w =
            Withheld { hooks: 1, mcp_servers: 1, files: vec![".spine/settings.json".into()], ..Withheld::default() };
        let q = question(std::path::Path::new("/p"), &w);
        let head = "Do you trust the files in /p?\n  They bring 1 hook and 1 MCP server (.spine/settings.json),\n";
        assert!(q.starts_with(head), "{q}");
        assert!(q.ends_with("[t]rust (remembered, as `spine trust`) / this [s]ession only / [n]o: "), "{q}");
    }
}
