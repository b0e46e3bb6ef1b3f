//! A command hook that cannot run must never read as a decision: bash and sh exit with status
//! 2 on a syntax error, the status of a block, and they do so after running the lines before
//! the error. So the syntax is checked before the hook runs, by the shell itself.
//!
//! Contract of [`SyntaxCheck`]:
//! - Before a hook's first firing, its `command` line is parsed with `SHELL -n -c LINE` (the
//!   shell it runs under; `-n` reads without executing). The answer is kept for the hook's life.
//! - The script the line starts, when it is a shell script — `bash FILE`, `sh FILE`, or a file
//!   run directly whose `#!` line names bash or sh (`/bin/bash`, `/usr/bin/env bash`…) — is
//!   parsed with `bash -n FILE` (`sh -n` for sh), again whenever its modification time or size
//!   changed since the last check.
//! - A syntax error is returned with the shell's first line of complaint; the caller makes it a
//!   launch error ([`HookError::launch`]): the hook does not run and its `onFailure` decides.
//! - A check that cannot itself run (the shell vanished, a time-out) finds nothing: the hook runs
//!   and its own spawn decides. PowerShell lines and the exec form are not checked.
//! - The checking shell gets the hook's [`ChildEnv`], as the hook's own process does.
//!
//! [`HookError::launch`]: spine_core::hooks::HookError::launch

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use spine_core::hooks::SessionInfo;
use spine_process::{ChildEnv, Limits, RunOptions};
use tokio::process::Command;
use tokio::sync::OnceCell;

use crate::config::Program;
use crate::launch;
use crate::shell::POSIX_SH;

/// How long a `-n` check may take before it is given up (it then finds nothing).
const CHECK_LIMIT: Duration = Duration::from_secs(10);

/// The syntax state of one hook's command.
#[derive(Debug, Default)]
pub struct SyntaxCheck {
    line: OnceCell<Option<String>>,
    scripts: Mutex<HashMap<PathBuf, (Stamp, Option<String>)>>,
}

/// What identifies a version of a script file.
type Stamp = (Option<SystemTime>, u64);

impl SyntaxCheck {
    /// A fresh check (nothing known yet).
    pub fn new() -> Self {
        SyntaxCheck::default()
    }

    /// The syntax error that keeps `program` from running, if any; the checks run with `env`.
    pub async fn error(&self, program: &Program, session: &SessionInfo, env: &ChildEnv) -> Option<String> {
        let Program::Shell { line, interpreter } = program else { return None };
        let checker = interpreter.syntax_checker()?;
        let line_error = self
            .line
            .get_or_init(|| async {
                let args = [OsStr::new("-n"), OsStr::new("-c"), OsStr::new(line.as_str())];
                parse_only(checker, &args, env).await.map(|e| format!("syntax error in the command: {e}"))
            })
            .await;
        if let Some(error) = line_error {
            return Some(error.clone());
        }
        let (path, shell) = shell_script(program, session)?;
        let stamp = stamp(&path)?;
        if let Ok(known) = self.scripts.lock()
            && let Some((at, answer)) = known.get(&path)
            && *at == stamp
        {
            return answer.clone();
        }
        let args = [OsStr::new("-n"), path.as_os_str()];
        let answer = parse_only(&shell, &args, env).await.map(|e| format!("syntax error in {}: {e}", path.display()));
        if let Ok(mut known) = self.scripts.lock() {
            known.insert(path, (stamp, answer.clone()));
        }
        answer
    }
}

/// Runs a `-n` parse; the first line of its complaint when it reports an error.
async fn parse_only(shell: &OsStr, args: &[&OsStr], env: &ChildEnv) -> Option<String> {
    let mut command = Command::new(shell);
    command.args(args);
    let limits = Limits { timeout: CHECK_LIMIT, stdout_cap: 4096, stderr_cap: 4096 };
    let finished = spine_process::run(command, RunOptions::new(limits, env)).await.ok()?;
    let code = finished.status.and_then(|s| s.code())?;
    if code == 0 {
        return None;
    }
    let stderr = finished.stderr.text();
    let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("the shell rejected it");
    Some(first.trim().to_owned())
}

/// The shell script the command starts and the shell that parses it.
fn shell_script(program: &Program, session: &SessionInfo) -> Option<(PathBuf, OsString)> {
    let invocation = launch::invocation(program, session)?;
    let base = invocation.base();
    if let Some(script) = &invocation.script {
        let shell = shell_of_name(&base)?;
        return Some((launch::resolve(script, &session.hook_dir), shell_program(shell, &invocation.program)));
    }
    if !invocation.program.contains('/') {
        return None;
    }
    let path = launch::resolve(&invocation.program, &session.hook_dir);
    let shell = shebang_shell(&path)?;
    Some((path, OsString::from(shell)))
}

