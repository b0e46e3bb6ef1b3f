//! `spine hooks check`: what can be verified about the configured hooks without running them.
//!
//! Beyond the configuration errors ([`crate::config`]), [`check`] reports:
//! - **errors**: a command whose program is not found (the first word of `command`, after
//!   `NAME=value` assignments, or the exec form's program; on PATH, or as a path relative to
//!   the project directory, `$CLAUDE_PROJECT_DIR`/`$SPINE_PROJECT_DIR` and `~` expanded); a
//!   script an interpreter is given (`python3 .spine/hooks/check.py`, `node hook.js`,
//!   `bash x.sh`…) that does not exist relative to the project directory;
//! - **warnings**: a program found but not executable; `python3` resolving to a pyenv shim
//!   (~200 ms per spawn); an HTTP header referencing a variable `allowedEnvVars` does not list
//!   (it is sent empty); everything [`crate::config::HookConfig::warnings`] holds;
//!   `disableAllHooks`.
//!
//! Commands whose first word is shell syntax or an unexpanded variable are not checked.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::config::{Handler, HookConfig, Program};
use crate::env::references;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The hook cannot work as configured.
    Error,
    /// Something the user should know.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One finding, located in the settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// An error (exit 2) or a warning.
    pub severity: Severity,
    /// The settings file (or `--settings` value) of the handler.
    pub origin: String,
    /// The handler's JSON path in it (`hooks.PreToolUse[0].hooks[1].command`).
    pub path: String,
    /// What is wrong, in one line.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}: {}", self.severity.as_str(), self.origin, self.path, self.message)
    }
}

/// Interpreters whose first non-option argument is a script file.
pub(crate) const INTERPRETERS: &[&str] =
    &["python", "python3", "node", "bash", "sh", "dash", "zsh", "ruby", "perl", "php", "bun", "deno"];
/// Options after which an interpreter runs inline code or a module, not a file.
pub(crate) const INLINE: &[&str] = &["-c", "-m", "-e", "-E", "--eval", "-p", "--print", "-r", "eval"];
/// Shell builtins and keywords that need no program on PATH.
const BUILTINS: &[&str] = &[
    ":", ".", "source", "true", "false", "echo", "printf", "exit", "cd", "test", "[", "exec", "eval", "set", "export",
    "read", "if", "for", "while", "until", "case", "{", "!", "return", "trap", "wait", "command",
];

