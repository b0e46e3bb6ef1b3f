//! `tar` and `zip`, when their options are simple enough to read: `tar` create/append read
//! their operands as trees and write the archive, extract reads the archive and writes
//! somewhere below the directory (`-C DIR`, else the working directory: [`Reach::Within`]),
//! list and `-O` write nothing; `zip` reads its inputs (trees with `-r`) and reads and writes
//! the archive. Options that run a program (`tar -I`, `--to-command`, `zip -TT`) or that are
//! not understood give the command an operand computed at run time.

use super::file_table::{Layout, Spec};
use super::files::{Access, OperandPath, Reach};
use super::operands::{Arg, Sink, parse, sub_path};
use super::words::{Word, WordKind};

const R: Access = Access::READ;
const W: Access = Access::WRITE;
const RW: Access = Access::READ_WRITE;

const TAR: Spec = Spec {
    names: &["tar"],
    layout: Layout::All(R),
    can: RW,
    short_value: "fCTXbgHKLNVIF",
    short_optional: "",
    long_value: &[
        "--file",
        "--directory",
        "--files-from",
        "--exclude-from",
        "--exclude",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--to-command",
        "--transform",
        "--xform",
        "--strip-components",
        "--owner",
        "--group",
        "--mode",
        "--mtime",
        "--format",
        "--blocking-factor",
        "--listed-incremental",
        "--label",
        "--newer",
        "--newer-mtime",
        "--after-date",
        "--suffix",
        "--checkpoint-action",
        "--index-file",
        "--rsh-command",
        "--volno-file",
        "--tape-length",
    ],
    long_optional: &["--checkpoint", "--backup"],
    long_two: &[],
    long_flags: &[
        "--create",
        "--extract",
        "--get",
        "--list",
        "--append",
        "--update",
        "--catenate",
        "--concatenate",
        "--delete",
        "--diff",
        "--compare",
        "--to-stdout",
        "--gzip",
        "--bzip2",
        "--xz",
        "--zstd",
        "--verbose",
    ],
    numeric: false,
    files: &[
        ("-X", R),
        ("--exclude-from", R),
        ("-T", R),
        ("--files-from", R),
        ("-g", RW),
        ("--listed-incremental", RW),
    ],
    recursive: &[],
    instead_of_first: &[],
    runs: &[
        "-I",
        "--use-compress-program",
        "-F",
        "--info-script",
        "--new-volume-script",
        "--to-command",
        "--checkpoint-action",
        "--rsh-command",
    ],
    lists: &["-T", "--files-from"],
};