/// `bash` or `sh` when the interpreter's name is one of them.
fn shell_of_name(base: &str) -> Option<&'static str> {
    match base {
        "bash" => Some("bash"),
        "sh" | "dash" => Some("sh"),
        _ => None,
    }
}

/// The program that parses a script given to `written` (the interpreter as the line names it).
fn shell_program(shell: &str, written: &str) -> OsString {
    match shell {
        "bash" if written.contains('/') => OsString::from(written),
        "bash" => OsString::from("bash"),
        _ => OsString::from(POSIX_SH),
    }
}

/// The shell a script's `#!` line names (`bash` or `/bin/sh`), if it is one.
fn shebang_shell(path: &Path) -> Option<&'static str> {
    let mut head = [0u8; 128];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).ok()?;
    let first = std::str::from_utf8(&head[..n]).ok()?.lines().next()?;
    let rest = first.strip_prefix("#!")?.trim();
    let mut words = rest.split_whitespace();
    let mut program = words.next()?;
    if Path::new(program).file_name().is_some_and(|n| n == "env") {
        program = words.find(|w| !w.starts_with('-'))?;
    }
    let name = Path::new(program).file_name()?.to_str()?;
    match shell_of_name(name)? {
        "bash" => Some("bash"),
        _ => Some(POSIX_SH),
    }
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = path.metadata().ok()?;
    Some((meta.modified().ok(), meta.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{ShellChoice, Shells};
    use spine_protocol::permission::PermissionMode;

    fn session(dir: &Path) -> SessionInfo {
        SessionInfo {
            session_id: "s".into(),
            transcript_path: dir.join("t.jsonl"),
            cwd: dir.to_path_buf(),
            hook_dir: dir.to_path_buf(),
            project_dir: dir.to_path_buf(),
            permission_mode: PermissionMode::Default,
            effort: None,
            env_file: None,
        }
    }

    fn bash_line(line: &str) -> Program {
        let (interpreter, _) = Shells::detect().resolve(ShellChoice::Bash);
        Program::Shell { line: line.to_owned(), interpreter }
    }

    #[tokio::test]
    async fn a_syntax_error_in_the_command_line_is_found_before_it_runs() {
        let dir = tempfile::tempdir().expect("dir");
        let check = SyntaxCheck::new();
        let error =
            check.error(&bash_line("echo ran > ran.txt\nif then"), &session(dir.path()), &ChildEnv::default()).await;
        assert!(error.is_some_and(|e| e.contains("syntax error")));
        assert!(!dir.path().join("ran.txt").exists(), "-n must not execute the line");
    }

    #[tokio::test]
    async fn bash_only_syntax_is_valid_under_the_default_shell() {
        let dir = tempfile::tempdir().expect("dir");
        let line = r#"[[ "$x" == *"rm -rf"* ]] && exit 2; cat <<< "$x"; arr=(a b); set -o pipefail"#;
        assert_eq!(SyntaxCheck::new().error(&bash_line(line), &session(dir.path()), &ChildEnv::default()).await, None);
    }

    #[tokio::test]
    async fn a_broken_shell_script_is_found_through_its_shebang_and_rechecked_when_it_changes() {
        let dir = tempfile::tempdir().expect("dir");
        let script = dir.path().join("guard.sh");
        std::fs::write(&script, "#!/usr/bin/env bash\nif [[ x ]]; then\n").expect("write");
        let check = SyntaxCheck::new();
        let program = bash_line("$CLAUDE_PROJECT_DIR/guard.sh");
        assert!(
            check
                .error(&program, &session(dir.path()), &ChildEnv::default())
                .await
                .is_some_and(|e| e.contains("guard.sh"))
        );
        std::fs::write(&script, "#!/usr/bin/env bash\nif [[ x ]]; then exit 2; fi\n").expect("write");
        assert_eq!(check.error(&program, &session(dir.path()), &ChildEnv::default()).await, None);
        let given = bash_line("bash guard.sh");
        std::fs::write(&script, "echo unterminated \"\n").expect("write");
        assert!(SyntaxCheck::new().error(&given, &session(dir.path()), &ChildEnv::default()).await.is_some());
    }

    #[tokio::test]
    async fn scripts_of_other_languages_are_not_parsed_as_shell() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("guard.py"), "#!/usr/bin/env python3\nif (\n").expect("write");
        let check = SyntaxCheck::new();
        assert_eq!(check.error(&bash_line("python3 guard.py"), &session(dir.path()), &ChildEnv::default()).await, None);
        assert_eq!(check.error(&bash_line("./guard.py"), &session(dir.path()), &ChildEnv::default()).await, None);
    }
}
