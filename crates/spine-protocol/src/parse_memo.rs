//! What parsing a file gave, remembered across runs while the file is unchanged: a start-up
//! with many installed plugins reads and parses each plugin's agents and skills (YAML front
//! matter) again on every run; [`ParseMemo`] lets those readers skip the reading and the
//! parsing of files that have not changed since a run parsed them.
//!
//! Contract:
//! - A memo file belongs to one project (`$SPINE_HOME/cache/parsed/<project>.memo`, named as
//!   its session folder is): a run reads the results its project's runs kept, no others.
//! - An entry is keyed by a kind (the reader and its format version), the file's path and a
//!   context (what else the result depends on, e.g. the project directory), and holds the
//!   file's [`Stamp`] when it was parsed and the result as JSON. A lookup takes the file's
//!   stamp again (one `lstat`); any difference — device, inode, size, mode, modification or
//!   change time to the nanosecond — and the file is parsed again. The change time cannot be
//!   set by a program, so an edit, a rename over the file or a `chmod` always shows. A result
//!   read from more files than its key's carries their stamps ([`Stamp`] serialises as its
//!   text) and is used only when its reader's check of them passes
//!   ([`ParseMemo::get_or_parse_checked`]).
//! - Only regular files and directories are remembered (a symbolic link is never: its target
//!   can change without the link's stamp changing), and only once their stamp is older than
//!   [`SETTLE`] (a file written again within one tick of the clock keeps its stamp: git's
//!   "racily clean" case). A reader says whether a result may be kept (a listing that saw a
//!   link may not).
//! - The file is a header line (its format and the spine version that wrote it), then a line per
//!   entry: the key as a JSON string, the stamp, the last use and the result's compact JSON,
//!   separated by tabs. Loading splits lines and fields; a run deserialises only the results it
//!   uses. Results from another spine version are ignored; an unreadable or malformed memo
//!   file is an empty memo; nothing is an error.
//! - [`ParseMemo::save`] writes the file (a temporary file renamed over it) only when a result
//!   was added; it keeps the entries used by this run and, of the others, those used within
//!   [`KEEP_UNUSED`], at most [`MAX_ENTRIES`] in all.
//! - [`ParseMemo::disabled`] remembers nothing (no file): tests and library callers without a
//!   spine home.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// How old a file's stamp must be before its result is remembered.
pub const SETTLE: Duration = Duration::from_secs(2);
/// How long an entry no run used is kept.
pub const KEEP_UNUSED: Duration = Duration::from_secs(30 * 24 * 3600);
/// The most entries a file keeps.
pub const MAX_ENTRIES: usize = 1024;

/// The directory of the memo files under spine's home: one file per project, so that a run
/// reads only what runs in its project parsed.
pub const DIR: &str = "cache/parsed";

/// A file's identity and state, as `lstat` reports them (in the file: the eight numbers, in
/// field order, separated by spaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of `path` (not following a last-component link), or `None` when it cannot
    /// be taken or `path` is neither a regular file nor a directory.
    pub fn of(path: &Path) -> Option<Stamp> {
        Stamp::from_metadata(&std::fs::symlink_metadata(path).ok()?)
    }

    /// The stamp in `meta` (an `lstat`'s answer), or `None` when it is neither a regular file
    /// nor a directory.
    pub fn from_metadata(meta: &std::fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let kind = meta.file_type();
        if !kind.is_file() && !kind.is_dir() {
            return None;
        }
        Some(Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// Whether the stamp is a regular file's (else a directory's).
    pub fn is_file(&self) -> bool {
        // The file type bits of `st_mode` (`S_IFMT`) and a regular file's (`S_IFREG`).
        const TYPE_BITS: u32 = 0o170_000;
        const REGULAR: u32 = 0o100_000;
        self.mode & TYPE_BITS == REGULAR
    }

    /// The stamp as the file writes it.
    fn write_to(&self, out: &mut String) {
        use std::fmt::Write;
        let (m, c) = (self.mtime, self.ctime);
        let _ = write!(out, "{} {} {} {} {} {} {} {}", self.dev, self.ino, self.mode, self.size, m.0, m.1, c.0, c.1);
    }

    /// A stamp as the file writes it, or `None`. Read byte by byte: a memo file holds one per
    /// entry, and `str::split` with `str::parse` cost several times as much.
    fn parse(text: &str) -> Option<Stamp> {
        let mut numbers = Numbers(text.as_bytes());
        let stamp = Stamp {
            dev: numbers.next_u64()?,
            ino: numbers.next_u64()?,
            mode: u32::try_from(numbers.next_u64()?).ok()?,
            size: numbers.next_u64()?,
            mtime: (numbers.next_i64()?, numbers.next_i64()?),
            ctime: (numbers.next_i64()?, numbers.next_i64()?),
        };
        numbers.0.is_empty().then_some(stamp)
    }

    /// Whether the stamp's times are older than [`SETTLE`] now: a result read under it may be
    /// remembered (see the module contract).
    pub fn is_settled(&self) -> bool {
        self.settled(now())
    }

    /// Whether the stamp's times are older than `SETTLE` before `now` (seconds, nanoseconds).
    fn settled(&self, now: (i64, i64)) -> bool {
        let newest = self.mtime.max(self.ctime);
        let limit = (now.0 - SETTLE.as_secs() as i64, now.1);
        newest < limit
    }
}

/// Decimal numbers separated by single spaces (a stamp's text), read from the front.
struct Numbers<'a>(&'a [u8]);

