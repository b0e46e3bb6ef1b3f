//! The commands whose operands a table row cannot say alone.
//!
//! - Own grammars ([`record`]): `cd`/`pushd`/`popd` (where relative paths resolve; `cd -`,
//!   `popd`, `pushd +N` and a computed target are computed), `shopt` (glob options may
//!   change), `source`/`.` (reads its script; a name without `/` is also looked up in `PATH`,
//!   so that read is computed), `dd` (`if=` read, `of=` written), `xxd` (`[IN [OUT]]`, its
//!   single-dash long options), `chmod` (a mode may look like an option: `-w`), `tar` (create
//!   reads its operands as trees and writes the archive; extract reads the archive and writes
//!   somewhere below the directory, [`Reach::Within`]; `-C DIR` moves), `zip` (the archive is
//!   read and written, the inputs read; any option but the simple ones is computed): see
//!   [`super::archives`].
//! - Extras on a table row ([`extra`], [`operand_access`], [`copy`]): `sed -i` reads and
//!   writes its operands and writes `FILE` + suffix; awk's `name=value` operands are
//!   assignments and `-d`/`-o`/`-p` write a file; jq's operands after `--args` are strings;
//!   `diff a dir` reads `dir/a`; the copy family writes the destination and
//!   `DEST/basename(SOURCE)` (`--parents`: `DEST/SOURCE`), `mv` and recursive copies whole
//!   trees, `cp -l`/`-s` and `ln` alias their sources (a later write through the link changes
//!   them, so they count as written), and a relative `ln -s` target also resolves against the
//!   link's directory.

use super::file_table::{ROW, Spec};
use super::files::{self, Access, OperandPath, Reach, operand_path};
use super::operands::{Arg, Parsed, Sink, last_component, parse, sub_path, sub_value};
use super::words::{Word, WordKind};
use super::{ShellAnalysis, archives};

/// The commands [`record`] reads files of.
pub(super) const NAMES: &[&str] = &["source", ".", "dd", "xxd", "chmod", "tar", "zip"];

const R: Access = Access::READ;
const W: Access = Access::WRITE;
const RW: Access = Access::READ_WRITE;

/// Records the operands of a command with its own grammar; `false` for every other command.
pub(super) fn record(program: &str, args: &[Word], out: &mut ShellAnalysis) -> bool {
    let mut sink = Sink { program, can: RW, list: Vec::new() };
    match program {
        "cd" | "pushd" | "popd" => chdir(program, args, out),
        "xargs" => {
            // `xargs -a FILE` reads its arguments from FILE.
            let options = Spec {
                short_value: "aEdILnPsS",
                short_optional: "eil",
                long_value: &[
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ],
                ..ROW
            };
            let parsed = parse(&options, args, true);
            for (word, skip) in parsed.values(&["-a", "--arg-file"]) {
                sink.value(word, skip, R, Reach::Path);
            }
        }
        "env" | "sudo" | "doas" | "find" => {
            if runs_elsewhere(program, args) {
                out.dirs.push(computed(&format!("{program} changes the directory of what it runs")));
            }
        }
        "shopt" => out.pending.shopt = true,
        "source" | "." => source(args, &mut sink),
        "dd" => dd(args, &mut sink),
        "xxd" => xxd(args, &mut sink),
        "chmod" => chmod(args, &mut sink),
        "tar" => archives::tar(args, &mut sink),
        "zip" => archives::zip(args, &mut sink),
        _ => return false,
    }
    for operand in sink.list {
        files::push(out, &operand.program, operand.path, operand.access, operand.reach, operand.as_option);
    }
    true
}

fn computed(text: &str) -> OperandPath {
    OperandPath::Computed(text.to_owned())
}

