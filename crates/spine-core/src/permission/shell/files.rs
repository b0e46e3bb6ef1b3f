//! The files a command reads and writes, as its words show them: what `super::operands`
//! finds for the commands of its table, what redirections name (`< in`, `> out`), and the
//! directories `cd`/`pushd` move to. The policy checks them against `Read(...)` and
//! `Edit(...)` rules (`permission::file_rules`).
//!
//! Contract:
//! - A [`FileOperand`] is a path as the analysis knows it before the command runs
//!   ([`OperandPath`]): a literal (quoting removed; a leading `~` only when bash expands it),
//!   a pattern bash expands against the file system (globs, braces; each character with its
//!   quoted flag), a name placed into a directory (`cp a dir/` writes `dir/a`), or computed at
//!   run time (an expansion, or words whose meaning as options is not known).
//! - `finish` settles what only the whole command shows: when the command assigns `HOME`,
//!   a tilde is computed; when it assigns `PWD`, `OLDPWD`, `CDPATH` or `HOME`, every `cd`
//!   target is; when it runs `shopt` or assigns `GLOBIGNORE`, `BASHOPTS` or `SHELLOPTS`, glob
//!   semantics may differ from bash's defaults, so every pattern is computed; when
//!   `POSIXLY_CORRECT` is assigned (or set in spine's environment), the operands that POSIX
//!   argument order would add (options end at the first operand) are kept; when it assigns a
//!   variable that gives a program options or a program to run (`LESS`, `LESSOPEN`,
//!   `GREP_OPTIONS`, `TAR_OPTIONS`, `ZIPOPT`, `RIPGREP_CONFIG_PATH`), the command reads and
//!   writes a computed file.

use super::words::{Word, WordKind, marked};
use super::{ShellAnalysis, basename};

/// Variables through which the command can give a program of the table options or a program
/// to run (`LESSOPEN='|cat .env' less x`, `TAR_OPTIONS=-xf…`).
const OPTION_VARIABLES: &[&str] =
    &["LESS", "LESSOPEN", "LESSCLOSE", "GREP_OPTIONS", "TAR_OPTIONS", "ZIPOPT", "RIPGREP_CONFIG_PATH"];

/// What a command does with a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Access {
    /// It reads the file's content.
    pub read: bool,
    /// It changes, creates, moves or removes the file.
    pub write: bool,
}

impl Access {
    /// Nothing.
    pub const NONE: Access = Access { read: false, write: false };
    /// Reads.
    pub const READ: Access = Access { read: true, write: false };
    /// Writes.
    pub const WRITE: Access = Access { read: false, write: true };
    /// Reads and writes.
    pub const READ_WRITE: Access = Access { read: true, write: true };

    /// Both.
    pub fn union(self, other: Access) -> Access {
        Access { read: self.read || other.read, write: self.write || other.write }
    }

    /// Whether it does anything.
    pub fn any(self) -> bool {
        self.read || self.write
    }

    /// The verb for a reason (`reads`, `writes`, `reads and writes`).
    pub fn verb(self) -> &'static str {
        match (self.read, self.write) {
            (true, true) => "reads and writes",
            (true, false) => "reads",
            (false, true) => "writes",
            (false, false) => "names",
        }
    }
}

/// How much of the file system at and below a path an access reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The path itself.
    Path,
    /// The path and everything below it (`grep -r`, `rg`, `rm -r`, `mv`, `cp -r`).
    Tree,
    /// Some paths below it, which ones only the run shows (`tar x` extracts an archive there).
    Within,
}

/// A path as the analysis knows it before the command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperandPath {
    /// Known text: relative to the command's working directory unless absolute; a leading `~`
    /// is the user's home.
    Literal(String),
    /// A word bash expands against the file system (`*`, `?`, `[…]`, `{a,b}`): its characters
    /// after quote removal, each with whether it was quoted.
    Pattern(Vec<(char, bool)>),
    /// `DIR/NAME'`, where `NAME'` is the last component of each path `name` stands for: where
    /// `cp`, `mv`, `ln` and `install` put a source inside a destination directory.
    Into {
        /// The directory (a literal path).
        dir: String,
        /// The source.
        name: Box<OperandPath>,
    },
    /// Known only at run time; the text as written.
    Computed(String),
}

impl OperandPath {
    /// The path as written, for reasons and tests.
    pub fn text(&self) -> String {
        match self {
            OperandPath::Literal(t) | OperandPath::Computed(t) => t.clone(),
            OperandPath::Pattern(chars) => chars.iter().map(|(c, _)| *c).collect(),
            OperandPath::Into { dir, name } => format!("{}/{}", dir.trim_end_matches('/'), basename(&name.text())),
        }
    }
}

/// One file a command reads or writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOperand {
    /// Who: the program (`cat`), or the redirection (`<`, `>`).
    pub program: String,
    /// The path.
    pub path: OperandPath,
    /// What is done with it.
    pub access: Access,
    /// How far below it.
    pub reach: Reach,
    /// What the command could do with any file if a word a pattern expands to is read as an
    /// option (a match starting with `-`); [`Access::NONE`] after `--` and for redirections.
    pub as_option: Access,
}

/// The parts of the files analysis only `finish` settles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Pending {
    /// Operands only POSIX argument order adds.
    pub posix_only: Vec<FileOperand>,
    /// Whether the command runs `shopt` (glob options may change).
    pub shopt: bool,
}

