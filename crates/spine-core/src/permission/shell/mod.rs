//! Shell command analysis for permission rules: what a `bash -c COMMAND` string would run and
//! write, read off a real shell grammar (tree-sitter-bash), never off string splitting.
//!
//! Contract of [`analyze`]:
//! - [`ShellAnalysis::commands`] lists every simple command the shell could run, with quoting
//!   resolved as the shell resolves it (`\rm`, `"rm"`, `r''m`, `$'rm'` are all `rm`): across
//!   `&&`, `||`, `;`, `|`, `&` and newlines; inside `$(…)`, backticks, `<(…)`/`>(…)`,
//!   subshells, groups, `if`/`while`/`until`/`for`/`case` bodies and function bodies; through
//!   wrappers that run their arguments (`env`, `command`, `builtin`, `exec`, `nohup`, `nice`,
//!   `time`, `timeout`, `stdbuf`, `setsid`, `busybox`, `coproc`, `sudo`, `doas`, `xargs`, `find -exec`…) — the
//!   wrapper and the wrapped command are both listed; into `sh`/`bash`/`zsh`/`dash`/`ksh -c
//!   STRING` and `trap STRING`, recursively up to [`MAX_DEPTH`]. `find -delete` is listed as
//!   `rm` on find's start paths; `find -exec … +` ends only at `{} +`. Leading `NAME=value`
//!   assignments are dropped. A line continuation the grammar splits a word at (`r\⏎m`) is
//!   removed, as bash removes it.
//! - [`ShellAnalysis::writes`] lists the files the command writes through output redirections
//!   (`>`, `>>`, `&>`, `&>>`, `>|`, `>&FILE`, fd forms) and `tee` (and `find -fprint`)
//!   operands, as written; `/dev/null`, `/dev/stdout` and `/dev/stderr` are not writes.
//! - [`ShellAnalysis::opaque`] says why the analysis cannot be trusted to be complete: a parse
//!   error, a command name that is an expansion, `eval`, `source`/`.`, a script fed to an
//!   interpreter on stdin (here-document, here-string, `-s`, a shell with no script
//!   operand, or one whose script operand is a path to its stdin: `/dev/stdin`, `/dev/fd/0`,
//!   `/proc/self/fd/0`), a `-c` string or script operand that is not a literal, a write target
//!   that is not a literal, a relative write target after a `cd`, an option of a wrapper that
//!   is not understood, code hidden in data (`data`: a variable the command fills with data
//!   evaluated in arithmetic or as a name, a subscript holding an expansion in an arithmetic
//!   context or a name argument, a `${x@P}` transform, a nameref, a prompt variable holding
//!   expansions), a builtin that runs a string or rebinds a command name (`builtins`:
//!   `compgen`, `complete`, `mapfile -C`, `fc`, `alias`, `shopt -s expand_aliases`,
//!   `hash -p`, `enable -f`), a line continuation joining anything but a command's plain
//!   words, or nesting deeper than [`MAX_DEPTH`]. Whatever could still be read is listed even
//!   then, so deny rules keep working on the parts that are visible.
//! - [`ShellAnalysis::files`] lists the files each simple command reads and writes: the file
//!   operands of the well-known readers and writers of `file_table` (read with each one's
//!   option grammar by `operands` and `special`), input redirections (`< FILE`), output
//!   redirections and `tee` operands ([`files`] says how a path is known: literal, a pattern
//!   bash expands, computed at run time). [`ShellAnalysis::dirs`] lists where `cd`/`pushd`
//!   move. The policy checks them against `Read(...)`/`Edit(...)` rules
//!   (`permission::file_rules`).

mod archives;
mod builtins;
mod data;
mod evaluated;
mod file_readers;
mod file_table;
mod file_writers;
pub mod files;
mod operands;
mod scripts;
mod special;
mod syntax;
mod words;
mod wrappers;

pub use files::{Access, FileOperand, OperandPath, Reach};

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};

use tree_sitter::{Parser, Tree};

use crate::workspace::Workspace;

/// How deep `sh -c` strings and wrapper chains are followed before the command is opaque.
pub const MAX_DEPTH: usize = 8;