fn chdir(program: &str, args: &[Word], out: &mut ShellAnalysis) {
    let mut operands = args.iter().skip_while(|a| a.is_literal() && a.value.starts_with('-') && a.value.len() > 1);
    let first = operands.next();
    let target = match (program, first) {
        ("popd", _) => computed("popd"),
        ("cd", None) => OperandPath::Literal("~".into()),
        (_, None) => computed(program),
        (_, Some(w)) if w.value == "-" || (program == "pushd" && w.value.starts_with('+')) => computed(&w.value),
        (_, Some(w)) => match operand_path(w) {
            Some(OperandPath::Literal(text)) => OperandPath::Literal(text),
            _ => computed(&w.value),
        },
    };
    if program == "pushd" && args.iter().any(|a| a.value == "-n") {
        return;
    }
    out.dirs.push(target);
}

/// Whether a wrapper runs its command in another directory: `env -C DIR`/`--chdir`,
/// `sudo -D DIR`/`--chdir`, `find -execdir`/`-okdir`.
fn runs_elsewhere(program: &str, args: &[Word]) -> bool {
    if program == "find" {
        return args.iter().any(|a| matches!(a.value.as_str(), "-execdir" | "-okdir"));
    }
    let (flag, values, long_values): (char, &str, &[&str]) = match program {
        "env" => ('C', "uC", &["--unset"]),
        _ => ('D', "ugCDhprtUTRc", &["--user", "--group", "--host", "--prompt", "--role", "--type", "--other-user"]),
    };
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let v = word.value.as_str();
        if word.kind == WordKind::Dynamic || v == "--" || !v.starts_with('-') || v == "-" {
            return word.kind == WordKind::Dynamic;
        }
        if let Some(long) = v.strip_prefix("--") {
            if long.len() >= 2 && "chdir".starts_with(long.split('=').next().unwrap_or(long)) {
                return true;
            }
            if !long.contains('=') && long_values.iter().any(|l| l.starts_with(v)) {
                words.next();
            }
            continue;
        }
        for (k, c) in v.chars().skip(1).enumerate() {
            if c == flag {
                return true;
            }
            if values.contains(c) {
                if k + 2 == v.chars().count() {
                    words.next();
                }
                break;
            }
        }
    }
    false
}

fn source(args: &[Word], sink: &mut Sink<'_>) {
    let start = usize::from(args.first().is_some_and(|a| a.value == "--"));
    let Some(script) = args.get(start) else {
        return;
    };
    sink.arg(&Arg { word: script, at: start, plain: true }, R, Reach::Path);
    if !script.value.contains('/') {
        sink.push(computed(&format!("{} (looked up in PATH)", script.value)), R, Reach::Path, Access::NONE);
    }
}

fn dd(args: &[Word], sink: &mut Sink<'_>) {
    for word in args {
        let access = match word.value.split_once('=') {
            Some(("if", _)) => R,
            Some(("of", _)) => W,
            _ => continue,
        };
        sink.value(word, 3, access, Reach::Path);
        // Bash expands a `~` after `=` in words that look like assignments (not in POSIX
        // mode): both readings are checked.
        if word.value.get(3..).is_some_and(|v| v.starts_with('~')) && word.kind == WordKind::Literal {
            let text = word.value.get(3..).unwrap_or_default();
            sink.push(OperandPath::Literal(format!("./{text}")), access, Reach::Path, Access::NONE);
        }
    }
}

/// `xxd [OPTIONS] [IN [OUT]]`: `-c`, `-g`, `-l`, `-o`, `-s`, `-n`, `-R` take a value (also
/// spelt long with one dash: `-cols 8`, `-seek 10`).
fn xxd(args: &[Word], sink: &mut Sink<'_>) {
    let mut files = Vec::new();
    let mut unsure = false;
    let mut i = 0;
    let mut plain = false;
    while let Some(word) = args.get(i) {
        i += 1;
        let v = word.value.as_str();
        if plain || !word.is_literal() || v == "-" || !v.starts_with('-') {
            unsure |= word.kind == WordKind::Dynamic && !plain && super::words::could_start_with_dash(&word.raw);
            files.push(Arg { word, at: i - 1, plain });
            continue;
        }
        if v == "--" {
            plain = true;
            continue;
        }
        let name: Vec<char> = v.chars().skip(1).collect();
        let takes = name.first().is_some_and(|c| "cglosnR".contains(*c));
        if takes && name.iter().skip(1).all(char::is_ascii_alphabetic) {
            i += 1;
        }
    }
    for (k, arg) in files.iter().enumerate() {
        sink.arg(arg, if k == 1 { W } else { R }, Reach::Path);
    }
    if unsure {
        sink.computed("words computed at run time", RW);
    }
}

