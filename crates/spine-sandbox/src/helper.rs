//! How spine starts the helper: [`Helper`] builds `PROGRAM PREFIX… ENCODED-POLICY -- COMMAND…`.
//!
//! Contract: the helper is a fresh process running a binary whose `main` hands the
//! arguments after `PREFIX` to [`helper_main`](crate::helper_main) (spine: its own binary
//! with the hidden `__sandbox` subcommand). [`Helper::wrap`] gives the program and arguments
//! for any command type (std or tokio); the caller keeps setting the environment, the
//! working directory, stdio and the process group on the command it builds, and the helper
//! passes all of them on to the command unchanged.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::policy::Policy;
use crate::run::SEPARATOR;

/// The subcommand of spine's binary that runs [`helper_main`](crate::helper_main).
pub const SPINE_SUBCOMMAND: &str = "__sandbox";

/// A way to start the helper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Helper {
    program: PathBuf,
    prefix: Vec<OsString>,
}

impl Helper {
    /// The helper is `program` with `prefix` before the encoded policy.
    pub fn new(program: impl Into<PathBuf>, prefix: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        Self { program: program.into(), prefix: prefix.into_iter().map(Into::into).collect() }
    }

    /// The running binary with `spine`'s [`SPINE_SUBCOMMAND`]: `spine __sandbox …`.
    pub fn spine_current_exe() -> io::Result<Self> {
        Ok(Self::new(std::env::current_exe()?, [SPINE_SUBCOMMAND]))
    }

    /// The helper's program.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The program to start and its arguments, to run `command args…` under `policy`.
    pub fn wrap(
        &self,
        policy: &Policy,
        command: impl AsRef<OsStr>,
        args: impl IntoIterator<Item = impl AsRef<OsStr>>,
    ) -> (PathBuf, Vec<OsString>) {
        let mut argv = self.prefix.clone();
        argv.push(policy.encode().into());
        argv.push(SEPARATOR.into());
        argv.push(command.as_ref().to_owned());
        argv.extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        (self.program.clone(), argv)
    }

    /// A std [`Command`] running `command args…` under `policy`.
    pub fn command(
        &self,
        policy: &Policy,
        command: impl AsRef<OsStr>,
        args: impl IntoIterator<Item = impl AsRef<OsStr>>,
    ) -> Command {
        let (program, argv) = self.wrap(policy, command, args);
        let mut built = Command::new(program);
        built.args(argv);
        built
    }

    /// The helper with `args` after the prefix (the probe trial).
    pub(crate) fn command_for(&self, args: impl IntoIterator<Item = impl AsRef<OsStr>>) -> Command {
        let mut built = Command::new(&self.program);
        built.args(&self.prefix).args(args);
        built
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_prefix_policy_separator_command() {
        let helper = Helper::new("/usr/bin/spine", [SPINE_SUBCOMMAND]);
        let policy = Policy::workspace_write(["/w".into()]);
        let (program, argv) = helper.wrap(&policy, "sh", ["-c", "true"]);
        assert_eq!(program, PathBuf::from("/usr/bin/spine"));
        let expected: Vec<OsString> =
            ["__sandbox", &policy.encode(), "--", "sh", "-c", "true"].into_iter().map(OsString::from).collect();
        assert_eq!(argv, expected);
        assert_eq!(Policy::decode(&argv[1].to_string_lossy()).expect("decodes"), policy);
    }
}
