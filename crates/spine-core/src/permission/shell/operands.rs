//! The file operands of one simple command: its words read with the option grammar of its
//! row in [`super::file_table`] (or by a function of [`super::special`]).
//!
//! Contract of [`record`] (called for every simple command the analysis lists, wrapped ones
//! included):
//! - options are parsed as GNU `getopt_long` parses them (see the table's documentation); the
//!   value of an option that names a file is an operand with that option's access;
//! - each operand becomes a [`FileOperand`] with the access its position gives, `Tree` reach
//!   when a recursive option is given; `-` (stdin) and process substitutions are no files;
//! - a word whose meaning cannot be settled before the command runs — an expansion that may
//!   split into several words or start with `-` (so become an option), in any position — gives
//!   the command an operand computed at run time with everything the command may do
//!   ([`Spec::can`]); a glob in a position that is no file (`grep a* f`, `head -n * f`) is
//!   an operand too, since its matches shift into file positions;
//! - the operands POSIX argument order would add (options end at the first operand, as under
//!   `POSIXLY_CORRECT`) are kept aside for [`super::files::finish`].

use super::file_table::{self, Layout, Spec};
use super::files::{
    Access, FileOperand, OperandPath, Reach, is_process_substitution, literal_path, operand_path, pattern_path,
};
use super::words::{Word, WordKind, could_start_with_dash, marked, single_field};
use super::{ShellAnalysis, basename, scripts, special};

/// One option as parsed: its canonical name (`-o`, `--output`) and its values.
#[derive(Debug)]
pub(super) struct Opt<'w> {
    /// `-x` or the full long name.
    pub name: String,
    /// The values, each a word and how many characters of it to skip (`-ofile`: 2).
    pub values: Vec<(&'w Word, usize)>,
    /// Index of the option's word.
    pub at: usize,
}

/// One operand.
#[derive(Debug, Clone, Copy)]
pub(super) struct Arg<'w> {
    /// The word.
    pub word: &'w Word,
    /// Index of the word.
    pub at: usize,
    /// After `--` (or after the first operand in POSIX order): it cannot be an option.
    pub plain: bool,
}

/// A command's words read with its grammar.
#[derive(Debug, Default)]
pub(super) struct Parsed<'w> {
    /// The options in order.
    pub options: Vec<Opt<'w>>,
    /// The operands in order.
    pub operands: Vec<Arg<'w>>,
    /// A word may be an option or more words than seen (see the module contract).
    pub unsure: bool,
    /// Globs in positions that are no file.
    pub shifting: Vec<&'w Word>,
}

impl<'w> Parsed<'w> {
    /// Whether any of `names` was given.
    pub fn has(&self, names: &[&str]) -> bool {
        self.options.iter().any(|o| names.contains(&o.name.as_str()))
    }

    /// The values of the options named `names`, in order.
    pub fn values(&self, names: &[&str]) -> Vec<(&'w Word, usize)> {
        self.options
            .iter()
            .filter(|o| names.contains(&o.name.as_str()))
            .flat_map(|o| o.values.iter().copied())
            .collect()
    }
}

/// Records the file operands of `program` (a basename) run with `args`.
pub(super) fn record(program: &str, args: &[Word], out: &mut ShellAnalysis) {
    if special::record(program, args, out) {
        return;
    }
    let Some(spec) = file_table::spec(program) else {
        return;
    };
    let gnu = operands(spec, program, args, false);
    let posix = operands(spec, program, args, true);
    for operand in gnu.iter().cloned() {
        push_operand(out, operand);
    }
    for operand in posix {
        if !gnu.contains(&operand) && !out.pending.posix_only.contains(&operand) {
            out.pending.posix_only.push(operand);
        }
    }
}

/// Records that `command` gets more operands at run time (the words `xargs` appends): an
/// operand computed at run time with everything the command may do.
pub(super) fn appended(command: &[Word], out: &mut ShellAnalysis) {
    let Some(name) = command.first().filter(|w| w.is_literal()) else {
        return;
    };
    let program = basename(&name.value);
    let can = match file_table::spec(program) {
        Some(spec) => spec.can,
        None if special::NAMES.contains(&program) => Access::READ_WRITE,
        None => return,
    };
    let path = OperandPath::Computed("(arguments xargs appends)".into());
    push_operand(
        out,
        FileOperand { program: program.to_owned(), path, access: can, reach: Reach::Path, as_option: Access::NONE },
    );
}

fn push_operand(out: &mut ShellAnalysis, operand: FileOperand) {
    if !out.files.contains(&operand) {
        out.files.push(operand);
    }
}

