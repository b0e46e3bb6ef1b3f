//! The writers of the file table ([`super::file_table`]): the copy family (`cp`, `mv`,
//! `install`, `ln`: sources read, destination written) and the commands that change, create
//! or remove their operands (`rm`, `touch`, `mkdir`, `chown`…).

use super::file_table::{Layout, R, ROW, RW, Spec, W};

/// The writers.
pub(super) const WRITERS: &[Spec] = &[
    Spec {
        names: &["cp"],
        layout: Layout::Copy { sources: R },
        can: RW,
        short_value: "St",
        long_value: &["--target-directory", "--suffix", "--no-preserve"],
        long_optional: &["--backup", "--sparse", "--reflink", "--preserve", "--context", "--update"],
        long_flags: &[
            "--archive",
            "--attributes-only",
            "--copy-contents",
            "--dereference",
            "--force",
            "--interactive",
            "--link",
            "--no-clobber",
            "--no-dereference",
            "--parents",
            "--recursive",
            "--remove-destination",
            "--strip-trailing-slashes",
            "--symbolic-link",
            "--no-target-directory",
            "--verbose",
            "--one-file-system",
        ],
        recursive: &["-r", "-R", "-a", "--recursive", "--archive"],
        ..ROW
    },
    Spec {
        names: &["mv"],
        layout: Layout::Copy { sources: RW },
        can: RW,
        short_value: "St",
        long_value: &["--target-directory", "--suffix"],
        long_optional: &["--backup", "--update"],
        long_flags: &[
            "--force",
            "--interactive",
            "--no-clobber",
            "--no-target-directory",
            "--strip-trailing-slashes",
            "--verbose",
            "--exchange",
            "--no-copy",
        ],
        ..ROW
    },
    Spec {
        names: &["install"],
        layout: Layout::Copy { sources: R },
        can: RW,
        short_value: "gmoSt",
        long_value: &["--group", "--mode", "--owner", "--suffix", "--target-directory", "--strip-program"],
        long_optional: &["--backup", "--context"],
        long_flags: &[
            "--compare",
            "--directory",
            "--preserve-timestamps",
            "--strip",
            "--no-target-directory",
            "--verbose",
        ],
        runs: &["--strip-program"],
        ..ROW
    },
    Spec {
        names: &["ln"],
        layout: Layout::Copy { sources: RW },
        can: RW,
        short_value: "St",
        long_value: &["--target-directory", "--suffix"],
        long_optional: &["--backup"],
        long_flags: &[
            "--directory",
            "--force",
            "--interactive",
            "--logical",
            "--no-dereference",
            "--physical",
            "--relative",
            "--symbolic",
            "--no-target-directory",
            "--verbose",
        ],
        ..ROW
    },
    Spec {
        names: &["rm"],
        layout: Layout::All(W),
        can: W,
        long_optional: &["--interactive", "--preserve-root"],
        long_flags: &["--force", "--dir", "--one-file-system", "--no-preserve-root", "--recursive", "--verbose"],
        recursive: &["-r", "-R", "--recursive"],
        ..ROW
    },
    Spec { names: &["unlink", "rmdir"], layout: Layout::All(W), can: W, ..ROW },
    Spec {
        names: &["shred"],
        layout: Layout::All(W),
        can: RW,
        short_value: "ns",
        long_value: &["--iterations", "--size", "--random-source"],
        long_optional: &["--remove"],
        files: &[("--random-source", R)],
        ..ROW
    },
    Spec {
        names: &["truncate"],
        layout: Layout::All(W),
        can: W,
        short_value: "sr",
        long_value: &["--size", "--reference"],
        ..ROW
    },
    Spec {
        names: &["touch"],
        layout: Layout::All(W),
        can: W,
        short_value: "dtr",
        long_value: &["--date", "--reference", "--time"],
        ..ROW
    },
    Spec {
        names: &["mkdir"],
        layout: Layout::All(W),
        can: W,
        short_value: "m",
        short_optional: "Z",
        long_value: &["--mode"],
        long_optional: &["--context"],
        ..ROW
    },
    Spec {
        names: &["chown", "chgrp"],
        layout: Layout::AfterFirst(W),
        can: W,
        long_value: &["--from", "--reference"],
        long_flags: &[
            "--changes",
            "--dereference",
            "--no-dereference",
            "--quiet",
            "--silent",
            "--verbose",
            "--recursive",
        ],
        recursive: &["-R", "--recursive"],
        instead_of_first: &["--reference"],
        ..ROW
    },
];
