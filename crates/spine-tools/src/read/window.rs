//! The window of text lines one Read returns, read block by block.
//!
//! Contract of [`read_window`]:
//! - Lines `start..start + limit` (1-based) are kept; lines before them are only counted, and
//!   the lines after them are counted for at most [`MAX_SCAN_BYTES`] (beyond, the total is a
//!   lower bound, [`Count::AtLeast`]). Memory stays within [`MAX_READ_BYTES`] plus one block.
//! - [`MAX_READ_BYTES`] bounds the text the model receives, not the file's bytes: each kept
//!   line counts as long as the longer of its numbered form in the projection
//!   ([`numbered_len`]: `{n:>6}\t`, the line cut past [`MAX_LINE_CHARS`] characters with its
//!   marker) and of its text in the response's `content` (the whole line, invalid UTF-8 as
//!   U+FFFD), plus the `\n` between lines. The window ends ([`Stop::ByteCap`]) before the line
//!   that would pass the cap; a first line that alone passes it is cut on a character
//!   boundary so that its numbered form fits.
//! - A NUL byte in anything read makes the file binary ([`WindowError::Binary`]): the first
//!   block decides for most binary files, sparse ones included. Lines split at `\n`, a `\r`
//!   before it dropped, as `str::lines` does.

use std::io::Read;

use tokio_util::sync::CancellationToken;

use super::{MAX_LINE_CHARS, MAX_READ_BYTES, MAX_SCAN_BYTES};
use crate::output::truncate_line;

/// The size of one read.
const BLOCK: usize = 64 * 1024;

/// Why a window could not be read.
#[derive(Debug)]
pub(super) enum WindowError {
    /// A NUL byte was seen.
    Binary,
    /// The call's token fired (the run was canceled or the time limit passed).
    Canceled,
    /// Reading failed.
    Io(std::io::Error),
}

/// Whether `total` counts every line of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Count {
    /// The whole file was scanned.
    Exact,
    /// Counting stopped after [`MAX_SCAN_BYTES`] past the window: the file has more lines.
    AtLeast,
}

/// What ended the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// `limit` lines, or the end of the file.
    Limit,
    /// [`MAX_READ_BYTES`] of returned text.
    ByteCap,
}

/// The lines of one Read.
#[derive(Debug)]
pub(super) struct Window {
    pub(super) lines: Vec<String>,
    pub(super) total: u64,
    pub(super) count: Count,
    pub(super) stop: Stop,
}

/// The line `n` as the projection numbers it: `{n:>6}\t` and the line, cut past
/// [`MAX_LINE_CHARS`] characters with [`truncate_line`]'s marker.
pub(super) fn numbered(n: u64, line: &str) -> (String, bool) {
    let (line, cut) = truncate_line(line, MAX_LINE_CHARS);
    (format!("{n:>6}\t{line}"), cut)
}

/// The length of [`numbered`]`(n, line)`, computed without building it for a short line.
pub(super) fn numbered_len(n: u64, line: &str) -> usize {
    let number = n.checked_ilog10().map_or(1, |d| d as usize + 1).max(6) + 1;
    // A line of at most MAX_LINE_CHARS bytes has at most that many characters: never cut.
    let text = if line.len() <= MAX_LINE_CHARS { line.len() } else { truncate_line(line, MAX_LINE_CHARS).0.len() };
    number + text
}

/// What line `n` costs against the cap (without the `\n` before it): the longer of its
/// numbered form and its whole text.
fn cost(n: u64, line: &str) -> usize {
    numbered_len(n, line).max(numbered_len(n, "") + line.len())
}

/// The kept lines and the returned text they cost.
#[derive(Debug)]
struct Kept {
    lines: Vec<String>,
    used: usize,
    stop: Stop,
}

impl Kept {
    /// The cost the next line may have: the cap less the kept lines and the `\n` before it.
    fn room(&self) -> usize {
        MAX_READ_BYTES.saturating_sub(self.used + usize::from(!self.lines.is_empty()))
    }

