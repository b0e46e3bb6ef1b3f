//! What a hook process sees: its command line, working directory and environment; and the
//! `$VAR` interpolation of HTTP header values.
//!
//! - `command` runs under its resolved shell ([`crate::shell`]: `bash -c COMMAND` by default);
//!   the exec form runs the program directly.
//! - cwd = the session's current working directory (where the shell tool is, as Claude Code's
//!   hooks run in its current directory); environment = the parent's, plus `SPINE_PROJECT_DIR`
//!   and `CLAUDE_PROJECT_DIR` (the project root), plus — for SessionStart, CwdChanged and
//!   FileChanged, and for persistent hooks, which may serve them — `CLAUDE_ENV_FILE` and
//!   `SPINE_ENV_FILE` (the run's env file).
//! - Header values interpolate `$NAME` and `${NAME}` only for names listed in
//!   `allowedEnvVars`; a reference to any other variable becomes the empty string (as in
//!   Claude Code), so a secret is never sent by accident. An unset allowed variable is empty.

use spine_core::hooks::SessionInfo;
use tokio::process::Command;

use crate::config::Program;

/// The process for a hook's program in a run; the reason when its shell is not installed.
pub fn command(program: &Program, session: &SessionInfo, with_env_file: bool) -> Result<Command, String> {
    let mut cmd = match program {
        Program::Shell { line, interpreter } => {
            let (shell, flags) = interpreter.argv().map_err(str::to_owned)?;
            let mut cmd = Command::new(shell);
            cmd.args(flags).arg(line);
            cmd
        }
        Program::Exec { program, args } => {
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
    };
    cmd.current_dir(&session.hook_dir)
        .env("SPINE_PROJECT_DIR", &session.project_dir)
        .env("CLAUDE_PROJECT_DIR", &session.project_dir);
    if with_env_file && let Some(file) = &session.env_file {
        cmd.env("CLAUDE_ENV_FILE", file).env("SPINE_ENV_FILE", file);
    }
    Ok(cmd)
}

/// Replaces `$NAME` and `${NAME}` in `value`: allowed names by their value (empty when unset),
/// other names by nothing. A `$` not followed by a name stays.
pub fn interpolate(value: &str, allowed: &[String]) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = match after.strip_prefix('{') {
            Some(inner) => match inner.find('}') {
                Some(end) if is_name(&inner[..end]) => (&inner[..end], end + 2),
                _ => ("", 0),
            },
            None => {
                let end = after.find(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).unwrap_or(after.len());
                let name = &after[..end];
                if is_name(name) { (name, end) } else { ("", 0) }
            }
        };
        if consumed == 0 {
            out.push('$');
            rest = after;
            continue;
        }
        if allowed.iter().any(|a| a == name) {
            out.push_str(&std::env::var(name).unwrap_or_default());
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

/// The variable names a header value references.
pub fn references(value: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        let name = match after.strip_prefix('{') {
            Some(inner) => inner.find('}').map(|end| &inner[..end]).unwrap_or(""),
            None => {
                let end = after.find(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).unwrap_or(after.len());
                &after[..end]
            }
        };
        if is_name(name) {
            names.push(name.to_owned());
        }
        rest = after;
    }
    names
}

fn is_name(name: &str) -> bool {
    crate::config::is_var_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_variables_are_interpolated_others_become_empty() {
        // PATH is always set; HOME too in any test environment.
        let path = std::env::var("PATH").unwrap_or_default();
        let allowed = vec!["PATH".to_owned()];
        assert_eq!(interpolate("a $PATH b", &allowed), format!("a {path} b"));
        assert_eq!(interpolate("${PATH}x", &allowed), format!("{path}x"));
        assert_eq!(interpolate("Bearer $HOME", &allowed), "Bearer ");
        assert_eq!(interpolate("cost: 5$ and $", &allowed), "cost: 5$ and $");
        assert_eq!(interpolate("${not closed", &allowed), "${not closed");
        assert_eq!(references("$A-${B}-$ -${1x}"), vec!["A".to_owned(), "B".to_owned()]);
    }
}
