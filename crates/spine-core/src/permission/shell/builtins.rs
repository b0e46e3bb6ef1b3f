//! Bash builtins that hide a command from the words the rules see: they run a string
//! (`compgen`, `complete`, `mapfile -C`, `fc`, `bind -x`), change what a command name runs
//! (`alias NAME=…`, `shopt -s expand_aliases`, `hash -p`, `enable -f`), or take variable
//! names whose subscripts bash evaluates (`read`, `mapfile`, `printf -v`, `getopts`,
//! `wait -p`, `test -v`, `let`, `declare`/`typeset`/`local`/`export`/`readonly`, `unset`).
//!
//! Contract of [`check`]: the first two kinds make the analysis opaque; for the third, every
//! name argument goes through [`data::name_argument`] (opaque when computed at run time or
//! when its subscript holds an expansion), every variable a builtin fills from input is
//! tainted ([`data::assigned`]), `let` arguments are arithmetic texts, and `declare -n`
//! (a nameref: its value is a name evaluated on every use) is opaque.

use super::data::{self, Assigned};
use super::words::{Word, WordKind};
use super::{OpaqueReason, ShellAnalysis};

/// Checks the arguments of `program` when it is one of the builtins above.
pub(super) fn check(program: &str, args: &[Word], out: &mut ShellAnalysis) {
    match program {
        "compgen" | "complete" | "fc" => out.opaque.push(OpaqueReason::RunsString { program: program.to_owned() }),
        "bind" if has_option(args, 'x') => out.opaque.push(OpaqueReason::RunsString { program: program.into() }),
        "hash" if has_option(args, 'p') => rebinding(program, out),
        "enable" if has_option(args, 'f') => rebinding(program, out),
        "alias" if args.iter().any(|a| a.kind == WordKind::Dynamic || a.value.contains('=')) => rebinding(program, out),
        "shopt"
            if has_option(args, 's')
                && args.iter().any(|a| a.kind == WordKind::Dynamic || a.value == "expand_aliases") =>
        {
            rebinding("shopt -s expand_aliases", out)
        }
        "mapfile" | "readarray" => {
            let parsed = options(args, "dnOsuCc");
            if parsed.flags.contains('C') {
                out.opaque.push(OpaqueReason::RunsString { program: format!("{program} -C") });
            }
            fill(parsed.operands.first().copied(), out);
        }
        "read" => {
            let parsed = options(args, "adinNptu");
            fill(parsed.value('a'), out);
            for name in parsed.operands {
                fill(Some(name), out);
            }
        }
        "printf" => {
            computed_option(args, out);
            fill(options(args, "v").value('v'), out);
        }
        "getopts" => fill(args.get(1), out),
        "wait" => {
            computed_option(args, out);
            if let Some(name) = options(args, "p").value('p') {
                data::name_argument(name, out);
            }
        }
        "test" | "[" => {
            // `test` reads its operators after expansion: a computed word may be `-v`.
            for pair in args.windows(2) {
                if let [op, name] = pair
                    && (matches!(op.value.as_str(), "-v" | "-R") || op.kind == WordKind::Dynamic)
                {
                    data::name_argument(name, out);
                }
            }
        }
        "let" => {
            for arg in args {
                data::arithmetic(&arg.value, out);
            }
        }
        "declare" | "typeset" | "local" | "export" | "readonly" | "unset" => declaration(program, args, out),
        _ => {}
    }
}

fn rebinding(program: &str, out: &mut ShellAnalysis) {
    out.opaque.push(OpaqueReason::Rebinding { program: program.to_owned() });
}

/// A variable a builtin fills from its input: checked as a name, then tainted.
fn fill(name: Option<&Word>, out: &mut ShellAnalysis) {
    if let Some(name) = name.and_then(|n| data::name_argument(n, out)) {
        data::assigned(&name, Assigned::Unknown, out);
    }
}

/// A computed word where a builtin reads its options may expand to `-v` (or `-p`): the word
/// after it is then checked as a name argument.
fn computed_option(args: &[Word], out: &mut ShellAnalysis) {
    for (i, arg) in args.iter().enumerate() {
        match arg.kind {
            WordKind::Dynamic => {
                if let Some(next) = args.get(i + 1) {
                    data::name_argument(next, out);
                }
                return;
            }
            _ if arg.value.starts_with('-') && arg.value != "--" => {}
            _ => return,
        }
    }
}

/// Whether an option cluster before the operands holds `flag` (`-x`, `-sx`).
fn has_option(args: &[Word], flag: char) -> bool {
    args.iter()
        .take_while(|a| a.value != "--")
        .any(|a| a.kind != WordKind::Literal || (a.value.starts_with('-') && a.value.contains(flag)))
}