/// Tools that run their `command` argument with a shell.
pub const SHELL_TOOLS: &[&str] = &["Bash", "exec_command", "process_exec"];

/// Whether a tool runs its `command` argument with a shell (and so is governed by `Bash` rules).
pub fn is_shell_tool(tool_name: &str) -> bool {
    SHELL_TOOLS.contains(&tool_name)
}

/// The analysis of one shell command string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellAnalysis {
    /// Every simple command the shell could run, in source order of discovery.
    pub commands: Vec<SimpleCommand>,
    /// Files written by redirections and `tee`, as written (not yet resolved).
    pub writes: Vec<String>,
    /// Why the analysis is incomplete; empty when every part was seen through.
    pub opaque: Vec<OpaqueReason>,
    /// The files the commands read and write (see [`files`]).
    pub files: Vec<FileOperand>,
    /// The directories `cd`/`pushd`/`popd` move to, in order of discovery; relative paths of
    /// [`files`](Self::files) may resolve against any of them.
    pub dirs: Vec<OperandPath>,
    /// Variables evaluated as code and variables the command fills with data
    /// (`data`), settled when the walk ends.
    names: data::Names,
    /// What only the whole command settles about [`files`](Self::files).
    pending: files::Pending,
}

impl ShellAnalysis {
    /// Whether something could not be seen through.
    pub fn is_opaque(&self) -> bool {
        !self.opaque.is_empty()
    }

    /// The write targets made absolute and lexically normal against `cwd` (the command's
    /// working directory), without touching the file system.
    pub fn write_paths(&self, cwd: &Path) -> Vec<PathBuf> {
        self.writes.iter().map(|w| Workspace::normalize(w, cwd)).collect()
    }

    /// The variables the command assigns (`x=1`, `PATH=… cmd`, `for x in …`, `read x`), in
    /// order of discovery.
    pub fn assigned_names(&self) -> impl Iterator<Item = &str> {
        self.names.assigned()
    }

    /// The opaque reasons as one human-readable phrase.
    pub fn opaque_summary(&self) -> String {
        self.opaque.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    }
}

/// One simple command: its argv with quoting resolved. Words that hold expansions keep their
/// source text (`$HOME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words; `argv[0]` is the program as written.
    pub argv: Vec<String>,
}

impl SimpleCommand {
    /// The program as written (`/bin/rm`).
    pub fn program(&self) -> &str {
        self.argv.first().map_or("", String::as_str)
    }

    /// The words joined with single spaces: what rule patterns are matched against.
    pub fn text(&self) -> String {
        self.argv.join(" ")
    }

    /// The same with the program replaced by its basename (`rm x` for `/bin/rm x`), when the
    /// program has a directory part.
    pub fn basename_text(&self) -> Option<String> {
        let program = self.program();
        let base = basename(program);
        (base != program).then(|| {
            let mut words = vec![base];
            words.extend(self.argv.iter().skip(1).map(String::as_str));
            words.join(" ")
        })
    }
}

/// Why an analysis is incomplete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpaqueReason {
    /// The grammar found an error or a missing token, or the parser was unavailable.
    ParseError,
    /// The command name is an expansion, a glob or a brace expansion (`$X`, `"$(…)"`, `/bin/r?`).
    DynamicCommandName {
        /// The name as written.
        text: String,
    },
    /// `eval` runs a string built at run time.
    Eval,
    /// `source FILE` / `. FILE` runs a script in this shell.
    Source,
    /// An interpreter reads its program from stdin (here-document, here-string, pipe).
    InterpreterInput {
        /// The interpreter.
        program: String,
    },
    /// A `-c` string (or `trap` action) that is not a literal.
    DynamicScript {
        /// The program given it.
        program: String,
    },
    /// A redirection or `tee` target that is not a literal.
    DynamicWriteTarget {
        /// The target as written.
        text: String,
    },
    /// A relative write target after the command changes directory.
    CwdChange,
    /// A wrapper option spine does not know, so the wrapped command cannot be located.
    UnknownOption {
        /// The wrapper.
        program: String,
        /// The option as written (`--foo`, `-x`).
        option: String,
    },
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Bash evaluates a value as code: an arithmetic text, a subscript or a variable name that
    /// holds data the command chooses at run time, or a `${x@P}` transform.
    CodeInData {
        /// The construct as written (`$x`, `a[$(…)]`, `${x@P}`).
        text: String,
    },
    /// A builtin that runs a string as a command (`compgen`, `complete`, `mapfile -C`, `fc`).
    RunsString {
        /// The builtin.
        program: String,
    },
    /// A builtin or variable that changes what a command name runs (`alias`,
    /// `shopt -s expand_aliases`, `hash -p`, `enable -f`, `BASH_ALIASES`, `BASH_CMDS`).
    Rebinding {
        /// The builtin or variable.
        program: String,
    },
    /// A line continuation joins words the grammar split (`r\⏎m` is `rm`) where the words are
    /// not a command's plain words.
    LineContinuation,
}

