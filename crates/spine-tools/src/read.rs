//! `Read {file_path, offset?, limit?}` (effect: read): a window of a text file's lines.
//!
//! An image file (PNG, JPEG, GIF or WebP, recognised by its magic bytes, not its name) is
//! returned as an image, as Claude Code does: the response is Claude Code's
//! `{"type":"image","file":{"base64","type","originalSize","dimensions"}}` (plus `filePath`),
//! the model reads `Image: <path> (<W>x<H>, <N> KB)` and receives the image after that text.
//! Limits and downscaling are [`crate::image`]'s: a file over 20 MiB, or one that does not
//! decode, is a `validation_error`. `offset` and `limit` do not apply to images.
//!
//! `offset` is the 1-based line to start at (0 counts as 1), `limit` the number of lines
//! (default [`DEFAULT_LIMIT`]). The response is Claude Code's
//! `{"type":"text","file":{"filePath","content","numLines","startLine","totalLines"}}`, where
//! `content` holds the selected lines exactly (joined by `\n`). The projection numbers them as
//! `cat -n` does (`{n:>6}\t{line}`), cutting lines longer than [`MAX_LINE_CHARS`] characters.
//!
//! Bounds: the file is read block by block, never whole. Lines before the window are only
//! counted; the window ends at `limit` lines or [`MAX_READ_BYTES`] of text (then the response
//! carries `"byteCap"` and the projection says how to read on); lines after it are counted for
//! at most [`MAX_SCAN_BYTES`] (beyond, `totalLines` is a lower bound and the response carries
//! `"totalLinesExact": false`). Memory stays within the window plus one block whatever the
//! file's size. A call runs under [`FILE_TOOL_TIME_LIMIT`], as every file tool.
//!
//! A missing file is `not_found`; a directory or a binary file (a NUL byte in what was read:
//! the first block decides for most, sparse files included) is a `validation_error`, as is a
//! FIFO, socket or device; a path outside the workspace (also one a symlink swapped in after
//! the check leads out of) is `permission_denied`. The file is opened race-free beneath the
//! workspace root (`spine_core::workspace::open`).

use std::io::{Cursor, Read};
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::open::{OpenError, OpenFor};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
use tokio_util::sync::CancellationToken;

use crate::image::{self as images, ImageError, PreparedImage, SNIFF_BYTES};
use crate::output::truncate_line;
use crate::paths::FILE_TOOL_TIME_LIMIT;
use crate::{args, paths};

/// Lines returned when `limit` is absent.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Longest line shown whole in the projection.
pub const MAX_LINE_CHARS: usize = 2000;
/// Most bytes of text one Read returns (256 KiB): the window ends before the line that would
/// pass it (a first line longer than that is cut).
pub const MAX_READ_BYTES: usize = 256 * 1024;
/// Most bytes read past the window to count the file's lines (64 MiB); beyond that the total
/// is a lower bound (`totalLinesExact: false`).
pub const MAX_SCAN_BYTES: u64 = 64 * 1024 * 1024;
/// The size of one read.
const BLOCK: usize = 64 * 1024;

/// The `Read` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// The file to read.
    file_path: String,
    /// The line number to start reading from (1-based).
    offset: Option<args::Count>,
    /// The number of lines to read.
    #[schemars(range(min = 1))]
    limit: Option<args::Count>,
}