/// The options and operands of a builtin whose options in `valued` take a value.
struct Parsed<'a> {
    /// Every option letter seen.
    flags: String,
    /// The value of each valued option, by letter.
    values: Vec<(char, Word)>,
    /// The words after the options.
    operands: Vec<&'a Word>,
}

impl<'a> Parsed<'a> {
    fn value(&self, flag: char) -> Option<&Word> {
        self.values.iter().find(|(f, _)| *f == flag).map(|(_, w)| w)
    }
}

/// Parses `-ab VALUE`/`-bVALUE` options; an attached value is returned as a word of its own.
fn options<'a>(args: &'a [Word], valued: &str) -> Parsed<'a> {
    let mut parsed = Parsed { flags: String::new(), values: Vec::new(), operands: Vec::new() };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg.value == "--" {
            break;
        }
        let Some(cluster) = arg.value.strip_prefix('-').filter(|c| !c.is_empty() && arg.kind != WordKind::Dynamic)
        else {
            // The first operand (a computed word is an operand too: `read "$n"`).
            i -= 1;
            break;
        };
        for (at, c) in cluster.char_indices() {
            parsed.flags.push(c);
            if valued.contains(c) {
                let rest = cluster.get(at + c.len_utf8()..).unwrap_or_default();
                if rest.is_empty() {
                    if let Some(value) = args.get(i) {
                        parsed.values.push((c, value.clone()));
                        i += 1;
                    }
                } else {
                    parsed.values.push((c, Word { value: rest.to_owned(), kind: arg.kind, raw: rest.to_owned() }));
                }
                break;
            }
        }
    }
    parsed.operands.extend(args.get(i..).unwrap_or_default());
    parsed
}

/// `declare`, `typeset`, `local`, `export`, `readonly` and `unset` words (options, names,
/// `NAME=value`). The tree walk calls this with the words that are not assignment nodes.
pub(super) fn declaration(program: &str, args: &[Word], out: &mut ShellAnalysis) {
    let declares = matches!(program, "declare" | "typeset" | "local");
    let mut integer = false;
    let mut options_done = false;
    for arg in args {
        if !options_done && arg.kind == WordKind::Literal && arg.value == "--" {
            options_done = true;
            continue;
        }
        if !options_done && arg.kind == WordKind::Literal && arg.value.starts_with('-') && arg.value.len() > 1 {
            if declares && arg.value.contains('n') {
                out.opaque.push(OpaqueReason::CodeInData { text: format!("{program} {}", arg.value) });
            }
            integer |= declares && arg.value.contains('i');
            continue;
        }
        if !options_done && arg.kind == WordKind::Literal && arg.value.starts_with('+') {
            continue;
        }
        let Some((name, value)) = split_assignment(arg, program != "unset", out) else {
            continue;
        };
        if integer {
            data::integer(&name, out);
        }
        if let Some(value) = value {
            data::assigned(&name, value, out);
        }
    }
}

/// `NAME`, `NAME[i]` or `NAME=value` of a declaration word: the checked name and, for an
/// assignment, the value. A word whose name part is computed at run time is opaque.
fn split_assignment<'w>(
    arg: &'w Word,
    assigns: bool,
    out: &mut ShellAnalysis,
) -> Option<(String, Option<Assigned<'w>>)> {
    let equals = if assigns { name_end(&arg.value) } else { None };
    let Some(at) = equals else {
        return data::name_argument(arg, out).map(|n| (n, None));
    };
    let name_part = arg.value.get(..at).unwrap_or_default().trim_end_matches('+');
    let value = match arg.kind {
        // The source text: the name part must hold no expansion.
        WordKind::Dynamic if name_part.contains(['$', '`']) => {
            out.opaque.push(OpaqueReason::CodeInData { text: arg.value.clone() });
            return None;
        }
        WordKind::Dynamic => Assigned::Unknown,
        WordKind::Literal | WordKind::Pattern => Assigned::Literal(arg.value.get(at + 1..).unwrap_or_default()),
    };
    let (unquoted, _) = super::words::unquote(name_part);
    let name = data::name_argument(&Word { raw: unquoted.clone(), value: unquoted, kind: WordKind::Literal }, out)?;
    Some((name, Some(value)))
}

/// The index of the `=` that ends a `NAME` or `NAME[…]` prefix (after quote characters).
fn name_end(text: &str) -> Option<usize> {
    let mut level = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '[' => level += 1,
            ']' => level = level.saturating_sub(1),
            '=' if level == 0 => return Some(i),
            _ => {}
        }
    }
    None
}
