//! Standard output for every command. A reader that went away (`spine trace show … | head`) is
//! a normal end: writes report that stdout is closed and the command finishes quietly with its
//! usual status — never a panic (`println!` panics on a closed pipe).

use std::fmt::Display;
use std::io::Write;

/// Whether stdout still takes output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Stdout {
    /// The text was written.
    Open,
    /// The reader is gone (or stdout failed otherwise): stop writing.
    Closed,
}

/// Writes `text` as it is and flushes.
pub fn text(text: impl Display) -> Stdout {
    let mut out = std::io::stdout().lock();
    match write!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Stdout::Open,
        Err(_) => Stdout::Closed,
    }
}

/// Writes `text` and a newline, and flushes.
pub fn line(text: impl Display) -> Stdout {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Stdout::Open,
        Err(_) => Stdout::Closed,
    }
}
