//! Which interpreter runs a command hook's `command` line.
//!
//! Contract (docs/hooks.md, "The shell of command hooks"):
//! - `shell` absent or `"bash"`: `bash -c LINE`, with the `bash` found on `PATH` when the
//!   configuration is read ([`Shells::detect`]). Claude Code documents `bash -c` (and runs
//!   `/bin/sh -c`, which is dash on Debian and Ubuntu, where a guard's `[[ … ]]` is "not found"
//!   and lets the call through); spine runs what the user wrote for.
//! - No `bash` on `PATH`: `/bin/sh -c LINE`, and a one-line warning naming the hook.
//! - `"sh"` (spine's own value): `/bin/sh -c LINE`, POSIX sh on purpose.
//! - `"powershell"`: `pwsh` (else `powershell`) `-NoProfile -NonInteractive -Command LINE`.
//!   With neither on `PATH` the hook is kept: each firing is a launch error that its
//!   `onFailure` decides, and a warning says so — a configured guard is never dropped silently.
//!
//! The exec form (`args`) runs its program directly and has no interpreter.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The `shell` field as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellChoice {
    /// Absent, or `"bash"`.
    Bash,
    /// `"sh"`: POSIX sh.
    Sh,
    /// `"powershell"`.
    PowerShell,
}

impl ShellChoice {
    /// Parses the `shell` field; `None` for a value no hook runner knows.
    pub fn parse(text: &str) -> Option<ShellChoice> {
        match text {
            "bash" => Some(ShellChoice::Bash),
            "sh" => Some(ShellChoice::Sh),
            "powershell" | "pwsh" => Some(ShellChoice::PowerShell),
            _ => None,
        }
    }
}

/// The interpreter a `command` line runs under, resolved when the configuration is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interpreter {
    /// `bash -c`, at this path.
    Bash(PathBuf),
    /// `/bin/sh -c`.
    Sh,
    /// `pwsh -NoProfile -NonInteractive -Command`, at this path.
    PowerShell(PathBuf),
    /// The configured shell is not installed: every firing is a launch error with this reason.
    Unavailable(String),
}

/// The POSIX shell, the fallback when there is no bash.
pub const POSIX_SH: &str = "/bin/sh";

impl Interpreter {
    /// The program and the arguments before the command line, or why it cannot run.
    pub fn argv(&self) -> Result<(&OsStr, &'static [&'static str]), &str> {
        match self {
            Interpreter::Bash(path) => Ok((path.as_os_str(), &["-c"])),
            Interpreter::Sh => Ok((OsStr::new(POSIX_SH), &["-c"])),
            Interpreter::PowerShell(path) => Ok((path.as_os_str(), &["-NoProfile", "-NonInteractive", "-Command"])),
            Interpreter::Unavailable(why) => Err(why),
        }
    }

    /// A POSIX-family shell whose `-n` checks a line's syntax without running it: its program.
    pub fn syntax_checker(&self) -> Option<&OsStr> {
        match self {
            Interpreter::Bash(path) => Some(path.as_os_str()),
            Interpreter::Sh => Some(OsStr::new(POSIX_SH)),
            Interpreter::PowerShell(_) | Interpreter::Unavailable(_) => None,
        }
    }

    /// `bash`, `sh`, `powershell` or `unavailable`, for listings.
    pub fn name(&self) -> &'static str {
        match self {
            Interpreter::Bash(_) => "bash",
            Interpreter::Sh => "sh",
            Interpreter::PowerShell(_) => "powershell",
            Interpreter::Unavailable(_) => "unavailable",
        }
    }
}

/// The shells installed on this machine, looked up once per configuration read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shells {
    /// `bash` on `PATH`.
    pub bash: Option<PathBuf>,
    /// `pwsh` or `powershell` on `PATH`.
    pub powershell: Option<PathBuf>,
}

impl Shells {
    /// Looks the shells up on the process's `PATH`.
    pub fn detect() -> Shells {
        Shells::on_path(std::env::var_os("PATH").as_deref())
    }

    /// Looks the shells up on `path` (a `PATH` value).
    pub fn on_path(path: Option<&OsStr>) -> Shells {
        let find = |name: &str| path.and_then(|p| find_program(name, p));
        Shells { bash: find("bash"), powershell: find("pwsh").or_else(|| find("powershell")) }
    }

    /// The interpreter for `choice`, and a warning when it is not the one asked for.
    pub fn resolve(&self, choice: ShellChoice) -> (Interpreter, Option<String>) {
        match choice {
            ShellChoice::Bash => match &self.bash {
                Some(path) => (Interpreter::Bash(path.clone()), None),
                None => (
                    Interpreter::Sh,
                    Some("no bash on PATH: this hook runs under /bin/sh, where bash syntax fails".to_owned()),
                ),
            },
            ShellChoice::Sh => (Interpreter::Sh, None),
            ShellChoice::PowerShell => match &self.powershell {
                Some(path) => (Interpreter::PowerShell(path.clone()), None),
                None => {
                    let why = "`shell: powershell` but neither pwsh nor powershell is on PATH";
                    (
                        Interpreter::Unavailable(why.to_owned()),
                        Some(format!("{why}: every firing of this hook fails and its onFailure decides")),
                    )
                }
            },
        }
    }
}

/// The first executable file called `name` in the directories of `path`.
pub fn find_program(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path).filter(|dir| dir.is_absolute()).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_is_the_default_shell_and_sh_the_fallback_with_a_warning() {
        let dir = tempfile::tempdir().expect("dir");
        let bash = dir.path().join("bash");
        std::fs::write(&bash, "#!/bin/sh\n").expect("write");
        std::fs::set_permissions(&bash, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let with = Shells::on_path(Some(dir.path().as_os_str()));
        assert_eq!(with.resolve(ShellChoice::Bash), (Interpreter::Bash(bash), None));
        let without = Shells::on_path(Some(OsStr::new("/nonexistent-dir")));
        let (interpreter, warning) = without.resolve(ShellChoice::Bash);
        assert_eq!(interpreter, Interpreter::Sh);
        assert!(warning.is_some_and(|w| w.contains("/bin/sh")));
    }

    #[test]
    fn a_missing_powershell_keeps_the_hook_as_a_failure_not_a_skip() {
        let shells = Shells::on_path(Some(OsStr::new("/nonexistent-dir")));
        let (interpreter, warning) = shells.resolve(ShellChoice::PowerShell);
        assert!(matches!(interpreter, Interpreter::Unavailable(_)));
        assert!(interpreter.argv().is_err());
        assert!(warning.is_some_and(|w| w.contains("onFailure")));
    }

    #[test]
    fn a_non_executable_file_and_a_relative_path_entry_are_not_programs() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("bash"), "").expect("write");
        assert_eq!(find_program("bash", dir.path().as_os_str()), None);
        assert_eq!(find_program("bash", OsStr::new("relative/dir")), None);
    }
}
