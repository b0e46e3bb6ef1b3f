//! The binary's error classes and their exit codes: 1 the run failed, 2 bad usage or bad
//! configuration (the message names the file and field), 130/143/129 canceled by SIGINT
//! (Ctrl-C), SIGTERM or SIGHUP (128 + the signal's number).

use std::fmt;

/// An error of bad usage or configuration: exit status 2.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Builds a configuration error.
pub fn config(message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(ConfigError(message.into()))
}

/// Exit statuses.
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// The run failed (error, max turns, blocked).
    pub const FAILED: u8 = 1;
    /// Bad usage or bad configuration.
    pub const CONFIG: u8 = 2;
    /// Canceled by Ctrl-C (SIGTERM and SIGHUP give 143 and 129, see `signals`).
    #[cfg(feature = "sqlite")]
    pub const CANCELED: u8 = 130;
}
