//! What a simple command runs besides itself: wrappers that run their operands as a command
//! (`env`, `command`, `builtin`, `exec`, `nohup`, `nice`, `time`, `timeout`, `stdbuf`,
//! `setsid`, `busybox`, `coproc`, `sudo`, `doas`, `xargs`, `find -exec`), shells given a `-c` string, `trap`
//! actions, `tee` and `find -fprint` targets, `find -delete` (listed as `rm` on the start
//! paths), and what cannot be seen through (`eval`, `source`, scripts on stdin, computed
//! names).
//!
//! Every command is recorded as written, and the command it wraps is recorded as well, so an
//! allow rule must cover both and a deny rule catches either. A wrapper option that is not
//! known makes the command opaque instead of guessing where the wrapped command starts.

use super::data::{self, Assigned};
use super::words::{Word, WordKind};
use super::{
    MAX_DEPTH, OpaqueReason, ShellAnalysis, SimpleCommand, analyze_into, basename, builtins, operands, syntax,
};

/// Where the command's stdin comes from, as far as the syntax shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stdin {
    /// Whatever the shell's is (possibly a pipe).
    Inherited,
    /// A here-document or here-string: a script for an interpreter.
    Script,
}

/// Shells whose `-c` string is analysed.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "rbash"];

/// Interpreters that run a program read from stdin.
fn is_interpreter(name: &str) -> bool {
    SHELLS.contains(&name)
        || name.starts_with("python")
        || name.starts_with("perl")
        || name.starts_with("ruby")
        || name.starts_with("php")
        || name.starts_with("lua")
        || matches!(name, "node" | "nodejs" | "deno" | "bun" | "tclsh" | "wish" | "Rscript" | "osascript" | "pwsh")
}

/// Option grammar of a wrapper: which options take a value and which are flags.
struct Options {
    /// Short options that take a value (attached or as the next word).
    short_value: &'static str,
    /// Short flags; a flag in `short_rest` takes the rest of the cluster as an optional value.
    short_flags: &'static str,
    /// Short options whose value may only be attached (`-i{}`).
    short_rest: &'static str,
    /// Long options that take a value (`--signal=X` or `--signal X`).
    long_value: &'static [&'static str],
    /// Long flags (also accepted with `=value`).
    long_flags: &'static [&'static str],
    /// Whether `-N` (a number) is an option (`nice -5`).
    numeric: bool,
}

const NO_OPTIONS: Options =
    Options { short_value: "", short_flags: "", short_rest: "", long_value: &[], long_flags: &[], numeric: false };

/// Records a simple command and what it runs. `depth` counts nesting for [`MAX_DEPTH`].
pub(super) fn simple(words: &[Word], depth: usize, stdin: Stdin, out: &mut ShellAnalysis) {
    let Some((name, args)) = words.split_first() else {
        return;
    };
    if depth > MAX_DEPTH {
        out.opaque.push(OpaqueReason::TooDeep);
        return;
    }
    out.commands.push(SimpleCommand { argv: words.iter().map(|w| w.value.clone()).collect() });
    if !name.is_literal() {
        out.opaque.push(OpaqueReason::DynamicCommandName { text: name.value.clone() });
        return;
    }
    let program = basename(&name.value);
    operands::record(program, args, out);
    let inner = |at: Result<usize, OpaqueReason>, out: &mut ShellAnalysis| match at {
        Ok(i) => simple(args.get(i..).unwrap_or_default(), depth + 1, stdin, out),
        Err(reason) => out.opaque.push(reason),
    };
    match program {
        "eval" => out.opaque.push(OpaqueReason::Eval),
        "source" | "." => out.opaque.push(OpaqueReason::Source),
        "trap" => trap(args, depth, out),
        "tee" => tee(args, out),
        "find" => find(args, depth, out),
        "builtin" | "nohup" | "setsid" | "busybox" | "coproc" => inner(first_operand(program, args, &NO_OPTIONS), out),
        "command" => {
            if args.iter().take_while(|a| a.value.starts_with('-')).any(|a| a.value.contains(['v', 'V'])) {
                return; // `command -v NAME` only looks NAME up.
            }
            let options = Options { short_flags: "p", ..NO_OPTIONS };
            inner(first_operand(program, args, &options), out);
        }
        "exec" => {
            let options = Options { short_value: "a", short_flags: "cl", ..NO_OPTIONS };
            inner(first_operand(program, args, &options), out);
        }
        "nice" => {
            let options = Options { short_value: "n", long_value: &["--adjustment"], numeric: true, ..NO_OPTIONS };
            inner(first_operand(program, args, &options), out);
        }
        "time" => {
            let options = Options {
                short_value: "fo",
                short_flags: "pavq",
                long_value: &["--format", "--output"],
                long_flags: &["--portability", "--append", "--verbose", "--quiet"],
                ..NO_OPTIONS
            };
            inner(first_operand(program, args, &options), out);
        }
        "timeout" => {
            let options = Options {
                short_value: "sk",
                short_flags: "v",
                long_value: &["--signal", "--kill-after"],
                long_flags: &["--preserve-status", "--foreground", "--verbose"],
                ..NO_OPTIONS
            };
            // The first operand is the duration.
            inner(first_operand(program, args, &options).map(|i| i + 1), out);
        }
        "stdbuf" => {
            let options = Options { short_value: "ioe", long_value: &["--input", "--output", "--error"], ..NO_OPTIONS };
            inner(first_operand(program, args, &options), out);
        }
        "sudo" | "doas" => {
            let options = Options {
                short_value: "ugCDhprtUTRc",
                short_flags: "AbEeHiKklnPSsVvN",
                long_value: &[
                    "--user",
                    "--group",
                    "--close-from",
                    "--chdir",
                    "--host",
                    "--prompt",
                    "--role",
                    "--type",
                    "--other-user",
                    "--command-timeout",
                    "--chroot",
                ],
                long_flags: &[
                    "--preserve-env",
                    "--login",
                    "--shell",
                    "--non-interactive",
                    "--stdin",
                    "--background",
                    "--edit",
                    "--list",
                    "--validate",
                    "--reset-timestamp",
                    "--remove-timestamp",
                    "--set-home",
                    "--askpass",
                    "--bell",
                    "--preserve-groups",
                ],
                ..NO_OPTIONS
            };
            inner(first_operand(program, args, &options), out);
        }
        "env" => env(args, depth, stdin, out),
        "xargs" => xargs(args, depth, out),
        _ if SHELLS.contains(&program) => shell(program, args, depth, stdin, out),
        _ if is_interpreter(program) => {
            let reads_stdin = stdin == Stdin::Script
                || args.iter().all(|a| a.value.starts_with('-'))
                || args.iter().any(|a| a.is_literal() && is_stdin_path(&a.value));
            if reads_stdin {
                out.opaque.push(OpaqueReason::InterpreterInput { program: program.to_owned() });
            }
        }
        _ => builtins::check(program, args, out),
    }
}