/// The operands of a table command, in GNU or POSIX argument order.
fn operands(spec: &Spec, program: &str, args: &[Word], posix: bool) -> Vec<FileOperand> {
    let parsed = parse(spec, args, posix);
    let mut sink = Sink { program, can: spec.can, list: Vec::new() };
    let recursive = parsed.has(spec.recursive) || recursive_extra(program, &parsed);
    let reach = if recursive { Reach::Tree } else { Reach::Path };
    for (option, access) in spec.files {
        for opt in parsed.options.iter().filter(|o| o.name == *option) {
            // The file is the last value (`jq --slurpfile NAME FILE`).
            if let Some((word, skip)) = opt.values.last() {
                sink.value(word, *skip, *access, Reach::Path);
            }
        }
    }
    let mut operands: Vec<Arg<'_>> = parsed.operands.clone();
    let first_is_file = !matches!(spec.layout, Layout::AfterFirst(_)) || parsed.has(spec.instead_of_first);
    if !first_is_file && !operands.is_empty() {
        let first = operands.remove(0);
        if first.word.kind == WordKind::Pattern {
            sink.shift(first.word);
        }
        scripts::check_first(program, first.word, &parsed, &mut sink);
    }
    scripts::check_options(program, &parsed, &mut sink);
    special::extra(program, &parsed, &mut operands, &mut sink);
    match spec.layout {
        Layout::All(access) | Layout::AfterFirst(access) => {
            let access = special::operand_access(program, &parsed).unwrap_or(access);
            let reach = if program == "rg" { Reach::Tree } else { reach };
            if operands.is_empty() && (program == "rg" || (program.ends_with("grep") && recursive)) {
                sink.push(OperandPath::Literal(".".into()), access, Reach::Tree, Access::NONE);
            }
            for arg in &operands {
                sink.arg(arg, access, reach);
            }
        }
        Layout::InputOutput => {
            for (i, arg) in operands.iter().enumerate() {
                sink.arg(arg, if i == 1 { Access::WRITE } else { Access::READ }, reach);
            }
        }
        Layout::Copy { sources } => special::copy(program, sources, recursive, &parsed, &operands, &mut sink),
    }
    if parsed.has(spec.runs) {
        sink.computed("a program it runs", Access::READ_WRITE);
    }
    if parsed.has(spec.lists) {
        sink.computed("files listed in a file", Access::READ);
    }
    for word in &parsed.shifting {
        sink.shift(word);
    }
    if parsed.unsure {
        sink.computed("words computed at run time", spec.can);
    }
    sink.list
}

/// `grep -d recurse`, `grep --directories=recurse`.
fn recursive_extra(program: &str, parsed: &Parsed<'_>) -> bool {
    program.ends_with("grep")
        && parsed.values(&["-d", "--directories"]).iter().any(|(w, skip)| sub_value(w, *skip) == "recurse")
}

/// The text of a value (`recurse` of `--directories=recurse`).
pub(super) fn sub_value(word: &Word, skip: usize) -> String {
    word.value.chars().skip(skip).collect()
}

/// Collects the operands of one command.
pub(super) struct Sink<'p> {
    /// The program.
    pub program: &'p str,
    /// What it may do with any file.
    pub can: Access,
    /// The operands.
    pub list: Vec<FileOperand>,
}

impl Sink<'_> {
    /// Records a path.
    pub fn push(&mut self, path: OperandPath, access: Access, reach: Reach, as_option: Access) {
        let operand = FileOperand { program: self.program.to_owned(), path, access, reach, as_option };
        if !self.list.contains(&operand) {
            self.list.push(operand);
        }
    }

    /// Records an operand word.
    pub fn arg(&mut self, arg: &Arg<'_>, access: Access, reach: Reach) {
        if let Some(path) = operand_path(arg.word) {
            let as_option = if arg.plain { Access::NONE } else { self.can };
            self.push(path, access, reach, as_option);
        }
    }

    /// Records the value of an option (`skip` characters into its word).
    pub fn value(&mut self, word: &Word, skip: usize, access: Access, reach: Reach) {
        if let Some(path) = sub_path(word, skip) {
            self.push(path, access, reach, Access::NONE);
        }
    }

    /// Records a glob in a position that is no file.
    pub fn shift(&mut self, word: &Word) {
        if let Some(path) = operand_path(word) {
            self.push(path, self.can, Reach::Path, self.can);
        }
    }

    /// Records an operand computed at run time.
    pub fn computed(&mut self, why: &str, access: Access) {
        self.push(OperandPath::Computed(format!("({why})")), access, Reach::Path, Access::NONE);
    }
}

/// The path of a value that starts `skip` characters into its word (`-ofile`, `--out=file`,
/// `of=file`).
pub(super) fn sub_path(word: &Word, skip: usize) -> Option<OperandPath> {
    if skip == 0 {
        return operand_path(word);
    }
    match word.kind {
        WordKind::Dynamic => Some(OperandPath::Computed(word.value.clone())),
        WordKind::Literal | WordKind::Pattern => {
            let chars: Vec<(char, bool)> = marked(&word.raw).into_iter().skip(skip).collect();
            let glob = chars.iter().any(|&(c, quoted)| !quoted && matches!(c, '*' | '?' | '[' | '{'));
            if glob {
                Some(pattern_path(chars))
            } else {
                let text: String = chars.iter().map(|(c, _)| *c).collect();
                (!text.is_empty() && text != "-").then(|| literal_path(&text, &chars))
            }
        }
    }
}