impl Numbers<'_> {
    /// The next number, without sign; `None` when it is missing, empty, not digits or too large.
    fn next_u64(&mut self) -> Option<u64> {
        let end = self.0.iter().position(|&b| b == b' ').unwrap_or(self.0.len());
        let (digits, rest) = self.0.split_at(end);
        self.0 = rest.strip_prefix(b" ").unwrap_or(rest);
        if digits.is_empty() || (rest.first() == Some(&b' ') && self.0.is_empty()) {
            return None;
        }
        digits.iter().try_fold(0u64, |n, &b| match b {
            b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(b - b'0')),
            _ => None,
        })
    }

    /// The next number, with an optional leading `-`.
    fn next_i64(&mut self) -> Option<i64> {
        let negative = self.0.first() == Some(&b'-');
        if negative {
            self.0 = &self.0[1..];
        }
        let magnitude = i64::try_from(self.next_u64()?).ok()?;
        Some(if negative { -magnitude } else { magnitude })
    }
}

/// A stamp in a remembered result (of a reader that depends on more files than its key's):
/// its text, the eight numbers.
impl Serialize for Stamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut text = String::with_capacity(64);
        self.write_to(&mut text);
        serializer.serialize_str(&text)
    }
}

impl<'de> serde::Deserialize<'de> for Stamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Stamp::parse(&text).ok_or_else(|| serde::de::Error::custom("not a file stamp"))
    }
}

/// An entry's key: kind, path and context joined by spaces. Neither a kind nor a context holds
/// one, so the key is the three's alone (the path is what lies between the first space and the
/// last), and it needs no escape in the file.
fn key(kind: &str, path: &Path, context: &str) -> String {
    debug_assert!(!kind.contains(' ') && !context.contains(' '));
    let path = path.to_string_lossy();
    let mut key = String::with_capacity(kind.len() + path.len() + context.len() + 2);
    for (i, part) in [kind, &path, context].into_iter().enumerate() {
        if i > 0 {
            key.push(' ');
        }
        key.push_str(part);
    }
    key
}

/// A remembered result.
#[derive(Debug, Clone)]
struct Remembered {
    stamp: Stamp,
    /// When a run last used it (seconds since the epoch).
    used: u64,
    /// Whether this run used it.
    touched: bool,
    /// The result's JSON (compact: one line), kept as text: a run deserialises only the
    /// results it uses.
    value: Box<str>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<String, Remembered>,
    added: bool,
}

/// Parse results remembered across runs (see the module contract).
#[derive(Debug)]
pub struct ParseMemo {
    file: Option<PathBuf>,
    state: OnceLock<Mutex<State>>,
}

impl ParseMemo {
    /// The memo kept in `file` (read at its first use).
    pub fn at(file: PathBuf) -> ParseMemo {
        ParseMemo { file: Some(file), state: OnceLock::new() }
    }

    /// The memo of `project` in spine's home `spine_home`
    /// (`<spine_home>/cache/parsed/<project folder name>.memo`).
    pub fn of_project(spine_home: &Path, project: &Path) -> ParseMemo {
        let name = crate::home::project_folder_name(project);
        ParseMemo::at(spine_home.join(DIR).join(format!("{name}.memo")))
    }

    /// A memo that remembers nothing.
    pub fn disabled() -> ParseMemo {
        ParseMemo { file: None, state: OnceLock::new() }
    }

    /// What `parse` gives for `path`: remembered when `path` has not changed since, else
    /// `parse()`'s result, remembered when it says it may be kept (its `bool`) and the file has
    /// settled. `kind` names the reader and its format (`"skill.v1"`); `context` what else
    /// the result depends on.
    pub fn get_or_parse<T, F>(&self, kind: &str, path: &Path, context: &str, parse: F) -> T
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> (T, bool),
    {
        if self.file.is_none() {
            return parse().0;
        }
        self.get_or_parse_stamped(kind, path, Stamp::of(path), context, parse)
    }

    /// [`ParseMemo::get_or_parse`] with `path`'s stamp taken by the caller (`None`: a link or
    /// no stamp, parsed and not remembered), for a reader that needs the `lstat` itself.
    pub fn get_or_parse_stamped<T, F>(
        &self,
        kind: &str,
        path: &Path,
        stamp: Option<Stamp>,
        context: &str,
        parse: F,
    ) -> T
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> (T, bool),
    {
        self.get_or_parse_checked(kind, path, stamp, context, |_| true, parse)
    }