/// The path of a word that names a file, or `None` for words that are no file (`-`, a
/// process substitution).
pub(super) fn operand_path(word: &Word) -> Option<OperandPath> {
    if word.value == "-" {
        return None;
    }
    match word.kind {
        WordKind::Dynamic => (!is_process_substitution(word)).then(|| OperandPath::Computed(word.value.clone())),
        WordKind::Literal => Some(literal_path(&word.value, &marked(&word.raw))),
        WordKind::Pattern => Some(pattern_path(marked(&word.raw))),
    }
}

/// Whether a word is a process substitution (`<(…)`, `>(…)`): a pipe, no file.
pub(super) fn is_process_substitution(word: &Word) -> bool {
    let raw = word.raw.trim();
    word.kind == WordKind::Dynamic && (raw.starts_with("<(") || raw.starts_with(">(")) && raw.ends_with(')')
}

/// A literal path from its text and marked characters: a leading `~` that bash expands stays
/// (the user's home), one it does not is made relative (`./~x`); `~user`, `~+`, `~-` are
/// computed.
pub(super) fn literal_path(value: &str, chars: &[(char, bool)]) -> OperandPath {
    match tilde(chars) {
        Tilde::None => OperandPath::Literal(value.to_owned()),
        Tilde::Home => OperandPath::Literal(value.to_owned()),
        Tilde::Quoted => OperandPath::Literal(format!("./{value}")),
        Tilde::Other => OperandPath::Computed(value.to_owned()),
    }
}

/// A pattern path (see [`literal_path`] for the tilde).
pub(super) fn pattern_path(chars: Vec<(char, bool)>) -> OperandPath {
    match tilde(&chars) {
        Tilde::None | Tilde::Home => OperandPath::Pattern(chars),
        Tilde::Quoted => {
            let mut prefixed = vec![('.', true), ('/', true)];
            prefixed.extend(chars);
            OperandPath::Pattern(prefixed)
        }
        Tilde::Other => OperandPath::Computed(chars.iter().map(|(c, _)| *c).collect()),
    }
}

enum Tilde {
    None,
    Home,
    Quoted,
    Other,
}

fn tilde(chars: &[(char, bool)]) -> Tilde {
    match chars.first() {
        Some(('~', false)) => {}
        Some(('~', true)) => return Tilde::Quoted,
        _ => return Tilde::None,
    }
    let prefix: Vec<&(char, bool)> = chars.iter().take_while(|(c, _)| *c != '/').collect();
    if prefix.len() == 1 {
        Tilde::Home
    } else if prefix.iter().any(|(_, quoted)| *quoted) {
        // `~"x"`: no tilde expansion, a directory named `~x`.
        Tilde::Quoted
    } else {
        Tilde::Other
    }
}

/// Records one operand.
pub(super) fn push(
    out: &mut ShellAnalysis,
    program: &str,
    path: OperandPath,
    access: Access,
    reach: Reach,
    as_option: Access,
) {
    let operand = FileOperand { program: program.to_owned(), path, access, reach, as_option };
    if !out.files.contains(&operand) {
        out.files.push(operand);
    }
}

/// Settles the operands once the whole command was walked (see the module contract).
pub(super) fn finish(out: &mut ShellAnalysis) {
    let names = &out.names;
    let pending = std::mem::take(&mut out.pending);
    let posix = names.was_assigned("POSIXLY_CORRECT") || std::env::var_os("POSIXLY_CORRECT").is_some();
    if posix {
        for operand in pending.posix_only {
            if !out.files.contains(&operand) {
                out.files.push(operand);
            }
        }
    }
    if let Some(name) = OPTION_VARIABLES.iter().find(|n| names.was_assigned(n)) {
        let path = OperandPath::Computed(format!("({name} gives a command options or a program)"));
        let operand = FileOperand {
            program: (*name).to_owned(),
            path,
            access: Access::READ_WRITE,
            reach: Reach::Path,
            as_option: Access::NONE,
        };
        out.files.push(operand);
    }
    let home = names.was_assigned("HOME");
    let globs = pending.shopt || ["GLOBIGNORE", "BASHOPTS", "SHELLOPTS"].iter().any(|n| names.was_assigned(n));
    for operand in &mut out.files {
        settle(&mut operand.path, home, globs);
    }
    if ["PWD", "OLDPWD", "CDPATH", "HOME"].iter().any(|n| names.was_assigned(n)) && !out.dirs.is_empty() {
        out.dirs = vec![OperandPath::Computed("cd after an assignment to PWD, OLDPWD, CDPATH or HOME".into())];
    }
    for dir in &mut out.dirs {
        settle(dir, home, true);
    }
}

fn settle(path: &mut OperandPath, home: bool, globs: bool) {
    let computed = match path {
        OperandPath::Literal(text) => home && text.starts_with('~'),
        OperandPath::Pattern(chars) => globs || (home && chars.first() == Some(&('~', false))),
        OperandPath::Into { dir, name } => {
            settle(name, home, globs);
            (home && dir.starts_with('~')) || matches!(**name, OperandPath::Computed(_))
        }
        OperandPath::Computed(_) => false,
    };
    if computed {
        *path = OperandPath::Computed(path.text());
    }
}