/// `chmod [OPTIONS] MODE FILE…` / `chmod --reference=RFILE FILE…`; `-w`, `-rwx`, `-644` are
/// modes.
fn chmod(args: &[Word], sink: &mut Sink<'_>) {
    let mut mode_seen = args.iter().any(|a| a.value.len() >= 5 && a.value.starts_with("--ref"));
    let mut recursive = false;
    let mut plain = false;
    let mut unsure = false;
    let mut skip_next = false;
    for (at, word) in args.iter().enumerate() {
        let v = word.value.as_str();
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if !plain && word.is_literal() && v == "--" {
            plain = true;
            continue;
        }
        if !plain && word.is_literal() && v.starts_with("--") {
            recursive |= v.len() >= 5 && "--recursive".starts_with(v);
            skip_next = v.len() >= 5 && "--reference".starts_with(v);
            continue;
        }
        let is_flags = v.len() > 1 && v.starts_with('-') && v.chars().skip(1).all(|c| "cfvR".contains(c));
        if !plain && word.is_literal() && is_flags {
            recursive |= v.contains('R');
            continue;
        }
        if !mode_seen {
            mode_seen = true;
            unsure |= word.kind != WordKind::Literal;
            continue;
        }
        unsure |= word.kind == WordKind::Dynamic && !plain && super::words::could_start_with_dash(&word.raw);
        let reach = if recursive { Reach::Tree } else { Reach::Path };
        sink.arg(&Arg { word, at, plain }, W, reach);
    }
    if recursive {
        for operand in &mut sink.list {
            operand.reach = Reach::Tree;
        }
    }
    if unsure {
        sink.computed("words computed at run time", W);
    }
}

/// What a table row's operands get instead of the row's access (`sed -i`: read and written).
pub(super) fn operand_access(program: &str, parsed: &Parsed<'_>) -> Option<Access> {
    (matches!(program, "sed" | "gsed") && parsed.has(&["-i", "--in-place"])).then_some(RW)
}

