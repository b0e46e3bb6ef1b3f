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
//! counted; the window ends at `limit` lines or when the text returned would pass
//! [`MAX_READ_BYTES`] (then the response carries `"byteCap"` and the projection says how to read
//! on). The cap bounds what the model receives, not the file's bytes: the numbered lines of the
//! projection (`{n:>6}\t` and the line, as cut) and, just as much, the response's `content`
//! fit in it (the note that follows the lines is not counted); `read/window.rs` has the exact
//! rule.
//! Lines after the window are counted for at most [`MAX_SCAN_BYTES`] (beyond, `totalLines` is a
//! lower bound and the response carries `"totalLinesExact": false`). Memory stays within the
//! window plus one block whatever the file's size. A call runs under [`FILE_TOOL_TIME_LIMIT`],
//! as every file tool.
//!
//! A missing file is `not_found`; a directory or a binary file (a NUL byte in what was read:
//! the first block decides for most, sparse files included) is a `validation_error`, as is a
//! FIFO, socket or device; a path outside the workspace (also one a symlink swapped in after
//! the check leads out of) is `permission_denied`. The file is opened race-free beneath the
//! workspace root (`spine_core::workspace::open`).

mod window;

use std::io::{Cursor, Read};
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::open::{OpenError, OpenFor};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::image::{self as images, ImageError, PreparedImage, SNIFF_BYTES};
use crate::paths::FILE_TOOL_TIME_LIMIT;
use crate::{args, paths};
use window::{Count, Stop, Window, WindowError, numbered, read_window};

/// Lines returned when `limit` is absent.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Longest line shown whole in the projection.
pub const MAX_LINE_CHARS: usize = 2000;
/// Most bytes of text one Read returns (256 KiB), counted as the model receives them: the
/// numbered lines of the projection, and the response's `content` alike. The window ends before
/// the line that would pass it (a first line longer than that is cut).
pub const MAX_READ_BYTES: usize = 256 * 1024;
/// Most bytes read past the window to count the file's lines (64 MiB); beyond that the total
/// is a lower bound (`totalLinesExact: false`).
pub const MAX_SCAN_BYTES: u64 = 64 * 1024 * 1024;

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
        match read {
            Loaded::Image(image) => Ok(image.read_response(file_path)),
            Loaded::Text(window) => Ok(text_response(file_path, start, &window)),
        }
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
        let lines: Vec<String> = if num == 0 {
            Vec::new()
        } else {
            content
                .split('\n')
                .zip(start..)
                .map(|(line, n)| {
                    let (line, cut) = numbered(n, line);
                    cut_lines |= cut;
                    line
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
                lines.join("\n"),
                start + num - 1
            )
        } else {
            lines.join("\n")
        };
        Projection::plain(text)
            .with("file_path", path)
            .with("start_line", start)
            .with("num_lines", num)
            .with("total_lines", total)
            .with("truncated", partial || cut_lines)
    }
}

/// The response of a text Read of the lines of `window` from `start`, in Claude Code's shape.
fn text_response(file_path: &str, start: u64, window: &Window) -> Value {
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
    json!({"type": "text", "file": file})
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

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use tokio_util::sync::CancellationToken;

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
        // `     1\t` and the line fit the cap; one more `é` would not.
        let numbered = "     1\t".len() + w.lines[0].len();
        assert!(numbered <= MAX_READ_BYTES && numbered + 'é'.len_utf8() > MAX_READ_BYTES, "{numbered}");
        assert!(w.lines[0].chars().all(|c| c == 'é'));
        assert_eq!(w.total, 2);

        // 99 bytes a line: `{n:>6}\t`, the line and the `\n` after it.
        let text: String = (0..10_000).map(|_| format!("{}\n", "y".repeat(99))).collect();
        let w = window(text.as_bytes(), 1, 10_000);
        assert_eq!(w.stop, Stop::ByteCap);
        assert!(w.lines.iter().all(|l| l.len() == 99));
        assert_eq!(w.lines.len(), (MAX_READ_BYTES + 1) / (7 + 99 + 1));
        assert_eq!(w.total, 10_000);
    }

    #[test]
    fn the_numbered_text_returned_stays_within_the_byte_cap() {
        let lines = |line: &[u8], count: usize| line.repeat(count);
        let cases: [(&str, Vec<u8>, u64); 5] = [
            ("one-character lines", lines(b"a\n", 300_000), 1),
            ("empty lines numbered past 999999", lines(b"\n", 1_100_000), 1_000_000),
            (
                "lines cut with a marker longer than the cut",
                lines(format!("{}\n", "x".repeat(2001)).as_bytes(), 200),
                1,
            ),
            ("invalid UTF-8 shown as U+FFFD", lines(b"\xff\xff\n", 200_000), 1),
            ("lines longer in `content` than numbered", lines(format!("{}\n", "z".repeat(9000)).as_bytes(), 40), 1),
        ];
        for (case, text, start) in cases {
            let w = window(&text, start, u64::MAX);
            assert_eq!(w.stop, Stop::ByteCap, "{case}");
            let response = text_response("f.txt", start, &w);
            let projected = ReadTool.project(&response).content;
            let (numbered, note) = projected.rsplit_once("\n[Lines ").expect("a note");
            assert!(numbered.len() <= MAX_READ_BYTES, "{case}: {} bytes of numbered lines", numbered.len());
            let content = response["file"]["content"].as_str().expect("content");
            assert!(content.len() <= MAX_READ_BYTES, "{case}: {} bytes of content", content.len());
            assert!(note.contains("at most 256 KiB of text per call"), "{case}: {note}");
            // The window is as long as the cap allows: one more line would pass it.
            let line = String::from_utf8_lossy(text.split(|&b| b == b'\n').next().expect("a line")).into_owned();
            let used: usize = w.lines.iter().zip(start..).map(|(l, n)| cost(n, l) + 1).sum::<usize>() - 1;
            let next = start + w.lines.len() as u64;
            assert!(used + 1 + cost(next, &line) > MAX_READ_BYTES, "{case}: {} lines stop short", w.lines.len());
        }
    }

    /// What a line costs against the cap: the longer of its numbered form and its text.
    fn cost(n: u64, line: &str) -> usize {
        let numbered = |line: &str| window::numbered(n, line).0.len();
        numbered(line).max(numbered("") + line.len())
    }

    #[test]
    fn a_nul_byte_anywhere_read_is_binary() {
        let e = read_window(Cursor::new(b"ab\ncd\0".to_vec()), 1, 1, &CancellationToken::new());
        assert!(matches!(e, Err(WindowError::Binary)), "{e:?}");
    }
}