/// A path through which a program reads its stdin (or another descriptor, a device or a
/// process's file): `/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`, anything under `/dev/` or
/// `/proc/`, and a relative `…/stdin` or `fd/N`.
pub(super) fn is_stdin_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let absolute_device = path.starts_with('/') && matches!(parts.first(), Some(&"dev" | &"proc"));
    let named = match parts.as_slice() {
        [.., last] if *last == "stdin" => true,
        [.., "fd", n] => n.chars().all(|c| c.is_ascii_digit()),
        _ => false,
    };
    absolute_device || named
}

/// The index of the first operand after the options, or an error for an option not in `spec`.
fn first_operand(program: &str, args: &[Word], spec: &Options) -> Result<usize, OpaqueReason> {
    let unknown = |option: &str| OpaqueReason::UnknownOption { program: program.to_owned(), option: option.to_owned() };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let v = arg.value.as_str();
        if arg.kind == WordKind::Dynamic {
            return Err(unknown(v));
        }
        if v == "--" {
            return Ok(i + 1);
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let name = format!("--{name}");
            if spec.long_value.contains(&name.as_str()) {
                i += if attached { 1 } else { 2 };
            } else if spec.long_flags.contains(&name.as_str()) {
                i += 1;
            } else {
                return Err(unknown(v));
            }
            continue;
        }
        let Some(cluster) = v.strip_prefix('-').filter(|c| !c.is_empty()) else {
            return Ok(i);
        };
        if spec.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
            i += 1;
            continue;
        }
        let mut step = 1;
        for (at, c) in cluster.char_indices() {
            if spec.short_value.contains(c) {
                if at + c.len_utf8() == cluster.len() {
                    step = 2;
                }
                break;
            } else if spec.short_rest.contains(c) {
                break;
            } else if !spec.short_flags.contains(c) {
                return Err(unknown(v));
            }
        }
        i += step;
    }
    Ok(i)
}