#[async_trait]
impl Tool for ReadTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Read".to_owned(),
            description: format!(
                "Reads a text file and returns its lines numbered like `cat -n`. Reads up to \
                 {DEFAULT_LIMIT} lines from the start by default; use `offset` (1-based line) \
                 and `limit` for other parts. Lines longer than {MAX_LINE_CHARS} characters are \
                 cut. A PNG, JPEG, GIF or WebP file is returned as an image you can see."
            ),
            input_schema: args::schema::<ReadArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("file_path")
    }

    fn time_limit(&self) -> Option<Duration> {
        Some(FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let ReadArgs { file_path, offset, limit } = args::parse(args)?;
        let file_path = file_path.as_str();
        let start = offset.map_or(1, args::Count::get).max(1);
        let limit = limit.map_or(DEFAULT_LIMIT, args::Count::get).max(1);
        let path = paths::confine(ctx, file_path)?;
        // Opened race-free beneath the root and checked by descriptor (a regular file), then
        // read block by block: only the window and a bounded count of the lines after it.
        let workspace = ctx.workspace.clone();
        let shown = file_path.to_owned();
        let cancel = ctx.cancel.clone();
        let read = paths::blocking(move || {
            let (mut file, _) = workspace.open_file(&path, OpenFor::Read).map_err(|e| match e {
                OpenError::IsDirectory { .. } => ToolError::new(
                    ErrorCode::ValidationError,
                    format!("{shown} is a directory, not a file; use Glob to list it"),
                ),
                other => paths::open_error(&shown, other),
            })?;
            let io_error = |e: std::io::Error| ToolError::new(ErrorCode::RuntimeError, format!("{shown}: {e}"));
            let mut head = Vec::with_capacity(SNIFF_BYTES);
            (&mut file).take(SNIFF_BYTES as u64).read_to_end(&mut head).map_err(io_error)?;
            if images::sniff(&head).is_some() {
                let size = file.metadata().map_err(io_error)?.len();
                let image = images::read_limited(Cursor::new(head).chain(file), size).map_err(|e| match e {
                    ImageError::Io(e) => io_error(e),
                    other => ToolError::new(ErrorCode::ValidationError, format!("{shown}: {other}")),
                })?;
                return Ok(Loaded::Image(image));
            }
            read_window(Cursor::new(head).chain(file), start, limit, &cancel).map(Loaded::Text).map_err(|e| match e {
                WindowError::Binary => ToolError::new(
                    ErrorCode::ValidationError,
                    format!("{shown} is a binary file; Read only shows text"),
                ),
                WindowError::Canceled => ToolError::new(ErrorCode::Canceled, format!("Read of {shown} canceled")),
                WindowError::Io(e) => ToolError::new(ErrorCode::RuntimeError, format!("{shown}: {e}")),
            })
        })
        .await?;
        let window = match read {
            Loaded::Image(image) => return Ok(image.read_response(file_path)),
            Loaded::Text(window) => window,
        };
        let mut file = json!({
            "filePath": file_path,
            "content": window.lines.join("\n"),
            "numLines": window.lines.len(),
            "startLine": start,
            "totalLines": window.total,
        });
        if let Some(obj) = file.as_object_mut() {
            match window.count {
                Count::Exact => {}
                Count::AtLeast => {
                    obj.insert("totalLinesExact".to_owned(), json!(false));
                }
            }
            match window.stop {
                Stop::Limit => {}
                Stop::ByteCap => {
                    obj.insert("byteCap".to_owned(), json!(MAX_READ_BYTES));
                }
            }
        }
        Ok(json!({"type": "text", "file": file}))
    }

    fn project(&self, response: &Value) -> Projection {
        if response.get("type").and_then(Value::as_str) == Some("image") {
            return project_image(response);
        }
        let file = response.get("file").unwrap_or(&Value::Null);
        let path = file.get("filePath").and_then(Value::as_str).unwrap_or("");
        let content = file.get("content").and_then(Value::as_str).unwrap_or("");
        let num = file.get("numLines").and_then(Value::as_u64).unwrap_or(0);
        let start = file.get("startLine").and_then(Value::as_u64).unwrap_or(1);
        let total = file.get("totalLines").and_then(Value::as_u64).unwrap_or(0);

        let mut cut_lines = false;
        let numbered: Vec<String> = if num == 0 {
            Vec::new()
        } else {
            content
                .split('\n')
                .zip(start..)
                .map(|(line, n)| {
                    let (line, cut) = truncate_line(line, MAX_LINE_CHARS);
                    cut_lines |= cut;
                    format!("{n:>6}\t{line}")
                })
                .collect()
        };
        let exact = file.get("totalLinesExact").and_then(Value::as_bool).unwrap_or(true);
        let byte_cap = file.get("byteCap").and_then(Value::as_u64);
        let of_total = if exact { format!("{total}") } else { format!("at least {total}") };
        let partial = start > 1 || start + num <= total || !exact || byte_cap.is_some();
        let text = if total == 0 {
            format!("{path} is empty.")
        } else if num == 0 {
            format!("{path} has {of_total} lines; offset {start} is past the end.")
        } else if partial {
            let cap_note = match byte_cap {
                Some(cap) => format!(" Read returns at most {} KiB of text per call;", cap / 1024),
                None => String::new(),
            };
            format!(
                "{}\n[Lines {start}-{} of {of_total} in {path};{cap_note} use offset and limit to \
                 read more.]",
                numbered.join("\n"),
                start + num - 1
            )
        } else {
            numbered.join("\n")
        };
        Projection::plain(text)
            .with("file_path", path)
            .with("start_line", start)
            .with("num_lines", num)
            .with("total_lines", total)
            .with("truncated", partial || cut_lines)
    }
}

