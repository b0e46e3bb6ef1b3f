//! The table of read-only programs [`super::harmless`] runs without an allow rule: for each,
//! the options it may be given (every other option makes the command not harmless) and what
//! its operands are. Option grammars are GNU's (coreutils, grep, diffutils, findutils) and
//! ripgrep's: clusters (`-la`), a value attached (`-n5`, `--lines=5`) or in the next word,
//! `--` ending options, `-` for stdin. Abbreviated long options (`--out` for `--output`) are
//! not listed, so they are unknown, and unknown options are refused.
//!
//! Left out on purpose: options that write (`sort -o`, `tree -o`, `uniq IN OUT`), run a program
//! (`rg --pre`, `rg -z`, `diff -l`, `sort --compress-program`), read a list of files
//! (`--files0-from`, `du -X`), follow symlinks while walking a tree (`grep -R`, `rg -L`,
//! `ls -L`, `du -L`, `tree -l`, `diff -r`), change the system (`date -s`, `hostname NAME`),
//! or never end (`tail -f`).

use super::harmless_search::SEARCHERS;

/// What a program's operands are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operands {
    /// Any words, options included: the program reads no file and no option of it does harm
    /// (`echo`, `true`, `test`).
    Any,
    /// None at all (`pwd`, `whoami`).
    None,
    /// Literal words that are no files (`id USER`).
    Strings,
    /// Every operand is a file it reads.
    Paths,
    /// At most one operand, a file it reads (`uniq`: a second one would be written).
    OnePath,
    /// The first operand is a pattern unless a pattern option was given; the rest are files.
    PatternThenPaths,
    /// `+FORMAT` only (`date`: any other operand sets the clock).
    Format,
    /// A grammar of its own ([`super::harmless_special`]).
    Special,
}

/// One row.
#[derive(Debug)]
pub(super) struct Program {
    /// The command names (as written: no directory part).
    pub names: &'static [&'static str],
    /// Short flags.
    pub flags: &'static str,
    /// Short options with a value that is no file (`-n 5`, `-n5`).
    pub values: &'static str,
    /// Short options whose value can only be attached and may be missing (`date -I[FMT]`).
    pub optional: &'static str,
    /// Short options whose value is a file it reads (`grep -f FILE`).
    pub path_values: &'static str,
    /// Long flags (`--all`); with `=VALUE` they are refused.
    pub long_flags: &'static [&'static str],
    /// Long options with a value that is no file (`--lines=5`, `--lines 5`).
    pub long_values: &'static [&'static str],
    /// Long options whose value is optional and only attached (`--color[=WHEN]`).
    pub long_optional: &'static [&'static str],
    /// Long options whose value is a file it reads (`--file=F`).
    pub long_path_values: &'static [&'static str],
    /// Options that stand in for the pattern of [`Operands::PatternThenPaths`].
    pub pattern_options: &'static [&'static str],
    /// `-NUM` is an option (`head -5`).
    pub numeric: bool,
    /// What the operands are.
    pub operands: Operands,
    /// The operands are read or listed as whole trees (`ls`, `grep -r`, `find`).
    pub tree: bool,
    /// With no file operand it reads or lists the working directory.
    pub implicit_dot: bool,
}

/// A row with no options and no operands; rows override what differs.
pub(super) const P: Program = Program {
    names: &[],
    flags: "",
    values: "",
    optional: "",
    path_values: "",
    long_flags: &[],
    long_values: &[],
    long_optional: &[],
    long_path_values: &[],
    pattern_options: &[],
    numeric: false,
    operands: Operands::None,
    tree: false,
    implicit_dot: false,
};

const ANY: Program = Program { operands: Operands::Any, ..P };