impl fmt::Display for OpaqueReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpaqueReason::ParseError => f.write_str("the command does not parse"),
            OpaqueReason::DynamicCommandName { text } => write!(f, "command name `{text}` is computed at run time"),
            OpaqueReason::Eval => f.write_str("`eval` runs a string built at run time"),
            OpaqueReason::Source => f.write_str("`source` runs a script file in the shell"),
            OpaqueReason::InterpreterInput { program } => write!(f, "`{program}` reads its program from stdin"),
            OpaqueReason::DynamicScript { program } => write!(f, "`{program}` is given a script computed at run time"),
            OpaqueReason::DynamicWriteTarget { text } => write!(f, "write target `{text}` is computed at run time"),
            OpaqueReason::CwdChange => f.write_str("a relative write target follows a change of directory"),
            OpaqueReason::UnknownOption { program, option } => write!(f, "unknown option `{option}` of `{program}`"),
            OpaqueReason::TooDeep => write!(f, "nesting deeper than {MAX_DEPTH} levels"),
            OpaqueReason::CodeInData { text } => write!(f, "`{text}` makes bash evaluate data as code"),
            OpaqueReason::RunsString { program } => write!(f, "`{program}` runs a string as a command"),
            OpaqueReason::Rebinding { program } => write!(f, "`{program}` changes what a command name runs"),
            OpaqueReason::LineContinuation => f.write_str("a line continuation joins words inside a construct"),
        }
    }
}

/// Analyses a command string as `bash -c` would run it.
pub fn analyze(command: &str) -> ShellAnalysis {
    let mut out = ShellAnalysis::default();
    analyze_into(command, 0, &mut out);
    data::finish(&mut out);
    files::finish(&mut out);
    let changes_dir = out.commands.iter().any(|c| matches!(basename(c.program()), "cd" | "pushd" | "popd"));
    if changes_dir && out.writes.iter().any(|w| !w.starts_with('/')) {
        out.opaque.push(OpaqueReason::CwdChange);
    }
    let mut seen: Vec<OpaqueReason> = Vec::new();
    out.opaque.retain(|r| {
        let new = !seen.contains(r);
        if new {
            seen.push(r.clone());
        }
        new
    });
    out
}

/// Analyses `source` at nesting `depth` into `out`.
fn analyze_into(source: &str, depth: usize, out: &mut ShellAnalysis) {
    if depth > MAX_DEPTH {
        out.opaque.push(OpaqueReason::TooDeep);
        return;
    }
    let Some(tree) = parse(source) else {
        out.opaque.push(OpaqueReason::ParseError);
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.opaque.push(OpaqueReason::ParseError);
    }
    syntax::continuations(root, source, out);
    syntax::walk(root, source, depth, out);
}

thread_local! {
    /// A tree-sitter parser is not `Sync`; one per thread, created on first use.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn parse(source: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        parser.reset();
        parser.parse(source, None)
    })
}

/// The last path component of a program (`rm` for `/bin/rm`).
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

#[cfg(test)]
mod blind_spot_tests;
#[cfg(test)]
mod file_tests;
#[cfg(test)]
mod tests;