/// What a Read found: lines of text, or an image.
#[derive(Debug)]
enum Loaded {
    Text(Window),
    Image(PreparedImage),
}

/// The text beside an image: `Image: <path> (<W>x<H>, <N> KB)`, with the original size when
/// it was downscaled. The image itself goes to the model after it.
fn project_image(response: &Value) -> Projection {
    let file = response.get("file").unwrap_or(&Value::Null);
    let path = file.get("filePath").and_then(Value::as_str).unwrap_or("");
    let size = file.get("originalSize").and_then(Value::as_u64).unwrap_or(0);
    let dims = &file["dimensions"];
    let dim = |key: &str| dims.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (width, height) = (dim("displayWidth"), dim("displayHeight"));
    let (original_width, original_height) = (dim("originalWidth"), dim("originalHeight"));
    let scaled = if (width, height) == (original_width, original_height) {
        String::new()
    } else {
        format!(", downscaled from {original_width}x{original_height}")
    };
    let text = format!("Image: {path} ({width}x{height}, {}{scaled})", images::human_size(size));
    Projection::plain(text)
        .with("file_path", path)
        .with("media_type", file.get("type").cloned().unwrap_or(Value::Null))
        .with("width", width)
        .with("height", height)
        .with("original_size", size)
}

/// Why a window could not be read.
#[derive(Debug)]
enum WindowError {
    /// A NUL byte was seen.
    Binary,
    /// The call's token fired (the run was canceled or the time limit passed).
    Canceled,
    /// Reading failed.
    Io(std::io::Error),
}

/// Whether `total` counts every line of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    /// The whole file was scanned.
    Exact,
    /// Counting stopped after [`MAX_SCAN_BYTES`] past the window: the file has more lines.
    AtLeast,
}

/// What ended the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// `limit` lines, or the end of the file.
    Limit,
    /// [`MAX_READ_BYTES`] of text.
    ByteCap,
}

/// The lines of one Read.
#[derive(Debug)]
struct Window {
    lines: Vec<String>,
    total: u64,
    count: Count,
    stop: Stop,
}