/// The rows (and [`SEARCHERS`]: `ls`, `grep`, `rg`).
pub(super) const PROGRAMS: &[Program] = &[
    Program { names: &["echo", "true", "false", ":", "test", "[", "basename", "dirname", "tr", "seq", "sleep"], ..ANY },
    Program { names: &["which", "type", "groups", "expr", "nproc", "tty", "logname", "arch"], ..ANY },
    Program { names: &["printf", "cd", "env", "find", "git"], operands: Operands::Special, ..P },
    Program { names: &["pwd"], flags: "LP", ..P },
    Program { names: &["whoami"], ..P },
    Program { names: &["id"], flags: "gGnruzZa", operands: Operands::Strings, ..P },
    Program {
        names: &["uname"],
        flags: "asnrvmpio",
        long_flags: &[
            "--all",
            "--kernel-name",
            "--nodename",
            "--kernel-release",
            "--kernel-version",
            "--machine",
            "--processor",
            "--hardware-platform",
            "--operating-system",
        ],
        ..P
    },
    Program {
        names: &["hostname"],
        flags: "fsidAIa",
        long_flags: &["--fqdn", "--long", "--short", "--ip-address", "--all-ip-addresses", "--domain", "--all-fqdns"],
        ..P
    },
    Program {
        names: &["date"],
        flags: "uR",
        values: "d",
        optional: "I",
        path_values: "rf",
        long_flags: &["--utc", "--universal", "--rfc-email", "--debug"],
        long_values: &["--date", "--rfc-3339"],
        long_optional: &["--iso-8601"],
        long_path_values: &["--reference", "--file"],
        operands: Operands::Format,
        ..P
    },
    Program {
        names: &["tree"],
        flags: "adfxpsugDFqNQrtvUChnAiS",
        values: "LPI",
        long_flags: &["--noreport", "--dirsfirst", "--du", "--prune", "--gitignore", "--matchdirs", "--ignore-case"],
        long_values: &["--charset", "--filelimit", "--sort"],
        operands: Operands::Paths,
        tree: true,
        implicit_dot: true,
        ..P
    },
    Program {
        names: &["cat"],
        flags: "AbeEnstTuv",
        long_flags: &[
            "--number",
            "--number-nonblank",
            "--show-all",
            "--show-ends",
            "--show-tabs",
            "--squeeze-blank",
            "--show-nonprinting",
        ],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["head", "tail"],
        flags: "qvz",
        values: "nc",
        long_flags: &["--quiet", "--silent", "--verbose", "--zero-terminated"],
        long_values: &["--lines", "--bytes"],
        numeric: true,
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["wc"],
        flags: "clmwL",
        long_flags: &["--bytes", "--chars", "--lines", "--words", "--max-line-length"],
        operands: Operands::Paths,
        ..P
    },
    Program { names: &["nl", "rev", "tac"], operands: Operands::Paths, ..P },
    Program {
        names: &["md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum", "b2sum"],
        flags: "btz",
        long_flags: &["--binary", "--text", "--tag", "--zero"],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["sort"],
        flags: "bdfgiMhnRrVsuzcCm",
        values: "ktS",
        long_flags: &[
            "--ignore-leading-blanks",
            "--dictionary-order",
            "--ignore-case",
            "--general-numeric-sort",
            "--ignore-nonprinting",
            "--month-sort",
            "--human-numeric-sort",
            "--numeric-sort",
            "--random-sort",
            "--reverse",
            "--version-sort",
            "--merge",
            "--stable",
            "--unique",
            "--zero-terminated",
            "--debug",
        ],
        long_values: &["--key", "--field-separator", "--buffer-size", "--parallel", "--sort"],
        long_optional: &["--check"],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["uniq"],
        flags: "cdDiuz",
        values: "fsw",
        long_flags: &["--count", "--repeated", "--ignore-case", "--unique", "--zero-terminated"],
        long_values: &["--skip-fields", "--skip-chars", "--check-chars"],
        long_optional: &["--all-repeated", "--group"],
        operands: Operands::OnePath,
        ..P
    },
    Program {
        names: &["cut"],
        flags: "nsz",
        values: "bcfd",
        long_flags: &["--complement", "--only-delimited", "--zero-terminated"],
        long_values: &["--bytes", "--characters", "--fields", "--delimiter", "--output-delimiter"],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["diff"],
        flags: "qsyiEZbwBatTpNudc",
        values: "UCFIxSWD",
        path_values: "X",
        long_flags: &[
            "--brief",
            "--report-identical-files",
            "--side-by-side",
            "--ignore-case",
            "--ignore-tab-expansion",
            "--ignore-trailing-space",
            "--ignore-space-change",
            "--ignore-all-space",
            "--ignore-blank-lines",
            "--text",
            "--expand-tabs",
            "--initial-tab",
            "--show-c-function",
            "--new-file",
            "--unidirectional-new-file",
            "--minimal",
            "--speed-large-files",
            "--suppress-common-lines",
            "--strip-trailing-cr",
            "--suppress-blank-empty",
            "--normal",
        ],
        long_values: &["--label", "--exclude", "--ignore-matching-lines", "--width", "--tabsize"],
        long_optional: &["--unified", "--context", "--color"],
        long_path_values: &["--exclude-from"],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["cmp"],
        flags: "bls",
        values: "in",
        long_flags: &["--print-bytes", "--verbose", "--quiet", "--silent"],
        long_values: &["--ignore-initial", "--bytes"],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["file"],
        flags: "bLhiNkrz0S",
        long_flags: &[
            "--brief",
            "--mime",
            "--mime-type",
            "--mime-encoding",
            "--dereference",
            "--no-dereference",
            "--keep-going",
            "--raw",
            "--uncompress",
            "--no-pad",
            "--print0",
        ],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["stat"],
        flags: "LftZ",
        values: "c",
        long_flags: &["--dereference", "--file-system", "--terse"],
        long_values: &["--format", "--printf"],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["realpath", "readlink"],
        flags: "eEmLPqszfnv",
        long_flags: &[
            "--canonicalize",
            "--canonicalize-existing",
            "--canonicalize-missing",
            "--logical",
            "--physical",
            "--quiet",
            "--strip",
            "--no-symlinks",
            "--zero",
            "--no-newline",
            "--verbose",
        ],
        long_path_values: &["--relative-to", "--relative-base"],
        operands: Operands::Paths,
        ..P
    },
    Program {
        names: &["du"],
        flags: "abchkmsSxlD0",
        values: "dBt",
        long_flags: &[
            "--all",
            "--apparent-size",
            "--bytes",
            "--total",
            "--human-readable",
            "--si",
            "--summarize",
            "--separate-dirs",
            "--one-file-system",
            "--count-links",
            "--null",
            "--inodes",
        ],
        long_values: &["--max-depth", "--block-size", "--threshold", "--exclude", "--time-style"],
        long_optional: &["--time"],
        operands: Operands::Paths,
        tree: true,
        implicit_dot: true,
        ..P
    },
    Program {
        names: &["df"],
        flags: "ahHiklPT",
        values: "tBx",
        long_flags: &[
            "--all",
            "--human-readable",
            "--si",
            "--inodes",
            "--local",
            "--portability",
            "--print-type",
            "--total",
        ],
        long_values: &["--type", "--exclude-type", "--block-size"],
        long_optional: &["--output"],
        operands: Operands::Paths,
        ..P
    },
];

/// The row of a program as written, if it has one.
pub(super) fn program(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().chain(SEARCHERS).find(|p| p.names.contains(&name))
}