    /// Room for the raw bytes of line `n`: its text is never shorter than its bytes.
    fn byte_room(&self, n: u64) -> usize {
        self.room().saturating_sub(numbered_len(n, ""))
    }

    /// Keeps line `n` when it fits; otherwise ends the window at the cap. Returns whether the
    /// window goes on.
    fn push(&mut self, n: u64, text: String) -> bool {
        let room = self.room();
        let cost = cost(n, &text);
        if cost > room {
            self.cap(n, text);
            return false;
        }
        self.used += usize::from(!self.lines.is_empty()) + cost;
        self.lines.push(text);
        true
    }

    /// Ends the window at the cap before line `n`, whose text (or its first part) is `text`:
    /// a first line is kept, cut on a character boundary until it fits.
    fn cap(&mut self, n: u64, mut text: String) {
        self.stop = Stop::ByteCap;
        if !self.lines.is_empty() {
            return;
        }
        let room = self.room();
        let mut end = self.byte_room(n).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        // Only a cut marker longer than what it replaces can still pass (never with a cap
        // far above MAX_LINE_CHARS characters, but the bound must not rest on that).
        while cost(n, &text) > room && text.pop().is_some() {}
        self.used = cost(n, &text);
        self.lines.push(text);
    }
}

/// Reads the window of lines `start..start + limit` (1-based) of `file`, as the module
/// contract says.
pub(super) fn read_window(
    mut file: impl Read,
    start: u64,
    limit: u64,
    cancel: &CancellationToken,
) -> Result<Window, WindowError> {
    let end = start.saturating_add(limit);
    let mut block = vec![0u8; BLOCK];
    // The number of the line being read, and whether any byte of it has been seen.
    let mut line: u64 = 1;
    let mut in_line = false;
    let mut current: Vec<u8> = Vec::new();
    let mut kept = Kept { lines: Vec::new(), used: 0, stop: Stop::Limit };
    let mut collecting = true;
    let mut scanned_after: u64 = 0;
    let mut count = Count::Exact;
    loop {
        if cancel.is_cancelled() {
            return Err(WindowError::Canceled);
        }
        let n = match file.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(WindowError::Io(e)),
        };
        let bytes = &block[..n];
        if bytes.contains(&0) {
            return Err(WindowError::Binary);
        }
        if !collecting {
            scanned_after = scanned_after.saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            in_line = true;
            let (segment, ended) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = if ended { &rest[segment.len() + 1..] } else { &[] };
            if collecting && line >= start {
                let room = kept.byte_room(line);
                if current.len() + segment.len() <= room {
                    current.extend_from_slice(segment);
                } else {
                    // Its bytes alone pass the cap: the window ends before this line.
                    let mut head = std::mem::take(&mut current);
                    head.extend_from_slice(&segment[..room.saturating_sub(head.len()).min(segment.len())]);
                    let cut = char_boundary(&head, room);
                    kept.cap(line, String::from_utf8_lossy(&head[..cut]).into_owned());
                    collecting = false;
                }
            }
            if ended {
                if collecting && line >= start {
                    if current.last() == Some(&b'\r') {
                        current.pop();
                    }
                    collecting = kept.push(line, String::from_utf8_lossy(&current).into_owned());
                    current.clear();
                }
                line += 1;
                in_line = false;
                if line >= end {
                    collecting = false;
                }
            }
        }
        if !collecting && scanned_after > MAX_SCAN_BYTES {
            count = Count::AtLeast;
            break;
        }
    }
    if collecting && in_line && line >= start {
        kept.push(line, String::from_utf8_lossy(&current).into_owned());
    }
    let total = if in_line { line } else { line - 1 };
    Ok(Window { lines: kept.lines, total, count, stop: kept.stop })
}

/// The longest prefix of `bytes` no longer than `max` that does not split a UTF-8 character.
fn char_boundary(bytes: &[u8], max: usize) -> usize {
    let mut cut = max.min(bytes.len());
    while cut > 0 && cut < bytes.len() && (bytes[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    cut
}