/// Reads lines `start..start + limit` (1-based) of `file` block by block, in memory bounded by
/// [`MAX_READ_BYTES`] plus one block: lines before the window are only counted, the window
/// stops at `limit` lines or [`MAX_READ_BYTES`] of text (a first line longer than that is cut
/// at a character boundary), and the lines after it are counted for at most
/// [`MAX_SCAN_BYTES`]. A NUL byte in anything read makes the file binary; the first block
/// decides for most binary files, sparse ones included. Lines split at `\n`, a `\r` before it
/// dropped, as `str::lines` does.
fn read_window(mut file: impl Read, start: u64, limit: u64, cancel: &CancellationToken) -> Result<Window, WindowError> {
    let end = start.saturating_add(limit);
    let mut block = vec![0u8; BLOCK];
    // The number of the line being read, and whether any byte of it has been seen.
    let mut line: u64 = 1;
    let mut in_line = false;
    let mut current: Vec<u8> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut kept: usize = 0;
    let mut stop = Stop::Limit;
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
                // Room left for this line: the cap less what is kept and the separators.
                let room = MAX_READ_BYTES.saturating_sub(kept + lines.len() + current.len());
                if segment.len() <= room {
                    current.extend_from_slice(segment);
                } else {
                    stop = Stop::ByteCap;
                    collecting = false;
                    if lines.is_empty() {
                        current.extend_from_slice(&segment[..char_boundary(segment, room)]);
                        lines.push(String::from_utf8_lossy(&current).into_owned());
                    }
                    current = Vec::new();
                }
            }
            if ended {
                if collecting && line >= start {
                    if current.last() == Some(&b'\r') {
                        current.pop();
                    }
                    kept += current.len();
                    lines.push(String::from_utf8_lossy(&current).into_owned());
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
        lines.push(String::from_utf8_lossy(&current).into_owned());
    }
    let total = if in_line { line } else { line - 1 };
    Ok(Window { lines, total, count, stop })
}

/// The longest prefix of `bytes` no longer than `max` that does not split a UTF-8 character.
fn char_boundary(bytes: &[u8], max: usize) -> usize {
    let mut cut = max.min(bytes.len());
    while cut > 0 && cut < bytes.len() && (bytes[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    cut
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn window(text: &[u8], start: u64, limit: u64) -> Window {
        read_window(Cursor::new(text.to_vec()), start, limit, &CancellationToken::new()).expect("window")
    }

    #[test]
    fn lines_split_like_str_lines() {
        for text in ["", "a", "a\n", "a\r\nb", "a\n\nb\n", "\n", "x\r", "a\nb\r\n\r\n"] {
            let w = window(text.as_bytes(), 1, 100);
            let expected: Vec<&str> = text.lines().collect();
            assert_eq!(w.lines, expected, "{text:?}");
            assert_eq!(w.total, expected.len() as u64, "{text:?}");
            assert_eq!((w.count, w.stop), (Count::Exact, Stop::Limit));
        }
    }

    #[test]
    fn windows_across_blocks_hold_exactly_the_asked_lines() {
        let text: String = (1..=50_000).map(|i| format!("line {i}\n")).collect();
        let w = window(text.as_bytes(), 40_000, 3);
        assert_eq!(w.lines, vec!["line 40000", "line 40001", "line 40002"]);
        assert_eq!(w.total, 50_000);
    }

    #[test]
    fn the_window_stops_at_the_byte_cap_and_a_long_first_line_is_cut_on_a_char_boundary() {
        let line = "é".repeat(MAX_READ_BYTES);
        let w = window(format!("{line}\nnext\n").as_bytes(), 1, 10);
        assert_eq!(w.stop, Stop::ByteCap);
        assert_eq!(w.lines.len(), 1);
        assert_eq!(w.lines[0].len(), MAX_READ_BYTES);
        assert!(w.lines[0].chars().all(|c| c == 'é'));
        assert_eq!(w.total, 2);

        let text: String = (0..10_000).map(|_| format!("{}\n", "y".repeat(99))).collect();
        let w = window(text.as_bytes(), 1, 10_000);
        assert_eq!(w.stop, Stop::ByteCap);
        assert!(w.lines.iter().all(|l| l.len() == 99));
        assert!(w.lines.len() * 100 <= MAX_READ_BYTES, "{}", w.lines.len());
        assert_eq!(w.total, 10_000);
    }

    #[test]
    fn a_nul_byte_anywhere_read_is_binary() {
        let e = read_window(Cursor::new(b"ab\ncd\0".to_vec()), 1, 1, &CancellationToken::new());
        assert!(matches!(e, Err(WindowError::Binary)), "{e:?}");
    }
}