    /// [`ParseMemo::get_or_parse_stamped`] for a result that depends on more than `path`: a
    /// remembered result is used only when `still_valid` says so (it checks the other files'
    /// stamps the result carries); else `parse()` runs and its result replaces it.
    pub fn get_or_parse_checked<T, F, C>(
        &self,
        kind: &str,
        path: &Path,
        stamp: Option<Stamp>,
        context: &str,
        still_valid: C,
        parse: F,
    ) -> T
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> (T, bool),
        C: FnOnce(&T) -> bool,
    {
        let (Some(file), Some(stamp)) = (&self.file, stamp) else { return parse().0 };
        let key = key(kind, path, context);
        let state = self.state.get_or_init(|| Mutex::new(load(file)));
        let remembered = match state.lock() {
            Ok(state) => state
                .entries
                .get(&key)
                .filter(|entry| entry.stamp == stamp)
                .and_then(|entry| serde_json::from_str::<T>(&entry.value).ok()),
            Err(_) => None,
        };
        if let Some(value) = remembered.filter(|value| still_valid(value)) {
            if let Ok(mut state) = state.lock()
                && let Some(entry) = state.entries.get_mut(&key)
            {
                entry.touched = true;
            }
            return value;
        }
        let (value, keep) = parse();
        let now = now();
        if keep
            && stamp.settled(now)
            && let Ok(json) = serde_json::to_string(&value)
            && let Ok(mut state) = state.lock()
        {
            let entry = Remembered { stamp, used: now.0.max(0) as u64, touched: true, value: json.into_boxed_str() };
            state.entries.insert(key, entry);
            state.added = true;
        }
        value
    }

    /// Writes the memo when this run added to it (see the module contract); a failure to
    /// write is ignored (the next run parses again).
    pub fn save(&self) {
        let (Some(file), Some(state)) = (&self.file, self.state.get()) else { return };
        let Ok(mut state) = state.lock() else { return };
        if !state.added {
            return;
        }
        state.added = false;
        let now = now().0.max(0) as u64;
        for entry in state.entries.values_mut().filter(|entry| entry.touched) {
            entry.used = now;
        }
        let mut entries: Vec<(&String, &Remembered)> =
            state.entries.iter().filter(|(_, r)| now.saturating_sub(r.used) <= KEEP_UNUSED.as_secs()).collect();
        entries.sort_by_key(|(_, r)| std::cmp::Reverse(r.used));
        entries.truncate(MAX_ENTRIES);
        let _ = write(file, &file_text(&entries));
    }
}

/// The first line of a memo file: the format and the spine version that wrote it.
fn header() -> String {
    format!("spine parse memo 1, spine {}", env!("CARGO_PKG_VERSION"))
}

/// A memo file's text: the header, then one line per entry — its key as a JSON string, its
/// stamp, when it was last used and its value's JSON, separated by tabs (compact JSON holds
/// no tab and no line break, a file needs no parser to be split).
fn file_text(entries: &[(&String, &Remembered)]) -> String {
    use std::fmt::Write;
    let mut out = header();
    out.push('\n');
    for (key, r) in entries {
        let Ok(key) = serde_json::to_string(key) else { continue };
        out.push_str(&key);
        out.push('\t');
        r.stamp.write_to(&mut out);
        let _ = write!(out, "\t{}\t", r.used);
        out.push_str(&r.value);
        out.push('\n');
    }
    out
}

/// The entries of a memo file's text, or `None` when another version wrote it or a line is
/// malformed (the memo is then empty).
fn parse_file(text: &str) -> Option<HashMap<String, Remembered>> {
    let mut lines = text.split('\n');
    if lines.next()? != header() {
        return None;
    }
    let mut entries = HashMap::new();
    for line in lines.filter(|line| !line.is_empty()) {
        let mut fields = line.splitn(4, '\t');
        let (key, stamp, used, value) = (fields.next()?, fields.next()?, fields.next()?, fields.next()?);
        // A key without escapes (every key spine writes but an odd path's) is its text.
        let key = match key.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
            Some(plain) if !plain.bytes().any(|b| b == b'\\' || b == b'"') => plain.to_owned(),
            _ => serde_json::from_str(key).ok()?,
        };
        let entry =
            Remembered { stamp: Stamp::parse(stamp)?, used: used.parse().ok()?, touched: false, value: value.into() };
        entries.insert(key, entry);
    }
    Some(entries)
}

fn now() -> (i64, i64) {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    (since.as_secs() as i64, i64::from(since.subsec_nanos()))
}

fn load(file: &Path) -> State {
    let entries = std::fs::read_to_string(file).ok().and_then(|text| parse_file(&text)).unwrap_or_default();
    State { entries, added: false }
}

fn write(file: &Path, text: &str) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".parsed.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
#[path = "parse_memo_tests.rs"]
mod tests;