/// Parses `args` with the grammar of `spec` (see the table's documentation). With `posix`,
/// options end at the first operand.
pub(super) fn parse<'w>(spec: &Spec, args: &'w [Word], posix: bool) -> Parsed<'w> {
    let mut parsed = Parsed::default();
    let mut plain = false;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let at = i;
        i += 1;
        let v = word.value.as_str();
        if plain || word.kind != WordKind::Literal || v == "-" || !v.starts_with('-') {
            parsed.unsure |= match word.kind {
                WordKind::Dynamic if is_process_substitution(word) => false,
                WordKind::Dynamic => !single_field(&word.raw) || (!plain && could_start_with_dash(&word.raw)),
                WordKind::Pattern => !plain && v.starts_with('-'),
                WordKind::Literal => false,
            };
            parsed.operands.push(Arg { word, at, plain });
            plain |= posix;
            continue;
        }
        if v == "--" {
            plain = true;
            continue;
        }
        let mut take = |parsed: &mut Parsed<'w>| {
            let next = args.get(i);
            if let Some(next) = next {
                i += 1;
                note_value(next, parsed);
            }
            next
        };
        if let Some(long) = v.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let Some((canonical, kind)) = resolve(spec, name) else {
                continue;
            };
            let mut values = Vec::new();
            match kind {
                Takes::Value if attached => values.push((word, name.chars().count() + 3)),
                Takes::Value => values.extend(take(&mut parsed).map(|w| (w, 0))),
                Takes::Two => {
                    values.extend(take(&mut parsed).map(|w| (w, 0)));
                    values.extend(take(&mut parsed).map(|w| (w, 0)));
                }
                Takes::Optional if attached => values.push((word, name.chars().count() + 3)),
                Takes::Optional | Takes::Flag => {}
            }
            parsed.options.push(Opt { name: canonical.to_owned(), values, at });
            continue;
        }
        let cluster: Vec<char> = v.chars().skip(1).collect();
        if spec.numeric && cluster.iter().all(char::is_ascii_digit) {
            parsed.options.push(Opt { name: "-N".into(), values: Vec::new(), at });
            continue;
        }
        for (k, c) in cluster.iter().enumerate() {
            let rest = cluster.len() - k - 1;
            let mut values = Vec::new();
            let last = if spec.short_value.contains(*c) {
                if rest > 0 {
                    values.push((word, k + 2));
                } else {
                    values.extend(take(&mut parsed).map(|w| (w, 0)));
                }
                true
            } else if spec.short_optional.contains(*c) {
                if rest > 0 {
                    values.push((word, k + 2));
                }
                true
            } else {
                false
            };
            parsed.options.push(Opt { name: format!("-{c}"), values, at });
            if last {
                break;
            }
        }
    }
    parsed
}

/// An option value taken from its own word: a glob there may shift into file positions, an
/// expansion may split.
fn note_value<'w>(word: &'w Word, parsed: &mut Parsed<'w>) {
    match word.kind {
        WordKind::Pattern => parsed.shifting.push(word),
        WordKind::Dynamic => parsed.unsure |= !single_field(&word.raw),
        WordKind::Literal => {}
    }
}

#[derive(Debug, Clone, Copy)]
enum Takes {
    Flag,
    Value,
    Optional,
    Two,
}

/// A long option's canonical name and what it takes: an exact name, or the one name it
/// abbreviates. Unknown and ambiguous names are `None` (a flag, or an error of the program).
fn resolve(spec: &Spec, name: &str) -> Option<(&'static str, Takes)> {
    let lists: [(&[&'static str], Takes); 4] = [
        (spec.long_value, Takes::Value),
        (spec.long_optional, Takes::Optional),
        (spec.long_two, Takes::Two),
        (spec.long_flags, Takes::Flag),
    ];
    let long = format!("--{name}");
    let mut found = None;
    let mut count = 0;
    for (list, takes) in lists {
        for candidate in list {
            if *candidate == long {
                return Some((candidate, takes));
            }
            if candidate.starts_with(&long) {
                count += 1;
                found = Some((*candidate, takes));
            }
        }
    }
    // Names in `files`, `recursive`… are in one of the lists above; a name only there is exact.
    (count == 1).then_some(found).flatten()
}

/// `basename` of a path's text, for [`OperandPath::Into`] and reasons.
pub(super) fn last_component(text: &str) -> &str {
    basename(text.trim_end_matches('/'))
}