/// `env [OPTIONS] [NAME=value…] [COMMAND…]`.
fn env(args: &[Word], depth: usize, stdin: Stdin, out: &mut ShellAnalysis) {
    if args.iter().any(|a| a.value == "-S" || a.value.starts_with("--split-string") || split_string_cluster(&a.value)) {
        out.opaque.push(OpaqueReason::UnknownOption { program: "env".into(), option: "-S".into() });
        return;
    }
    let options = Options {
        short_value: "uC",
        short_flags: "i0v",
        long_value: &["--unset", "--chdir"],
        long_flags: &["--ignore-environment", "--null", "--debug"],
        ..NO_OPTIONS
    };
    // A lone `-` means `-i`.
    let start = args.iter().take_while(|a| a.value == "-").count();
    let rest = args.get(start..).unwrap_or_default();
    match first_operand("env", rest, &options) {
        Ok(mut i) => {
            // GNU env takes every word holding `=` before the command as an assignment.
            while let Some(w) = rest.get(i).filter(|w| w.value.contains('=')) {
                let name = w.value.split('=').next().unwrap_or_default();
                if w.kind == WordKind::Dynamic || !is_assignment(&w.value) {
                    // `BASH_FUNC_ls%%=() { …; }` defines a function in a child bash.
                    out.opaque.push(OpaqueReason::CodeInData { text: w.value.clone() });
                } else {
                    let value = w.value.get(name.len() + 1..).unwrap_or_default();
                    data::assigned(name, Assigned::Literal(value), out);
                }
                i += 1;
            }
            simple(rest.get(i..).unwrap_or_default(), depth + 1, stdin, out);
        }
        Err(reason) => out.opaque.push(reason),
    }
}

fn split_string_cluster(v: &str) -> bool {
    v.strip_prefix('-').is_some_and(|c| !c.starts_with('-') && c.contains('S'))
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// `xargs [OPTIONS] [COMMAND…]`; the command defaults to `echo`.
fn xargs(args: &[Word], depth: usize, out: &mut ShellAnalysis) {
    let options = Options {
        short_value: "aEdILnPsS",
        short_flags: "0oprtx",
        short_rest: "eil",
        long_value: &["--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"],
        long_flags: &[
            "--null",
            "--no-run-if-empty",
            "--interactive",
            "--verbose",
            "--exit",
            "--open-tty",
            "--show-limits",
            "--eof",
            "--replace",
            "--max-lines",
        ],
        ..NO_OPTIONS
    };
    match first_operand("xargs", args, &options) {
        Ok(i) if i >= args.len() => simple(&[Word::literal("echo")], depth + 1, Stdin::Inherited, out),
        Ok(i) => {
            // With `-I R` (`-i`, `--replace`), every `R` in the command becomes an input line:
            // a word holding it is computed at run time (`xargs -I{} sh -c '{}'`).
            let mut command = args.get(i..).unwrap_or_default().to_vec();
            let replace = replace_string(args.get(..i).unwrap_or_default());
            if let Some(replace) = &replace {
                for word in command.iter_mut().filter(|w| w.value.contains(replace.as_str())) {
                    word.kind = WordKind::Dynamic;
                }
            }
            simple(&command, depth + 1, Stdin::Inherited, out);
            if replace.is_none() {
                // The input's words are appended to the command as more operands.
                operands::appended(&command, out);
            }
        }
        Err(reason) => out.opaque.push(reason),
    }
}

/// The replace string of xargs options (`-I R`, `-IR`, `-i[R]`, `--replace[=R]`; `{}` by
/// default).
fn replace_string(options: &[Word]) -> Option<String> {
    let mut found = None;
    for (i, option) in options.iter().enumerate() {
        let v = option.value.as_str();
        if v == "--replace" {
            found = Some("{}".to_owned());
        } else if let Some(r) = v.strip_prefix("--replace=") {
            found = Some(r.to_owned());
        } else if v.starts_with('-') && !v.starts_with("--") {
            let cluster = v.get(1..).unwrap_or_default();
            if let Some(at) = cluster.find('I') {
                let rest = cluster.get(at + 1..).unwrap_or_default();
                found = Some(if rest.is_empty() { options.get(i + 1).map(|w| w.value.clone())? } else { rest.into() });
            } else if let Some(at) = cluster.find('i') {
                let rest = cluster.get(at + 1..).unwrap_or_default();
                found = Some(if rest.is_empty() { "{}".to_owned() } else { rest.to_owned() });
            }
        }
    }
    found.filter(|r| !r.is_empty())
}

/// `sh -c STRING`: the string is analysed as a command. A shell reads its commands from
/// stdin with neither `-c` nor a script operand, with `-s`, with a script operand that is a
/// path to its stdin (`/dev/stdin`, `/dev/fd/0`, [`is_stdin_path`]) and, as far as the
/// analysis can tell, whenever a here-document or here-string feeds it; a script operand
/// computed at run time (`bash <(…)`, `bash "$F"`) and `--rcfile`/`--init-file` (a file it
/// sources) cannot be seen through either.
fn shell(program: &str, args: &[Word], depth: usize, stdin: Stdin, out: &mut ShellAnalysis) {
    let mut i = 0;
    let mut command_string = false;
    let mut reads_stdin = stdin == Stdin::Script;
    while let Some(arg) = args.get(i) {
        let v = arg.value.as_str();
        if arg.kind == WordKind::Dynamic {
            out.opaque.push(OpaqueReason::DynamicScript { program: program.to_owned() });
            return;
        }
        if v == "--" || v == "-" {
            i += 1;
            break;
        }
        if v.starts_with("--") {
            let name = v.split('=').next().unwrap_or(v);
            if matches!(name, "--rcfile" | "--init-file" | "--init-command") {
                out.opaque.push(OpaqueReason::Source);
                return;
            }
            i += 1;
            continue;
        }
        if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
            let cluster = v.get(1..).unwrap_or_default();
            if v.starts_with('-') && cluster.contains('c') {
                command_string = true;
            }
            reads_stdin |= v.starts_with('-') && cluster.contains('s');
            if program == "fish" && cluster.contains('C') {
                out.opaque.push(OpaqueReason::DynamicScript { program: program.to_owned() });
                return;
            }
            i += if cluster.contains(['o', 'O']) { 2 } else { 1 };
            continue;
        }
        break;
    }
    match (command_string, args.get(i)) {
        (true, Some(script)) if script.kind != WordKind::Dynamic => analyze_into(&script.value, depth + 1, out),
        (true, _) => out.opaque.push(OpaqueReason::DynamicScript { program: program.to_owned() }),
        (false, None) => out.opaque.push(OpaqueReason::InterpreterInput { program: program.to_owned() }),
        (false, Some(script)) if reads_stdin || is_stdin_path(&script.value) => {
            out.opaque.push(OpaqueReason::InterpreterInput { program: program.to_owned() });
        }
        // A script file: what it does is decided at run time (see the documented limits).
        (false, Some(_)) => {}
    }
}