/// Checks every configured handler.
pub fn check(config: &HookConfig, project_dir: &Path) -> Vec<Finding> {
    let mut findings: Vec<Finding> = config
        .warnings
        .iter()
        .map(|w| Finding {
            severity: Severity::Warning,
            origin: w.origin.clone(),
            path: w.path.clone(),
            message: w.message.clone(),
        })
        .collect();
    if let Some(origin) = &config.disabled_by {
        let spared = config.disabled_spares_managed && config.groups.iter().any(|g| g.origin.is_managed());
        findings.push(Finding {
            severity: Severity::Warning,
            origin: origin.clone(),
            path: "disableAllHooks".to_owned(),
            message: if spared {
                "every hook but those of managed settings is disabled".to_owned()
            } else {
                "every hook is disabled".to_owned()
            },
        });
    }
    for group in &config.groups {
        for h in &group.handlers {
            let mut found = |severity, field: &str, message: String| {
                findings.push(Finding {
                    severity,
                    origin: group.origin.to_string(),
                    path: format!("{}.{field}", h.path),
                    message,
                })
            };
            match &h.handler {
                Handler::Command { program, .. } => {
                    let field = match program {
                        Program::Shell { .. } => "command",
                        Program::Exec { .. } => "args",
                    };
                    for (severity, message) in check_program(program, project_dir) {
                        found(severity, field, message);
                    }
                }
                // A prompt hook's model is checked when the hooks are built (`validate`); an MCP
                // tool exists only once its server is connected; an SDK callback only once its
                // host has sent `initialize`.
                Handler::Prompt(_) | Handler::McpTool(_) | Handler::Agent { .. } | Handler::Callback { .. } => {}
                Handler::Http(http) => {
                    for (name, value) in &http.headers {
                        for var in references(value) {
                            if !http.allowed_env_vars.contains(&var) {
                                found(
                                    Severity::Warning,
                                    &format!("headers.{name}"),
                                    format!("`${var}` is not in allowedEnvVars: it is sent as an empty string"),
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    findings
}

fn check_program(program: &Program, project_dir: &Path) -> Vec<(Severity, String)> {
    let words: Vec<String> = match program {
        Program::Shell { line, .. } => match first_command_words(line) {
            Some(words) => words,
            None => return Vec::new(),
        },
        Program::Exec { program, args } => std::iter::once(program.clone()).chain(args.iter().cloned()).collect(),
    };
    let mut words = words.into_iter().skip_while(|w| is_assignment(w)).peekable();
    let Some(first) = words.next() else { return Vec::new() };
    let Some(first) = expand(&first, project_dir) else { return Vec::new() };
    if BUILTINS.contains(&first.as_str()) {
        return Vec::new();
    }
    let mut out = Vec::new();
    match resolve(&first, project_dir) {
        None => out.push((Severity::Error, format!("program `{first}` not found (not on PATH, not a file)"))),
        Some(path) => {
            if !is_executable(&path) {
                out.push((Severity::Error, format!("`{}` exists but is not executable", path.display())));
            }
            if path.to_string_lossy().contains("/shims/") {
                out.push((
                    Severity::Warning,
                    format!(
                        "`{first}` resolves to a version-manager shim ({}): ~200 ms per spawn; \
                         name the interpreter (e.g. /usr/bin/python3) or use a persistent hook",
                        path.display()
                    ),
                ));
            }
        }
    }
    let base = Path::new(&first).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let interpreter = INTERPRETERS.iter().any(|i| base == *i || base.strip_prefix(i).is_some_and(is_version));
    if interpreter {
        for arg in words {
            if INLINE.contains(&arg.as_str()) {
                break;
            }
            if arg.starts_with('-') {
                continue;
            }
            if let Some(script) = expand(&arg, project_dir) {
                let path = project_dir.join(&script);
                if !path.is_file() {
                    out.push((Severity::Error, format!("script `{script}` not found ({})", path.display())));
                }
            }
            break;
        }
    }
    out
}

/// `3`, `3.11`, `.11`: a version suffix of an interpreter name.
pub(crate) fn is_version(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| crate::config::is_var_name(name))
}

/// Expands the project-dir variables and `~`; `None` when another variable or substitution
/// remains (the word cannot be checked).
fn expand(word: &str, project_dir: &Path) -> Option<String> {
    let dir = project_dir.to_string_lossy();
    let mut w = word.to_owned();
    for var in ["CLAUDE_PROJECT_DIR", "SPINE_PROJECT_DIR"] {
        w = w.replace(&format!("${{{var}}}"), &dir).replace(&format!("${var}"), &dir);
    }
    // Without a home `~/x` stays as written (and is not found).
    if w.starts_with("~/")
        && let Some(expanded) = spine_protocol::home::expand_tilde(&w)
    {
        w = expanded.to_string_lossy().into_owned();
    }
    if w.contains('$') || w.contains('`') || w.contains('*') {
        return None;
    }
    Some(w)
}

fn resolve(program: &str, project_dir: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        let path = project_dir.join(program);
        return path.is_file().then_some(path);
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths).map(|dir| dir.join(program)).find(|p| p.is_file())
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The words of the first simple command of a shell line (quotes removed), or `None` when it
/// starts with syntax this check does not follow (subshells, substitutions).
fn first_command_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\n' | ';' | '|' | '&' | '<' | '>' => break,
            '(' | ')' | '`' if words.is_empty() => return None,
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                word.push(n);
                            }
                        }
                        other => word.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.first().is_some_and(|w| w.starts_with("$(")) {
        return None;
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_words_follow_quotes_and_stop_at_operators() {
        assert_eq!(
            first_command_words("FOO=1 python3 \"$CLAUDE_PROJECT_DIR/a b.py\" --x | tee log"),
            Some(vec!["FOO=1".into(), "python3".into(), "$CLAUDE_PROJECT_DIR/a b.py".into(), "--x".into()])
        );
        assert_eq!(first_command_words("(cd x; make)"), None);
        assert_eq!(first_command_words("cat >/dev/null"), Some(vec!["cat".into()]));
    }

    #[test]
    fn missing_programs_and_scripts_are_errors() {
        let dir = std::env::temp_dir();
        let errs = check_program(&Program::shell("definitely-not-a-program-xyz --flag"), &dir);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].1.contains("not found"));
        let errs = check_program(&Program::shell("sh no-such-script-xyz.sh"), &dir);
        assert!(errs.iter().any(|(s, m)| *s == Severity::Error && m.contains("script")), "{errs:?}");
        assert!(check_program(&Program::shell("sh -c 'exit 0'"), &dir).is_empty());
        assert!(check_program(&Program::shell("echo hi; exit 2"), &dir).is_empty());
        assert!(check_program(&Program::shell("$HOOK_BIN run"), &dir).is_empty());
    }
}
