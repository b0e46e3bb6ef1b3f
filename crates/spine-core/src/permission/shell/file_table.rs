//! The table of well-known readers and writers: for each command, which operands it reads
//! and which it writes, which options take an argument, which options name a file (and what is
//! done with it), which make it recursive. [`super::operands`] applies it to a command's words.
//!
//! The option grammars are GNU's (coreutils, grep, sed, diff, gawk, tar) and ripgrep's and
//! jq's: clusters (`-rn`), attached values (`-n5`, `--lines=5`), a value in the next word
//! (`-n 5`), unique abbreviations of long options (`--out` is `--output`), options after
//! operands, `--` ending options and `-` for stdin. An option a row does not list is taken for
//! a flag: the word after it stays an operand, which errs towards checking one file too many.
//! A command that is not in the table has no file operands: `Bash` rules govern it alone.
//!
//! `can` is everything the command may do with a file: when an expansion could turn into an
//! option or into more words than the analysis sees, the command gets an operand computed at
//! run time with that access.

use super::file_readers::READERS;
use super::file_writers::WRITERS;
use super::files::Access;

pub(super) const R: Access = Access::READ;
pub(super) const W: Access = Access::WRITE;
pub(super) const RW: Access = Access::READ_WRITE;

/// How a command uses its operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// Every operand.
    All(Access),
    /// The first operand is no file (a pattern, a script, a program, a filter, an owner)
    /// unless one of [`Spec::instead_of_first`] was given; the others are.
    AfterFirst(Access),
    /// `[INPUT [OUTPUT]]`: the first is read, the second written (`uniq`, `xxd`).
    InputOutput,
    /// `SOURCE… DEST`, `SOURCE… DIR`, `-t DIR SOURCE…` (`cp`, `mv`, `ln`, `install`).
    Copy {
        /// What is done with the sources.
        sources: Access,
    },
}

/// One row.
#[derive(Debug)]
pub(super) struct Spec {
    /// The command names.
    pub names: &'static [&'static str],
    /// How operands are used.
    pub layout: Layout,
    /// Everything the command may do with a file (see the module documentation).
    pub can: Access,
    /// Short options that take a value (`-n 5`, `-n5`).
    pub short_value: &'static str,
    /// Short options whose value can only be attached (`-i.bak`); alone they take none.
    pub short_optional: &'static str,
    /// Long options that take a value (`--lines 5`, `--lines=5`).
    pub long_value: &'static [&'static str],
    /// Long options whose value can only be attached (`--in-place=.bak`).
    pub long_optional: &'static [&'static str],
    /// Long options that take two values (`jq --arg NAME VALUE`).
    pub long_two: &'static [&'static str],
    /// Long flags, listed so that abbreviations resolve as the program resolves them.
    pub long_flags: &'static [&'static str],
    /// `-NUM` is an option (`head -5`).
    pub numeric: bool,
    /// Options whose (last) value is a file, and what is done with it.
    pub files: &'static [(&'static str, Access)],
    /// Options that make every operand a whole tree (`-r`, `--recursive`).
    pub recursive: &'static [&'static str],
    /// Options that stand in for the first operand of [`Layout::AfterFirst`] (`grep -e`).
    pub instead_of_first: &'static [&'static str],
    /// Options that run a program spine does not see (`sort --compress-program`): the command
    /// gets an operand computed at run time that reads and writes.
    pub runs: &'static [&'static str],
    /// Options after which the command also reads files listed in a file
    /// (`md5sum -c`, `wc --files0-from`): an operand computed at run time that reads.
    pub lists: &'static [&'static str],
}

/// A row with no options, reading every operand; rows override what differs.
pub(super) const ROW: Spec = Spec {
    names: &[],
    layout: Layout::All(R),
    can: R,
    short_value: "",
    short_optional: "",
    long_value: &[],
    long_optional: &[],
    long_two: &[],
    long_flags: &[],
    numeric: false,
    files: &[],
    recursive: &[],
    instead_of_first: &[],
    runs: &[],
    lists: &[],
};

/// The rows: the readers ([`super::file_readers`]) and the writers
/// ([`super::file_writers`]). `sed`, `awk`, `jq`, `rg`, `grep`, `diff`, the copy family and
/// the commands of [`super::special`] get some more from their own functions there.
pub(super) const TABLES: &[&[Spec]] = &[READERS, WRITERS];

/// The row of a command (its basename), if it has one.
pub(super) fn spec(program: &str) -> Option<&'static Spec> {
    TABLES.iter().flat_map(|t| t.iter()).find(|s| s.names.contains(&program))
}