/// `trap ACTION SIGNAL…`: the action is a command string.
fn trap(args: &[Word], depth: usize, out: &mut ShellAnalysis) {
    let Some(action) = args.iter().find(|a| !a.value.starts_with('-') || a.value == "-") else {
        return;
    };
    if action.value == "-" || args.len() < 2 {
        return;
    }
    match action.kind {
        WordKind::Literal | WordKind::Pattern => analyze_into(&action.value, depth + 1, out),
        WordKind::Dynamic => out.opaque.push(OpaqueReason::DynamicScript { program: "trap".into() }),
    }
}

/// `tee [OPTIONS] FILE…`: every operand is written.
fn tee(args: &[Word], out: &mut ShellAnalysis) {
    let mut options_done = false;
    for arg in args {
        if !options_done && arg.value == "--" {
            options_done = true;
        } else if options_done || !arg.value.starts_with('-') || arg.value == "-" {
            syntax::write_target(arg.clone(), "tee", out);
        }
    }
}

/// `find`: `-exec`/`-execdir`/`-ok`/`-okdir … ;` run a command, `-delete` deletes (listed as
/// `rm` on the start paths), `-fprint`/`-fprint0`/`-fls`/`-fprintf FILE` write a file.
fn find(args: &[Word], depth: usize, out: &mut ShellAnalysis) {
    let mut i = 0;
    while args.get(i).is_some_and(|a| matches!(a.value.as_str(), "-H" | "-L" | "-P") || a.value.starts_with("-O")) {
        i += 1;
    }
    let start: Vec<Word> = args
        .iter()
        .skip(i)
        .take_while(|a| !a.value.starts_with('-') && !matches!(a.value.as_str(), "(" | "!" | ")" | ","))
        .cloned()
        .collect();
    while let Some(arg) = args.get(i) {
        match arg.value.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let rest = args.get(i + 1..).unwrap_or_default();
                // `;` ends the command anywhere; `+` only right after `{}` (GNU find).
                let end = rest
                    .iter()
                    .enumerate()
                    .position(|(k, a)| {
                        a.value == ";" || (a.value == "+" && k > 0 && rest.get(k - 1).is_some_and(|p| p.value == "{}"))
                    })
                    .unwrap_or(rest.len());
                // Each `{}` becomes a path find found: computed at run time.
                let mut command = rest.get(..end).unwrap_or_default().to_vec();
                for word in command.iter_mut().skip(1).filter(|w| w.value.contains("{}")) {
                    word.kind = WordKind::Dynamic;
                }
                simple(&command, depth + 1, Stdin::Inherited, out);
                i += end + 2;
            }
            "-delete" => {
                let mut words = vec![Word::literal("rm")];
                words.extend(start.iter().cloned());
                out.commands.push(SimpleCommand { argv: words.iter().map(|w| w.value.clone()).collect() });
                let mut recursive = vec![Word::literal("-r")];
                recursive.extend(if start.is_empty() { vec![Word::literal(".")] } else { start.clone() });
                operands::record("rm", &recursive, out);
                i += 1;
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let Some(target) = args.get(i + 1) {
                    syntax::write_target(target.clone(), "find", out);
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
}
