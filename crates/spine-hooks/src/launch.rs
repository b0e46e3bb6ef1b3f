//! Whether a hook's program can be launched at all, decided from the file system before it is
//! spawned — never from what the process prints.
//!
//! Contract of [`missing_script`]: it names a path the hook's command needs and that does not
//! exist, or returns `None`. The hook is then a launch error ([`HookError::launch`]) without
//! being spawned; with `None` the hook runs and its exit status decides (exit 2 is a block
//! whatever its stderr says, see [`crate::wire::decide`]). A path is reported only when the
//! command is certainly a simple one:
//! - the shell form is split by [`shlex`] (POSIX quoting); a line that does not split, or whose
//!   words still hold shell syntax after quote removal (`;`, `|`, `&`, `<`, `>`, `(`, `)`,
//!   `` ` ``, `$` other than the project-dir variables, globs, braces, newlines), is not
//!   judged;
//! - leading `NAME=value` words are skipped, and `env` with its assignments;
//! - the program itself, when it is written as a path (it contains `/`) that does not exist;
//! - for an interpreter (`python3`, `node`, `bash`, `perl`, `ruby`, …, see
//!   [`crate::check`]), its first non-option argument when it looks like a file (contains `/`
//!   or ends with a script extension) and does not exist. Inline code (`-c`, `-e`, `-m`…) stops
//!   the search.
//!
//! `$CLAUDE_PROJECT_DIR`, `$SPINE_PROJECT_DIR` (also `${…}`) and a leading `~/` are expanded
//! as the process would see them; relative paths are taken from the hook's working directory.
//!
//! [`HookError::launch`]: spine_core::hooks::HookError::launch

use std::path::{Path, PathBuf};

use spine_core::hooks::SessionInfo;

use crate::check::{INLINE, INTERPRETERS, is_version};
use crate::config::Program;

/// File extensions that mark an interpreter's argument as a script file.
const SCRIPT_EXTENSIONS: &[&str] =
    &["py", "js", "mjs", "cjs", "ts", "sh", "bash", "zsh", "rb", "pl", "pm", "php", "lua", "tcl", "r", "R"];
/// Characters that mean a word still carries shell syntax after quote removal.
const SHELL_SYNTAX: &[char] = &[';', '|', '&', '<', '>', '(', ')', '`', '$', '*', '?', '[', ']', '{', '}', '\n'];

/// The first path the hook needs that does not exist, as a message naming it.
pub fn missing_script(program: &Program, session: &SessionInfo) -> Option<String> {
    let invocation = invocation(program, session)?;
    if invocation.program.contains('/') && !exists(&invocation.program, &session.hook_dir) {
        return Some(format!("program {} does not exist", invocation.program));
    }
    let script = invocation.script?;
    let base = file_name(&invocation.program);
    (!exists(&script, &session.hook_dir)).then(|| format!("{base} cannot open its script {script}: no such file"))
}

/// What a simple command line starts: its program and, for an interpreter, the script file it
/// is given; `None` when the line cannot be judged (see the module contract).
pub struct Invocation {
    /// The program, as written after expansion (a path when it contains `/`).
    pub program: String,
    /// The interpreter's script argument, when it looks like a file.
    pub script: Option<String>,
}

impl Invocation {
    /// The program's file name (`python3`, `guard.sh`).
    pub fn base(&self) -> String {
        file_name(&self.program)
    }
}

/// The program and script of a simple command.
pub fn invocation(program: &Program, session: &SessionInfo) -> Option<Invocation> {
    let words = words(program, session)?;
    let mut words = words.into_iter().skip_while(|w| is_assignment(w)).peekable();
    let mut first = words.next()?;
    if file_name(&first) == "env" {
        first = words.by_ref().find(|w| !is_assignment(w) && !w.starts_with('-'))?;
    }
    let base = file_name(&first);
    let interpreter = INTERPRETERS.iter().any(|i| base == *i || base.strip_prefix(i).is_some_and(is_version));
    let script = if interpreter {
        words.take_while(|w| !INLINE.contains(&w.as_str())).find(|w| !w.starts_with('-')).filter(|script| {
            script.contains('/')
                || Path::new(script).extension().is_some_and(|e| SCRIPT_EXTENSIONS.iter().any(|x| e == *x))
        })
    } else {
        None
    };
    Some(Invocation { program: first, script })
}