/// `tar`: the first word may be an old-style cluster (`czf out.tgz dir`), whose letters that
/// take a value take the next words in turn.
pub(super) fn tar(args: &[Word], sink: &mut Sink<'_>) {
    let mut words: Vec<Word> = Vec::new();
    let mut rest = args;
    if let Some((first, tail)) = args.split_first()
        && first.is_literal()
        && !first.value.starts_with('-')
        && !first.value.is_empty()
    {
        let mut tail = tail.iter();
        for c in first.value.chars() {
            words.push(Word::literal(&format!("-{c}")));
            if TAR.short_value.contains(c)
                && let Some(value) = tail.next()
            {
                words.push(value.clone());
            }
        }
        rest = tail.as_slice();
    }
    words.extend(rest.iter().cloned());
    let parsed = parse(&TAR, &words, false);
    let has = |names: &[&str]| parsed.has(names);
    let create = has(&["-c", "--create"]);
    let append = has(&["-r", "--append", "-u", "--update"]);
    let extract = has(&["-x", "--extract", "--get"]);
    let concat = has(&["-A", "--catenate", "--concatenate"]);
    let delete = has(&["--delete"]);
    let archive_access = if create {
        W
    } else if append || concat || delete {
        RW
    } else {
        R
    };
    for (word, skip) in parsed.values(&["-f", "--file"]) {
        sink.value(word, skip, archive_access, Reach::Path);
    }
    for (option, access) in TAR.files {
        for (word, skip) in parsed.values(&[option]) {
            sink.value(word, skip, *access, Reach::Path);
        }
    }
    let dirs: Vec<(&Word, usize)> = parsed.values(&["-C", "--directory"]);
    if create || append || has(&["-d", "--diff", "--compare"]) || concat {
        let reach = if concat { Reach::Path } else { Reach::Tree };
        for arg in &parsed.operands {
            sink.arg(arg, R, reach);
            let relative = arg.word.is_literal() && !arg.word.value.starts_with(['/', '~']);
            for (dir, skip) in &dirs {
                match (relative, sub_path(dir, *skip)) {
                    (true, Some(OperandPath::Literal(d))) => {
                        let joined = format!("{}/{}", d.trim_end_matches('/'), arg.word.value);
                        sink.push(OperandPath::Literal(joined), R, reach, Access::NONE);
                    }
                    _ => sink.computed("a path below a computed -C directory", R),
                }
            }
        }
    }
    if extract && !has(&["-O", "--to-stdout"]) {
        match dirs.last() {
            Some((dir, skip)) => {
                if let Some(path) = sub_path(dir, *skip) {
                    sink.push(path, W, Reach::Within, Access::NONE);
                }
            }
            None => sink.push(OperandPath::Literal(".".into()), W, Reach::Within, Access::NONE),
        }
    }
    if has(TAR.runs) {
        sink.computed("a program it runs", RW);
    }
    if has(TAR.lists) {
        sink.computed("files listed in a file", R);
    }
    if parsed.unsure {
        sink.computed("words computed at run time", RW);
    }
}

/// `zip [OPTIONS] ARCHIVE [FILE…]` with simple options only: flag clusters of
/// `qvrRjDXyumfgolT0-9`, `-x`/`-i` lists (patterns, no files), `-b DIR`, `-n SUFFIXES`,
/// `-t`/`-tt DATE`, `-O FILE`, `-d` (delete entries: the operands are entry names).
pub(super) fn zip(args: &[Word], sink: &mut Sink<'_>) {
    let mut operands: Vec<Arg<'_>> = Vec::new();
    let (mut recursive, mut moving, mut delete, mut unsure) = (false, false, false, false);
    let mut i = 0;
    let mut in_list = false;
    while let Some(word) = args.get(i) {
        i += 1;
        let v = word.value.as_str();
        if !word.is_literal() {
            unsure |= word.kind == WordKind::Dynamic && !super::words::single_field(&word.raw);
            if !in_list {
                operands.push(Arg { word, at: i - 1, plain: false });
            }
            continue;
        }
        if !v.starts_with('-') || v == "-" {
            if !in_list {
                operands.push(Arg { word, at: i - 1, plain: false });
            }
            continue;
        }
        in_list = false;
        match v {
            "-x" | "-i" | "--exclude" | "--include" => in_list = true,
            "-b" | "-n" | "-t" | "-tt" => i += 1,
            "-O" | "--output-file" => {
                if let Some(out) = args.get(i) {
                    sink.arg(&Arg { word: out, at: i, plain: true }, W, Reach::Path);
                }
                i += 1;
            }
            "-TT" | "--unzip-command" => {
                unsure = true;
                i += 1;
            }
            "-d" | "--delete" => delete = true,
            "-r" | "--recurse-paths" | "-R" => recursive = true,
            "-m" | "--move" => moving = true,
            _ if v.chars().skip(1).all(|c| "qvrRjDXyumfgolT0123456789".contains(c)) => {
                recursive |= v.contains(['r', 'R']);
                moving |= v.contains('m');
            }
            _ => unsure = true,
        }
    }
    let mut operands = operands.into_iter();
    if let Some(archive) = operands.next() {
        sink.arg(&archive, RW, Reach::Path);
    }
    if !delete {
        let access = if moving { RW } else { R };
        let reach = if recursive { Reach::Tree } else { Reach::Path };
        for arg in operands {
            sink.arg(&arg, access, reach);
        }
    }
    if unsure {
        sink.computed("options not understood", RW);
    }
}
