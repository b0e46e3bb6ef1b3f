//! The read-only commands whose words a table row cannot say alone ([`super::harmless`]):
//!
//! - `printf FORMAT [ARG…]`: no option (`-v NAME` assigns a variable), a literal format;
//! - `cd [-L|-P] DIR`: one literal directory, read (it must be inside the workspace); `cd`
//!   alone (home) and `cd -` are not harmless;
//! - `env` with no command and no assignment (it prints the environment; `-0` allowed);
//! - `find [-H|-P] [START…] [EXPRESSION]`: the start points are read as trees (`.` when there
//!   are none); the expression may only hold tests, operators and the printing actions
//!   (`-print`, `-print0`, `-printf`, `-ls`, `-prune`, `-quit`): `-exec`, `-execdir`, `-ok`,
//!   `-okdir`, `-delete`, `-fprint*`, `-fls`, `-L`/`-follow` and every other primary are not;
//! - `git [--no-pager|-P|--no-optional-locks|--literal-pathspecs] status|log|diff|show|branch
//!   …`: `-C`, `-c`, `--config-env`, `--exec-path`, `--git-dir`, `--work-tree` and every other
//!   global option are not harmless (where git looks for its repository, and whether that is
//!   the project's own, is `harmless_git.rs`'s to check); `log`/`diff`/`show`/`status` refuse
//!   `--output` (and its abbreviations), `-O<orderfile>` and `--pathspec-from-file`; an
//!   operand that is absolute, starts with `~` or has a `..` component, every operand after
//!   `--no-index`, is a file read; `branch` only lists: its allowed options are listing ones,
//!   and operands (patterns) need `--list`/`-l`.

use super::harmless::{PathArg, is_dynamic};

/// The files a special command reads, or why it is not harmless.
pub(super) fn paths(program: &str, args: &[String]) -> Result<Vec<PathArg>, String> {
    if let Some(word) = args.iter().find(|w| is_dynamic(w)) {
        return Err(format!("`{word}` is known only at run time"));
    }
    match program {
        "printf" => printf(args),
        "cd" => cd(args),
        "env" => env(args),
        "find" => find(args),
        "git" => git(args),
        other => Err(format!("`{other}` is not in the list of read-only commands")),
    }
}

fn printf(args: &[String]) -> Result<Vec<PathArg>, String> {
    match args.first().map(String::as_str) {
        None => Err("printf needs a format".to_owned()),
        Some("--") => Ok(Vec::new()),
        Some(format) if format.starts_with('-') => Err(format!("option `{format}` of printf is not harmless")),
        Some(_) => Ok(Vec::new()),
    }
}

fn cd(args: &[String]) -> Result<Vec<PathArg>, String> {
    let operands: Vec<&str> = args.iter().map(String::as_str).skip_while(|a| matches!(*a, "-L" | "-P")).collect();
    match operands.as_slice() {
        [dir] if !dir.starts_with('-') => Ok(vec![PathArg::new(dir, false)]),
        ["--", dir] if *dir != "-" => Ok(vec![PathArg::new(dir, false)]),
        _ => Err("cd needs one directory (not `-`, not home)".to_owned()),
    }
}

fn env(args: &[String]) -> Result<Vec<PathArg>, String> {
    match args.iter().find(|a| !matches!(a.as_str(), "-0" | "--null")) {
        None => Ok(Vec::new()),
        Some(word) => Err(format!("env with `{word}` sets variables or runs a command")),
    }
}

/// Primaries that take no argument.
const FIND_NULLARY: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-true",
    "-false",
    "-not",
    "-a",
    "-and",
    "-o",
    "-or",
    "-depth",
    "-empty",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-xdev",
    "-mount",
    "-noleaf",
    "-daystart",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-nowarn",
    "-warn",
    "(",
    ")",
    "!",
    ",",
];

/// Primaries that take one argument that is no file.
const FIND_UNARY: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-regextype",
    "-type",
    "-xtype",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-maxdepth",
    "-mindepth",
    "-lname",
    "-ilname",
    "-used",
    "-printf",
    "-fstype",
];

/// Primaries whose argument is a file it reads (its times, its identity).
const FIND_FILE: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile"];