/// The extras of a table row (see the module documentation); `operands` are the file
/// operands left after the first of [`super::file_table::Layout::AfterFirst`].
pub(super) fn extra(program: &str, parsed: &Parsed<'_>, operands: &mut Vec<Arg<'_>>, sink: &mut Sink<'_>) {
    match program {
        "sed" | "gsed" => {
            for (word, skip) in parsed.values(&["-i", "--in-place"]) {
                let suffix = sub_value(word, skip);
                for arg in operands.iter() {
                    let backup = match operand_path(arg.word) {
                        Some(OperandPath::Literal(file)) if !suffix.contains('*') => format!("{file}{suffix}"),
                        Some(OperandPath::Literal(file)) => {
                            let name = last_component(&file);
                            let dir = file.strip_suffix(name).unwrap_or_default();
                            format!("{dir}{}", suffix.replace('*', name))
                        }
                        Some(_) => {
                            sink.computed("a backup file", W);
                            continue;
                        }
                        None => continue,
                    };
                    sink.push(OperandPath::Literal(backup), W, Reach::Path, Access::NONE);
                }
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            operands.retain(|a| !(a.word.is_literal() && is_assignment(&a.word.value)));
            for (option, default) in [("-d", "awkvars.out"), ("-o", "awkprof.out"), ("-p", "awkprof.out")] {
                for opt in parsed.options.iter().filter(|o| o.name == option) {
                    match opt.values.first() {
                        Some((word, skip)) => sink.value(word, *skip, W, Reach::Path),
                        None => sink.push(OperandPath::Literal(default.into()), W, Reach::Path, Access::NONE),
                    }
                }
            }
        }
        "jq" | "gojq" | "jaq" => {
            if let Some(at) =
                parsed.options.iter().find(|o| matches!(o.name.as_str(), "--args" | "--jsonargs")).map(|o| o.at)
            {
                operands.retain(|a| a.at < at);
            }
        }
        "diff" => {
            if let [a, b] = operands.as_slice()
                && let (Some(OperandPath::Literal(x)), Some(OperandPath::Literal(y))) =
                    (operand_path(a.word), operand_path(b.word))
            {
                for (dir, name) in [(&x, &y), (&y, &x)] {
                    let into =
                        OperandPath::Into { dir: dir.clone(), name: Box::new(OperandPath::Literal(name.clone())) };
                    sink.push(into, R, Reach::Path, Access::NONE);
                }
            }
        }
        _ => {}
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The copy family: `SOURCE… DEST`, `-t DIR SOURCE…`, `-T SOURCE DEST`, `ln TARGET`.
pub(super) fn copy(
    program: &str,
    sources: Access,
    recursive: bool,
    parsed: &Parsed<'_>,
    operands: &[Arg<'_>],
    sink: &mut Sink<'_>,
) {
    if program == "install" && parsed.has(&["-d", "--directory"]) {
        for arg in operands {
            sink.arg(arg, W, Reach::Path);
        }
        return;
    }
    let tree = recursive || matches!(program, "mv" | "ln");
    let reach = if tree { Reach::Tree } else { Reach::Path };
    let aliases = program == "cp" && parsed.has(&["-l", "--link", "-s", "--symbolic-link"]);
    let sources_access = if aliases { RW } else { sources };
    let target = parsed.values(&["-t", "--target-directory"]).last().and_then(|(w, skip)| sub_path(w, *skip));
    let (srcs, dest): (&[Arg<'_>], Option<OperandPath>) = match (target, operands) {
        (Some(dir), all) => (all, Some(dir)),
        (None, [only]) if program == "ln" => (std::slice::from_ref(only), Some(OperandPath::Literal(".".into()))),
        (None, [rest @ .., last]) if !rest.is_empty() => (rest, operand_path(last.word)),
        (None, all) => (all, None),
    };
    for arg in srcs {
        sink.arg(arg, sources_access, reach);
    }
    let Some(dest) = dest else {
        return;
    };
    sink.push(dest.clone(), W, reach, Access::NONE);
    let into_dir = !parsed.has(&["-T", "--no-target-directory"]);
    let parents = program == "cp" && parsed.has(&["--parents"]);
    let symbolic = program == "ln" && parsed.has(&["-s", "--symbolic"]);
    for arg in srcs {
        let Some(source) = operand_path(arg.word) else {
            continue;
        };
        if let OperandPath::Literal(dir) = &dest {
            if into_dir {
                let into = match (&source, parents) {
                    (OperandPath::Literal(s), true) if !s.starts_with(['/', '~']) => {
                        OperandPath::Literal(format!("{}/{s}", dir.trim_end_matches('/')))
                    }
                    (_, true) => OperandPath::Computed(format!("{dir}/{}", source.text())),
                    (_, false) => OperandPath::Into { dir: dir.clone(), name: Box::new(source.clone()) },
                };
                sink.push(into, W, reach, Access::NONE);
            }
            if symbolic {
                // A relative target is relative to the link's directory.
                match &source {
                    OperandPath::Literal(t) if t.starts_with(['/', '~']) => {}
                    OperandPath::Literal(t) => {
                        let parent = dir.trim_end_matches('/').rsplit_once('/').map_or(".", |(p, _)| p);
                        let parent = if parent.is_empty() { "/" } else { parent };
                        for base in [parent, dir.as_str()] {
                            let joined = format!("{}/{t}", base.trim_end_matches('/'));
                            sink.push(OperandPath::Literal(joined), sources_access, Reach::Tree, Access::NONE);
                        }
                    }
                    _ => sink.computed("a link target relative to its link", sources_access),
                }
            }
        } else {
            sink.computed("a path inside a computed destination", W);
        }
    }
}