/// A path as the hook's process resolves it: relative paths from the working directory.
pub fn resolve(path: &str, cwd: &Path) -> PathBuf {
    cwd.join(path)
}

/// The command's words, expanded; `None` when they cannot be judged.
fn words(program: &Program, session: &SessionInfo) -> Option<Vec<String>> {
    match program {
        Program::Shell { line, .. } => {
            let words = shlex::split(line)?;
            words.iter().map(|w| expand(w, &session.project_dir)).collect()
        }
        Program::Exec { program, args } => Some(std::iter::once(program.clone()).chain(args.iter().cloned()).collect()),
    }
}

/// Expands the project-dir variables and `~/`; `None` when shell syntax remains.
fn expand(word: &str, project_dir: &Path) -> Option<String> {
    let dir = project_dir.to_string_lossy();
    let mut w = word.to_owned();
    for var in ["CLAUDE_PROJECT_DIR", "SPINE_PROJECT_DIR"] {
        w = w.replace(&format!("${{{var}}}"), &dir).replace(&format!("${var}"), &dir);
    }
    if w.starts_with("~/") {
        // Without a home the word cannot be judged.
        w = spine_protocol::home::expand_tilde(&w)?.to_string_lossy().into_owned();
    }
    (!w.contains(SHELL_SYNTAX)).then_some(w)
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| crate::config::is_var_name(name))
}

fn file_name(word: &str) -> String {
    Path::new(word).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn exists(path: &str, cwd: &Path) -> bool {
    resolve(path, cwd).exists()
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn shell(line: &str, dir: &Path) -> Option<String> {
        missing_script(&Program::shell(line), &session(dir))
    }

    #[test]
    fn a_missing_interpreter_script_is_found_from_the_path_not_from_output() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("guard.py"), "").expect("w");
        assert!(shell("/usr/bin/python3 /nonexistent/x.py", dir.path()).is_some());
        assert!(shell("python3 hooks/missing.py --flag", dir.path()).is_some());
        assert!(shell("FOO=1 /usr/bin/env python3 missing.py", dir.path()).is_some());
        assert!(shell("python3 \"$CLAUDE_PROJECT_DIR/missing.py\"", dir.path()).is_some());
        assert!(shell("/no/such/program arg", dir.path()).is_some());
        assert_eq!(shell("/usr/bin/python3 guard.py", dir.path()), None);
        assert_eq!(shell("python3 \"$CLAUDE_PROJECT_DIR/guard.py\"", dir.path()), None);
    }

    #[test]
    fn commands_that_are_not_simple_or_run_inline_code_are_not_judged() {
        let dir = tempfile::tempdir().expect("dir");
        assert_eq!(shell("python3 -c 'print(1)' missing.py", dir.path()), None);
        assert_eq!(shell("python3 missing.py || exit 2", dir.path()), None);
        assert_eq!(shell("python3 $OTHER/missing.py", dir.path()), None);
        assert_eq!(shell("python3 -W ignore", dir.path()), None);
        assert_eq!(shell("echo 'blocked: rm victim # can'\"'\"'t open file' >&2; exit 2", dir.path()), None);
        assert_eq!(shell("sh -c 'exit 2'", dir.path()), None);
        assert_eq!(shell("unterminated 'quote", dir.path()), None);
        let exec = Program::Exec { program: "/usr/bin/python3".into(), args: vec!["/nonexistent/x.py".into()] };
        assert!(missing_script(&exec, &session(dir.path())).is_some());
    }
}