fn find(args: &[String]) -> Result<Vec<PathArg>, String> {
    let mut words = args.iter().peekable();
    while words.next_if(|w| matches!(w.as_str(), "-H" | "-P")).is_some() {}
    let mut paths = Vec::new();
    while let Some(start) = words.next_if(|w| !w.starts_with('-') && !matches!(w.as_str(), "(" | ")" | "!" | ",")) {
        paths.push(PathArg::new(start, true));
    }
    if paths.is_empty() {
        paths.push(PathArg::new(".", true));
    }
    while let Some(word) = words.next() {
        let primary = word.as_str();
        if FIND_NULLARY.contains(&primary) {
            continue;
        }
        let file = FIND_FILE.contains(&primary);
        if !file && !FIND_UNARY.contains(&primary) {
            return Err(format!("find's `{primary}` is not known to be harmless"));
        }
        let value = words.next().ok_or_else(|| format!("find's `{primary}` lacks its argument"))?;
        if file {
            paths.push(PathArg::new(value, false));
        }
    }
    Ok(paths)
}

/// Long options of `git log`/`diff`/`show`/`status` that write or read a file of their choice;
/// a prefix of one is refused too, as git takes unique abbreviations.
const GIT_FORBIDDEN_LONG: &[&str] = &["output", "pathspec-from-file"];

/// Options of `git branch` that only list.
const BRANCH_FLAGS: &[&str] = &[
    "-a",
    "-r",
    "-l",
    "-v",
    "-vv",
    "-i",
    "--list",
    "--all",
    "--remotes",
    "--verbose",
    "--show-current",
    "--ignore-case",
    "--no-color",
    "--no-column",
    "--omit-empty",
    "--color",
    "--column",
];

/// Options of `git branch` that take a value (attached with `=` or the next word).
const BRANCH_VALUES: &[&str] =
    &["--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--abbrev"];

fn git(args: &[String]) -> Result<Vec<PathArg>, String> {
    let mut paths = Vec::new();
    let mut words = args.iter();
    let subcommand = loop {
        let Some(word) = words.next() else {
            return Err("git with no subcommand".to_owned());
        };
        match word.as_str() {
            "--no-pager" | "-P" | "--no-optional-locks" | "--literal-pathspecs" => {}
            "-C" => return Err("git's `-C` makes it look for a repository elsewhere".to_owned()),
            option if option.starts_with('-') => return Err(format!("git's `{option}` is not known to be harmless")),
            subcommand => break subcommand,
        }
    };
    let rest: Vec<&String> = words.collect();
    match subcommand {
        "status" | "log" | "diff" | "show" => inspect(&rest, &mut paths)?,
        "branch" => branch(&rest)?,
        other => return Err(format!("`git {other}` is not in the list of read-only commands")),
    }
    Ok(paths)
}

/// `git status|log|diff|show` words: options but the forbidden ones; operands that name files
/// outside the repository are reads.
fn inspect(words: &[&String], paths: &mut Vec<PathArg>) -> Result<(), String> {
    let no_index = words.iter().any(|w| w.as_str() == "--no-index");
    let mut ended = false;
    for word in words {
        let word = word.as_str();
        if !ended && word == "--" {
            ended = true;
            continue;
        }
        if !ended && let Some(long) = word.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            if GIT_FORBIDDEN_LONG.iter().any(|f| f.starts_with(name) || name.starts_with(f)) {
                return Err(format!("git's `--{name}` writes or reads a file of its choice"));
            }
            continue;
        }
        if !ended && word.starts_with('-') && word.len() > 1 {
            if word.contains('O') {
                return Err(format!("git's `{word}` may read an order file"));
            }
            continue;
        }
        let outside = word.starts_with(['/', '~']) || word.split('/').any(|c| c == "..");
        if no_index || outside {
            paths.push(PathArg::new(word, true));
        }
    }
    Ok(())
}

/// `git branch` words: listing options only; patterns only with `--list`.
fn branch(words: &[&String]) -> Result<(), String> {
    let mut list = false;
    let mut operands = 0usize;
    let mut iter = words.iter().peekable();
    while let Some(word) = iter.next() {
        let word = word.as_str();
        let name = word.split_once('=').map_or(word, |(n, _)| n);
        if BRANCH_VALUES.contains(&name) {
            if !word.contains('=') {
                let _ = iter.next_if(|w| !w.starts_with('-'));
            }
            continue;
        }
        if word.starts_with("--") && BRANCH_FLAGS.contains(&name) {
            list |= name == "--list";
            continue;
        }
        if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty() && !c.starts_with('-')) {
            if cluster.chars().all(|c| "arlvi".contains(c)) {
                list |= cluster.contains('l');
                continue;
            }
            return Err(format!("git branch's `{word}` is not a listing option"));
        }
        if word.starts_with('-') {
            return Err(format!("git branch's `{word}` is not a listing option"));
        }
        operands += 1;
    }
    if operands > 0 && !list {
        return Err("git branch with a name creates a branch".to_owned());
    }
    Ok(())
}
